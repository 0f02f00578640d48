"""From the admin tools' output to the drift table: `capture import` then `audit
--observed`, both through the CLI, on the fixtures laid out as the tools print them."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from jobs.cli import main

pytestmark = pytest.mark.e2e
DATA = Path(__file__).resolve().parents[1] / "data" / "capture"
ROCKET = ["topicRoute_TopicOrder.json", "topicStatus_TopicOrder.txt",
          "consumerConnection_OrderGroup.txt"]


def capture_then_audit(tmp_path: Path, files: list[Path]) -> Path:
    captured, out = tmp_path / "captured", tmp_path / "audit"
    assert main(["capture", "import", *map(str, files), "--output", str(captured),
                 "--cluster", "c1", "--snapshot", "s1",
                 "--captured-at", "2026-11-20T10:00:00Z"]) == 0
    args = ["audit", "--queues", str(captured / "queues"), "--members",
            str(captured / "members"), "--observed", str(captured / "observed"),
            "--output", str(out), "--engine", "offline"]
    if (captured / "offsets" / "_delta_log").is_dir():
        args += ["--offsets", str(captured / "offsets")]
    assert main(args) == 0
    return out


def _whole_group(out: Path):
    balance = DeltaTable(str(out / "group_balance")).to_pandas()
    return balance[balance["topic"].isna()].iloc[0]


def test_kafka_range_group_has_no_drift(spark, tmp_path: Path) -> None:
    out = capture_then_audit(tmp_path, [DATA / "kcg_members_3.7.txt", DATA / "kcg_offsets.txt",
                                        DATA / "kcg_state.txt"])
    assert DeltaTable(str(out / "drift")).to_pandas().empty
    assert len(DeltaTable(str(out / "assignments")).to_pandas()) == 5
    assert "OBSERVED_DRIFT" not in _whole_group(out)["findings"]


def test_a_cooperative_sticky_groups_other_balanced_assignment_is_no_drift(
        spark, tmp_path: Path) -> None:
    """The range group's capture under cooperative-sticky: its members hold orders(0,1),
    payments(0) and orders(2), payments(1), balanced 3/2, which is not what the assignor
    gives with nothing owned before (the recomputation) but what it keeps from earlier
    generations: no drift (it was 3 HELD_BY_OTHER and an OBSERVED_DRIFT)."""
    files = []
    for name in ("kcg_members_3.7.txt", "kcg_offsets.txt", "kcg_state.txt"):
        text = (DATA / name).read_text(encoding="utf-8").replace(
            "range                Stable", "cooperative-sticky   Stable")
        (tmp_path / name).write_text(text, encoding="utf-8")
        files.append(tmp_path / name)
    out = capture_then_audit(tmp_path, files)
    assignments = DeltaTable(str(out / "assignments")).to_pandas()
    observed = DeltaTable(str(tmp_path / "captured" / "observed")).to_pandas()
    assert set(assignments["strategy"]) == {"cooperative-sticky"}
    holders = {(r.topic, r.queue_id): r.client_id for r in assignments.itertuples()}
    assert holders != {(r.topic, r.queue_id): r.client_id for r in observed.itertuples()}
    assert DeltaTable(str(out / "drift")).to_pandas().empty
    assert "OBSERVED_DRIFT" not in _whole_group(out)["findings"]


def test_one_changed_holder_is_exactly_one_drift_row(spark, tmp_path: Path, capsys) -> None:
    out = capture_then_audit(tmp_path, [*(DATA / n for n in ROCKET),
                                        DATA / "drift" / "consumerProgress_OrderGroup.txt"])
    # drift and group_balance are computed first (the tables after them read them): one
    # `compute` line each inside `plan reports`, then one `report` line each, with rows
    labels = [line[:26].strip() for line in capsys.readouterr().err.splitlines()]
    for table in ("drift", "group_balance"):
        assert (labels.count(f"compute {table}"), labels.count(f"report {table}")) == (1, 1)
    drift = DeltaTable(str(out / "drift")).to_pandas()
    assert drift[["topic", "broker_name", "queue_id", "kind"]].values.tolist() == [
        ["TopicOrder", "broker-b", 2, "HELD_BY_OTHER"]]
    assert list(drift.loc[0, "observed_clients"]) == ["10.0.1.21@21345"]
    whole = _whole_group(out)
    assert "OBSERVED_DRIFT" in whole["findings"]
    assert "1 queue(s) are held differently" in whole["recommendation"]
    assert "different strategy than the one declared" in whole["recommendation"]
    # the other cause a capture leaves open: it may not know each member's subscription
    assert "or some subscribe other topics than the members table says" in whole[
        "recommendation"]


def test_an_audit_into_the_capture_folder_is_refused_before_any_work(spark, tmp_path: Path,
                                                                       capsys) -> None:
    # the capture's own rejects table is not the audit's: refused by the preflight, with
    # nothing written (it failed in the write step, with Spark's analysis error, before)
    captured = tmp_path / "captured"
    assert main(["capture", "import", str(DATA / "kcg_members_3.7.txt"),
                 str(DATA / "kcg_offsets.txt"), "--output", str(captured),
                 "--cluster", "c1", "--snapshot", "s1"]) == 0
    before = sorted(p.name for p in captured.iterdir())
    assert main(["audit", "--queues", str(captured / "queues"), "--members",
                 str(captured / "members"), "--output", str(captured),
                 "--engine", "offline"]) == 2
    err = capsys.readouterr().err
    assert "rejects table at" in err and "is not an audit's rejects table" in err
    assert "lacks source_table, row_json, run_id" in err
    assert sorted(p.name for p in captured.iterdir()) == before


def test_a_client_id_two_processes_share_is_the_audits_duplicate(spark, tmp_path: Path) -> None:
    """consumerConnection lists a shared id once per connection: the capture wrote it as
    one member, so the audit could never say DUPLICATE_CLIENT_ID of a RocketMQ capture."""
    text = (DATA / "consumerConnection_OrderGroup.txt").read_text().replace(
        "10.0.1.22@22456                      10.0.1.22:49876",
        "10.0.1.21@21345                      10.0.1.31:40001        JAVA       V4_9_7\n"
        "10.0.1.22@22456                      10.0.1.22:49876")
    shared = tmp_path / "files" / "consumerConnection_OrderGroup.txt"
    shared.parent.mkdir()
    shared.write_text(text)
    out = capture_then_audit(tmp_path, [DATA / ROCKET[0], DATA / ROCKET[1], shared])
    assert "DUPLICATE_CLIENT_ID" in _whole_group(out)["findings"]
    assignments = DeltaTable(str(out / "assignments")).to_pandas()
    ordered = assignments[assignments["topic"] == "TopicOrder"]
    # three slots for 8 readable queues: the shared id's two processes pull the same share
    assert set(ordered["client_id"].dropna()) == {"10.0.1.21@21345", "10.0.1.22@22456"}
