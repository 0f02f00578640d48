"""`consumer_load`: one row per client: what it claims, in total and per topic, and whether
it idles. Every member appears, also those that claim nothing (that is the point)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports.facts import rate_out
from vocabulary.columns import CLIENT_KEYS, CLUSTERING, SNAPSHOT_KEYS


def consumer_load_report(facts: DataFrame, member_clients: DataFrame,
                         times: DataFrame) -> DataFrame:
    """Every member with its claims; `topics` are what it subscribes (for churn triggers).

    `facts` / `member_clients`: `reports.facts.client_topic_facts` of the assignment rows
    and `member_client_facts` of the member rows."""
    clients = member_clients.select(
        *CLIENT_KEYS, "strategies",
        F.coalesce(F.col("message_model"), F.lit(CLUSTERING)).alias("message_model"),
        "client_room", F.greatest(F.col("connections"), F.lit(1)).alias("connections"),
        "topics",
    )
    per_client = facts.where(F.col("client_id").isNotNull()).groupBy(*CLIENT_KEYS).agg(
        F.sum("rows").cast("int").alias("queues"),
        F.map_from_entries(F.array_sort(F.collect_list(
            F.struct("topic", F.col("rows").alias("n"))))).alias("queues_by_topic"),
        F.when(F.sum("lag_all_known") > 0, F.sum("lag_all")).alias("lag"),
        F.when(F.sum("rate_all_known") > 0, F.sum("rate_all")).alias("in_rate"),
        F.sum("contended").cast("int").alias("contended_queues"),
    )
    return (
        clients.join(per_client, CLIENT_KEYS, "left")
        .join(F.broadcast(times), SNAPSHOT_KEYS, "left")
        .withColumn("queues", F.coalesce("queues", F.lit(0)))
        .withColumn("queues_by_topic", F.coalesce(
            "queues_by_topic", F.create_map().cast("map<string,int>")))
        .withColumn("contended_queues", F.coalesce("contended_queues", F.lit(0)))
        .withColumn("idle", F.col("queues") == 0)
        .withColumn("in_rate", rate_out(F.col("in_rate")))
        .select("snapshot_id", "cluster", "captured_at", "consumer_group", "client_id",
                "strategies", "message_model", "client_room", "connections", "topics",
                "queues", "queues_by_topic", "lag", "in_rate", "contended_queues", "idle")
    )
