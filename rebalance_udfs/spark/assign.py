"""Batch strategies in Spark: `allocate_bucket` over many consumer groups per Python call.

Groups are hashed into buckets; one cogrouped Arrow UDF call receives a whole bucket —
the queues of every (group, topic) it holds, their offsets, and their members — and the
numpy kernels allocate all of them at once (see `rebalance_udfs.spark.arrow` for the
Arrow body).
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.spark.arrow import OFFSET_ROW, OFFSETS, attach_offsets, run_kernel
from rebalance_udfs.spark.buckets import BUCKET, bucketed
from vocabulary.columns import GROUP_KEYS, MODE_COLUMNS
from vocabulary.schemas import ASSIGNED_SCHEMA


def allocate_arrow(queues: pa.Table, members: pa.Table) -> pa.Table:
    """The cogrouped UDF body: one bucket of groups in, its assignment rows out.

    `queues`: the bucket's queue rows, and its offsets rows when they ride along (see
    `attach_offsets`)."""
    return run_kernel(attach_offsets(queues), QUEUE_COLUMNS, kernel_member_frame(members),
                      allocate_bucket)


def kernel_members(members: DataFrame) -> DataFrame:
    """What the batch kernels read of the member rows: MEMBER_COLUMNS and the allocation
    modes when the input has them."""
    return members.select(*MEMBER_COLUMNS, *[c for c in MODE_COLUMNS if c in members.columns])


def kernel_member_frame(members: pa.Table) -> pd.DataFrame:
    """A bucket's member rows as the batch kernels take them (`kernel_members`' columns,
    pandas)."""
    modes = [c for c in MODE_COLUMNS if c in members.column_names]
    return members.select([*MEMBER_COLUMNS, *modes]).to_pandas()


def subscribed_units(
    queues: DataFrame, members: DataFrame, offsets: DataFrame | None
) -> DataFrame:
    """The readable queues of every (snapshot, cluster, group, topic) some member subscribes,
    with the group's offsets: what the allocation UDFs receive."""
    return with_offsets(_units(queues, members), offsets)


def _units(queues: DataFrame, members: DataFrame, broadcast: bool = False) -> DataFrame:
    """The readable queues of every (group, topic) some member subscribes. Unreadable queues
    are not allocated (the client never sees them), as upstream. `broadcast`: the
    subscriptions are few enough to broadcast to the join (the caller's size rule): the
    queue rows then go from their scan straight on, not shuffled and sorted for a
    sort-merge join, which Spark picks when its estimate of them is above its threshold."""
    # fresh column ids (alias): the members frame is cogrouped with this join's result later
    subscribed = (members.where(F.col("topic").isNotNull())
                  .select(*[F.col(c).alias(c) for c in [*GROUP_KEYS, "topic"]]).distinct())
    if broadcast:
        subscribed = F.broadcast(subscribed)
    return (
        queues.where(F.coalesce(F.col("readable"), F.lit(True)))
        .select("snapshot_id", "cluster", "topic", "broker_name", "queue_id", "broker_room",
                "max_offset", "in_rate")
        .join(subscribed, ["snapshot_id", "cluster", "topic"])
    )


def assign(
    queues: DataFrame, members: DataFrame, offsets: DataFrame | None, buckets: int
) -> DataFrame:
    """Assignment rows (ASSIGNED_SCHEMA) of every (group, topic) some member subscribes,
    for members whose strategy has a batch kernel (not the sticky assignors)."""
    return (
        bucketed(queue_rows(queues, members, offsets), buckets, GROUP_KEYS).groupBy(BUCKET)
        .cogroup(bucketed(kernel_members(members), buckets, GROUP_KEYS).groupBy(BUCKET))
        .applyInArrow(allocate_arrow, ASSIGNED_SCHEMA)
    )


def queue_rows(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
               *extra: Column, broadcast_subscriptions: bool = False) -> DataFrame:
    """The queue rows a bucket's kernel call receives: the readable queues of every
    (group, topic) some member subscribes (with the `extra` columns), and the groups'
    offsets rows beside them (`broadcast_subscriptions`: see `_units`).

    The offsets rows travel with the queue rows in one shuffle to the groups' buckets and
    are joined to them inside the kernel's call (`attach_offsets`, a hash join per
    bucket): a Spark join would sort all the queue rows and all the offsets rows on their
    six keys first (10M rows: 25 s of sorting)."""
    units = with_offsets(_units(queues, members, broadcast_subscriptions), None)
    if extra:
        units = units.select("*", *extra)
    if offsets is None:
        return units
    return (units.withColumn(OFFSET_ROW, F.lit(False))
            .unionByName(offsets.select(*GROUP_KEYS, "topic", "broker_name", "queue_id",
                                        *OFFSETS, F.lit(True).alias(OFFSET_ROW)),
                         allowMissingColumns=True))


def with_offsets(units: DataFrame, offsets: DataFrame | None) -> DataFrame:
    """Left-join the group's committed / consumed offsets (broker_name null-safe: Kafka)."""
    if offsets is None:
        return (units.withColumn("committed_offset", F.lit(None).cast("long"))
                .withColumn("consumed_offset", F.lit(None).cast("long")))
    keys = [*GROUP_KEYS, "topic", "queue_id"]
    o = offsets.select(*keys, F.col("broker_name").alias("_o_broker"), "committed_offset",
                       "consumed_offset")
    u = units.alias("u")
    cond = [F.col(f"u.{k}") == o[k] for k in keys] + [
        F.col("u.broker_name").eqNullSafe(o["_o_broker"])
    ]
    return u.join(o, cond, "left").select("u.*", o["committed_offset"], o["consumed_offset"])
