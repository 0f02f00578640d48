"""The queue rows' join to the members' subscriptions: a broadcast when the run's size rule
says they are few (`jobs.sizing.broadcasts_subscriptions`), otherwise Spark's own plan,
and the pass's rows the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from chispa import assert_df_equality

from jobs.persist import Persisted
from rebalance_udfs.report_pass import TABLES
from rebalance_udfs.spark.assign import queue_rows
from rebalance_udfs.spark.report_pass import assign_and_report, assignment_rows, unpack
from tests.spark.test_group_figures import _comparable, _random_cluster
from tests.support.delta_inputs import read_written, write_inputs

pytestmark = pytest.mark.spark

BUCKETS = 3


def test_the_join_is_a_broadcast_when_asked_and_the_rows_do_not_change(
        spark, tmp_path, capsys) -> None:
    paths = write_inputs(spark, Path(tmp_path), **_random_cluster(5))
    persist = Persisted()
    inputs = read_written(spark, paths, persist)
    # Spark's own choice off: so tiny a relation would be broadcast whatever it is asked
    key = "spark.sql.autoBroadcastJoinThreshold"
    before = spark.conf.get(key)
    spark.conf.set(key, "-1")
    try:
        tables, units = {}, {}
        for broadcast in (True, False):
            rows = queue_rows(inputs.queues, inputs.members, inputs.offsets,
                              broadcast_subscriptions=broadcast)
            rows.explain()
            plan = capsys.readouterr().out
            joins = {j for j in ("BroadcastHashJoin", "SortMergeJoin") if j in plan}
            assert joins == {"BroadcastHashJoin" if broadcast else "SortMergeJoin"}
            units[broadcast] = persist(rows)
            tables[broadcast] = _tables(persist(assign_and_report(
                inputs.queues, inputs.members, inputs.offsets, BUCKETS, "all",
                broadcast_subscriptions=broadcast)))
    finally:
        spark.conf.set(key, before)
    assert units[True].count() > 20
    assert_df_equality(units[True], units[False], ignore_row_order=True)
    assert tables[True]["assignments"].count() > 50
    for name, rows in tables[False].items():
        assert_df_equality(tables[True][name], rows, ignore_row_order=True)
    persist.release()


def _tables(packed) -> dict:
    """The pass's assignment rows and each of its per-group tables, decoded (maps as
    sorted entries, so that rows can be ordered)."""
    return {"assignments": assignment_rows(packed),
            **{name: _comparable(unpack(packed, name)) for name in TABLES}}
