"""The audit run writes report.html after publishing and never fails for it (the run's
Spark work stubbed out: this checks the step, the Spark tests check the tables)."""

from __future__ import annotations

import io
import logging
import os
import shutil
from types import SimpleNamespace

import pytest

from jobs import audit
from jobs.config import load_config
from reports.summary import print_summary
from tests.report import frames


@pytest.fixture
def stubbed(monkeypatch, caplog):
    """audit.run with no Spark: `_audit` returns a result over tables already written."""
    spark = SimpleNamespace(sparkContext=SimpleNamespace(setJobDescription=lambda _: None))
    monkeypatch.setattr(audit, "DeltaStore", lambda *_: SimpleNamespace(engine="offline"))
    caplog.set_level(logging.INFO, logger="rebalance_audit")
    logging.getLogger("rebalance_audit").propagate = True

    def run(output: str, logs: list[str], warnings: list[str] | None = None,
            snapshots: tuple[str, ...] = ("s2",)):
        monkeypatch.setattr(audit, "_audit", lambda *_: audit.RunResult(
            "run-1", output, "offline", list(snapshots),
            {"group_balance": f"{output}/group_balance"}, warnings=list(warnings or []),
            warned_about=[(None, None)] * len(warnings or [])))
        result = audit.run(load_config(None, output=output), spark=spark)
        logs.extend(r.getMessage() for r in caplog.records)
        return result

    return run


def test_run_writes_report_html_and_the_summary_names_it(tmp_path, stubbed):
    out = frames.write_outputs(str(tmp_path / "out"))
    result = stubbed(out, logs := [])
    assert result.report == os.path.join(out, "report.html")
    assert os.path.getsize(result.report) > 0
    assert not [m for m in logs if "warning" in m]
    # a step of the run like the others: its line, and its time in the run's total
    assert [m for m in logs if m.startswith("report.html ") and m.endswith(result.report)]
    assert result.timings["total"] > 0
    text = io.StringIO()
    print_summary(result, text)
    assert f"Report (open in a browser, no network needed): {result.report}" in text.getvalue()


def test_a_report_failure_is_a_warning_not_a_failed_run(tmp_path, stubbed):
    out = frames.write_outputs(str(tmp_path / "out"))
    shutil.rmtree(os.path.join(out, "runs"))
    result = stubbed(out, logs := [])
    assert result.report is None
    assert any(m.startswith("warning: report.html not written") for m in logs)
    assert [m for m in logs if m.startswith("report.html ") and "not written" in m]
    text = io.StringIO()
    print_summary(result, text)
    assert "Report (" not in text.getvalue()


def test_a_runs_warnings_are_kept_for_every_page_of_its_snapshots(tmp_path, stubbed):
    """The page the run writes lists its warnings, and so does a page `report` renders
    again later (before, only the run's own page had them)."""
    from reports.html import write_report

    out = frames.write_outputs(str(tmp_path / "out"))
    warning = "snapshot s9 is in none of the inputs"
    result = stubbed(out, [], warnings=[warning])  # run-1: the run frames' runs name
    assert os.path.isfile(os.path.join(out, "_warnings", "run-1.json"))
    for page_path in (result.report, write_report(out), write_report(out, groups=["g-skew"])):
        with open(page_path, encoding="utf-8") as f:
            assert f"<li>{warning}</li>" in f.read()


def test_warnings_of_runs_no_snapshot_names_are_dropped(tmp_path, stubbed):
    out = frames.write_outputs(str(tmp_path / "out"))
    folder = os.path.join(out, "_warnings")
    os.makedirs(folder)
    for name in ("replaced-run.json", "run-1.json.tmp-999999999", "notes.txt"):
        with open(os.path.join(folder, name), "w") as f:
            f.write("{}")
    stubbed(out, logs := [])
    assert sorted(os.listdir(folder)) == ["notes.txt", "run-1.json"]
    assert any("removed the warnings of a run no snapshot names: replaced-run.json" in m
               for m in logs)


def test_a_run_that_audited_nothing_into_a_new_output_has_nothing_to_warn_of(tmp_path,
                                                                          stubbed):
    """`--snapshot` naming no input's snapshot, or every row rejected, into an output with
    no complete run: no page to write and no run to keep warnings for. Before, two
    warnings quoted the page reader's "names no complete run"."""
    out = str(tmp_path / "out")
    os.makedirs(out)
    result = stubbed(out, logs := [], warnings=["snapshot s9 is in none of the inputs"],
                     snapshots=())
    assert result.report is None
    assert not [m for m in logs if "warning" in m]
    assert [m for m in logs if m.startswith("report.html ")
            and m.endswith("not written: the output holds no audited snapshot yet")]
    assert not os.path.exists(os.path.join(out, "_warnings"))


def test_with_no_complete_run_left_every_runs_warnings_go(tmp_path, stubbed):
    """A `runs` table naming no complete run (only NOT_AUDITED rows) names no run's
    warnings: they are dropped, not kept because the page reader found no run."""
    from deltalake import write_deltalake

    out = frames.write_outputs(str(tmp_path / "out"))
    write_deltalake(f"{out}/runs", frames.to_arrow(frames.runs().assign(status="NOT_AUDITED")),
                    partition_by=["snapshot_id"], mode="overwrite")
    folder = os.path.join(out, "_warnings")
    os.makedirs(folder)
    with open(os.path.join(folder, "run-0.json"), "w") as f:
        f.write('{"warnings": []}')
    stubbed(out, logs := [], snapshots=())
    assert os.listdir(folder) == []
    assert not [m for m in logs if "warning" in m and "removed" not in m]


