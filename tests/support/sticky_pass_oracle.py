"""The three Spark passes the assign-and-report pass replaced for groups with a Kafka
sticky member (kept as an oracle for `tests/spark/test_sticky_pass.py`): the batch
kernels for those groups' other members (`assign`), the sticky chain (`assign_sticky`),
and the reports over the union of both (`report`), beside the pass for the other groups."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.prior import Prior
from jobs.read import Inputs
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.buckets import BUCKET_KEYS
from rebalance_udfs.spark.churn import History
from rebalance_udfs.spark.report_pass import assign_and_report, report
from rebalance_udfs.spark.sticky import assign_sticky
from vocabulary.columns import STICKY_STRATEGIES


def oracle_pass(inputs: Inputs, buckets: int, prior: Prior, what_if: str,
                history: History) -> DataFrame:
    """PACKED rows of every group, the sticky groups' through the three passes."""
    members = inputs.members
    sticky = F.col("strategy").isin(*STICKY_STRATEGIES)
    chained = members.where(sticky).select(*BUCKET_KEYS).distinct()

    def part(how: str) -> History:
        def rows(df: DataFrame | None) -> DataFrame | None:
            return None if df is None else df.join(chained, BUCKET_KEYS, how)
        return History(history.pairs, rows(history.assignments), rows(history.consumer_load))

    plain = members.join(chained, BUCKET_KEYS, "left_anti")
    members = members.join(chained, BUCKET_KEYS, "left_semi")
    rows = assign(inputs.queues, members.where(~sticky), inputs.offsets, buckets).unionByName(
        assign_sticky(inputs.queues, members.where(sticky), inputs.offsets, buckets,
                      prior.assignments))
    return (assign_and_report(inputs.queues, plain, inputs.offsets, buckets, what_if,
                              part("left_anti"))
            .unionByName(report(rows, members, buckets, what_if, part("left_semi"))))
