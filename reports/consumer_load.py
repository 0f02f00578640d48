"""`consumer_load`: one row per client: what it claims, in total and per topic, and whether
it idles. Every member appears, also those that claim nothing (that is the point)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.batch import GROUP_KEYS

CLIENT_KEYS = [*GROUP_KEYS, "client_id"]


def consumer_load_report(assignments: DataFrame, members: DataFrame,
                         times: DataFrame) -> DataFrame:
    """Every member with its claims; `topics` are what it subscribes (for churn triggers)."""
    clients = members.groupBy(*CLIENT_KEYS).agg(
        F.array_sort(F.collect_set("strategy")).alias("strategies"),
        F.coalesce(F.max("message_model"), F.lit("CLUSTERING")).alias("message_model"),
        F.max("client_room").alias("client_room"),
        F.greatest(F.countDistinct("client_addr"), F.lit(1)).alias("connections"),
        F.array_sort(F.collect_set("topic")).alias("topics"),
    )
    claims = assignments.where(F.col("client_id").isNotNull())
    per_topic = claims.groupBy(*CLIENT_KEYS, "topic").agg(
        F.count(F.lit(1)).cast("int").alias("n"),
        F.sum("lag").alias("lag"),
        F.sum("in_rate").alias("in_rate"),
        F.sum(F.when(F.col("status") == "CONTENDED", 1).otherwise(0)).alias("contended"),
        F.count("lag").alias("lag_known"),
        F.count("in_rate").alias("rate_known"),
    )
    per_client = per_topic.groupBy(*CLIENT_KEYS).agg(
        F.sum("n").cast("int").alias("queues"),
        F.map_from_entries(F.array_sort(F.collect_list(F.struct("topic", "n"))))
        .alias("queues_by_topic"),
        F.when(F.sum("lag_known") > 0, F.sum("lag")).alias("lag"),
        F.when(F.sum("rate_known") > 0, F.sum("in_rate")).alias("in_rate"),
        F.sum("contended").cast("int").alias("contended_queues"),
    )
    return (
        clients.join(per_client, CLIENT_KEYS, "left")
        .join(F.broadcast(times), ["snapshot_id", "cluster"], "left")
        .withColumn("queues", F.coalesce("queues", F.lit(0)))
        .withColumn("queues_by_topic", F.coalesce(
            "queues_by_topic", F.create_map().cast("map<string,int>")))
        .withColumn("contended_queues", F.coalesce("contended_queues", F.lit(0)))
        .withColumn("idle", F.col("queues") == 0)
        .select("snapshot_id", "cluster", "captured_at", "consumer_group", "client_id",
                "strategies", "message_model", "client_room", "connections", "topics",
                "queues", "queues_by_topic", "lag", "in_rate", "contended_queues", "idle")
    )