def test_the_summary_lines_up_the_table_paths_whatever_the_longest_name():
    result = audit.RunResult("run-1", "out", "offline", ["s1"], {
        "assignments": "out/assignments", "strategy_comparison": "out/strategy_comparison",
        "runs": "out/runs"})
    text = io.StringIO()
    print_summary(result, text)
    lines = text.getvalue().split("Delta tables:\n")[1].splitlines()[:3]
    assert {line.index("out/") for line in lines} == {len("  strategy_comparison ")}


def test_run_warnings_files_are_named_by_the_encoded_run_id(tmp_path):
    """An id given with --run-id names one file inside the folder, whatever it holds."""
    from reports.html import run_warnings

    out = str(tmp_path / "out")
    for run_id in ("dag/2026-12-02", "..", "a%2Fb"):
        path = run_warnings.save(out, run_id, [f"from {run_id}"])
        assert os.path.dirname(path) == os.path.join(out, "_warnings")
    assert len(os.listdir(os.path.join(out, "_warnings"))) == 3
    found = run_warnings.load(out, ["dag/2026-12-02", "..", "a%2Fb", "never"])
    assert found.by_run == {"..": ["from .."], "a%2Fb": ["from a%2Fb"],
                            "dag/2026-12-02": ["from dag/2026-12-02"]}
    assert found.unrecorded == ["never"]


def test_a_damaged_warnings_file_is_said_unreadable_not_a_failed_page(tmp_path):
    from reports.html import run_warnings

    folder = tmp_path / "_warnings"
    folder.mkdir()
    for run_id, text in (("half", '{"run_id": "half", "warn'), ("list", "[1, 2]"),
                         ("text", '{"warnings": "not a list"}'), ("ok", '{"warnings": []}'),
                         # deeper than the JSON parser's recursion limit: RecursionError
                         ("deep", "[" * 200_000)):
        (folder / f"{run_id}.json").write_text(text)
    found = run_warnings.load(str(tmp_path), ["half", "list", "text", "ok", "deep"])
    assert found.by_run == {"ok": []}
    assert found.unreadable == ["deep", "half", "list", "text"]
    assert found.unrecorded == []


def test_warnings_about_a_snapshot_are_found_by_snapshot_and_cluster(tmp_path):
    """`load_about` keeps a run's warnings about the (snapshot, cluster) keys wanted of it,
    in its order; a file from before runs kept `about`, a damaged or a missing one gives
    none (the shown runs' own gaps are `load`'s to name)."""
    from reports.html import run_warnings

    out = str(tmp_path)
    run_warnings.save(out, "b", ["snapshot C (cluster c): x", "lag is unknown",
                                 "snapshot C: y", "snapshot C (cluster c): z"],
                      [("C", "c"), (None, None), ("C", None), ("C", "c")])
    run_warnings.save(out, "old", ["snapshot C (cluster c): x"])  # no `about`
    (tmp_path / "_warnings" / "cut.json").write_text('{"warnings": ["a"], "about": [')
    # keys a hand-edit damaged: a list where a name stands is no set member (TypeError)
    (tmp_path / "_warnings" / "odd.json").write_text(
        '{"warnings": ["a", "b", "c"], "about": [[["C"], "c"], ["C", {}], "C"]}')
    wanted = {"b": {("C", "c")}, "old": {("C", "c")}, "cut": {("C", "c")},
              "odd": {("C", "c")}, "never": {("C", "c")}}
    assert run_warnings.load_about(out, wanted) == {
        "b": ["snapshot C (cluster c): x", "snapshot C (cluster c): z"]}
    assert run_warnings.load_about(out, {"b": {("C", None)}}) == {"b": ["snapshot C: y"]}
    assert run_warnings.load_about(out, {"b": {("A", "c")}}) == {}
    with pytest.raises(ValueError, match="1 'about' keys for 2 warnings"):
        run_warnings.save(out, "bad", ["a", "b"], [("C", "c")])


def test_later_runs_are_those_that_landed_after_a_shown_snapshot_s_run():
    """Only a run that finished after a shown pair's run can still be right about it; a
    shown run is listed in full already, and a pair without finish time is left out."""
    import pandas as pd

    from reports.html.data import later_runs

    t = pd.Timestamp("2026-12-01T00:00:00Z")
    all_runs = pd.DataFrame([
        {"snapshot_id": s, "cluster": c, "run_id": r, "finished_at": t + pd.Timedelta(hours=h)}
        for s, c, r, h in (("A", "c", "ac", 1), ("C", "c", "ac", 1), ("B", "c", "b", 2),
                           ("D", None, "d", 0), ("E", "c", "e", 3), ("F", "x", "f", 5))])
    all_runs.loc[all_runs["run_id"] == "e", "finished_at"] = pd.NaT
    shown = all_runs[all_runs["snapshot_id"].isin(["C", "D", "F"])]
    # ac landed after D's run too, but it is C's, a shown run; e has no finish time
    assert later_runs(all_runs, shown) == {"b": {("C", "c"), ("D", None)}}
