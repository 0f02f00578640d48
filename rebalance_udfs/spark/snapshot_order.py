"""The order of snapshots within a cluster, and each snapshot's predecessor.

Snapshots of one cluster are ordered by `captured_at` (nulls first), then `snapshot_id`.
A run's snapshot is paired with the snapshot just before it among the run's snapshots and
the earlier ones already written (`prior`); a run's own rows win over prior rows of the
same (snapshot_id, cluster), since re-running a snapshot replaces it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from vocabulary.columns import SNAPSHOT_KEYS


def _times(rows: DataFrame) -> DataFrame:
    return rows.groupBy(*SNAPSHOT_KEYS).agg(F.min("captured_at").alias("captured_at"))


def snapshot_order(current: DataFrame, prior: DataFrame | None = None) -> DataFrame:
    """One row per (snapshot_id, cluster) of `current` with its predecessor.

    `current` / `prior`: any rows with snapshot_id, cluster, captured_at (a snapshot's
    captured_at is the earliest of its rows). Output columns: snapshot_id, cluster,
    captured_at, position (1-based rank within the cluster over current ∪ prior),
    previous_snapshot_id, previous_captured_at (null when there is no predecessor) and
    previous_in_run (whether the predecessor is one of `current`'s snapshots).
    """
    snaps = _times(current.select(*SNAPSHOT_KEYS, "captured_at")).withColumn(
        "_in_run", F.lit(True))
    if prior is not None:
        earlier = (_times(prior.select(*SNAPSHOT_KEYS, "captured_at"))
                   .join(snaps.select(*SNAPSHOT_KEYS), SNAPSHOT_KEYS, "left_anti")
                   .withColumn("_in_run", F.lit(False)))
        snaps = snaps.unionByName(earlier)
    w = Window.partitionBy("cluster").orderBy(F.col("captured_at").asc_nulls_first(),
                                              F.col("snapshot_id"))
    return (
        snaps.withColumn("position", F.row_number().over(w).cast("long"))
        .withColumn("previous_snapshot_id", F.lag("snapshot_id").over(w))
        .withColumn("previous_captured_at", F.lag("captured_at").over(w))
        .withColumn("previous_in_run", F.lag("_in_run").over(w))
        .where(F.col("_in_run"))
        .drop("_in_run")
    )
