"""`rebalance_churn`: what a rebalance between two snapshots of a cluster changed, per group.

Each snapshot of the run is paired with the previous snapshot of the same cluster among the
run's snapshots and those already in the output tables (`prior_*`), ordered by
`captured_at` (nulls first), then `snapshot_id`. One row per (snapshot, cluster,
consumer_group) present in the snapshot or in its predecessor (a group that vanished gets a
row too); snapshots without a predecessor get no row.

Definitions (queues are the distinct (topic, broker_name, queue_id) of the group's
assignments rows, broker_name null-safe, i.e. the readable queues of the topics the group
subscribes):
- a queue's *claimants* are the clients that pull it in clustering mode (rows with status OK
  or CONTENDED); BROADCASTING clients read every queue with their own offsets and never
  take a queue from anyone, so they are not claimants;
- *added* / *removed*: the queue is in the snapshot but not in its predecessor / the other
  way round;
- *moved*: the queue is in both, has claimants in both, and the set of claimants differs
  (for an uncontended queue: it changed owner). A queue whose owner left counts as moved
  once someone else claims it. A queue nobody pulled before that is claimed now, or one
  that is claimed before and unconsumed now, is *not* a move (nothing was handed over;
  unconsumed queues are reported by group_balance). This is the per-queue owner comparison
  behind the upstream stability facts (32 queues, 8 clients: removing the first client
  moves 10 queues under AVG, 32 under AVG_BY_CIRCLE, 4 under CONSISTENT_HASH; adding one
  moves 6, 24 and 5). Every moved queue pauses while it changes owner: `paused_queues`.
- `moves`: the moved queues, sorted by (topic, broker_name, queue_id): `from_client` /
  `to_client` are the sole claimant before / after (null when the queue was contended on
  that side), `from_clients` / `to_clients` the full claimant sets, `duplicate_estimate` the
  messages the new owner will re-consume: the old owner's `consumed_offset -
  committed_offset` in the predecessor snapshot, clipped at 0, null when either is unknown.
- `estimated_duplicates`: the sum of the known `duplicate_estimate`s, null when none is
  known (never a guess); `duplicates_known_moves`: how many moves it covers.
- `clients_joined` / `clients_left`: client ids in only the snapshot / only its predecessor
  (sorted).
- `triggers` (sorted codes): CLIENTS_CHANGED (a client joined or left), QUEUES_CHANGED
  (a queue was added or removed), SUBSCRIPTION_CHANGED (a client present in both snapshots
  subscribes other topics), STRATEGY_CHANGED (a client present in both runs other
  strategies). Empty when nothing the audit sees changed.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.batch import GROUP_KEYS
from rebalance_udfs.snapshot_order import SNAPSHOT_KEYS, snapshot_order

QUEUE_KEYS = [*GROUP_KEYS, "topic", "broker_name", "queue_id"]
ROW_COLUMNS = [*QUEUE_KEYS, "client_id", "status", "committed_offset", "consumed_offset"]
CLIENT_COLUMNS = [*GROUP_KEYS, "client_id", "topics", "strategies"]
TRIGGERS = ["CLIENTS_CHANGED", "QUEUES_CHANGED", "STRATEGY_CHANGED", "SUBSCRIPTION_CHANGED"]
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "previous_captured_at",
    "consumer_group", "clients_before", "clients_after", "clients_joined", "clients_left",
    "queues_before", "queues_after", "queues_added", "queues_removed", "queues_moved",
    "paused_queues", "moves", "estimated_duplicates", "duplicates_known_moves", "triggers",
]
BEFORE, AFTER = 0, 1

_STRINGS = "array<string>"


def _side(name: int) -> Column:
    return F.col("_side") == F.lit(name)


def _claim() -> Column:
    return F.col("client_id").isNotNull() & F.col("status").isin("OK", "CONTENDED")


def _duplicates() -> Column:
    """consumed - committed clipped at 0; null unless both offsets are known (greatest()
    alone would turn an unknown into 0)."""
    known = F.col("consumed_offset").isNotNull() & F.col("committed_offset").isNotNull()
    return F.when(known, F.greatest(F.col("consumed_offset") - F.col("committed_offset"),
                                    F.lit(0).cast("long")))


def queue_changes(before: DataFrame, after: DataFrame) -> DataFrame:
    """Per queue of a group, what changed between two snapshots.

    `before` / `after`: ROW_COLUMNS rows (assignments shape) of the predecessor / the
    snapshot, both keyed by the *later* snapshot's snapshot_id. Output: QUEUE_KEYS,
    in_before, in_after, claimants_before, claimants_after (sorted arrays), moved (see the
    module docstring), duplicate_estimate (long, null when unknown).
    """
    rows = (before.select(*ROW_COLUMNS).withColumn("_side", F.lit(BEFORE))
            .unionByName(after.select(*ROW_COLUMNS).withColumn("_side", F.lit(AFTER))))
    # groupBy keys compare nulls as equal: broker_name is null-safe without coalescing
    per_queue = rows.groupBy(*QUEUE_KEYS).agg(
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


def pair_rows(current: DataFrame, prior: DataFrame | None, pairs: DataFrame,
               columns: list[str]) -> tuple[DataFrame, DataFrame]:
    """(before, after) rows of `columns`, both keyed by the later snapshot's id."""
    after = current.select(*columns).join(
        F.broadcast(pairs.select(*SNAPSHOT_KEYS)), SNAPSHOT_KEYS, "left_semi")

    def predecessors(rows: DataFrame, in_run: bool) -> DataFrame:
        link = pairs.where(F.col("previous_in_run") == F.lit(in_run)).select(
            F.col("previous_snapshot_id").alias("snapshot_id"), "cluster",
            F.col("snapshot_id").alias("_next"))
        return (rows.select(*columns).join(F.broadcast(link), SNAPSHOT_KEYS)
                .drop("snapshot_id").withColumnRenamed("_next", "snapshot_id")
                .select(*columns))

    before = predecessors(current, True)
    if prior is not None:
        before = before.unionByName(predecessors(prior, False))
    return before, after


