"""Fault injection: the output tables stay a system of record under re-runs, missing
inputs, concurrent runs, kills between commits, debris and bad output roots.

Concurrent runs are interleaved deterministically in one process (a run's hook runs a
whole second audit at a chosen point), and once for real as two processes; kills are a
real SIGKILL of a CLI process at a named point of its run (jobs/faults.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import StalePrior, run
from jobs.cli import main
from jobs.config import AuditConfig
from reports.html.data import load as load_page
from reports.html.page import esc, render
from storage.base import ConflictError
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import (
    REPORT_TABLES,
    assert_one_complete_run,
    complete_run,
    member_rows,
    observed_rows,
    queue_rows,
    run_ids,
    table,
)
from vocabulary.errors import InputError

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[2]


def audit(spark, paths: dict, out: Path, run_id: str, **kwargs):
    config = AuditConfig(queues=paths["queues"], members=paths["members"],
                         offsets=paths.get("offsets"), output=str(out), engine="offline",
                         run_id=run_id, **{k: v for k, v in kwargs.items() if k != "hook"})
    return run(config, spark=spark, hook=kwargs.get("hook"))


def killed_audit(paths: dict, out: Path, point: str, *flags: str) -> None:
    """An audit CLI process of run id `killed` that SIGKILLs itself at `point`
    (jobs/faults.py), as an operator's `kill -9` would."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REBALANCE_AUDIT_KILL_AT": point}
    proc = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "audit", "--queues", paths["queues"],
         "--members", paths["members"], "--output", str(out), "--engine", "offline",
         "--run-id", "killed", *flags], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300)
    assert proc.returncode == -9, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def inputs(spark, tmp_path_factory) -> dict[str, dict]:
    """Input sets: A+C complete; A+C queues with members of A only; B alone (between)."""
    root = tmp_path_factory.mktemp("inputs")
    full = write_inputs(spark, root / "full", queues=queue_rows(["A", "C"]),
                        members=member_rows(["A", "C"]))
    no_c = write_inputs(spark, root / "no_c", queues=queue_rows(["A", "C"]),
                        members=member_rows(["A"]))
    return {"full": full, "no_c": no_c}


# ------------------------------------------------------------------ re-runs and inputs
def test_missing_snapshot_in_one_input_keeps_good_output(spark, inputs, tmp_path) -> None:
    out = tmp_path / "out"
    audit(spark, inputs["full"], out, "first")
    assert assert_one_complete_run(out, "C") == "first"
    before = {name: len(table(out, name)) for name in REPORT_TABLES}

    result = audit(spark, inputs["no_c"], out, "second")

    assert result.snapshots == ["A"] and result.not_audited == ["C"]
    assert any("members has no usable rows" in w and "snapshot C" in w for w in result.warnings)
    for name in REPORT_TABLES:  # C's rows are still there, from the first run
        assert len(table(out, name)) == before[name], name
        assert run_ids(out, name, "C") == {"first"}, name
    assert complete_run(out, "C") == "first" and complete_run(out, "A") == "second"
    rejects = table(out, "rejects")
    missing = rejects[(rejects["snapshot_id"] == "C") & (rejects["run_id"] == "second")]
    # each of C's queues rows the run left out, as it came in (one row saying how many was
    # no input row, and the console counted it as one)
    c_queues = queue_rows(["C"])
    assert len(missing) == len(c_queues) and set(missing["source_table"]) == {"queues"}
    assert sorted(json.loads(r)["queue_id"] for r in missing["row_json"]) == sorted(
        c_queues["queue_id"])
    assert set(missing["reason"]) == {"members has no usable rows, queues has "
                                      f"{len(c_queues)}: not audited (earlier output of it "
                                      "is kept)"}
    # a re-run of the same incomplete input does not multiply those rows
    audit(spark, inputs["no_c"], out, "third")
    rejects = table(out, "rejects")
    assert len(rejects[rejects["snapshot_id"] == "C"]) == len(c_queues)
    assert run_ids(out, "assignments", "C") == {"first"}
    # a run of A alone replaces the third run's last runs row: the documented filter
    # still reads C's rejects, which sit under the first run's COMPLETE row (filtering on
    # `run_id IN runs` hid them, probe A)
    audit(spark, inputs["no_c"], out, "fourth", snapshots=("A",))
    rejects, runs = table(out, "rejects"), table(out, "runs")
    assert "third" not in set(runs["run_id"])
    documented = rejects[rejects["snapshot_id"].isna()
                         | rejects["snapshot_id"].isin(runs["snapshot_id"])]
    assert len(documented) == len(rejects) and set(documented["run_id"]) == {"third"}


def test_strict_mode_refuses_incomplete_inputs_and_writes_nothing(spark, inputs,
                                                                  tmp_path) -> None:
    out = tmp_path / "out"
    with pytest.raises(InputError, match=r"strict mode: .*snapshot C.*members has no usable"):
        audit(spark, inputs["no_c"], out, "strict", strict=True)
    assert table(out, "assignments").empty and table(out, "runs").empty


def test_snapshots_in_no_input_are_exit_2_unless_one_of_them_is_there(spark, inputs,
                                                                      tmp_path) -> None:
    """A typo'd --snapshot audited nothing and exited 0, strict or not."""
    out = tmp_path / "out"
    with pytest.raises(InputError, match=r"--snapshot Z, Y: no row of them in any input"):
        audit(spark, inputs["full"], out, "typo", snapshots=("Z", "Y", "Z"))
    assert table(out, "assignments").empty and table(out, "runs").empty
    # "nothing written": not even the output root's folder (it was left empty)
    assert not out.exists()
    result = audit(spark, inputs["full"], out, "some", snapshots=("A", "Z"))
    assert result.snapshots == ["A"]
    assert "snapshot Z is in none of the inputs" in result.warnings


