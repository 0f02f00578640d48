"""A run looks through its session's filesystem for a Delta table holding its output root:
the pre-JVM check compares remote roots only by name, with the inputs
(`storage.remote.delta_table_above`, `jobs.preflight.check_root_apart`). Here on `file:`
URLs, through the same Hadoop filesystem calls an `s3a://` root goes through."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import jobs.preflight
from jobs.audit import run
from jobs.config import AuditConfig
from storage.base import TableError
from storage.remote import delta_table_above
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
