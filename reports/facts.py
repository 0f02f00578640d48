"""The aggregates `consumer_load` and `group_balance` share, each computed once per run.

* `client_topic_facts`: per (group, topic, client), how many queues the client holds and
  their lag and rate, and the topic's queue figures (distinct, unconsumed, contended).
  Claim figures are conditional sums over the client's rows, queue figures sums over each
  queue's first row (`queue_first`, see `rebalance_udfs.allocate.first_of_queue`), so no
  report needs a per-queue aggregation or another pass over the assignment rows.
* `member_topic_facts` / `member_client_facts`: the member rows per (group, topic,
  client) and per (group, client); every member-side figure of both reports is an
  aggregate of these, instead of one aggregation of the member rows per figure.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from vocabulary.columns import (
    CLAIM_STATUSES,
    CLIENT,
    CLIENT_KEYS,
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


def clustering() -> Column:
    """Members in CLUSTERING mode (the default when message_model is null)."""
    return F.coalesce(F.col("message_model"), F.lit(CLUSTERING)) == CLUSTERING


def _union_of(sets: str) -> Column:
    """The distinct elements of all the arrays in column `sets` of the group."""
    return F.array_distinct(F.flatten(F.collect_list(sets)))


def member_topic_facts(members: DataFrame) -> DataFrame:
    """One row per (snapshot, cluster, group, topic, client_id) of the member rows (topic
    null: the member's rows that subscribe nothing): `addrs`, `strategies`, `variants`
    (strategy with its parameters), `clustering` (1 when a row is in clustering mode),
    `message_model`, `client_room`, `modes` (who allocates: CLIENT when unset)."""
    mode = (F.coalesce(F.col("allocation_mode"), F.lit(CLIENT))
            if "allocation_mode" in members.columns else F.lit(CLIENT))
    params = F.to_json(F.array_sort(F.map_entries(
        F.coalesce(F.col("strategy_params"), F.create_map().cast("map<string,string>")))))
    return members.groupBy(*KEYS).agg(
        F.collect_set("client_addr").alias("addrs"),
        F.collect_set("strategy").alias("strategies"),
        F.collect_set(F.concat_ws("|", "strategy", params)).alias("variants"),
        F.max(clustering().cast("int")).alias("clustering"),
        F.max("message_model").alias("message_model"),
        F.max("client_room").alias("client_room"),
        F.collect_set(mode).alias("modes"),
    )


def member_client_facts(member_topics: DataFrame) -> DataFrame:
    """One row per (snapshot, cluster, group, client_id): `strategies` and `topics`
    (sorted), `variants`, `connections` (distinct addresses), `clustering` (1 when some row
    is in clustering mode), `subscribes` (1 when some clustering row names a topic),
    `message_model`, `client_room`, `modes`."""
    named = F.col("topic").isNotNull()
    return member_topics.groupBy(*CLIENT_KEYS).agg(
        F.array_sort(_union_of("strategies")).alias("strategies"),
        _union_of("variants").alias("variants"),
        F.size(_union_of("addrs")).alias("connections"),
        F.array_sort(F.collect_list("topic")).alias("topics"),
        F.max("clustering").alias("clustering"),
        F.coalesce(F.max(F.when(named, F.col("clustering"))), F.lit(0)).alias("subscribes"),
        F.max("message_model").alias("message_model"),
        F.max("client_room").alias("client_room"),
        _union_of("modes").alias("modes"),
    )
