"""The claim facts `consumer_load` and `group_balance` are computed from.

`client_topic_facts`: per (group, topic, client), how many queues the client holds and
their lag and rate, and the topic's queue figures (distinct, unconsumed, contended).
Claim figures are conditional sums over the client's rows, queue figures sums over each
queue's first row (`queue_first`, see `rebalance_udfs.allocate.first_of_queue`), so no
report needs a per-queue aggregation or another pass over the assignment rows. One Spark
aggregation (combined before its shuffle) reduces the assignment rows to these; the
group-figures pass (`rebalance_udfs.group_figures`) takes them with the member rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from rebalance_udfs.spark.buckets import bucket_column
from vocabulary.columns import (
    CLAIM_STATUSES,
    CLUSTERING,
    CONTENDED,
    GROUP_KEYS,
    QUEUE_FIRST,
    UNCONSUMED,
)

KEYS = [*GROUP_KEYS, "topic", "client_id"]

# Input rates are summed as exact decimals, then written as doubles. A sum of doubles
# depends on the order Spark meets the rows in (partitioning, shuffle fetch order), so its
# last bits changed from run to run and flipped the rate-skew sentence of a recommendation.
# Decimal sums are exact, hence the same in any order; 9 decimals keep more than any rate
# needs. A rate that is not a finite number below 1e29 counts as unknown.
EXACT_RATE = T.DecimalType(38, 9)


def exact_rate(rate: Column) -> Column:
    """`rate` (double) as an exact decimal for summing (null when not representable)."""
    return rate.try_cast(EXACT_RATE)


def rate_out(rate: Column) -> Column:
    """An exact rate figure as the double the output tables hold."""
    return rate.cast("double")


def _sum_if(cond: Column, value: Column) -> Column:
    return F.sum(F.when(cond, value))


def _count_if(cond: Column, value: Column | None = None) -> Column:
    """Rows where `cond` holds (and `value`, when given, is known)."""
    return F.count(F.when(cond, F.lit(1) if value is None else value)).cast("int")


def client_topic_facts(assigned: DataFrame) -> DataFrame:
    """One row per (snapshot, cluster, group, topic, client_id) of the assignment rows; the
    null client_id row holds the topic's unconsumed queues.

    Rate sums are exact decimals (`EXACT_RATE`); the reports write them as doubles.
    Claims, over all the client's rows (BROADCAST too): `rows`, `lag_all`, `rate_all`
    (null when none known) with `lag_all_known` / `rate_all_known`, `contended`.
    Clustering claims (OK, CONTENDED or SHARED): `claims`, `claim_lag`, `claim_rate`.
    Queue facts, summed per topic by the reports: `queues`, `unconsumed_queues`,
    `contended_queues`, `queue_lag` / `queue_lag_known`, `queue_rate` / `queue_rate_known`.

    Rows bucketed by group (`rebalance_udfs.spark.buckets.bucketed`) keep their BUCKET: a
    function of the group, it changes no group, and grouping by it too lets the
    aggregation run where the rows are (no shuffle) and hand its partitioning on to the
    figures pass.
    """
    lag, rate, status = F.col("lag"), exact_rate(F.col("in_rate")), F.col("status")
    claim = status.isin(*CLAIM_STATUSES)
    first = F.col(QUEUE_FIRST)
    return assigned.groupBy(*bucket_column(assigned), *KEYS).agg(
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


def clustering() -> Column:
    """Members in CLUSTERING mode (the default when message_model is null)."""
    return F.coalesce(F.col("message_model"), F.lit(CLUSTERING)) == CLUSTERING
