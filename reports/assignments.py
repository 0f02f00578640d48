"""`assignments`: one row per queue per claiming client, one null-client row per unclaimed
queue, with status, lag (max_offset - committed_offset, at least 0) and in_rate where
known."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from vocabulary.columns import SNAPSHOT_KEYS

COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "consumer_group", "topic", "broker_name", "queue_id",
    "client_id", "strategy", "status", "lag", "in_rate", "max_offset", "committed_offset",
    "consumed_offset", "broker_room",
]


def snapshot_times(queues: DataFrame) -> DataFrame:
    """captured_at of each (snapshot, cluster): the earliest capture time of its queues.
    It orders snapshots for churn; null when the inputs do not say."""
    return queues.groupBy(*SNAPSHOT_KEYS).agg(F.min("captured_at").alias("captured_at"))


LAST_CAPTURED = "last_captured_at"


def snapshot_time_spread(queues: DataFrame) -> DataFrame:
    """`snapshot_times` with the latest capture time of the queues beside it
    (LAST_CAPTURED), in the same aggregation: a snapshot is one capture, and the run says
    when its rows hold several (`jobs.scope.capture_time_spread`)."""
    return queues.groupBy(*SNAPSHOT_KEYS).agg(F.min("captured_at").alias("captured_at"),
                                              F.max("captured_at").alias(LAST_CAPTURED))


def assignments_report(assigned: DataFrame, times: DataFrame) -> DataFrame:
    """Add lag and captured_at to the kernel output; lag is null unless both offsets are
    known, and 0 where the commit is past the max (as `claim_facts.lag_of`'s: no
    backlog). The table's COLUMNS."""
    diff = F.col("max_offset") - F.col("committed_offset")
    lag = F.when(diff < 0, F.lit(0).cast("long")).otherwise(diff)
    return (assigned.withColumn("lag", lag)
            .join(F.broadcast(times), SNAPSHOT_KEYS, "left")
            .select(*COLUMNS))
