"""The Spark strategy_comparison this project ran before the comparison moved into one
Python call per bucket (`rebalance_udfs.comparison`): kept as the tests' independent
oracle. Each candidate is a Spark assignment of its own (`oracle_candidates`: the audit's
assign and assign_sticky with every clustering member switched), and the moves and the
heaviest client are Spark aggregations over all their rows (`oracle_comparison`, with
the linking and per-queue changes the churn oracle uses too: `link_rows`,
`queue_changes`).

tests/spark/test_strategy_comparison.py holds the audit's comparison equal to it on
random snapshots.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn import AFTER, BEFORE, SIDE
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.members import clustering
from rebalance_udfs.spark.sticky import assign_sticky
from reports.rebalance_churn import PAIR_COLUMNS, churn_pairs
from reports.strategy_comparison import COLUMNS
from vocabulary.columns import (
    CLAIM_STATUSES,
    GROUP_KEYS,
    QUEUE_KEYS,
    SNAPSHOT_KEYS,
    STICKY_STRATEGIES,
)


def oracle_candidates(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                      buckets: int, strategies: tuple[str, ...]) -> dict[str, DataFrame]:
    """Per candidate strategy, the assignment rows of every snapshot had every clustering
    member run it (sticky ones chained over the run's snapshots, from no prior)."""
    out = {}
    for strategy in strategies:
        member = clustering()
        switched = (members
                    .withColumn("strategy", F.when(member, F.lit(strategy))
                                .otherwise(F.col("strategy")))
                    .withColumn("rooms", F.when(~member, F.col("rooms")))
                    .withColumn("config_queues", F.when(~member, F.col("config_queues"))))
        out[strategy] = (assign_sticky(queues, switched, offsets, buckets)
                         if strategy in STICKY_STRATEGIES
                         else assign(queues, switched, offsets, buckets))
    return out


# what a move compares of an assignment row
ROW_COLUMNS = [*QUEUE_KEYS, "client_id", "status", "committed_offset", "consumed_offset"]


def oracle_comparison(candidates: dict[str, DataFrame], queues: DataFrame,
                      members: DataFrame) -> DataFrame:
    """Move counts per candidate strategy (strategy_comparison's COLUMNS).

    `candidates`: strategy -> its hypothetical assignment rows (`oracle_candidates`);
    `queues` / `members`: the run's inputs (snapshots and groups).
    Lazy: the candidates' assignments are unioned and compared in one plan (one link join,
    one aggregation per queue and per group for all candidates together).
    """
    strategies = tuple(candidates)
    pairs = churn_pairs(queues.select(*SNAPSHOT_KEYS, "captured_at"))
    assigned = reduce(DataFrame.unionByName, [
        rows.select(*ROW_COLUMNS, F.lit(s).alias("strategy"))
        for s, rows in candidates.items()
    ])
    linked = link_rows(assigned, None, pairs)
    keys = [*GROUP_KEYS, "strategy"]
    moved = F.col("moved")
    per_group = queue_changes(linked, ("strategy",)).groupBy(*keys).agg(
        F.sum(F.col("in_after").cast("int")).cast("int").alias("queues"),
        F.sum(moved.cast("int")).cast("int").alias("moves"),
        F.sum(F.when(moved, F.col("duplicate_estimate"))).cast("long")
        .alias("estimated_duplicates"),
        F.count(F.when(moved, F.col("duplicate_estimate"))).cast("int")
        .alias("duplicates_known_moves"),
    )
    heaviest = (linked.where((F.col("_side") == AFTER) & F.col("client_id").isNotNull()
                             & F.col("status").isin(*CLAIM_STATUSES))
                .groupBy(*keys, "client_id").count()
                .groupBy(*keys).agg(F.max("count").cast("int").alias("max_client_queues")))
    # every group present in a compared snapshot, once per candidate
    groups = (members.groupBy(*GROUP_KEYS)
              .agg(F.array_sort(F.collect_set("strategy")).alias("actual_strategy"))
              .join(F.broadcast(pairs.select(*SNAPSHOT_KEYS, "captured_at",
                                             "previous_snapshot_id")), SNAPSHOT_KEYS)
              .withColumn("strategy", F.explode(F.array(*[F.lit(s) for s in strategies]))))
    return (groups.join(per_group, keys, "left").join(heaviest, keys, "left")
            .fillna(0, subset=["queues", "moves", "duplicates_known_moves",
                               "max_client_queues"])
            .select(*COLUMNS))


def link_rows(current: DataFrame, prior: DataFrame | None, pairs: DataFrame) -> DataFrame:
    """The rows of every compared pair, keyed by the later snapshot.

    `current` / `prior`: rows with snapshot_id and cluster (the same columns). Each row of a
    paired snapshot comes out with `snapshot_id` = the later snapshot, the PAIR_COLUMNS,
    and `_side` AFTER (its own snapshot) or BEFORE (the predecessor's rows; a prior row is
    only used for a predecessor that is not in the run). One broadcast join for all rows.
    """
    links = pairs.select(
        "cluster", "snapshot_id", *PAIR_COLUMNS,
        F.explode(F.array(
            F.struct(F.col("snapshot_id").alias("_source"), F.lit(True).alias("_from_run"),
                     F.lit(AFTER).alias(SIDE)),
            F.struct(F.col("previous_snapshot_id").alias("_source"),
                     F.col("previous_in_run").alias("_from_run"), F.lit(BEFORE).alias(SIDE)),
        )).alias("_link"),
    ).select("*", "_link.*").drop("_link")
    rows = current.withColumn("_from_run", F.lit(True))
    if prior is not None:
        rows = rows.unionByName(prior.withColumn("_from_run", F.lit(False)))
    rows = rows.withColumnRenamed("snapshot_id", "_source")
    return rows.join(F.broadcast(links), ["_source", "cluster", "_from_run"]).drop(
        "_source", "_from_run")


def _side(name: int) -> Column:
    return F.col(SIDE) == F.lit(name)


def _claim() -> Column:
    return F.col("client_id").isNotNull() & F.col("status").isin(*CLAIM_STATUSES)


def _duplicates() -> Column:
    """consumed - committed clipped at 0; null unless both offsets are known (greatest()
    alone would turn an unknown into 0)."""
    known = F.col("consumed_offset").isNotNull() & F.col("committed_offset").isNotNull()
    return F.when(known, F.greatest(F.col("consumed_offset") - F.col("committed_offset"),
                                    F.lit(0).cast("long")))


def queue_changes(linked: DataFrame, extra_keys: tuple[str, ...] = ()) -> DataFrame:
    """Per queue of a group, what changed between a snapshot and its predecessor.

    `linked`: ROW_COLUMNS rows with `_side` (see `link_rows`). Output: QUEUE_KEYS,
    `extra_keys`, in_before, in_after, claimants_before, claimants_after (sorted arrays),
    moved (`reports.rebalance_churn`'s definition), goes_on (moved, SHARED on either side
    and a claimant on both: that POP / MESSAGE client goes on consuming it),
    duplicate_estimate (long, null when unknown or goes_on).
    """
    # groupBy keys compare nulls as equal: broker_name is null-safe without coalescing
    per_queue = linked.groupBy(*QUEUE_KEYS, *extra_keys).agg(
        F.max(_side(BEFORE)).alias("in_before"),
        F.max(_side(AFTER)).alias("in_after"),
        F.array_sort(F.collect_set(F.when(_side(BEFORE) & _claim(), F.col("client_id"))))
        .alias("claimants_before"),
        F.array_sort(F.collect_set(F.when(_side(AFTER) & _claim(), F.col("client_id"))))
        .alias("claimants_after"),
        # offsets are per group per queue: every claim row of the old owner(s) has them
        F.max(F.when(_side(BEFORE) & _claim(), _duplicates())).alias("duplicate_estimate"),
        F.max(_claim() & (F.col("status") == "SHARED")).alias("_shared"),
    )
    moved = (F.col("in_before") & F.col("in_after") & (F.size("claimants_before") > 0)
             & (F.size("claimants_after") > 0)
             & (F.col("claimants_before") != F.col("claimants_after")))
    goes_on = (moved & F.col("_shared")
               & (F.size(F.array_intersect("claimants_before", "claimants_after")) > 0))
    return (per_queue.withColumn("moved", moved).withColumn("goes_on", goes_on)
            .withColumn("duplicate_estimate",
                        F.when(~F.col("goes_on"), F.col("duplicate_estimate")))
            .drop("_shared"))