def test_rejects_are_replaced_not_multiplied(spark, tmp_path) -> None:
    queues = queue_rows(["A"])
    bad = pd.DataFrame([
        {"snapshot_id": None, "cluster": "c", "topic": "T", "broker_name": "b", "queue_id": 1,
         "max_offset": 100},
        {"snapshot_id": "X", "cluster": "c", "topic": "T", "broker_name": "b", "queue_id": -1,
         "max_offset": 100},
        {"snapshot_id": "X", "cluster": "c", "topic": "T", "broker_name": "b", "queue_id": -2,
         "max_offset": 100},
    ])
    paths = write_inputs(spark, tmp_path / "in", queues=pd.concat([queues, bad]),
                         members=member_rows(["A"]))
    out = tmp_path / "out"
    counts = []
    for k in range(3):
        audit(spark, paths, out, f"run-{k}")
        rejects = table(out, "rejects")
        counts.append((int(rejects["snapshot_id"].isna().sum()),
                       int((rejects["snapshot_id"] == "X").sum())))
    assert counts == [(1, 2)] * 3
    runs = table(out, "runs")
    x = runs[runs["snapshot_id"] == "X"]
    assert list(x["status"]) == ["NOT_AUDITED"] and list(x["run_id"]) == ["run-2"]
    # runs of named snapshots leave the row without one, and replace every runs row of
    # the run that wrote it: the README's filter still reads it (`run_id IN runs` alone
    # hid it, probe Z)
    audit(spark, paths, out, "named", snapshots=("A", "X"))
    rejects, runs = table(out, "rejects"), table(out, "runs")
    assert set(runs["run_id"]) == {"named"}
    documented = rejects[rejects["snapshot_id"].isna()
                         | rejects["snapshot_id"].isin(runs["snapshot_id"])]
    assert len(documented) == len(rejects) == 3
    assert documented.loc[documented["snapshot_id"].isna(), "run_id"].tolist() == ["run-2"]


def test_a_snapshot_read_but_not_audited_keeps_its_capture_time_in_runs(spark,
                                                                        tmp_path) -> None:
    """Snapshot B has queues (captured at T0 + 5 min) and no members: its NOT_AUDITED runs
    row says when it was captured, as a COMPLETE one does (it was null)."""
    queues = queue_rows(["A", "B"])
    paths = write_inputs(spark, tmp_path / "in", queues=queues, members=member_rows(["A"]))
    out = tmp_path / "out"
    audit(spark, paths, out, "run-1")
    runs = table(out, "runs").set_index("snapshot_id")
    assert runs.loc["B", "status"] == "NOT_AUDITED" and runs.loc["A", "status"] == "COMPLETE"
    times = queues.groupby("snapshot_id")["captured_at"].min()
    for snapshot in ("A", "B"):
        assert pd.Timestamp(runs.loc[snapshot, "captured_at"]) == times[snapshot], snapshot


def test_a_cluster_left_out_of_a_rerun_is_a_warning_or_a_strict_failure(spark,
                                                                        tmp_path) -> None:
    """Snapshot A of clusters c and d, then A audited again from inputs of d alone: the
    re-run replaces the snapshot, c's rows go, and the user is told (strict: refused)."""
    both = write_inputs(spark, tmp_path / "both",
                        queues=pd.concat([queue_rows(["A"], "c"), queue_rows(["A"], "d")]),
                        members=pd.concat([member_rows(["A"], "c"), member_rows(["A"], "d")]))
    only_d = write_inputs(spark, tmp_path / "d", queues=queue_rows(["A"], "d"),
                          members=member_rows(["A"], "d"))
    out = tmp_path / "out"
    assert not audit(spark, both, out, "both").warnings
    with pytest.raises(InputError, match=r"snapshot A \(cluster c\): the output holds a "
                                         r"complete run of this snapshot and cluster"):
        audit(spark, only_d, out, "strict", strict=True)
    assert assert_one_complete_run(out, "A") == "both"  # nothing written
    result = audit(spark, only_d, out, "lenient")
    assert [w for w in result.warnings if "cluster c" in w and "removes its rows" in w]
    assert set(table(out, "assignments")["cluster"]) == {"d"}


