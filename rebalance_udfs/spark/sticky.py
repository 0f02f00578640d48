"""Kafka `sticky` / `cooperative-sticky` in Spark: a group's snapshots in one call.

Each snapshot starts from the previous one's result (`rebalance_udfs.sticky_chain`), so
groups are hashed by (cluster, consumer_group) — not by snapshot — into `buckets`; one
cogrouped Arrow UDF call receives every snapshot of the bucket's groups.

The previous assignment of a snapshot outside the run comes from `prior_assignments` (the
assignments table of earlier runs); none when the group had no sticky rows there. Only
claims written by a sticky assignor count (status OK, strategy sticky /
cooperative-sticky), in the run and from prior rows alike, so the result does not depend on
how snapshots were split into runs. (Real Kafka also lets `cooperative-sticky` keep what a
member owned under another assignor right after a switch; the audit starts such a group
fresh.)
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.spark.arrow import run_kernel
from rebalance_udfs.spark.assign import subscribed_units
from rebalance_udfs.spark.buckets import BUCKET, BUCKET_KEYS, bucketed
from rebalance_udfs.spark.snapshot_order import snapshot_order
from rebalance_udfs.sticky_chain import MEMBER_SIDE, ORDER_COLUMNS, sticky_bucket
from vocabulary.columns import GROUP_KEYS, OK, QUEUE_KEYS, SNAPSHOT_KEYS, STICKY_STRATEGIES
from vocabulary.schemas import ASSIGNED_SCHEMA


def sticky_arrow(queues: pa.Table, members: pa.Table) -> pa.Table:
    """The cogrouped UDF body: every snapshot of a bucket of groups in, assignment rows out."""
    return run_kernel(queues, [*QUEUE_KEYS, *ORDER_COLUMNS],
                      members.select(MEMBER_SIDE).to_pandas(), sticky_bucket)


def chain_order(times: DataFrame, prior_times: DataFrame | None = None) -> DataFrame:
    """SNAPSHOT_KEYS and ORDER_COLUMNS of every snapshot of `times`: its place in its
    cluster's order and its predecessor (`snapshot_order`), as `sticky_bucket` reads them."""
    return snapshot_order(times, prior_times).select(
        *SNAPSHOT_KEYS, F.col("position").alias("_position"),
        F.col("previous_snapshot_id").alias("_previous"),
        F.col("previous_in_run").alias("_previous_in_run"))


def assign_sticky(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                  buckets: int, prior_assignments: DataFrame | None = None) -> DataFrame:
    """Assignment rows (ASSIGNED_SCHEMA) of the groups whose members run a sticky assignor.

    `members` holds only `sticky` / `cooperative-sticky` members; `queues` / `offsets` are
    the validated inputs. `prior_assignments`: rows of the assignments table written by
    earlier runs (snapshot_id, cluster, captured_at, consumer_group, topic, broker_name,
    queue_id, client_id, strategy, status; extra columns ignored), or None.
    """
    prior_times = (prior_assignments.select(*SNAPSHOT_KEYS, "captured_at")
                   if prior_assignments is not None else None)
    order = chain_order(queues.select(*SNAPSHOT_KEYS, "captured_at"), prior_times)

    units = subscribed_units(queues, members, offsets).join(
        F.broadcast(order), SNAPSHOT_KEYS)

    member_side = members.select(
        *GROUP_KEYS, "client_id", "topic", "strategy", "message_model",
        F.lit(None).cast("string").alias("broker_name"),
        F.lit(None).cast("int").alias("queue_id"), F.lit(False).alias("_prior"))
    if prior_assignments is not None:
        member_side = member_side.unionByName(
            _prior_claims(prior_assignments, order, members))
    return (
        bucketed(units, buckets, BUCKET_KEYS).groupBy(BUCKET)
        .cogroup(bucketed(member_side, buckets, BUCKET_KEYS).groupBy(BUCKET))
        .applyInArrow(sticky_arrow, ASSIGNED_SCHEMA)
    )


def _prior_claims(prior: DataFrame, order: DataFrame, members: DataFrame) -> DataFrame:
    """Clustering claims of the predecessor snapshots that are not in this run, keyed by
    the run's snapshot that follows them (only for groups of this run's members)."""
    wanted = (order.where(~F.col("_previous_in_run"))
              .select(F.col("snapshot_id").alias("_next"), "cluster",
                      F.col("_previous").alias("snapshot_id")))
    groups = members.select(*[F.col(c).alias(c) for c in GROUP_KEYS]).distinct()
    claims = (prior.where(F.col("client_id").isNotNull() & (F.col("status") == OK)
                          & F.col("strategy").isin(*STICKY_STRATEGIES))
              .select(*GROUP_KEYS, "client_id", "topic", "broker_name", "queue_id")
              .join(F.broadcast(wanted), SNAPSHOT_KEYS)
              .drop("snapshot_id").withColumnRenamed("_next", "snapshot_id")
              .join(groups, GROUP_KEYS, "left_semi"))
    return claims.select(
        *GROUP_KEYS, "client_id", "topic", F.lit(None).cast("string").alias("strategy"),
        F.lit(None).cast("string").alias("message_model"), "broker_name",
        F.col("queue_id").cast("int").alias("queue_id"), F.lit(True).alias("_prior"))
