"""Buckets of groups: one grouped UDF call per bucket, so a Python call's fixed cost
(~1 ms) is paid per bucket, not per group."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

BUCKET = "_bucket"


def bucket_of(buckets: int, keys: Sequence[str]) -> Column:
    """The bucket of a row's `keys`: all rows with the same keys land in the same call."""
    return F.pmod(F.xxhash64(*[F.col(k) for k in keys]), F.lit(buckets))


def bucketed(df: DataFrame, buckets: int, keys: Sequence[str]) -> DataFrame:
    """`df` with its BUCKET column, shuffled into `buckets` partitions by it.

    A kernel stage costs Python CPU, not bytes, so it needs its tasks as sized
    (`jobs.sizing`): adaptive execution coalesces a shuffle by bytes (at 10M rows it packed
    the what-if's 73 buckets into 3 tasks on 2 cores, one core idle half the stage), but it
    never coalesces a repartition to an explicit count. Both sides of a cogroup bucketed
    alike are co-partitioned, so the grouping adds no second shuffle.

    A frame that has BUCKET already is returned as it is: it was bucketed by this function
    upstream, with the run's bucket count, and is still partitioned by it (the run's
    assignment rows, materialized once by `jobs.audit`, feed the figures pass and the
    what-if this way), so its rows are where their buckets are and stay there."""
    if BUCKET in df.columns:
        return df
    buckets = max(buckets, 1)
    return df.withColumn(BUCKET, bucket_of(buckets, keys)).repartition(buckets, BUCKET)


def bucket_column(df: DataFrame) -> list[str]:
    """[BUCKET] when `df` was bucketed upstream (see `bucketed`), else []: what a select or
    a grouping keeps so the rows stay known to be in their buckets."""
    return [BUCKET] if BUCKET in df.columns else []


def with_bucket(df: DataFrame, *columns: str) -> DataFrame:
    """`df.select(*columns)`, keeping BUCKET when `df` has it."""
    return df.select(*columns, *bucket_column(df))
