"""Buckets of groups: one grouped UDF call per bucket, so a Python call's fixed cost
(~1 ms) is paid per bucket, not per group."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

BUCKET = "_bucket"
# a group across its snapshots: the passes bucket by it, so every snapshot of a group is
# in one call (churn compares it with its predecessor there, the sticky chain runs there)
BUCKET_KEYS = ["cluster", "consumer_group"]
# Spark's hash partitioning: pmod(Murmur3Hash(columns, seed 42), partitions)
_SEED = 42
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def bucket_of(buckets: int, keys: Sequence[str]) -> Column:
    """The bucket of a row's `keys`: all rows with the same keys land in the same call.

    Bucket k is not the number k but the first long that Spark's hash partitioning sends
    to partition k (`partition_keys`): bucket numbers 0 .. n-1 hash-partitioned into n
    partitions collide (the 1M benchmark's 8 buckets filled 4 of 8 tasks, two buckets
    each, one core idle for 5 of the report pass's 13 s); these fill one task each."""
    number = F.pmod(F.xxhash64(*[F.col(k) for k in keys]), F.lit(buckets))
    values = F.array(*[F.lit(v).cast("long") for v in partition_keys(max(buckets, 1))])
    return F.element_at(values, (number + 1).cast("int"))


@cache
def partition_keys(partitions: int) -> tuple[int, ...]:
    """For each partition p, the least long that Spark's hash partitioning into
    `partitions` sends to p."""
    found = np.full(partitions, -1, np.int64)
    start = 0
    while (found < 0).any():
        values = np.arange(start, start + 4 * partitions + 64, dtype=np.int64)
        partition = np.mod(spark_hash_long(values).astype(np.int64), partitions)
        first = np.unique(partition, return_index=True)
        fresh = found[first[0]] < 0
        found[first[0][fresh]] = values[first[1][fresh]]
        start += len(values)
    return tuple(int(v) for v in found)


def spark_hash_long(values: np.ndarray) -> np.ndarray:
    """Spark's `hash()` of long values (Murmur3_x86_32.hashLong, seed 42), as int32."""
    v = np.asarray(values, np.int64).view(np.uint64)
    h = np.full(len(v), _SEED, np.uint32)
    for word in ((v & 0xFFFFFFFF).astype(np.uint32), (v >> np.uint64(32)).astype(np.uint32)):
        k = _rotl(word * _C1, 15) * _C2
        h = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
    h ^= np.uint32(8)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h.view(np.int32)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


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
