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

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn import AFTER, BEFORE, SIDE
from reports.rebalance_churn import PAIR_COLUMNS, churn_pairs
from vocabulary.columns import CLAIM_STATUSES, GROUP_KEYS, QUEUE_KEYS, SNAPSHOT_KEYS

# what a move compares of an assignment row
ROW_COLUMNS = [*QUEUE_KEYS, "client_id", "status", "committed_offset", "consumed_offset"]
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
    moved (`reports.rebalance_churn`'s definition), duplicate_estimate (long, null when
    unknown).
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
    )
    moved = (F.col("in_before") & F.col("in_after") & (F.size("claimants_before") > 0)
             & (F.size("claimants_after") > 0)
             & (F.col("claimants_before") != F.col("claimants_after")))
    return per_queue.withColumn("moved", moved)
