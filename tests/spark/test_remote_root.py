"""A run looks through its session's filesystem for a Delta table holding its output root:
the pre-JVM check compares remote roots only by name, with the inputs
(`storage.remote.delta_table_above`, `jobs.preflight.check_root_apart`). Here on `file:`
URLs, through the same Hadoop filesystem calls an `s3a://` root goes through. And a bare
root the session would send to another filesystem is named (`default_filesystem_for`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import jobs.preflight
from jobs.audit import run
from jobs.config import AuditConfig
from jobs.preflight import check_root_apart
from storage.base import TableError
from storage.remote import default_filesystem_for, delta_table_above
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import member_rows, queue_rows


def _table(folder: Path) -> Path:
    (folder / "_delta_log").mkdir(parents=True)
    return folder


def test_the_table_holding_a_location_is_found_up_its_folders(spark, tmp_path) -> None:
    table = _table(tmp_path / "lake" / "queues")
    found = delta_table_above(spark, f"file:{table}/audit/out")
    assert found is not None and Path(found.removeprefix("file:")) == table
    assert Path(delta_table_above(spark, f"file://{table}").removeprefix("file:")) == table
    assert delta_table_above(spark, f"file:{tmp_path}/lake/queues2/out") is None
    assert delta_table_above(spark, str(tmp_path / "lake")) is None


def test_a_store_that_does_not_answer_stands_aside_and_says_so(spark, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="storage.remote"):
        assert delta_table_above(spark, "nosuchfs://bucket/audit") is None
    assert "could not tell whether nosuchfs://bucket/audit lies in a Delta table" in caplog.text


def test_the_run_refuses_a_root_its_filesystem_shows_inside_a_table(spark, tmp_path,
                                                                   monkeypatch) -> None:
    """As for a remote root, which the pre-JVM check cannot open: with that check standing
    aside, the run's own look refuses the root before anything is written there."""
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(["A"]),
                         members=member_rows(["A"]))
    table = _table(tmp_path / "lake" / "events")
    output = table / "audit"
    monkeypatch.setattr(jobs.preflight, "delta_table_holding", lambda _location: None)
    config = AuditConfig(queues=paths["queues"], members=paths["members"],
                         output=f"file:{output}", engine="offline", run_id="r")
    with pytest.raises(TableError, match=r"output root file:.*/lake/events/audit is inside "
                                         r"the Delta table at file:.*/lake/events: a VACUUM"):
        run(config, spark=spark)
    assert sorted(p.name for p in output.iterdir()) == []


def test_a_bare_path_names_the_default_filesystem_only_when_it_is_elsewhere(
        spark, default_fs_elsewhere) -> None:
    assert default_filesystem_for(spark, "out/audit") == "nosuchfs://cluster/"
    assert default_filesystem_for(spark, "/data/audit") == "nosuchfs://cluster/"
    assert default_filesystem_for(spark, "file:/data/audit") is None
    assert default_filesystem_for(spark, "s3a://bkt/audit") is None


def test_on_this_machines_filesystem_a_bare_path_is_local(spark) -> None:
    assert default_filesystem_for(spark, "/data/audit") is None


def test_native_refuses_a_bare_root_its_session_sends_elsewhere(spark, tmp_path,
                                                                default_fs_elsewhere) -> None:
    """The native engine would write the tables to the default filesystem while the
    checks, the publish lock and report.html use the local disk: refused, with both
    spellings that name the place. The offline engine writes such a root here
    (`storage.paths.spark_path`), and its look for a table above it is the local one."""
    root = str(tmp_path / "audit")
    with pytest.raises(TableError, match=(
            rf"output root {root} is a bare path, which this session resolves against its "
            r"default filesystem nosuchfs://cluster/.*--output nosuchfs://cluster/\.\.\. "
            rf"for the cluster's storage, or --output file:{root} for this machine's")):
        check_root_apart(spark, root, "native")
    check_root_apart(spark, root, "offline")
    check_root_apart(spark, f"file:{root}", "native")
    table = _table(tmp_path / "events")
    with pytest.raises(TableError, match=r"is inside the Delta table at file:.*/events"):
        check_root_apart(spark, str(table / "audit"), "offline")
