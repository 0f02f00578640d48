"""`strategy_comparison`: how many queue moves each strategy would have caused.

For each candidate strategy every CLUSTERING member of every group is switched to it
(`rooms` / `queues` params cleared; `virtual_nodes` kept, so CONSISTENT_HASH uses the
member's own count or the default 10; BROADCASTING members keep theirs, they claim every
queue anyway), all snapshots of the run are re-allocated by the assign step
(`jobs.assign.assign_candidates`; sticky ones chain the run's snapshots so each starts from
the previous hypothetical assignment) — and consecutive snapshots of a cluster are compared
here per group with the churn report's definition of a move (`reports.rebalance_churn`).

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

from reports.rebalance_churn import AFTER, ROW_COLUMNS, churn_pairs, link_rows, queue_changes
from vocabulary.columns import CLAIM_STATUSES, GROUP_KEYS, SNAPSHOT_KEYS

COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "consumer_group",
    "strategy", "actual_strategy", "queues", "moves", "estimated_duplicates",
    "duplicates_known_moves", "max_client_queues",
]


def strategy_comparison_report(candidates: dict[str, DataFrame], queues: DataFrame,
                               members: DataFrame) -> DataFrame:
    """Move counts per candidate strategy (COLUMNS); see the module docstring.

    `candidates`: strategy -> its hypothetical assignment rows (`jobs.assign
    .assign_candidates`); `queues` / `members`: the run's inputs (snapshots and groups).
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
