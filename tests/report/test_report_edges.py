"""`report` on outputs that are not the happy path: clusters at different snapshots, damaged
tables, an --html target that is no regular file. No Spark."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable, write_deltalake

from jobs.cli import main
from reports.html.data import REQUIRED_COLUMNS
from tests.report import frames
from tests.support.deletion_vectors import allow_deletion_vectors, delete_rows


def cards(page: str) -> list[tuple[str, str, str]]:
    return re.findall(r"<h3>\d+\. (\S+) / (.*?) @ (\S+)</h3>", page)


def test_each_cluster_shows_its_own_newest_snapshot_only(tmp_path, capsys):
    """c2's newest snapshot is s1, c1's is s2: c1's older s1 rows (g-old) stay out."""
    output = frames.write_outputs(str(tmp_path / "out"))
    c2_runs = frames.runs(snapshots=(("s1", frames.T1),), cluster="c2")
    c2_group = pd.DataFrame([{**frames.balance_row("s1", "g-c2", None, skew=4, max_q=6,
                                                   findings=["MULTI_TOPIC_SKEW"],
                                                   captured_at=frames.T1), "cluster": "c2"}])
    write_deltalake(f"{output}/runs", frames.to_arrow(c2_runs), mode="append")
    write_deltalake(f"{output}/group_balance", frames.to_arrow(c2_group), mode="append")
    assert main(["report", "--output", output]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
    shown = cards(page)
    assert ("c2", "g-c2", "s1") in shown
    assert ("c1", "g-old", "s1") not in shown  # shown before: c1's s1 is a complete run
    assert {(c, s) for c, _, s in shown} == {("c1", "s2"), ("c2", "s1")}
    # asked for by id, s1 is every cluster's s1
    assert main(["report", "--output", output, "--snapshot", "s1"]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
    assert {("c1", "g-old", "s1"), ("c2", "g-c2", "s1")} <= set(cards(page))


@pytest.mark.parametrize("damage", ["log", "data file"])
def test_a_damaged_table_is_exit_2_naming_it(tmp_path, capsys, damage):
    output = frames.write_outputs(str(tmp_path / "out"))
    if damage == "log":
        log = Path(output, "group_balance", "_delta_log", "00000000000000000000.json")
        log.write_text(log.read_text()[:100])
        name = "group_balance"
    else:
        next(Path(output, "consumer_load").rglob("*.parquet")).unlink()
        name = "consumer_load"
    assert main(["report", "--output", output]) == 2
    err = capsys.readouterr().err
    assert f"the '{name}' table cannot be read" in err and "Traceback" not in err
    assert not Path(output, "report.html").exists()


@pytest.mark.parametrize("table", ["group_balance", "rebalance_churn"])
def test_a_table_the_runs_wrote_missing_from_the_output_is_exit_2(tmp_path, capsys, table):
    """Read as absent, group_balance said "every shown group is balanced" and churn "a
    cluster needs two audited snapshots"."""
    runs = frames.counted(frames.runs().assign(tables=[["group_balance", "rebalance_churn"]] * 2),
                          {"group_balance": frames.group_balance(),
                           "rebalance_churn": frames.churn()})
    output = frames.write_outputs(str(tmp_path / "out"))
    write_deltalake(f"{output}/runs", frames.to_arrow(runs), mode="overwrite")
    assert main(["report", "--output", output]) == 0  # whole: as before
    shutil.rmtree(Path(output, table))
    assert main(["report", "--output", output]) == 2
    err = capsys.readouterr().err
    assert f"wrote the table(s) {table}, which are not here" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_an_html_target_that_is_no_regular_file_is_left_alone(tmp_path, capsys, kind):
    output = frames.write_outputs(str(tmp_path / "out"))
    target = tmp_path / "page.html"
    if kind == "symlink":
        (tmp_path / "real.html").write_text("mine")
        target.symlink_to(tmp_path / "real.html")
    else:
        os.mkfifo(target)
    assert main(["report", "--output", output, "--html", str(target)]) == 2
    err = capsys.readouterr().err
    assert "writing the page would replace it" in err
    assert target.is_symlink() if kind == "symlink" else target.is_fifo()
    assert kind == "fifo" or (tmp_path / "real.html").read_text() == "mine"


def test_a_blank_output_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--output", ""])
    assert exit_.value.code == 2 and "--output" in capsys.readouterr().err


def test_an_unknown_snapshot_is_answered_with_the_newest_complete_ones(tmp_path, capsys):
    output = frames.write_outputs(str(tmp_path / "out"))
    assert main(["report", "--output", output, "--snapshot", "s3"]) == 2
    assert ("no complete run of snapshot(s) s3; the complete ones, newest first: s2, s1"
            in capsys.readouterr().err)
    more = frames.runs(snapshots=[(f"t{i}", frames.T2 + pd.Timedelta(hours=i))
                                  for i in range(1, 7)])
    write_deltalake(f"{output}/runs", frames.to_arrow(more), mode="append")
    assert main(["report", "--output", output, "--snapshot", "x"]) == 2
    assert ("the complete ones, newest first: t6, t5, t4, t3, t2 and 3 older"
            in capsys.readouterr().err)
    # per cluster: c1's frequent captures would crowd out c2's only one
    frames.add_second_cluster(output)
    assert main(["report", "--output", output, "--snapshot", "x"]) == 2
    assert ("the complete ones, newest first: cluster c1: t6, t5, t4, t3, t2 and 3 older; "
            "cluster c2: s1" in capsys.readouterr().err)


@pytest.mark.parametrize("change", ["rows deleted", "table emptied", "rows appended again"])
def test_a_table_not_holding_the_rows_its_run_wrote_is_exit_2(tmp_path, capsys, change):
    """runs.rows is what each run wrote: a group_balance cut or emptied by hand read as
    "balanced", one with a batch appended twice counted groups twice."""
    output = frames.write_outputs(str(tmp_path / "out"))
    table = f"{output}/group_balance"
    if change == "rows deleted":
        DeltaTable(table).delete("consumer_group = 'g-skew'")
        said = "snapshot s2 cluster c1: 3 rows of run run-1, which wrote 5"
    elif change == "table emptied":
        DeltaTable(table).delete()
        said = "snapshot s2 cluster c1: 0 rows of run run-1, which wrote 5"
    else:
        again = frames.group_balance().query("snapshot_id == 's2' and run_id == 'run-1'")
        write_deltalake(table, frames.to_arrow(again), mode="append")
        said = "snapshot s2 cluster c1: 10 rows of run run-1, which wrote 5"
    assert main(["report", "--output", output]) == 2
    err = capsys.readouterr().err
    assert f"the 'group_balance' table does not hold the rows the shown runs wrote ({said}" \
        in err, err
    assert "Traceback" not in err and not Path(output, "report.html").exists()


def test_rows_of_runs_that_did_not_complete_are_not_counted(tmp_path, capsys):
    """A run that died part-way left rows under its own run_id: they are not the
    complete run's rows, so they neither hide a loss nor count as extra."""
    output = frames.write_outputs(str(tmp_path / "out"))
    dead = frames.group_balance().query("snapshot_id == 's2'").assign(run_id="dead-2")
    write_deltalake(f"{output}/group_balance", frames.to_arrow(dead), mode="append")
    assert main(["report", "--output", output]) == 0
    DeltaTable(f"{output}/group_balance").delete("consumer_group = 'g-ok' AND run_id = 'run-1'")
    assert main(["report", "--output", output]) == 2
    assert "4 rows of run run-1, which wrote 5" in capsys.readouterr().err


def test_a_rejected_rows_name_that_is_no_utf8_text_is_shown_as_written(tmp_path, capsys):
    """A lone surrogate escape in row_json (JSON allows it, UTF-8 has no such character)
    made the page's write fail with a traceback; the name is shown with its escape."""
    output = frames.write_outputs(str(tmp_path / "out"))
    odd = pd.DataFrame([{"snapshot_id": "s2", "cluster": "c1", "source_table": "members",
                         "row_json": '{"consumer_group":"g\\ud800x"}', "reason": "bad",
                         "run_id": frames.RUN}])
    write_deltalake(f"{output}/rejects", frames.to_arrow(odd), mode="append")
    assert main(["report", "--output", output]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
    assert '<td class="t">bad</td><td>1</td><td class="t">g\\ud800x</td>' in page


@pytest.mark.parametrize(("table", "column"), [
    *((table, columns[-1]) for table, columns in REQUIRED_COLUMNS.items()),
    ("group_balance", "topic"), ("group_balance", "contended_queues")])
def test_a_table_without_a_column_the_page_keys_on_is_exit_2(tmp_path, capsys, table, column):
    """Was a KeyError traceback halfway through the page (or, for drift, a pandas one); a
    severity figure (group_balance's idle_clients, skew, …) left out ranked the groups by
    the others, with no word."""
    output = frames.write_outputs(str(tmp_path / "out"))
    kept = DeltaTable(f"{output}/{table}").to_pandas().drop(columns=[column])
    shutil.rmtree(Path(output, table))
    write_deltalake(f"{output}/{table}", frames.to_arrow(kept), partition_by=["snapshot_id"])
    assert main(["report", "--output", output]) == 2
    err = capsys.readouterr().err
    assert f"the '{table}' table has no column {column}, which the page cannot do without" \
        in err and "Traceback" not in err


def test_the_rows_a_run_wrote_are_counted_from_the_footers_when_they_say(tmp_path):
    """Files of one run each: the Parquet footers (row counts, run_id statistics) count
    the rows, no data read; a count they do not match, or a file of two runs, leaves the
    counting to a scan of the rows."""
    from reports.html import data

    output = frames.write_outputs(str(tmp_path / "out"))
    table = f"{output}/group_balance"
    runs = data.complete_runs(output)
    expected = data._rows_recorded(runs, "group_balance")
    assert not data._footers_agree(output, "group_balance", ["s2"], expected)  # + "dead"
    one_run = frames.group_balance().query("run_id == 'run-1'")
    write_deltalake(table, frames.to_arrow(one_run), mode="overwrite",
                    partition_by=["snapshot_id"])
    assert data._footers_agree(output, "group_balance", ["s1", "s2"], expected)
    assert not data._footers_agree(output, "group_balance", ["s1", "s2"],
                                   expected.assign(written=expected["written"] + 1))


def test_tables_that_only_allow_deletion_vectors_show_as_they_are(tmp_path, capsys):
    """A platform that turns deletion vectors on for new tables gives the feature to every
    output the native engine writes, and its re-runs (whole snapshot partitions) write no
    vector: the page reads such tables from their file list (delta-rs' datasets refuse
    them), row for row as the same tables without the feature."""
    from reports.html.data import load

    plain = frames.write_outputs(str(tmp_path / "plain"))
    allowing = str(tmp_path / "allowing")
    shutil.copytree(plain, allowing)
    tables = [p.parent for p in Path(allowing).glob("*/_delta_log")]
    for table in tables:
        allow_deletion_vectors(table)
    assert len(tables) >= 6
    shown, expected = load(allowing), load(plain)
    for name, frame in vars(expected).items():
        if isinstance(frame, pd.DataFrame):
            pd.testing.assert_frame_equal(getattr(shown, name), frame, obj=name)
    assert main(["report", "--output", allowing]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_rows_deleted_by_a_deletion_vector_are_exit_2_naming_them(tmp_path, capsys):
    """The files still hold the deleted rows: showing them would bring them back."""
    output = frames.write_outputs(str(tmp_path / "out"))
    allow_deletion_vectors(Path(output, "consumer_load"))
    delete_rows(Path(output, "consumer_load"), 0, [0])
    assert main(["report", "--output", output]) == 2
    err = capsys.readouterr().err
    assert ("the 'consumer_load' table has 1 row(s) deleted through deletion vectors in 1 "
            "data file(s), which the page's reader (delta-rs' datasets) cannot apply") in err
    assert "APPLY (PURGE)" in err and "damaged" not in err and "Traceback" not in err
    assert not Path(output, "report.html").exists()


@pytest.mark.parametrize("groups", [None, ["g-skew"]])
def test_tables_rewritten_by_a_delta_rs_update_show_as_before(tmp_path, capsys, groups):
    """delta-rs' `update()` rewrites a table's files with its string columns stored as
    `string_view`. The table is not damaged: the page shows it row for row as before,
    where a filter on a string column (`--group`, a cluster) made the scan exit 2, "no
    kernel matching input types (string, string_view)"."""
    import pyarrow.parquet as pq

    from reports.html.data import load

    plain = frames.write_outputs(str(tmp_path / "plain"))
    updated = str(tmp_path / "updated")
    shutil.copytree(plain, updated)
    tables = [p.parent for p in Path(updated).glob("*/_delta_log")]
    for table in tables:
        DeltaTable(str(table)).update({"run_id": "run_id"})  # every row, unchanged
    assert len(tables) >= 6
    rewritten = pq.read_schema(DeltaTable(f"{updated}/group_balance").file_uris()[0])
    assert rewritten.field("consumer_group").type == "string_view"
    shown, expected = load(updated, groups=groups), load(plain, groups=groups)
    for name, frame in vars(expected).items():
        if isinstance(frame, pd.DataFrame):
            pd.testing.assert_frame_equal(getattr(shown, name), frame, obj=name)
    assert main(["report", "--output", updated, *(["--group", *groups] if groups else [])]) == 0
    assert "Traceback" not in capsys.readouterr().err
