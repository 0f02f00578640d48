"""The group-figures pass in Spark: one cogrouped Arrow call per bucket of groups computes
every consumer_load and group_balance row of its groups (`rebalance_udfs.group_figures`)
from their claim facts and member rows. The output is materialized once by the caller;
`load_rows` / `balance_rows` split the two tables off it."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.group_figures import (
    BALANCE,
    FACT_COLUMNS,
    LOAD,
    MEMBER_COLUMNS,
    group_figures,
)
from rebalance_udfs.spark.buckets import BUCKET, bucketed, with_bucket
from vocabulary.columns import GROUP_KEYS
from vocabulary.schemas import GROUP_FIGURES_ARROW_SCHEMA, GROUP_FIGURES_SCHEMA


def _body(facts: pa.Table, members: pa.Table) -> pa.Table:
    """The UDF body: one bucket of groups in, their figures out (list element nullability
    as the schema declares it)."""
    out = group_figures(facts.drop_columns([BUCKET]), members.drop_columns([BUCKET]))
    return out.cast(GROUP_FIGURES_ARROW_SCHEMA)


def variant() -> Column:
    """A member's strategy with its parameters, one comparable string (MIXED_STRATEGIES
    counts the distinct ones of a group)."""
    params = F.to_json(F.array_sort(F.map_entries(
        F.coalesce(F.col("strategy_params"), F.create_map().cast("map<string,string>")))))
    return F.concat_ws("|", "strategy", params)


def figures(facts: DataFrame, members: DataFrame, buckets: int) -> DataFrame:
    """GROUP_FIGURES_SCHEMA rows of every group in `members`. `facts`:
    `reports.facts.client_topic_facts` of the assignment rows."""
    m = members.withColumn("variant", variant()).select(*MEMBER_COLUMNS)
    return (bucketed(with_bucket(facts, *FACT_COLUMNS), buckets, GROUP_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(m, buckets, GROUP_KEYS).groupBy(BUCKET))
            .applyInArrow(_body, GROUP_FIGURES_SCHEMA))


def load_rows(figures: DataFrame) -> DataFrame:
    """The consumer_load figures (rates still exact decimals)."""
    return figures.where(F.col("_table") == LOAD).select("load.*")


def balance_rows(figures: DataFrame) -> DataFrame:
    """The group_balance figures and findings (rates still exact decimals)."""
    return figures.where(F.col("_table") == BALANCE).select("balance.*")
