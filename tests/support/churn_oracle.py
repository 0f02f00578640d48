"""The Spark rebalance_churn this project ran before churn moved into the report pass
(`rebalance_udfs.churn_link`, `rebalance_udfs.churn`): kept as the tests' independent
oracle, its linking (one broadcast join of every row with the pairs' links) and its
figures (one aggregation per queue, one per client and one per group) both Spark's.

`oracle_churn(...)` takes rebalance_churn_report's arguments and gives its rows;
tests/spark/test_rebalance_churn.py holds the report pass and rebalance_churn_report
equal to it on random snapshots.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn import AFTER, BEFORE
from reports.rebalance_churn import PAIR_COLUMNS, churn_history, in_table_shape
from tests.support.comparison_oracle import ROW_COLUMNS, _side, link_rows, queue_changes
from vocabulary.columns import EAGER_ASSIGNORS, GROUP_KEYS

CLIENT_COLUMNS = [*GROUP_KEYS, "client_id", "topics", "strategies"]
QUEUE_ROW, CLIENT_ROW = "queue", "client"

_STRINGS = "array<string>"


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
    _, pairs = churn_history(consumer_load, prior_assignments, prior_load)
    return pairs, link_rows(_rows(assignments, consumer_load),
                            _rows(prior_assignments, prior_load), pairs)



def _client_facts(linked: DataFrame) -> DataFrame:
    """Per client of a group: in which snapshot it is, and whether its topics / strategies
    changed (only for a client present in both, and only where consumer_load says)."""
    def first(col: str, side: int) -> Column:
        return F.first(F.when(_side(side), F.col(col)), ignorenulls=True)

    per_client = linked.groupBy(*GROUP_KEYS, *PAIR_COLUMNS, "client_id").agg(
        F.max(_side(BEFORE)).alias("in_before"), F.max(_side(AFTER)).alias("in_after"),
        first("topics", BEFORE).alias("tb"), first("topics", AFTER).alias("ta"),
        first("strategies", BEFORE).alias("sb"), first("strategies", AFTER).alias("sa"),
        F.max(_side(BEFORE) & F.coalesce(F.arrays_overlap(
            "strategies", F.array(*map(F.lit, EAGER_ASSIGNORS))), F.lit(False)))
        .alias("eager_before"),
    )
    both = F.col("in_before") & F.col("in_after")
    return per_client.select(
        *GROUP_KEYS, *PAIR_COLUMNS, "client_id", "in_before", "in_after",
        (both & (F.col("tb") != F.col("ta"))).alias("subscription_changed"),
        (both & (F.col("sb") != F.col("sa"))).alias("strategy_changed"), "eager_before",
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
        *GROUP_KEYS, *PAIR_COLUMNS, F.lit(True).alias("_queue"), "in_before", "in_after",
        "moved", "goes_on", F.when(F.col("moved"), _move_struct()).alias("move"),
        (F.size("claimants_before") > 0).alias("claimed_before"),
    ).unionByName(clients.withColumn("_queue", F.lit(False)), allowMissingColumns=True)
    queue, client = F.col("_queue"), ~F.col("_queue")
    before, after = F.col("in_before"), F.col("in_after")

    def count(cond: Column) -> Column:
        return F.sum(F.when(cond, 1).otherwise(0)).cast("int")

    def ids(cond: Column) -> Column:
        return F.array_sort(F.collect_list(F.when(cond, F.col("client_id"))))

    dup = F.col("move.duplicate_estimate")
    totals = facts.groupBy(*GROUP_KEYS, *PAIR_COLUMNS).agg(
        count(client & before).alias("clients_before"),
        count(client & after).alias("clients_after"),
        ids(client & after & ~before).alias("clients_joined"),
        ids(client & before & ~after).alias("clients_left"),
        count(queue & before).alias("queues_before"),
        count(queue & after).alias("queues_after"),
        count(queue & after & ~before).alias("queues_added"),
        count(queue & before & ~after).alias("queues_removed"),
        count(queue & F.col("moved")).alias("queues_moved"),
        count(queue & F.col("goes_on")).alias("_goes_on"),
        F.array_sort(F.collect_list("move")).alias("moves"),
        F.sum(dup).cast("long").alias("estimated_duplicates"),  # null when none is known
        F.count(dup).cast("int").alias("duplicates_known_moves"),
        F.coalesce(F.max("subscription_changed"), F.lit(False)).alias("_subscription"),
        F.coalesce(F.max("strategy_changed"), F.lit(False)).alias("_strategy"),
        count(queue & before & after & F.col("claimed_before")).alias("_claimed"),
        F.coalesce(F.max("eager_before"), F.lit(False)).alias("_eager"),
    )
    # Kafka's eager protocol revokes every partition held before a rebalance
    changed = ((F.size("clients_joined") + F.size("clients_left") + F.col("queues_added")
                + F.col("queues_removed") + F.col("queues_moved") > 0)
               | F.col("_subscription") | F.col("_strategy"))
    # otherwise the moved queues, less the shared ones a claimant keeps consuming
    return totals.withColumn("paused_queues", F.when(F.col("_eager") & changed, F.col("_claimed"))
                             .otherwise(F.col("queues_moved") - F.col("_goes_on"))
                             ).drop("_claimed", "_eager", "_goes_on")


def oracle_churn(assignments: DataFrame, consumer_load: DataFrame,
                 prior_assignments: DataFrame | None = None,
                 prior_load: DataFrame | None = None) -> DataFrame:
    """`reports.rebalance_churn.rebalance_churn_report`'s rows, its per-group figures from
    the Spark aggregations (the linking and the table's shape are the report's own)."""
    _, linked = linked_rows(assignments, consumer_load, prior_assignments, prior_load)
    return in_table_shape(_group_totals(
        queue_changes(linked.where(F.col("_kind") == QUEUE_ROW), PAIR_COLUMNS),
        _client_facts(linked.where(F.col("_kind") == CLIENT_ROW)),
    ))
