"""`strategy_comparison`: how many queue moves each strategy would have caused.

For each candidate strategy every CLUSTERING member of every group is switched to it
(`rooms` / `queues` params cleared; `virtual_nodes` kept, so CONSISTENT_HASH uses the
member's own count or the default 10; BROADCASTING members keep theirs, they claim every
queue anyway), all snapshots of the run are re-allocated — RocketMQ / Kafka one-step
strategies with `rebalance_udfs.spark.assign.assign`, `sticky` / `cooperative-sticky` with
`rebalance_udfs.spark.sticky.assign_sticky`, chaining the run's snapshots so each starts from
the previous hypothetical assignment — and consecutive snapshots of a cluster are compared
per group with the churn report's definition of a move (`reports.rebalance_churn`).

One row per (snapshot, cluster, consumer_group present in the snapshot, strategy) for the
snapshots that have a predecessor in the run: `queues` (after), `moves`, the duplicates those
moves would cause where offsets are known (`estimated_duplicates`, null when unknown;
`duplicates_known_moves`), `max_client_queues` (the heaviest client's queue count after:
what the strategy costs in balance) and `actual_strategy` (what the group's members really
run, sorted), so an operator can weigh stability against balance.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.sticky import assign_sticky
from rebalance_udfs.strategies import supported_strategies
from reports.facts import clustering
from reports.rebalance_churn import AFTER, ROW_COLUMNS, churn_pairs, link_rows, queue_changes
from vocabulary.columns import CLAIM_STATUSES, GROUP_KEYS, SNAPSHOT_KEYS, STICKY_STRATEGIES

DEFAULT_STRATEGIES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "sticky")
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "consumer_group",
    "strategy", "actual_strategy", "queues", "moves", "estimated_duplicates",
    "duplicates_known_moves", "max_client_queues",
]


def with_strategy(members: DataFrame, strategy: str) -> DataFrame:
    """Members as if every CLUSTERING member ran `strategy` (params other than
    virtual_nodes cleared)."""
    member = clustering()
    return (members
            .withColumn("strategy", F.when(member, F.lit(strategy))
                        .otherwise(F.col("strategy")))
            .withColumn("rooms", F.when(~member, F.col("rooms")))
            .withColumn("config_queues", F.when(~member, F.col("config_queues"))))


def hypothetical_assignments(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                             buckets: int, strategy: str) -> DataFrame:
    """ASSIGNED_SCHEMA rows of every snapshot had every clustering member run `strategy`."""
    switched = with_strategy(members, strategy)
    if strategy in STICKY_STRATEGIES:
        return assign_sticky(queues, switched, offsets, buckets)
    return assign(queues, switched, offsets, buckets)


def strategy_comparison_report(
    queues: DataFrame, members: DataFrame, offsets: DataFrame | None, buckets: int,
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES,
) -> DataFrame:
    """Move counts per candidate strategy (COLUMNS); see the module docstring.

    Lazy: the candidates' assignments are unioned and compared in one plan (one link join,
    one aggregation per queue and per group for all candidates together).
    """
    strategies = tuple(dict.fromkeys(strategies))
    known = set(supported_strategies())
    unknown = [s for s in strategies if s not in known]
    if unknown or not strategies:
        raise ValueError(f"strategy_comparison: unknown or no strategies {list(unknown)} "
                         f"(supported: {', '.join(sorted(known))})")
    pairs = churn_pairs(queues.select(*SNAPSHOT_KEYS, "captured_at"))
    assigned = reduce(DataFrame.unionByName, [
        hypothetical_assignments(queues, members, offsets, buckets, s)
        .select(*ROW_COLUMNS, F.lit(s).alias("strategy"))
        for s in strategies
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
