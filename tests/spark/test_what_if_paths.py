"""The what-if table does not depend on how its rows reach the kernel: simulated in the
call that assigns the queues (most groups), in the report pass over rows assigned
elsewhere (sticky groups), or by the separate pandas pass it replaced
(`tests/support/what_if_oracle.py`, Spark's own conversions). And `findings` simulates
exactly the groups whose whole-group row has a finding."""

from __future__ import annotations

from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from jobs.persist import Persisted
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.report_pass import assign_and_report, report, unpack
from reports.assignments import snapshot_times
from reports.group_balance import group_balance_report
from reports.what_if import what_if_report
from tests.spark.test_group_figures import _random_cluster
from tests.support.delta_inputs import read_written, write_inputs
from tests.support.what_if_oracle import simulate
from vocabulary.columns import GROUP_KEYS

pytestmark = pytest.mark.spark

BUCKETS = 3


def test_what_if_rows_are_the_same_on_every_path(spark, tmp_path) -> None:
    paths = write_inputs(spark, Path(tmp_path), **_random_cluster(4))
    persist = Persisted()
    inputs = read_written(spark, paths, persist)
    times = persist(snapshot_times(inputs.queues))
    assigned = persist(assign(inputs.queues, inputs.members, inputs.offsets, BUCKETS))

    def table(packed):
        return persist(what_if_report(unpack(packed, "what_if"), times))

    one_pass = table(assign_and_report(inputs.queues, inputs.members, inputs.offsets,
                                       BUCKETS, "all"))
    assert one_pass.count() > 20
    apart = table(report(assigned, inputs.members, BUCKETS, "all"))
    oracle = persist(what_if_report(simulate(assigned, inputs.members, BUCKETS), times))
    for other in (apart, oracle):
        assert_df_equality(one_pass, other, ignore_row_order=True)

    findings = assign_and_report(inputs.queues, inputs.members, inputs.offsets, BUCKETS,
                                 "findings")
    balance = group_balance_report(unpack(findings, "group_balance"), times)
    found = balance.where(F.col("topic").isNull() & (F.size("findings") > 0))
    assert 0 < found.count() < balance.where(F.col("topic").isNull()).count()
    expected = one_pass.join(found.select(*GROUP_KEYS), GROUP_KEYS, "left_semi").select(
        *one_pass.columns)
    assert_df_equality(table(findings), expected, ignore_row_order=True)
    persist.release()
