"""The strategy comparison in Spark: every candidate strategy of a bucket of groups in one
cogrouped Arrow call (`rebalance_udfs.comparison`).

Buckets are by (cluster, consumer_group), so a group's snapshots, which the comparison
pairs, are in one call; the queue rows bring their offsets along (`queue_rows`) and the
snapshots' order (`chain_order`: the sticky candidate chains them). One shuffle of the
inputs and one Python stage for all candidates, where each candidate was an assignment
of its own and the moves two Spark aggregations over all their rows.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from rebalance_udfs.allocate import QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.churn_link import PAIR_KEYS
from rebalance_udfs.comparison import FIGURES_SCHEMA, candidate_figures, switched
from rebalance_udfs.spark.arrow import attach_offsets, gather_assigned, kernel_claims
from rebalance_udfs.spark.assign import kernel_member_frame, kernel_members, queue_rows
from rebalance_udfs.spark.buckets import BUCKET, BUCKET_KEYS, bucketed
from rebalance_udfs.spark.sticky import chain_order
from rebalance_udfs.sticky_chain import ORDER_COLUMNS, member_side, sticky_bucket
from vocabulary.columns import QUEUE_KEYS, SNAPSHOT_KEYS, STICKY_STRATEGIES

FIGURES = from_arrow_schema(FIGURES_SCHEMA)


def candidate_rows(queues: pa.Table, members: pd.DataFrame, strategy: str) -> pa.Table:
    """The assignment rows (ASSIGNED_ARROW_SCHEMA) of a bucket had every clustering member
    run `strategy`: the batch kernels, or the sticky chain from no prior.

    `queues`: the bucket's queue rows, offsets attached, with ORDER_COLUMNS; `members`:
    its member rows (`rebalance_udfs.spark.assign.kernel_member_frame`)."""
    members = switched(members, strategy)
    if strategy in STICKY_STRATEGIES:
        claims = kernel_claims(queues, [*QUEUE_KEYS, *ORDER_COLUMNS], member_side(members),
                               sticky_bucket)
    else:
        claims = kernel_claims(queues, QUEUE_COLUMNS, members, allocate_bucket)
    return gather_assigned(queues, claims)


def _body(strategies: tuple[str, ...], pairs: pa.Table
          ) -> Callable[[pa.Table, pa.Table], pa.Table]:
    """The cogrouped UDF body: a bucket's queue rows and members in, FIGURES rows of every
    candidate out."""
    def body(queues: pa.Table, members: pa.Table) -> pa.Table:
        queues = attach_offsets(queues)
        frame = kernel_member_frame(members)
        parts = [candidate_figures(candidate_rows(queues, frame, s), pairs, s)
                 for s in strategies]
        return pa.concat_tables([FIGURES_SCHEMA.empty_table(), *parts])
    return body


def no_figures(spark: SparkSession) -> DataFrame:
    """An empty frame of FIGURES."""
    return spark.createDataFrame([], FIGURES)


def comparison_figures(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                       buckets: int, strategies: tuple[str, ...]) -> DataFrame:
    """FIGURES rows (`rebalance_udfs.comparison.FIGURES_SCHEMA`) of every group of
    `members` and candidate in `strategies`: per snapshot of the run with a predecessor in
    the run, the candidate's queues, moves, duplicate estimate and heaviest client. The
    pairs are a few rows per cluster: collected once, and given to every call."""
    order = chain_order(queues)
    pairs = (order.where(F.col("_previous").isNotNull())
             .select("cluster", "snapshot_id", F.col("_previous").alias("previous_snapshot_id"),
                     F.col("_previous_in_run").alias("previous_in_run"))
             .select(*PAIR_KEYS).toArrow())
    if not pairs.num_rows:  # one snapshot per cluster: nothing to compare
        return no_figures(queues.sparkSession)
    rows = queue_rows(queues, members, offsets).join(F.broadcast(order), SNAPSHOT_KEYS)
    return (bucketed(rows, buckets, BUCKET_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(kernel_members(members), buckets, BUCKET_KEYS).groupBy(BUCKET))
            .applyInArrow(_body(strategies, pairs), FIGURES))
