"""A group audited without some of its members rows (rejected: an unknown strategy, two
rows of one client that disagree, a null client id) says so in its group_balance
recommendation, naming the clients: its figures describe the group without them, and
"Balanced" alone would hide that."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from reports.summary import print_summary
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table

pytestmark = pytest.mark.spark

AT = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")
LEFT_OUT = ("were rejected, so these figures leave them out; the rejects table gives each "
            "row's reason.")


def _member(group: str, client: str | None, topic: str, strategy: str = "AVG",
            addr: str = "10.0.0.1") -> dict:
    return {"snapshot_id": "s1", "cluster": "c", "consumer_group": group, "client_id": client,
            "topic": topic, "strategy": strategy, "client_addr": addr}


def _inputs() -> dict[str, pd.DataFrame]:
    """T has 4 queues, U 2. G: a and b on T, b's two rows disagree (AVG and
    CONSISTENT_HASH from one address), so both are rejected and a is audited alone. H:
    clean. Z: one good client and eight rejected rows on T
    (seven clients with a misspelt strategy, one row without a client id). W: two rows,
    both with a misspelt strategy."""
    queues = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "captured_at": AT, "topic": t,
         "broker_name": "b", "queue_id": q, "max_offset": 100, "readable": True}
        for t, n in (("T", 4), ("U", 2)) for q in range(n)])
    members = [
        _member("G", "a", "T"),
        _member("G", "b", "T"), _member("G", "b", "T", "CONSISTENT_HASH"),
        _member("H", "c", "T"), _member("H", "d", "T"),
        _member("Z", "good", "T"), _member("Z", None, "T"),
        *[_member("Z", f"z{i}", "T", "AVERAGE") for i in range(1, 8)],
        # W: every row rejected, so W has no figures at all
        _member("W", "w1", "T", "AVERAGE"), _member("W", "w2", "T", "AVERAGE"),
    ]
    return {"queues": queues, "members": pd.DataFrame(members)}


def _audit(spark, tmp_path, **inputs: pd.DataFrame):
    """(result, output root) of an audit of `inputs` (no what-if, 2 buckets)."""
    paths = write_inputs(spark, Path(tmp_path) / "in", **inputs)
    out = Path(tmp_path) / "out"
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(out), engine="offline", what_if="off", buckets=2),
                 spark=spark)
    return result, out


def _recommendations(balance: pd.DataFrame) -> dict:
    """(group, topic or None) → its group_balance recommendation."""
    return {(g, None if pd.isna(t) else t): r for g, t, r in zip(
        balance["consumer_group"], balance["topic"], balance["recommendation"], strict=True)}


def test_a_group_audited_without_rejected_members_rows_says_so(spark, tmp_path) -> None:
    result, out = _audit(spark, tmp_path, **_inputs())
    rejects = table(out, "rejects")
    assert list(rejects["source_table"]) == ["members"] * 12
    balance = table(out, "group_balance")
    said = _recommendations(balance)
    # G is audited without b on T: a takes all of T, the figures of a balanced group
    assert said[("G", None)] == f"2 members row(s) of this group (client(s) b) {LEFT_OUT}"
    assert said[("G", "T")] == f"2 members row(s) of this topic (client(s) b) {LEFT_OUT}"
    assert said[("H", None)] == said[("H", "T")] == "Balanced: no action needed."
    # the null client id is counted, not named; past five clients the rest are counted
    assert said[("Z", None)] == (f"8 members row(s) of this group (client(s) z1, z2, z3, z4, "
                                 f"z5 and 2 more) {LEFT_OUT}")
    assert said[("Z", "T")] == said[("Z", None)].replace("this group", "this topic")
    # the figures are those of the group without the rejected rows
    figures = balance.set_index(["consumer_group", balance["topic"].fillna("*")])
    assert figures.loc[("G", "T"), "subscribing_clients"] == 1
    assert figures.loc[("Z", "*"), "clients"] == 1
    # no group has a finding, yet the console summary does not call them all balanced
    assert "W" not in set(balance["consumer_group"])
    assert result.worst_groups == [] and result.members_short.total == 2
    assert [(g["consumer_group"], g["rejected"]) for g in result.members_short.first] == [
        ("G", "2 members row(s) of this group (client(s) b)"),
        ("Z", "8 members row(s) of this group (client(s) z1, z2, z3, z4, z5 and 2 more)")]
    assert result.members_gone.total == 1
    assert [(g["consumer_group"], g["rows"]) for g in result.members_gone.first] == [("W", 2)]
    text = io.StringIO()
    print_summary(result, text)
    assert "every audited group is balanced" not in text.getvalue()
    assert ("\nNo group has findings in what was audited, but not every group was audited "
            "whole (below).\n"
            "\n2 groups audited without some of their members rows, which were rejected: the "
            "figures leave those clients out:\n"
            "  c/G @ s1: 2 members row(s) (client(s) b)\n"
            "  c/Z @ s1: 8 members row(s) (client(s) z1, z2, z3, z4, z5 and 2 more)\n"
            "\n1 group with every members row rejected, so not audited at these snapshots:\n"
            "  c/W @ s1: 2 members row(s) rejected\n") in text.getvalue()


def test_a_run_without_rejected_members_rows_reads_as_before(spark, tmp_path) -> None:
    inputs = _inputs()
    members = inputs["members"]
    inputs["members"] = members[members["consumer_group"] == "H"]
    result, out = _audit(spark, tmp_path, **inputs)
    assert table(out, "rejects").empty
    assert result.members_short.total == result.members_gone.total == 0
    assert set(table(out, "group_balance")["recommendation"]) == {
        "Balanced: no action needed."}


def test_topics_whose_queues_rows_were_rejected_say_so(spark, tmp_path) -> None:
    """Two rows of one queue that disagree leave the queue out, as a negative queue id
    does: the topic's figures count fewer queues than it has, and "Balanced" alone hid
    that. An exact duplicate's first copy is audited: not counted."""
    queues = _inputs()["queues"]
    row = queues.iloc[0].to_dict()  # T, queue 0
    queues = pd.concat([queues, pd.DataFrame([
        {**row, "queue_id": 3, "max_offset": 7},   # T 3 again, other max_offset: conflict
        {**row, "topic": "U", "queue_id": -1},     # U: no such queue id
        row,                                        # T 0 again, the same: exact duplicate
    ])], ignore_index=True)
    members = pd.DataFrame([_member("H", "c", "T"), _member("H", "d", "T"),
                            _member("H", "c", "U"), _member("H", "d", "U"),
                            _member("V", "e", "U")])
    result, out = _audit(spark, tmp_path, queues=queues, members=members)
    rejects = table(out, "rejects")
    assert sorted(rejects["source_table"]) == ["queues"] * 4
    balance = table(out, "group_balance")
    said = _recommendations(balance)
    assert said[("H", "T")] == f"2 queues row(s) of this topic {LEFT_OUT}"
    assert said[("H", "U")] == f"1 queues row(s) of this topic {LEFT_OUT}"
    assert said[("H", None)] == f"3 queues row(s) of the group's topics {LEFT_OUT}"
    assert said[("V", "U")] == f"1 queues row(s) of this topic {LEFT_OUT}"
    assert said[("V", None)] == f"1 queues row(s) of the group's topics {LEFT_OUT}"
    figures = balance.set_index(["consumer_group", balance["topic"].fillna("*")])
    assert figures.loc[("H", "T"), "queues"] == 3  # T's queue 3 left out
    # the console summary does not call them balanced either
    assert result.worst_groups == [] and result.queues_short.total == 2
    text = io.StringIO()
    print_summary(result, text)
    assert ("\nNo group has findings in what was audited, but not every group was audited "
            "whole (below).\n"
            "\n2 groups whose topics lost queues rows, which were rejected: the figures leave "
            "those queues out:\n"
            "  c/H @ s1: 3 queues row(s)\n"
            "  c/V @ s1: 1 queues row(s)\n") in text.getvalue()