def _clients(assignments: DataFrame | None, load: DataFrame | None) -> DataFrame | None:
    """Client rows (CLIENT_COLUMNS). consumer_load lists every member with its topics and
    strategies; without it, the assignments' claimants stand in (topics / strategies null)."""
    if load is not None:
        return load.select(*CLIENT_COLUMNS)
    if assignments is None:
        return None
    return (assignments.where(F.col("client_id").isNotNull())
            .select(*GROUP_KEYS, "client_id").distinct()
            .select(*GROUP_KEYS, "client_id", F.lit(None).cast(_STRINGS).alias("topics"),
                    F.lit(None).cast(_STRINGS).alias("strategies")))


def _client_facts(before: DataFrame, after: DataFrame) -> DataFrame:
    """Per client of a group: in which snapshot it is, and whether its topics / strategies
    changed (only for a client present in both, and only where consumer_load says)."""
    rows = (before.withColumn("_side", F.lit(BEFORE))
            .unionByName(after.withColumn("_side", F.lit(AFTER))))

    def first(col: str, side: int) -> Column:
        return F.first(F.when(_side(side), F.col(col)), ignorenulls=True)

    per_client = rows.groupBy(*GROUP_KEYS, "client_id").agg(
        F.max(_side(BEFORE)).alias("in_before"), F.max(_side(AFTER)).alias("in_after"),
        first("topics", BEFORE).alias("tb"), first("topics", AFTER).alias("ta"),
        first("strategies", BEFORE).alias("sb"), first("strategies", AFTER).alias("sa"),
    )
    both = F.col("in_before") & F.col("in_after")
    return per_client.select(
        *GROUP_KEYS, "client_id", "in_before", "in_after",
        (both & (F.col("tb") != F.col("ta"))).alias("subscription_changed"),
        (both & (F.col("sb") != F.col("sa"))).alias("strategy_changed"),
    )


def _move_struct() -> Column:
    def sole(col: str) -> Column:
        return F.when(F.size(col) == 1, F.col(col)[0])

    return F.struct(
        "topic", "broker_name", "queue_id",
        sole("claimants_before").alias("from_client"), sole("claimants_after").alias("to_client"),
        F.col("claimants_before").alias("from_clients"),
        F.col("claimants_after").alias("to_clients"),
        "duplicate_estimate",
    )


