"""The Spark aggregation the report pass's claim facts replaced
(`rebalance_udfs.claim_facts`), kept as their oracle: per (group, topic, client), how many
queues the client holds and their lag and rate, and the topic's queue figures (distinct,
unconsumed, contended), as conditional sums over the assignment rows (queue figures over
each queue's first row, `queue_first`)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.spark.rates import exact_rate
from vocabulary.columns import CLAIM_STATUSES, CONTENDED, GROUP_KEYS, QUEUE_FIRST, UNCONSUMED

KEYS = [*GROUP_KEYS, "topic", "client_id"]


def _sum_if(cond: Column, value: Column) -> Column:
    return F.sum(F.when(cond, value))


def _count_if(cond: Column, value: Column | None = None) -> Column:
    """Rows where `cond` holds (and `value`, when given, is known)."""
    return F.count(F.when(cond, F.lit(1) if value is None else value)).cast("int")


def client_topic_facts(assigned: DataFrame) -> DataFrame:
    """One row per (snapshot, cluster, group, topic, client_id) of the assignment rows; the
    null client_id row holds the topic's unconsumed queues.

    Rate sums are exact decimals (`rebalance_udfs.spark.rates.EXACT_RATE`).
    Claims, over all the client's rows (BROADCAST too): `rows`, `lag_all`, `rate_all`
    (null when none known) with `lag_all_known` / `rate_all_known`, `contended`.
    Clustering claims (OK, CONTENDED or SHARED): `claims`, `claim_lag`, `claim_rate`.
    Queue facts, summed per topic by the reports: `queues`, `unconsumed_queues`,
    `contended_queues`, `queue_lag` / `queue_lag_known`, `queue_rate` / `queue_rate_known`.
    """
    lag, rate, status = F.col("lag"), exact_rate(F.col("in_rate")), F.col("status")
    claim = status.isin(*CLAIM_STATUSES)
    first = F.col(QUEUE_FIRST)
    return assigned.groupBy(*KEYS).agg(
        F.count(F.lit(1)).cast("int").alias("rows"),
        F.sum(lag).alias("lag_all"), F.count(lag).cast("int").alias("lag_all_known"),
        F.sum(rate).alias("rate_all"), F.count(rate).cast("int").alias("rate_all_known"),
        _count_if(status == CONTENDED).alias("contended"),
        _count_if(claim).alias("claims"),
        _sum_if(claim, lag).alias("claim_lag"),
        _sum_if(claim, rate).alias("claim_rate"),
        _count_if(first).alias("queues"),
        _count_if(first & (status == UNCONSUMED)).alias("unconsumed_queues"),
        _count_if(first & (status == CONTENDED)).alias("contended_queues"),
        _sum_if(first, lag).alias("queue_lag"),
        _count_if(first, lag).alias("queue_lag_known"),
        _sum_if(first, rate).alias("queue_rate"),
        _count_if(first, rate).alias("queue_rate_known"),
    )