def test_a_cluster_whose_members_are_missing_from_a_rerun_is_not_audited(spark,
                                                                         tmp_path) -> None:
    """A capture killed between its queues and its members leaves a cluster with queues
    but no members. A re-run then audited it with no members: its earlier rows went
    without a word, a complete runs row said 0 assignments, and every observed holder of
    it was drift. Now the cluster is not audited (its offsets and observed rows are
    rejects rows saying so), and removing its earlier rows is a warning."""
    queues = pd.concat([queue_rows(["A"], "c"), queue_rows(["A"], "d")])
    observed = pd.concat([observed_rows(["A"], "c"), observed_rows(["A"], "d")])
    offsets = queues.drop(columns=["captured_at", "max_offset"]).assign(
        consumer_group="G", committed_offset=90)
    both = write_inputs(spark, tmp_path / "both", queues=queues, offsets=offsets,
                        members=pd.concat([member_rows(["A"], "c"), member_rows(["A"], "d")]),
                        observed=observed)
    no_c = write_inputs(spark, tmp_path / "no_c", queues=queues, offsets=offsets,
                        members=member_rows(["A"], "d"), observed=observed)
    out = tmp_path / "out"
    audit(spark, both, out, "both", observed=both["observed"])
    with pytest.raises(InputError, match=r"snapshot A \(cluster c\): the output holds a "
                                         r"complete run of this snapshot and cluster"):
        audit(spark, no_c, out, "strict", observed=no_c["observed"], strict=True)
    assert assert_one_complete_run(out, "A") == "both"  # nothing written
    result = audit(spark, no_c, out, "lenient", observed=no_c["observed"])
    assert [w for w in result.warnings if w.startswith(
        "snapshot A (cluster c): the output holds a complete run of this snapshot and "
        "cluster, and this run's inputs lack its usable queues or members rows: replacing "
        "the snapshot removes its rows")], result.warnings
    runs = table(out, "runs")
    assert sorted(zip(runs["cluster"], runs["run_id"], strict=True)) == [("d", "lenient")]
    for name in ("assignments", "consumer_load", "group_balance", "drift"):
        assert set(table(out, name)["cluster"]) <= {"d"}, name
    rejects = table(out, "rejects")
    of_c = rejects[rejects["cluster"] == "c"]
    assert of_c.groupby("source_table").size().to_dict() == {"queues": 4, "offsets": 4,
                                                             "observed": 4}
    said = of_c.drop_duplicates("source_table").set_index("source_table")["reason"].to_dict()
    assert said == {
        "queues": "members has no usable rows for this cluster, queues has 4: the cluster "
                  "is not audited",
        "offsets": "the cluster is not audited (queues or members has no usable rows of "
                   "it), offsets has 4",
        "observed": "the cluster is not audited (queues or members has no usable rows of "
                    "it), observed has 4"}


def test_rows_an_option_left_out_replaces_by_none_are_a_warning(spark, tmp_path) -> None:
    """A audited with --observed (client c1 holds every queue: 2 drift), --offsets and
    --what-if all, then again without them: those rows, and the lags, go, and the run
    says so per table; with --observed and --offsets again, no word."""
    queues = queue_rows(["A"])
    paths = write_inputs(spark, tmp_path / "in", queues=queues, members=member_rows(["A"]),
                         observed=observed_rows(["A"]),
                         offsets=queues.drop(columns=["captured_at", "max_offset"])
                         .assign(consumer_group="G", committed_offset=90, consumed_offset=95))
    out = tmp_path / "out"
    audit(spark, paths, out, "seen", observed=paths["observed"], what_if="all")
    assert len(table(out, "drift")) == 2
    assert table(out, "consumer_load")["lag"].tolist() == [20, 20]
    what_ifs = len(table(out, "what_if"))
    no_offsets = {k: v for k, v in paths.items() if k != "offsets"}
    result = audit(spark, no_offsets, out, "unseen", what_if="off")
    assert sorted(w.split(";")[0] for w in result.warnings) == [
        "drift: the output's complete runs of snapshot A (cluster c) wrote 2 drifting "
        "queue(s)",
        "lag: the output's complete runs of snapshot A (cluster c) knew the lag of 2 "
        "client(s) (consumer_load)",
        f"what_if: the output's complete runs of snapshot A (cluster c) wrote {what_ifs} "
        "what-if row(s)"], result.warnings
    assert table(out, "drift").pipe(lambda d: d[d["run_id"] == "unseen"]).empty
    assert table(out, "consumer_load")["lag"].isna().all()
    assert not audit(spark, no_offsets, out, "unseen2").warnings  # nothing left to replace
    audit(spark, paths, out, "seen2", observed=paths["observed"])
    assert not [w for w in audit(spark, paths, out, "seen3", observed=paths["observed"])
                .warnings if w.startswith(("drift:", "lag:"))]


def test_a_backfilled_snapshot_names_the_later_one_whose_churn_it_outdates(spark,
                                                                            tmp_path) -> None:
    """A and C audited, then B (captured between them) backfilled: C's churn still
    compares with A until C is audited again, and the backfill says so."""
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(["A", "B", "C"]),
                         members=member_rows(["A", "B", "C"]))
    out = tmp_path / "out"
    audit(spark, paths, out, "ac", snapshots=("A", "C"))
    result = audit(spark, paths, out, "b", snapshots=("B",))
    stale = [w for w in result.warnings if w.startswith("snapshot C (cluster c)")]
    assert stale and "compares with snapshot A" in stale[0] and "--snapshot C" in stale[0], \
        result.warnings
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == ["A"]
    # the page of the cluster's latest snapshot, C, says so too: not only the backfill's
    # log, and not the page the backfill wrote (of B)
    shown = load_page(str(out)).warnings
    assert (shown.by_run, shown.about_shown) == ({"ac": []}, {"b": stale}), shown
    assert esc(f"run b: {stale[0]}") in render(load_page(str(out)))
    # B audited again before C: C's previous stays B, yet its churn still compares with
    # A; that run said nothing, and the backfill's word went with its run
    result = audit(spark, paths, out, "b1", snapshots=("B",))
    behind = [w for w in result.warnings if w.startswith("snapshot C (cluster c)")]
    assert behind == [
        "snapshot C (cluster c): already in the output, it follows snapshot B, which this "
        "run audits again, but its churn compares with snapshot A (and its sticky "
        "assignors started from A's assignment): it was audited before B was added before "
        "it, and stays so until it is audited again (--snapshot C)"], result.warnings
    assert load_page(str(out)).warnings.about_shown == {"b1": behind}
    result = audit(spark, paths, out, "c", snapshots=("C",))  # as the warning says
    assert not [w for w in result.warnings if "compares with" in w]
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == ["B"]
    assert load_page(str(out)).warnings.about_shown == {}  # C audited again: it holds no more
    # a re-run of a snapshot already held changes no later one's previous: no warning
    assert not [w for w in audit(spark, paths, out, "b2", snapshots=("B",)).warnings
                if "compares with" in w]
    assert load_page(str(out)).warnings.about_shown == {}