def _group_totals(changes: DataFrame, clients: DataFrame) -> DataFrame:
    """One aggregation over queue facts and client facts together (no join between them)."""
    facts = changes.select(
        *GROUP_KEYS, F.lit(True).alias("_queue"), "in_before", "in_after", "moved",
        F.when(F.col("moved"), _move_struct()).alias("move"))
    facts = facts.unionByName(clients.withColumn("_queue", F.lit(False)),
                              allowMissingColumns=True)
    queue, client = F.col("_queue"), ~F.col("_queue")
    before, after = F.col("in_before"), F.col("in_after")

    def count(cond: Column) -> Column:
        return F.sum(F.when(cond, 1).otherwise(0)).cast("int")

    def ids(cond: Column) -> Column:
        return F.array_sort(F.collect_list(F.when(cond, F.col("client_id"))))

    dup = F.col("move.duplicate_estimate")
    return facts.groupBy(*GROUP_KEYS).agg(
        count(client & before).alias("clients_before"),
        count(client & after).alias("clients_after"),
        ids(client & after & ~before).alias("clients_joined"),
        ids(client & before & ~after).alias("clients_left"),
        count(queue & before).alias("queues_before"),
        count(queue & after).alias("queues_after"),
        count(queue & after & ~before).alias("queues_added"),
        count(queue & before & ~after).alias("queues_removed"),
        count(queue & F.col("moved")).alias("queues_moved"),
        F.array_sort(F.collect_list("move")).alias("moves"),
        F.sum(dup).cast("long").alias("estimated_duplicates"),  # null when none is known
        F.count(dup).cast("int").alias("duplicates_known_moves"),
        F.coalesce(F.max("subscription_changed"), F.lit(False)).alias("_subscription"),
        F.coalesce(F.max("strategy_changed"), F.lit(False)).alias("_strategy"),
    )


def _union(frames: list[DataFrame | None]) -> DataFrame | None:
    present = [f for f in frames if f is not None]
    return reduce(DataFrame.unionByName, present) if present else None


def churn_pairs(current: DataFrame, prior: DataFrame | None = None) -> DataFrame:
    """The run's snapshots that have a predecessor (see `snapshot_order`)."""
    return snapshot_order(current, prior).where(F.col("previous_snapshot_id").isNotNull())


def rebalance_churn_report(assignments: DataFrame, consumer_load: DataFrame,
                           prior_assignments: DataFrame | None = None,
                           prior_load: DataFrame | None = None) -> DataFrame:
    """Churn rows (COLUMNS) of the run's snapshots that have a predecessor.

    `assignments` / `consumer_load`: this run's report rows; `prior_*`: rows of earlier
    snapshots from the output tables (extra columns such as run_id are ignored), or None.
    """
    times = [*SNAPSHOT_KEYS, "captured_at"]
    pairs = churn_pairs(
        assignments.select(*times).unionByName(consumer_load.select(*times)),
        _union([p.select(*times) if p is not None else None
                for p in (prior_assignments, prior_load)]))

    q_before, q_after = pair_rows(assignments, prior_assignments, pairs, ROW_COLUMNS)
    c_before, c_after = pair_rows(_clients(assignments, consumer_load),
                                   _clients(prior_assignments, prior_load), pairs,
                                   CLIENT_COLUMNS)
    totals = _group_totals(queue_changes(q_before, q_after), _client_facts(c_before, c_after))

    triggers = F.array_compact(F.array(*[F.when(cond, F.lit(code)) for code, cond in (
        ("CLIENTS_CHANGED", F.size("clients_joined") + F.size("clients_left") > 0),
        ("QUEUES_CHANGED", F.col("queues_added") + F.col("queues_removed") > 0),
        ("STRATEGY_CHANGED", F.col("_strategy")),
        ("SUBSCRIPTION_CHANGED", F.col("_subscription")),
    )]))
    return (
        totals.join(F.broadcast(pairs.select(*SNAPSHOT_KEYS, "captured_at",
                                             "previous_snapshot_id", "previous_captured_at")),
                    SNAPSHOT_KEYS)
        .select(*[c for c in COLUMNS if c not in ("paused_queues", "triggers")],
                F.col("queues_moved").alias("paused_queues"), triggers.alias("triggers"))
        .select(*COLUMNS)
    )
