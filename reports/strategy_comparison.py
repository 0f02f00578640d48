"""`strategy_comparison`: how many queue moves each strategy would have caused.

For each candidate strategy every CLUSTERING member of every group is switched to it
(`rooms` / `queues` params cleared; `virtual_nodes` kept, so CONSISTENT_HASH uses the
member's own count or the default 10; BROADCASTING members keep theirs, they claim every
queue anyway), all snapshots of the run are re-allocated by the kernels the audit runs
(sticky ones chain the run's snapshots so each starts from the previous hypothetical
assignment) and consecutive snapshots of a cluster are compared per group with the churn
report's definition of a move (`reports.rebalance_churn`): every candidate of a bucket of
groups in one Python call (`rebalance_udfs.spark.comparison`).

One row per (snapshot, cluster, consumer_group present in the snapshot, strategy) for the
snapshots that have a predecessor in the run: `queues` (after), `moves`, the duplicates those
moves would cause where offsets are known (`estimated_duplicates`, null when unknown;
`duplicates_known_moves`), `max_client_queues` (the heaviest client's queue count after:
what the strategy costs in balance) and `actual_strategy` (what the group's members really
run, sorted), so an operator can weigh stability against balance.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports.rebalance_churn import churn_pairs
from vocabulary.columns import GROUP_KEYS, SNAPSHOT_KEYS

COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "consumer_group",
    "strategy", "actual_strategy", "queues", "moves", "estimated_duplicates",
    "duplicates_known_moves", "max_client_queues",
]
_COUNTS = ["queues", "moves", "duplicates_known_moves", "max_client_queues"]


def strategy_comparison_report(figures: DataFrame, strategies: tuple[str, ...],
                               queues: DataFrame, members: DataFrame) -> DataFrame:
    """Move counts per candidate strategy (COLUMNS); see the module docstring.

    `figures`: per compared group and candidate in `strategies`, its queues, moves,
    duplicate estimate and heaviest client (`rebalance_udfs.spark.comparison`);
    `queues` / `members`: the run's inputs (snapshots and groups). Every group present in
    a compared snapshot gets a row per candidate, with zero counts where the candidate
    gave it no queue on either side."""
    pairs = churn_pairs(queues.select(*SNAPSHOT_KEYS, "captured_at"))
    keys = [*GROUP_KEYS, "strategy"]
    groups = (members.groupBy(*GROUP_KEYS)
              .agg(F.array_sort(F.collect_set("strategy")).alias("actual_strategy"))
              .join(F.broadcast(pairs.select(*SNAPSHOT_KEYS, "captured_at",
                                             "previous_snapshot_id")), SNAPSHOT_KEYS)
              .withColumn("strategy", F.explode(F.array(*[F.lit(s) for s in strategies]))))
    return (groups.join(figures, keys, "left").fillna(0, subset=_COUNTS).select(*COLUMNS))
