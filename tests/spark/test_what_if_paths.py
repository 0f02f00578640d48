"""The what-if table does not depend on how its rows reach the kernel: assignment rows
already in their buckets (as the job has them) or shuffled there, the chosen groups
broadcast to the semi-joins or joined with a shuffle (above `BROADCAST_GROUPS`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from chispa import assert_df_equality

from jobs.persist import Persisted
from jobs.read import InputPaths, read_inputs
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.buckets import bucketed
from rebalance_udfs.spark.group_figures import figures
from reports import what_if
from reports.assignments import assignments_report, snapshot_times
from reports.facts import client_topic_facts
from reports.group_balance import group_balance_report
from storage.delta import DeltaStore
from tests.spark.test_group_figures import _random_cluster
from tests.support.delta_inputs import write_inputs
from vocabulary.columns import GROUP_KEYS

pytestmark = pytest.mark.spark

BUCKETS = 3


def test_what_if_rows_are_the_same_on_every_path(spark, tmp_path, monkeypatch) -> None:
    paths = write_inputs(spark, Path(tmp_path), **_random_cluster(4))
    persist = Persisted()
    inputs = read_inputs(DeltaStore(spark, "offline"),
                         InputPaths(paths["queues"], paths["members"], paths["offsets"]),
                         (), persist)
    times = persist(snapshot_times(inputs.queues))
    assigned = persist(assignments_report(
        assign(inputs.queues, inputs.members, inputs.offsets, BUCKETS), times))
    in_buckets = persist(bucketed(assigned, BUCKETS, GROUP_KEYS))
    balance = persist(group_balance_report(
        figures(client_topic_facts(in_buckets), inputs.members, BUCKETS), times))

    def table(rows):
        return what_if.what_if_report(rows, inputs.members, balance, times, BUCKETS, "all")

    in_place = table(in_buckets)
    # the rows already in their buckets are read in place: the members are the one side
    # exchanged
    plan = in_place._jdf.queryExecution().executedPlan().toString()
    assert plan.count("Exchange hashpartitioning") == 1, plan
    in_place = persist(in_place)
    assert in_place.count() > 20
    shuffled = persist(table(assigned))
    monkeypatch.setattr(what_if, "BROADCAST_GROUPS", 0)
    joined = persist(table(in_buckets))
    for other in (shuffled, joined):
        assert_df_equality(in_place, other, ignore_row_order=True)
    persist.release()
