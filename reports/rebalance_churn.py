"""`rebalance_churn`: what a rebalance between two snapshots of a cluster changed, per group.

Each snapshot of the run is paired with the previous snapshot of the same cluster among the
run's snapshots and those already in the output tables (`prior_*`), ordered by
`captured_at` (nulls first), then `snapshot_id`. One row per (snapshot, cluster,
consumer_group) present in the snapshot or in its predecessor (a group that vanished gets a
row too); snapshots without a predecessor get no row. A snapshot exists for churn when it
has consumer_load rows (every member of every group is listed there; prior_assignments
stand in when prior_load is not given).

Definitions (queues are the distinct (topic, broker_name, queue_id) of the group's
assignments rows, broker_name null-safe, i.e. the readable queues of the topics the group
subscribes):
- a queue's *claimants* are the clients that pull it in clustering mode (rows with status OK,
  CONTENDED or SHARED); BROADCASTING clients read every queue with their own offsets and never
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

Plan shape: the snapshot order is computed once (a small window over the snapshot list) and
broadcast as *links* (each compared snapshot -> the later snapshot it is compared for, and
on which side); all assignment and client rows, current and prior, pass one join with it,
then one shuffle to buckets of groups, where one Arrow call per bucket computes every
figure (`rebalance_udfs.churn`): both sides of a group's pair are in the same call.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn import AFTER, BEFORE, DUPLICATES, SIDE, STRATEGIES, TOPICS
from rebalance_udfs.spark.churn import churn_pass
from rebalance_udfs.spark.snapshot_order import snapshot_order
from vocabulary.columns import CLAIM_STATUSES, GROUP_KEYS, QUEUE_KEYS, SNAPSHOT_KEYS

ROW_COLUMNS = [*QUEUE_KEYS, "client_id", "status", "committed_offset", "consumed_offset"]
CLIENT_COLUMNS = [*GROUP_KEYS, "client_id", "topics", "strategies"]
PAIR_COLUMNS = ["captured_at", "previous_snapshot_id", "previous_captured_at"]
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "previous_captured_at",
    "consumer_group", "clients_before", "clients_after", "clients_joined", "clients_left",
    "queues_before", "queues_after", "queues_added", "queues_removed", "queues_moved",
    "paused_queues", "moves", "estimated_duplicates", "duplicates_known_moves", "triggers",
]
QUEUE_ROW, CLIENT_ROW = "queue", "client"

_STRINGS = "array<string>"


def churn_pairs(current: DataFrame, prior: DataFrame | None = None) -> DataFrame:
    """The run's snapshots that have a predecessor (see `snapshot_order`)."""
    return snapshot_order(current, prior).where(F.col("previous_snapshot_id").isNotNull())


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
    moved (see the module docstring), duplicate_estimate (long, null when unknown).
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


def _rows(assignments: DataFrame | None, load: DataFrame | None) -> DataFrame | None:
    """Assignment rows (queue facts) and client rows in one frame, tagged by `_kind`.

    consumer_load lists every member with its topics and strategies; without it (prior
    tables only) the assignments' claimants stand in, topics / strategies unknown."""
    frames = []
    if assignments is not None:
        frames.append(assignments.select(*ROW_COLUMNS).withColumn("_kind", F.lit(QUEUE_ROW)))
    if load is not None:
        clients = load.select(*CLIENT_COLUMNS)
    elif assignments is not None:
        clients = (assignments.where(F.col("client_id").isNotNull())
                   .select(*GROUP_KEYS, "client_id").distinct()
                   .select("*", F.lit(None).cast(_STRINGS).alias("topics"),
                           F.lit(None).cast(_STRINGS).alias("strategies")))
    else:
        return None
    frames.append(clients.withColumn("_kind", F.lit(CLIENT_ROW)))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out


def linked_rows(assignments: DataFrame, consumer_load: DataFrame,
                prior_assignments: DataFrame | None,
                prior_load: DataFrame | None) -> tuple[DataFrame, DataFrame]:
    """(pairs, linked rows) of rebalance_churn_report's arguments: the compared snapshots
    (`churn_pairs`) and every assignment and client row of them (`link_rows`, `_kind`)."""
    if prior_load is not None and prior_assignments is None:
        raise ValueError("rebalance_churn_report: prior_load needs prior_assignments too")
    times = [*SNAPSHOT_KEYS, "captured_at"]
    prior_snapshots = prior_load if prior_load is not None else prior_assignments
    pairs = churn_pairs(consumer_load.select(*times),
                        prior_snapshots.select(*times) if prior_snapshots is not None else None)
    return pairs, link_rows(_rows(assignments, consumer_load),
                            _rows(prior_assignments, prior_load), pairs)


def in_table_shape(totals: DataFrame) -> DataFrame:
    """The churn table's COLUMNS from per-group totals (CHURN_TOTALS columns with the
    PAIR_COLUMNS): paused_queues and the triggers derived."""
    triggers = F.array_compact(F.array(*[F.when(cond, F.lit(code)) for code, cond in (
        ("CLIENTS_CHANGED", F.size("clients_joined") + F.size("clients_left") > 0),
        ("QUEUES_CHANGED", F.col("queues_added") + F.col("queues_removed") > 0),
        ("STRATEGY_CHANGED", F.col("_strategy")),
        ("SUBSCRIPTION_CHANGED", F.col("_subscription")),
    )]))
    return totals.select(*[c for c in COLUMNS if c not in ("paused_queues", "triggers")],
                         F.col("queues_moved").alias("paused_queues"),
                         triggers.alias("triggers")).select(*COLUMNS)


def rebalance_churn_report(assignments: DataFrame, consumer_load: DataFrame,
                           prior_assignments: DataFrame | None = None,
                           prior_load: DataFrame | None = None,
                           buckets: int | None = None) -> DataFrame:
    """Churn rows (COLUMNS) of the run's snapshots that have a predecessor.

    `assignments` / `consumer_load`: this run's report rows; `prior_*`: rows of earlier
    snapshots from the output tables (extra columns such as run_id are ignored), or None.
    `prior_assignments` alone is enough (its claimants stand in for the clients, without
    subscription / strategy triggers); `prior_load` alone is refused, since every queue of
    a prior predecessor would then look added. `buckets`: of the churn pass (default: the
    session's shuffle partitions).
    """
    pairs, linked = linked_rows(assignments, consumer_load, prior_assignments, prior_load)
    if buckets is None:
        buckets = int(assignments.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    queue_rows = linked.where(F.col("_kind") == QUEUE_ROW).select(
        *GROUP_KEYS, SIDE, "topic", "broker_name", "queue_id",
        F.when(_claim(), F.col("client_id")).alias("client_id"),
        F.when(_side(BEFORE) & _claim(), _duplicates()).alias(DUPLICATES))
    client_rows = linked.where(F.col("_kind") == CLIENT_ROW).select(
        *GROUP_KEYS, SIDE, "client_id",
        F.to_json("topics").alias(TOPICS), F.to_json("strategies").alias(STRATEGIES))
    return in_table_shape(churn_pass(queue_rows, client_rows, buckets).join(
        F.broadcast(pairs.select(*SNAPSHOT_KEYS, *PAIR_COLUMNS)), SNAPSHOT_KEYS))
