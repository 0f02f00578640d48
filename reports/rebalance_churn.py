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
  moves 6, 24 and 5).
- `paused_queues`: the queues whose consumption the rebalance stops. A moved queue pauses
  while it changes owner. Kafka's eager protocol (a client of the predecessor on range,
  roundrobin or sticky) first revokes every partition of every member, so there every
  queue claimed in both snapshots' queue sets before pauses, moved or not, when anything
  above changed (a trigger, or a move); cooperative-sticky and RocketMQ pause the moved
  queues only, less the SHARED ones (POP / MESSAGE) one of whose claimants keeps them:
  that client goes on consuming, and such a move has no duplicate estimate.
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
  strategies, by name). Empty when none of these changed: a change of `strategy_params`
  alone (virtual nodes, rooms, CONFIG lists) is no trigger, though its moves are counted,
  since the output keeps no parameters to compare an earlier run's snapshot with, and
  a snapshot's churn must not depend on which run audited its predecessor.

Plan shape: the snapshot order is computed once (a small window over the snapshot list,
`churn_history`) and handed to the report pass, whose buckets hold every snapshot of
their groups: each call links both sides of its groups' pairs and counts every figure
(`rebalance_udfs.churn_link`, `rebalance_udfs.churn`), the predecessor's rows from the
output riding along. `churn_table` adds the pairs' times and the triggers.
`rebalance_churn_report` runs the same over assignment and consumer_load frames.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn_link import PAIR_KEYS
from rebalance_udfs.spark.churn import History, churn
from rebalance_udfs.spark.snapshot_order import snapshot_order
from vocabulary.columns import SNAPSHOT_KEYS

PAIR_COLUMNS = ["captured_at", "previous_snapshot_id", "previous_captured_at"]
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "previous_captured_at",
    "consumer_group", "clients_before", "clients_after", "clients_joined", "clients_left",
    "queues_before", "queues_after", "queues_added", "queues_removed", "queues_moved",
    "paused_queues", "moves", "estimated_duplicates", "duplicates_known_moves", "triggers",
]


def churn_pairs(current: DataFrame, prior: DataFrame | None = None) -> DataFrame:
    """The run's snapshots that have a predecessor (see `snapshot_order`)."""
    return snapshot_order(current, prior).where(F.col("previous_snapshot_id").isNotNull())


def churn_history(current: DataFrame, prior_assignments: DataFrame | None = None,
                  prior_load: DataFrame | None = None) -> tuple[History, DataFrame]:
    """(what the report pass compares with, the compared pairs with their times).

    `current`: rows with snapshot_id, cluster and captured_at of every snapshot of the run
    that has consumer_load rows; `prior_*`: the predecessor's rows from the output tables
    (`prior_assignments` alone is enough: its claimants stand in for the clients, without
    subscription / strategy triggers). The pairs are a few rows: collected once."""
    if prior_load is not None and prior_assignments is None:
        raise ValueError("rebalance_churn_report: prior_load needs prior_assignments too")
    times = [*SNAPSHOT_KEYS, "captured_at"]
    prior = prior_load if prior_load is not None else prior_assignments
    pairs = churn_pairs(current.select(*times),
                        prior.select(*times) if prior is not None else None)
    keys = pairs.select(*PAIR_KEYS).toArrow()
    return History(keys, prior_assignments, prior_load), pairs


def in_table_shape(totals: DataFrame) -> DataFrame:
    """The churn table's COLUMNS from per-group totals (CHURN_TOTALS columns with the
    PAIR_COLUMNS): the triggers derived."""
    triggers = F.array_compact(F.array(*[F.when(cond, F.lit(code)) for code, cond in (
        ("CLIENTS_CHANGED", F.size("clients_joined") + F.size("clients_left") > 0),
        ("QUEUES_CHANGED", F.col("queues_added") + F.col("queues_removed") > 0),
        ("STRATEGY_CHANGED", F.col("_strategy")),
        ("SUBSCRIPTION_CHANGED", F.col("_subscription")),
    )]))
    return totals.select(*[c for c in COLUMNS if c != "triggers"],
                         triggers.alias("triggers")).select(*COLUMNS)


def churn_table(totals: DataFrame, pairs: DataFrame) -> DataFrame:
    """The churn table from the report pass's totals (CHURN_TOTALS_SCHEMA) and the pairs
    of `churn_history`."""
    return in_table_shape(totals.join(
        F.broadcast(pairs.select(*SNAPSHOT_KEYS, *PAIR_COLUMNS)), SNAPSHOT_KEYS))


def rebalance_churn_report(assignments: DataFrame, consumer_load: DataFrame,
                           prior_assignments: DataFrame | None = None,
                           prior_load: DataFrame | None = None,
                           buckets: int | None = None) -> DataFrame:
    """Churn rows (COLUMNS) of the run's snapshots that have a predecessor, from frames.

    `assignments` / `consumer_load`: this run's report rows; `prior_*`: rows of earlier
    snapshots from the output tables (extra columns such as run_id are ignored), or None
    (see `churn_history`). `buckets`: of the comparison (default: the session's shuffle
    partitions). The job computes the same in its report pass (`jobs.report`)."""
    history, pairs = churn_history(consumer_load, prior_assignments, prior_load)
    if buckets is None:
        buckets = int(assignments.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    return churn_table(churn(assignments, consumer_load, history, buckets), pairs)