def test_a_snapshot_audited_before_its_predecessor_is_named_when_that_one_is_run_again(
        spark, tmp_path) -> None:
    """C audited alone (no churn rows), then B backfilled before it (which names C), then
    B audited again: C still compares with nothing, and the second run of B says so."""
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(["B", "C"]),
                         members=member_rows(["B", "C"]))
    out = tmp_path / "out"
    audit(spark, paths, out, "c", snapshots=("C",))
    audit(spark, paths, out, "b", snapshots=("B",))
    result = audit(spark, paths, out, "b1", snapshots=("B",))
    assert [w for w in result.warnings if w.startswith("snapshot C ")] == [
        "snapshot C (cluster c): already in the output, it follows snapshot B, which this "
        "run audits again, but its churn compares with no earlier snapshot (and its sticky "
        "assignors with no previous assignment): it was audited before B was added before "
        "it, and stays so until it is audited again (--snapshot C)"], result.warnings
    audit(spark, paths, out, "c1", snapshots=("C",))
    assert not [w for w in audit(spark, paths, out, "b2", snapshots=("B",)).warnings
                if w.startswith("snapshot C ")]


def a_corrected(spark, tmp_path: Path) -> tuple:
    """(queues of A and B, input paths of A and B, members of X and A, input paths of A
    alone with three clients: its capture corrected)."""
    queues = queue_rows(["A", "B"])
    first = write_inputs(spark, tmp_path / "first", queues=queues,
                         members=member_rows(["A", "B"]))
    more = member_rows(["X", "A"])  # A with three clients
    fixed = write_inputs(spark, tmp_path / "fixed", queues=queues,
                         members=more[more["snapshot_id"] == "A"])
    return queues, first, more, fixed


def test_an_earlier_snapshot_audited_again_from_changed_inputs_names_its_follower(
        spark, tmp_path) -> None:
    """A and B audited; A's capture corrected (a third client) and A audited again: B's
    churn still compares with A's replaced rows, and the run says so; from the same inputs
    again, or once B is audited again, no word."""
    queues, first, more, fixed = a_corrected(spark, tmp_path)
    out = tmp_path / "out"
    audit(spark, first, out, "ab")
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "B", "clients_before"]) == [2]
    result = audit(spark, fixed, out, "a", snapshots=("A",))
    stale = [w for w in result.warnings if "whose rows this run replaces" in w]
    assert stale == [
        "snapshot B (cluster c): already in the output, its churn compares with snapshot A, "
        "whose rows this run replaces with different ones (its inputs changed): that churn, "
        "and the sticky assignors' start, stay those of the replaced rows until it is "
        "audited again (--snapshot B)"], result.warnings
    assert not [w for w in audit(spark, fixed, out, "a2", snapshots=("A",)).warnings
                if "whose rows this run replaces" in w]
    both = write_inputs(spark, tmp_path / "both", queues=queues,
                        members=pd.concat([more[more["snapshot_id"] == "A"],
                                           member_rows(["A", "B"]).query("snapshot_id == 'B'")]))
    audit(spark, both, out, "b", snapshots=("B",))
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "B", "clients_before"]) == [3]
    assert not [w for w in audit(spark, fixed, out, "a3", snapshots=("A",)).warnings
                if "whose rows this run replaces" in w]


def test_a_follower_of_a_snapshot_whose_run_was_killed_is_named_with_what_it_compares(
        spark, tmp_path) -> None:
    """A and B audited; A audited again from changed inputs and killed after a commit (its
    `runs` row retracted); then A audited again. B's churn compares with A as the first
    run wrote it, yet the run said "B now follows A, which this run adds: its churn
    compares with no earlier snapshot"."""
    _, first, _, fixed = a_corrected(spark, tmp_path)
    out = tmp_path / "out"
    audit(spark, first, out, "ab")
    killed_audit(fixed, out, "committed:group_balance", "--snapshot", "A")
    assert complete_run(out, "A") is None and complete_run(out, "B") == "ab"

    result = audit(spark, fixed, out, "a", snapshots=("A",))

    named = [w for w in result.warnings if w.startswith("snapshot B ")]
    assert named == [
        "snapshot B (cluster c): already in the output, its churn compares with snapshot A "
        "as an earlier run of it wrote it, a run that did not complete: this run replaces "
        "those rows, so that churn (and the sticky assignors' start) may not match them "
        "until it is audited again (--snapshot B)"], result.warnings
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "B", "previous_snapshot_id"]) == ["A"]


@pytest.mark.parametrize(("queue_snapshots", "said", "not_audited"), [
    (["A"], "the members input has no usable rows at all", ["A"]),
    # two empty inputs are no less a mistake than one (a capture that found nothing, a
    # path to last week's empty folder)
    ([], "the queues and members inputs have no usable rows at all", []),
], ids=["members", "both"])
def test_an_empty_input_is_a_warning_or_a_strict_failure(spark, tmp_path, queue_snapshots,
                                                          said, not_audited) -> None:
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(queue_snapshots),
                         members=member_rows([]))
    out = tmp_path / "out"
    args = ["audit", "--queues", paths["queues"], "--members", paths["members"],
            "--output", str(out), "--engine", "offline"]
    assert main([*args, "--strict"]) == 2
    assert table(out, "runs").empty
    result = audit(spark, paths, out, "lenient")
    assert result.snapshots == [] and result.not_audited == not_audited
    assert any(said in w for w in result.warnings), result.warnings
    # the queues rows the run left out, each its own rejects row (one row said how many)
    rejects = table(out, "rejects")
    assert list(rejects.get("source_table", [])) == ["queues"] * len(queue_rows(not_audited))


