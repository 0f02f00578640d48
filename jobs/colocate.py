"""Every per-group frame of a run hash-partitioned alike, so the reports' aggregations and
joins find a group's rows where they already are.

Each report is a per-group computation: consumer_load per client of a group,
group_balance per group and topic, churn per group between snapshots, what-if and drift
per group. When the assignment rows and the prior output rows are both partitioned by
the same keys into the same number of partitions, every aggregation and join on keys
that include them needs no shuffle of its own: a group's rows are shuffled once, where
they are materialized. The keys are (cluster, consumer_group), without
snapshot_id, so a group's snapshots land together and churn pairs them in place too.
The member rows are not: the figures pass and the what-if bucket them themselves.

Spark requires, by default, that a join's two sides be partitioned on *all* its keys
before it reuses their partitioning (`spark.sql.requireAllClusterKeysForCoPartition`);
the session turns that off (`jobs.session`), which lets a join on (snapshot, cluster,
group, topic, client) use the (cluster, group) partitioning both sides share.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

PARTITION_KEYS = ("cluster", "consumer_group")


def by_group(df: DataFrame | None, partitions: int) -> DataFrame | None:
    """`df` hash-partitioned by PARTITION_KEYS into `partitions` (None stays None)."""
    if df is None:
        return None
    return df.repartition(max(partitions, 1), *PARTITION_KEYS)
