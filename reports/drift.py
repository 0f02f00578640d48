"""`drift`: queues whose observed holders (what clients really hold, the `observed` input)
differ from the recomputed assignment — the duplicate-consumption and "who owns this
partition" question no console answers.

Only groups with observed rows are compared (a group nobody observed has no drift, only
an unknown). Expected holders are the assignment's claimants (OK, CONTENDED, BROADCAST),
null for an unclaimed queue; the members' subscriptions and strategies come along, by
which a group on Kafka's sticky assignors is compared by the properties of its
assignment. The comparison is
`rebalance_udfs.drift.drift_rows`, run once per bucket of groups by its glue
(`rebalance_udfs.spark.drift`), like the kernels.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.spark.drift import (
    EXPECTED,
    EXPLAINED_SCHEMA,
    OBSERVED,
    SIDE,
    SUBSCRIBER,
    compare,
)
from vocabulary.columns import (
    GROUP_KEYS,
    HELD_BY_OTHER,
    HELD_TWICE,
    NOT_EXPECTED,
    NOT_HELD,
    QUEUE_KEYS,
    STICKY_BREAK,
    UNCONSUMED,
)
from vocabulary.schemas import DRIFT_SCHEMA


def drift_report(assignments: DataFrame, observed: DataFrame | None, buckets: int,
                 members: DataFrame | None = None) -> DataFrame:
    """One row per drifting queue (DRIFT_SCHEMA, and STICKY_BREAK, which the table does
    not hold: `drift_table`); empty without observed rows. `members` (the validated
    members rows): their subscriptions and strategies, by which a group on the sticky
    assignors is compared by its assignment's properties."""
    spark = assignments.sparkSession
    if observed is None:
        return spark.createDataFrame([], EXPLAINED_SCHEMA)
    groups = observed.select(*GROUP_KEYS).distinct()
    no_strategy = F.lit(None).cast("string").alias("strategy")
    expected = (assignments.join(F.broadcast(groups), GROUP_KEYS, "left_semi")
                .select(*QUEUE_KEYS, F.when(F.col("status") != UNCONSUMED, F.col("client_id"))
                        .alias("client_id"), no_strategy, F.lit(EXPECTED).alias(SIDE)))
    seen = observed.select(*QUEUE_KEYS, "client_id", no_strategy, F.lit(OBSERVED).alias(SIDE))
    holders = expected.unionByName(seen)
    if members is not None:
        holders = holders.unionByName(
            members.join(F.broadcast(groups), GROUP_KEYS, "left_semi").select(
                *GROUP_KEYS, "topic", F.lit(None).cast("string").alias("broker_name"),
                F.lit(None).cast("int").alias("queue_id"), "client_id", "strategy",
                F.lit(SUBSCRIBER).alias(SIDE)))
    return compare(holders, buckets)


def drift_table(drift: DataFrame) -> DataFrame:
    """The drift table's rows of `drift_report`'s."""
    return drift.select(*DRIFT_SCHEMA.fieldNames())


def drift_by_group(drift: DataFrame) -> DataFrame:
    """Per group: drifting queues in all and by kind, and why a sticky group failed the
    sticky check (what OBSERVED_DRIFT quotes)."""
    def kind(name: str) -> F.Column:
        return F.sum((F.col("kind") == name).cast("int")).cast("int")

    return drift.groupBy(*GROUP_KEYS).agg(
        F.count(F.lit(1)).cast("int").alias("drift_queues"),
        kind(HELD_TWICE).alias("drift_held_twice"),
        kind(NOT_HELD).alias("drift_not_held"),
        kind(HELD_BY_OTHER).alias("drift_held_by_other"),
        kind(NOT_EXPECTED).alias("drift_not_expected"),
        F.max(STICKY_BREAK).alias(STICKY_BREAK),  # one per group, on each of its rows
    )
