"""`what_if`: per group and candidate (client count, strategy, split by topic), the load the
same allocation kernels would give and what would move (`rebalance_udfs.what_if`).

The groups are chosen here; `rebalance_udfs.spark.what_if.simulate` runs one pandas call
per bucket of groups for every candidate of every group in it (not a Spark job per
candidate). Groups: those with a finding (`findings`,
the default), every group (`all`) or none (`off`: the table is written empty).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.spark.what_if import simulate
from vocabulary.columns import GROUP_KEYS, SNAPSHOT_KEYS
from vocabulary.schemas import WHAT_IF_SCHEMA

MODES = ("all", "findings", "off")
# the chosen groups are broadcast to the semi-joins up to this many (the assignment rows
# then stay in their buckets, see `rebalance_udfs.spark.buckets.bucketed`); above it the
# join shuffles
BROADCAST_GROUPS = 500_000

COLUMNS = ["snapshot_id", "cluster", "captured_at", *WHAT_IF_SCHEMA.fieldNames()[2:]]
def what_if_report(assigned: DataFrame, members: DataFrame, balance: DataFrame,
                   times: DataFrame, buckets: int, mode: str = "findings") -> DataFrame:
    """`assigned`: the assignment rows (with offsets); `balance`: group_balance rows (whole-
    group findings pick the groups)."""
    if mode == "off":
        empty = assigned.sparkSession.createDataFrame([], WHAT_IF_SCHEMA)
        return empty.withColumn("captured_at", F.lit(None).cast("timestamp")).select(*COLUMNS)
    groups = balance.where(F.col("topic").isNull())
    if mode == "findings":
        groups = groups.where(F.size("findings") > 0)
    groups = groups.select(*GROUP_KEYS)
    if groups.count() <= BROADCAST_GROUPS:
        groups = F.broadcast(groups)
    rows = simulate(assigned.join(groups, GROUP_KEYS, "left_semi"),
                    members.join(groups, GROUP_KEYS, "left_semi"), buckets)
    return rows.join(F.broadcast(times), SNAPSHOT_KEYS, "left").select(*COLUMNS)


# what a what-if line says of the recommended candidate (`_sentence`)
_SENTENCE_COLUMNS = ("split_by_topic", "clients", "candidate", "max_queues", "queues_moved")


def best_sentence(what_if: DataFrame) -> DataFrame:
    """Per group (GROUP_KEYS) with a better candidate than today's: `what_if_line`, the
    recommended change in words, e.g. "run 16 clients, AVG (max 6 queues per client
    instead of 16; 41 queues move once)".

    One aggregation over the two rows of a group it reads (today's and the recommended
    one; exactly one row of a group is recommended), not a join of the table with itself:
    the table has tens of candidates per group (5.6 million rows at 10M assignment rows).
    The result is a row per group, small enough to keep (`jobs.report`)."""
    current, recommended = F.col("is_current"), F.col("recommended")
    best = F.struct(*[F.col(c) for c in _SENTENCE_COLUMNS])
    lines = (what_if.where(recommended | current).groupBy(*GROUP_KEYS).agg(
        F.max(F.when(current, F.col("max_queues"))).alias("_today_max"),
        F.first(F.when(recommended & ~current, best), ignorenulls=True).alias("_best")))
    return (lines.where(F.col("_best").isNotNull())
            .select(*GROUP_KEYS, "_today_max", "_best.*")
            .select(*GROUP_KEYS, _sentence().alias("what_if_line")))


def _sentence() -> Column:
    n = lambda col: F.col(col).cast("string")  # noqa: E731
    what = F.when(F.col("split_by_topic"), F.concat(
        F.lit("split the group by topic, each topic with its own clients ("), n("clients"),
        F.lit(" clients in all)"))).otherwise(F.concat(F.lit("run "), F.col("candidate")))
    return F.concat(what, F.lit(" (max "), n("max_queues"),
                    F.lit(" queues per client instead of "), n("_today_max"), F.lit("; "),
                    n("queues_moved"), F.lit(" queues move once)"))


def with_what_if(balance: DataFrame, lines: DataFrame) -> DataFrame:
    """group_balance with the best concrete change (`lines`: `best_sentence` of the what_if
    rows) appended to the whole-group rows' recommendation (columns unchanged)."""
    joined = balance.join(lines, GROUP_KEYS, "left")
    add = F.col("topic").isNull() & F.col("what_if_line").isNotNull() & (F.size("findings") > 0)
    return joined.withColumn("recommendation", F.when(add, F.concat(
        F.col("recommendation"), F.lit(" What-if: "), F.col("what_if_line"), F.lit(".")))
        .otherwise(F.col("recommendation"))).select(*balance.columns)