# ---------------------------------------------------------------- concurrent writers
@pytest.mark.parametrize("existing", [False, True], ids=["new-tables", "existing-tables"])
def test_two_runs_of_one_snapshot_cannot_duplicate(spark, inputs, tmp_path, existing) -> None:
    """Run Y publishes the same snapshots while X computes: X must fail with exit-2
    semantics, having published nothing; every table holds Y's rows once."""
    out = tmp_path / "out"
    if existing:
        audit(spark, inputs["full"], out, "old")

    def y_runs_meanwhile(point: str) -> None:
        if point == "reports":
            audit(spark, inputs["full"], out, "Y")

    with pytest.raises(ConflictError, match=r"run Y wrote snapshot\(s\) A, C"):
        audit(spark, inputs["full"], out, "X", hook=y_runs_meanwhile)
    for snapshot in ("A", "C"):
        assert assert_one_complete_run(out, snapshot) == "Y"


def test_run_overtaken_between_its_table_commits_publishes_nothing(spark, inputs,
                                                                   tmp_path) -> None:
    out = tmp_path / "out"
    audit(spark, inputs["full"], out, "old")

    def y_runs_meanwhile(point: str) -> None:
        if point == "committed:assignments":
            audit(spark, inputs["full"], out, "Y")

    with pytest.raises(ConflictError, match="consumer_load"):
        audit(spark, inputs["full"], out, "X", hook=y_runs_meanwhile)
    for snapshot in ("A", "C"):
        assert assert_one_complete_run(out, snapshot) == "Y"


def test_a_run_overtaken_between_its_check_and_its_runs_commit_publishes_nothing(
        spark, inputs, tmp_path) -> None:
    """X checked its tables, then stalled before its `runs` commit (stopped, paused, or
    waiting for the publish lock) while Y replaced every table and died before landing.
    X's `runs` commit named X beside Y's rows: the documented join gave no row of A or
    C. Now X looks again once `runs` names it and takes its rows back: no complete run
    of them until the next run, which repairs every table."""
    out = tmp_path / "out"
    audit(spark, inputs["full"], out, "old")

    def y_dies(point: str) -> None:
        if point == "committed:rejects":  # every table written; before its own check
            raise RuntimeError("Y killed")

    def y_writes_meanwhile(point: str) -> None:
        if point == "verified":
            with pytest.raises(RuntimeError, match="Y killed"):
                audit(spark, inputs["full"], out, "Y", hook=y_dies)

    with pytest.raises(ConflictError, match=r"run Y wrote snapshot\(s\) A, C of the "
                                            r"assignments table"):
        audit(spark, inputs["full"], out, "X", hook=y_writes_meanwhile)
    assert complete_run(out, "A") is None and complete_run(out, "C") is None
    assert run_ids(out, "assignments", "A") == {"Y"}
    audit(spark, inputs["full"], out, "rerun")
    for snapshot in ("A", "C"):
        assert assert_one_complete_run(out, snapshot) == "rerun"


def test_a_run_overwritten_by_one_of_the_same_run_id_publishes_nothing(spark, inputs,
                                                                       tmp_path) -> None:
    """Two runs given the same --run-id: Y (other inputs) overwrites X's assignments and
    dies. X must not take Y's commit for its own and publish a run whose tables mix
    both."""
    out = tmp_path / "out"
    more = write_inputs(spark, tmp_path / "more", queues=queue_rows(["A", "C"], queues=8),
                        members=member_rows(["A", "C"]))

    def crash(point: str) -> None:
        if point == "committed:assignments":
            raise RuntimeError("Y killed")

    def y_runs_meanwhile(point: str) -> None:
        if point == "committed:assignments":
            with pytest.raises(RuntimeError, match="Y killed"):
                audit(spark, more, out, "nightly", hook=crash)

    with pytest.raises(ConflictError, match=r"run nightly \(another run given this run's "
                                            r"--run-id\) wrote snapshot\(s\) A, C of the "
                                            r"assignments table"):
        audit(spark, inputs["full"], out, "nightly", hook=y_runs_meanwhile)
    assert complete_run(out, "A") is None and complete_run(out, "C") is None
    audit(spark, inputs["full"], out, "rerun")  # the next run repairs every table
    assert assert_one_complete_run(out, "A") == "rerun"


def _output_holding_a(spark, tmp_path: Path) -> tuple[dict, Path]:
    """Inputs of snapshots A, B and C, and an output holding a complete run of A."""
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(["A", "B", "C"]),
                         members=member_rows(["A", "B", "C"]))
    out = tmp_path / "out"
    audit(spark, paths, out, "first", snapshots=("A",))
    return paths, out


