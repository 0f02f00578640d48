"""Buckets of groups: each bucket is one task of its own, so the kernel stages' tasks are
as many and as even as the run sized them."""

from __future__ import annotations

import numpy as np
import pytest
from pyspark.sql import functions as F

from rebalance_udfs.spark.buckets import BUCKET, bucketed, partition_keys, spark_hash_long

pytestmark = pytest.mark.spark


def test_the_hash_is_sparks(spark) -> None:
    rng = np.random.default_rng(3)
    values = np.r_[np.arange(-300, 300), rng.integers(-2**63, 2**63 - 1, 2000, dtype=np.int64),
                   [2**63 - 1, -2**63]].astype(np.int64)
    rows = spark.createDataFrame([(int(v),) for v in values], "v long") \
        .select("v", F.hash("v").alias("h")).collect()
    ours = spark_hash_long(np.array([r.v for r in rows], np.int64))
    assert [int(h) for h in ours] == [r.h for r in rows]


@pytest.mark.parametrize("buckets", [1, 8, 73])
def test_every_bucket_is_a_task_of_its_own(spark, buckets: int) -> None:
    # bucket numbers 0 .. n-1 hash-partitioned into n partitions would share tasks
    # (8: 5 of 8 tasks used, 73: 48 of 73)
    groups = spark.range(6000).select((F.col("id") % 1500).alias("g"), F.lit("c").alias("k"))
    rows = bucketed(groups, buckets, ["k", "g"])
    per_task = rows.groupBy(F.spark_partition_id().alias("task")).agg(
        F.countDistinct(BUCKET).alias("buckets")).collect()
    assert rows.rdd.getNumPartitions() == buckets
    assert len(per_task) == buckets and {r.buckets for r in per_task} == {1}
    assert len(set(partition_keys(buckets))) == buckets
