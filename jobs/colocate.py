"""The assignment rows hash-partitioned by group, so the aggregations and joins on them find
a group's rows where they already are.

Each report is a per-group computation. When the assignment rows are partitioned by
keys the aggregations and joins on them include, those need no shuffle of their own: a
group's rows are shuffled once, where they are materialized (the claim-facts aggregation
of `reports.facts` reads them in place). The keys are (cluster, consumer_group), without
snapshot_id. The member and prior rows are not partitioned here: the figures pass, the
what-if and the churn pass bucket their inputs themselves.

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