def test_earlier_snapshot_landing_meanwhile_recomputes_churn(spark, tmp_path) -> None:
    """Y publishes B (between A and C) while X computes C: X's churn must be against B."""
    paths = {name: write_inputs(spark, tmp_path / name, queues=queue_rows(snaps),
                                members=member_rows(snaps))
             for name, snaps in (("ab", ["A", "B"]), ("abc", ["A", "B", "C"]))}
    out = tmp_path / "out"
    audit(spark, paths["ab"], out, "first", snapshots=("A",))
    log = []

    def y_runs_meanwhile(point: str) -> None:
        if point == "reports" and not log:
            log.append(point)
            audit(spark, paths["ab"], out, "Y", snapshots=("B",))

    audit(spark, paths["abc"], out, "X", snapshots=("C",), hook=y_runs_meanwhile)
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == ["B"]
    assert StalePrior.__doc__  # the retried condition has a name users see in the log


def _once_at(point: str, log: list[str], action: Callable[[], object]
             ) -> Callable[[str], None]:
    """A run's hook doing `action` (another run) the first time the run reaches `point`,
    noted in `log`."""
    def hook(reached: str) -> None:
        if reached == point and not log:
            log.append(reached)
            action()
    return hook


def test_an_earlier_snapshot_landing_after_this_runs_commits_recomputes_and_lands(
        spark, tmp_path) -> None:
    """Y publishes B while X (C) is between its table commits: X's check in its publish
    turn computes C again against B. The new attempt's conflict check took X's own first
    commits for another writer's: X failed naming itself, its first rows of C left
    without a `runs` row (probe F)."""
    paths, out = _output_holding_a(spark, tmp_path)
    log: list[str] = []
    y_runs_meanwhile = _once_at("committed:assignments", log,
                                lambda: audit(spark, paths, out, "Y", snapshots=("B",)))
    audit(spark, paths, out, "X", snapshots=("C",), hook=y_runs_meanwhile)
    assert log
    assert assert_one_complete_run(out, "C") == "X"
    churn = table(out, "rebalance_churn")
    assert set(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == {"B"}


class _Died(Exception):
    """A run's end at a hook point, as a crash ends it."""


def test_an_earlier_snapshot_another_run_takes_apart_leaves_this_run_to_land(
        spark, tmp_path) -> None:
    """Y audits A again and dies after retracting A's `runs` row, while X computes B
    against A's complete rows. X took A's absence for a snapshot published meanwhile: it
    computed B's churn again against nothing, and, had A landed again before X's turn, it
    exited 2 with B's rows written and its `runs` row gone (probe X: a complete snapshot
    made incomplete). Now X lands with the churn it computed against the A it read; A's
    next run names B."""
    paths, out = _output_holding_a(spark, tmp_path)
    log: list[str] = []

    def dies(point: str) -> None:
        if point == "retracted":
            raise _Died

    def y_takes_a_apart() -> None:
        with pytest.raises(_Died):
            audit(spark, paths, out, "Y", snapshots=("A",), hook=dies)

    audit(spark, paths, out, "X", snapshots=("B",),
          hook=_once_at("reports", log, y_takes_a_apart))
    assert log
    assert assert_one_complete_run(out, "B") == "X"
    assert complete_run(out, "A") is None  # Y died: A waits for its next run
    churn = table(out, "rebalance_churn")
    assert set(churn.loc[churn["snapshot_id"] == "B", "previous_snapshot_id"]) == {"A"}


def test_a_snapshot_right_after_one_whose_run_died_names_it(spark, tmp_path) -> None:
    """Y audits A again and dies after retracting A's `runs` row; then B is audited. Churn
    compares with complete snapshots only, so B got no churn rows, and the run said only
    "no earlier snapshot in the output" (probe X, stop 98: "dk"). It names A now, and
    what to do. C, right after B, is no such snapshot."""
    paths, out = _output_holding_a(spark, tmp_path)

    def dies(point: str) -> None:
        if point == "retracted":
            raise _Died

    with pytest.raises(_Died):
        audit(spark, paths, out, "Y", snapshots=("A",), hook=dies)
    result = audit(spark, paths, out, "X", snapshots=("B",))
    assert [w for w in result.warnings if "no complete run" in w] == [
        "snapshot B (cluster c): the output holds rows of snapshot A, captured before it, "
        "that no complete run names (a run of A was killed, or is writing it now): its "
        "churn, and the sticky assignors' previous assignment, compare with no earlier "
        "snapshot (it gets no churn rows), not with A. If that run lands, it names this "
        "snapshot for another audit; if it was killed, audit A again (--snapshot A), then "
        "this one (--snapshot B)"], result.warnings
    churn = table(out, "rebalance_churn")
    assert churn.loc[churn["snapshot_id"] == "B"].empty
    assert not [w for w in audit(spark, paths, out, "Z", snapshots=("C",)).warnings
                if "no complete run" in w]


def test_an_earlier_snapshot_audited_again_meanwhile_recomputes_churn(spark, tmp_path,
                                                                      caplog) -> None:
    """Y audits A again and lands while X computes B: the rows X compared B with are
    replaced. X compared only which snapshots were there, so it landed B's churn against
    rows no longer in the output, and no run said so (Y's landing came first)."""
    paths, out = _output_holding_a(spark, tmp_path)
    log: list[str] = []
    with caplog.at_level("WARNING", logger="rebalance_audit"):
        audit(spark, paths, out, "X", snapshots=("B",), hook=_once_at(
            "reports", log, lambda: audit(spark, paths, out, "Y", snapshots=("A",))))
    assert log
    assert ("another run published snapshot(s) A before this run's first one; churn must "
            "be compared with them: computing again") in caplog.text
    assert (assert_one_complete_run(out, "A"), assert_one_complete_run(out, "B")) == ("Y",
                                                                                     "X")


def test_a_later_snapshot_landing_meanwhile_is_named_when_this_run_lands(spark,
                                                                         tmp_path) -> None:
    """Y publishes C while X computes B (between A and C): Y's churn of C compares with A,
    as B was not there yet. X cannot change C, so it names C when it lands."""
    paths, out = _output_holding_a(spark, tmp_path)
    log: list[str] = []
    y_runs_meanwhile = _once_at("reports", log,
                                lambda: audit(spark, paths, out, "Y", snapshots=("C",)))
    result = audit(spark, paths, out, "X", snapshots=("B",), hook=y_runs_meanwhile)
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == ["A"]
    stale = [w for w in result.warnings if w.startswith("snapshot C (cluster c)")]
    assert stale and "--snapshot C" in stale[0], result.warnings
    # audited again as it says, C compares with B, and nobody warns
    assert not audit(spark, paths, out, "again", snapshots=("C",)).warnings
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == ["B"]


def test_runs_landing_at_once_take_turns_so_the_later_one_names_the_other(spark,
                                                                           tmp_path) -> None:
    """Y (snapshot C) has checked its previous snapshot (A) and not yet committed `runs`
    when X (B, between A and C) lands from another process. X waits for Y's turn to end,
    then sees C and names it. Without turns, X landed unseen in between, and C kept its
    churn against A with no word from either run."""
    paths, out = _output_holding_a(spark, tmp_path)
    args = [sys.executable, "-m", "jobs.cli", "audit", "--queues", paths["queues"],
            "--members", paths["members"], "--output", str(out), "--engine", "offline",
            "--run-id", "X", "--snapshot", "B"]
    x_said: list[str] = []
    started: list[subprocess.Popen] = []

    def x_lands_meanwhile(point: str) -> None:
        if point != "verified" or started:
            return
        x = subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append(x)
        for line in x.stdout:  # until X waits for this turn, or ends
            x_said.append(line)
            if "waiting for its turn to end" in line:
                break

    audit(spark, paths, out, "Y", snapshots=("C",), hook=x_lands_meanwhile)
    x_said.append(started[0].communicate(timeout=300)[0])
    said = "".join(x_said)
    assert started[0].returncode == 0, said
    assert "waiting for its turn to end" in said, said
    assert ("snapshot C (cluster c): another run published it while this one ran" in said
            and "--snapshot C" in said), said
    churn = table(out, "rebalance_churn")
    assert list(churn.loc[churn["snapshot_id"] == "C", "previous_snapshot_id"]) == ["A"]


def test_two_processes_at_once(spark, inputs, tmp_path) -> None:
    """The real thing: two CLI processes audit the same snapshots at the same time."""
    out = tmp_path / "out"
    args = [sys.executable, "-m", "jobs.cli", "audit", "--queues", inputs["full"]["queues"],
            "--members", inputs["full"]["members"], "--output", str(out),
            "--engine", "offline"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([*args, "--run-id", f"p{k}"], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for k in (1, 2)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    codes = [p.returncode for p in procs]
    assert set(codes) <= {0, 2} and 0 in codes, outputs
    for code, text in zip(codes, outputs, strict=True):
        if code == 2:
            assert "wrote snapshot(s)" in text and "Traceback" not in text, text
    winner = assert_one_complete_run(out, "A")
    assert assert_one_complete_run(out, "C") == winner


# ------------------------------------------------------------------- kills and debris
def test_kill_between_table_commits_then_rerun_repairs(spark, inputs, tmp_path) -> None:
    out = tmp_path / "out"
    audit(spark, inputs["full"], out, "old")
    killed_audit(inputs["full"], out, "committed:assignments")
    # the dead run is visible as such: no complete run names it, none claims A or C
    assert complete_run(out, "A") is None and complete_run(out, "C") is None
    assert run_ids(out, "assignments", "A") == {"killed"}
    assert run_ids(out, "consumer_load", "A") == {"old"}
    for name in (*REPORT_TABLES, "rejects", "runs"):
        table(out, name)  # every table still reads

    audit(spark, inputs["full"], out, "repair")
    assert assert_one_complete_run(out, "A") == "repair"
    assert assert_one_complete_run(out, "C") == "repair"


def _interrupted_audit(paths: dict, out: Path, point: str) -> subprocess.CompletedProcess:
    """An audit CLI process that gets SIGINT at `point`, as Ctrl-C would."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REBALANCE_AUDIT_INTERRUPT_AT": point}
    return subprocess.run(
        [sys.executable, "-m", "jobs.cli", "audit", "--queues", paths["queues"],
         "--members", paths["members"], "--output", str(out), "--engine", "offline",
         "--run-id", "stopped", "--what-if", "off"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300)


def test_ctrl_c_says_what_the_output_holds_then_a_rerun_repairs(spark, inputs,
                                                                 tmp_path) -> None:
    """Ctrl-C printed four to six Python tracebacks and pages of Java stack traces, and no
    word about the output. Now one line, exit 130: before writing, that the output is as
    it was; while writing, which snapshots' runs rows it removed (it said "the earlier
    complete runs stand" of them, probe Z) and that a re-run repairs; after the runs
    rows, that the run is complete."""
    out = tmp_path / "out"
    audit(spark, inputs["full"], out, "old")
    early = _interrupted_audit(inputs["full"], out, "read")  # validated, nothing written
    assert early.returncode == 130, early.stdout + early.stderr
    assert [line for line in early.stderr.splitlines() if line.startswith("rebalance-audit")
            ] == [f"rebalance-audit: interrupted: the run published nothing in {out}: it had "
                  "not begun writing, so the output is as the earlier runs left it"]
    assert assert_one_complete_run(out, "A") == "old"
    stopped = _interrupted_audit(inputs["full"], out, "committed:assignments")
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    said = [line for line in stopped.stderr.splitlines() if line.startswith("rebalance-audit")]
    assert said == [
        f"rebalance-audit: interrupted: the run published nothing in {out}: it had begun "
        "replacing snapshot(s) A, C, whose runs rows it removes first, so dashboards joining "
        "on runs skip those snapshots and the rows of tables it had committed (report.html "
        "names them as incomplete) until it is run again, which repairs them"], stopped.stderr
    assert "Traceback" not in stopped.stderr and "\tat org.apache" not in stopped.stderr
    assert complete_run(out, "A") is None and run_ids(out, "assignments", "A") == {"stopped"}
    audit(spark, inputs["full"], out, "repair")
    assert assert_one_complete_run(out, "A") == "repair"

    late = _interrupted_audit(inputs["full"], out, "write")  # the runs rows committed
    assert late.returncode == 130, late.stdout + late.stderr
    assert (f"rebalance-audit: interrupted: the run had published its snapshots in {out} "
            "(every table and its runs rows are complete); its summary and report.html were "
            f"not made: `report --output {out}` writes the page") in late.stderr
    assert "Traceback" not in late.stderr
    assert assert_one_complete_run(out, "A") == "stopped"


def _age(path: Path, seconds: float = 3600) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_debris_of_killed_writers_is_swept_and_committed_files_kept(spark, inputs,
                                                                   tmp_path) -> None:
    out = tmp_path / "out"
    audit(spark, inputs["full"], out, "first")
    assignments = out / "assignments"
    committed_before = sorted(p for p in assignments.rglob("*.parquet")
                              if "_staging" not in p.parts)
    # a Spark write killed mid-way, and files moved in by a commit that never happened
    staged = assignments / "_staging" / "0123abcd" / "snapshot_id=A"
    staged.mkdir(parents=True)
    (staged / "part-00000-x.snappy.parquet").write_bytes(b"PAR1")
    _age(staged.parent)
    orphan = assignments / "snapshot_id=A" / "part-99999-orphan.snappy.parquet"
    orphan.write_bytes(b"PAR1")
    _age(orphan)

    result = audit(spark, inputs["full"], out, "second")

    assert not (assignments / "_staging").exists() and not orphan.exists()
    assert len(result.cleaned) == 2
    # files of the first run were removed from the table by the second run's commit, but
    # stay on disk: a commit added them (time travel, VACUUM's business)
    assert all(p.exists() for p in committed_before)
    assert assert_one_complete_run(out, "A") == "second"


def test_a_log_without_any_commit_is_recovered(spark, inputs, tmp_path) -> None:
    out = tmp_path / "out"
    log_dir = out / "group_balance" / "_delta_log"
    log_dir.mkdir(parents=True)
    (log_dir / "_commit_0d1e.json.tmp").write_text("{}")
    data = out / "group_balance" / "snapshot_id=A" / "part-0-left.snappy.parquet"
    data.parent.mkdir(parents=True)
    data.write_bytes(b"PAR1")
    for p in (log_dir / "_commit_0d1e.json.tmp", log_dir, data):
        _age(p)
    result = audit(spark, inputs["full"], out, "after-crash")
    assert not data.exists() and any("_delta_log" in c for c in result.cleaned)
    assert assert_one_complete_run(out, "A") == "after-crash"


# ------------------------------------------------------------------ bad output roots
@pytest.mark.parametrize("kind", ["file", "under-file", "unwritable"])
def test_bad_output_root_is_exit_2_before_any_work(inputs, tmp_path, kind, capsys) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    output = {"file": a_file, "under-file": a_file / "out",
              "unwritable": Path("/sys/rebalance-audit-test-output")}[kind]
    started = time.perf_counter()
    code = main(["audit", "--queues", inputs["full"]["queues"], "--members",
                 inputs["full"]["members"], "--output", str(output), "--engine", "offline"])
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert code == 2 and str(output) in err and "Traceback" not in err, err
    assert elapsed < 5, f"took {elapsed:.1f}s: the check must come before any Spark work"


@pytest.mark.parametrize("kind", ["the-table", "in-the-table", "input-is-output"])
def test_an_output_root_in_a_table_or_over_an_input_is_exit_2(inputs, tmp_path, kind,
                                                               capsys) -> None:
    """An output root inside a Delta table would lose the audit's tables to that table's
    VACUUM (they are files its log does not name); an input that is one of the tables the
    run writes would be replaced by it. Both refused before any Spark work, nothing
    created there."""
    queues = Path(inputs["full"]["queues"])
    output = {"the-table": queues, "in-the-table": queues / "audit",
              "input-is-output": tmp_path / "out"}[kind]
    if kind == "input-is-output":
        queues = output / "rejects"
    before = sorted(p.name for p in Path(inputs["full"]["queues"]).iterdir())
    started = time.perf_counter()
    code = main(["audit", "--queues", str(queues), "--members", inputs["full"]["members"],
                 "--output", str(output), "--engine", "offline"])
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert elapsed < 5, f"took {elapsed:.1f}s: the check must come before any Spark work"
    if kind == "input-is-output":
        assert f"--queues {queues} is the rejects table this run writes" in err
        assert not output.exists()
    else:
        assert f"the Delta table at {inputs['full']['queues']}: a VACUUM" in err
        assert sorted(p.name for p in Path(inputs["full"]["queues"]).iterdir()) == before
