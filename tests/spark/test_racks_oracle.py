"""The pass's per-bucket search for the Kafka groups their clients would assign by rack
(`rebalance_udfs.racks`) finds, on random clusters split into any buckets, what one Spark
query over all the members and queues finds: the query the audit ran before the pass took
the check over (one collect, nine jobs), kept here as the reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.racks import rack_aware_groups
from vocabulary.columns import GROUP_KEYS, RACK_AWARE_ASSIGNORS

pytestmark = pytest.mark.spark

STRATEGIES = ["range", "sticky", "cooperative-sticky", "roundrobin", "AVG"]
ROOMS = ["r1", "r2", "r3", None]


def _reference(members: DataFrame, queues: DataFrame) -> set[tuple]:
    """The audit's query before the pass: range per topic over its subscribers, the sticky
    assignors once over the group's topics, readable partitions only."""
    keys = ["snapshot_id", "cluster"]
    kafka = members.where(F.col("strategy").isin(*RACK_AWARE_ASSIGNORS)
                          & F.col("topic").isNotNull())
    racked = kafka.where(F.col("client_room").isNotNull()).select(
        *keys, "consumer_group").distinct()
    subs = kafka.join(racked, [*keys, "consumer_group"], "left_semi")
    topic_racks = (queues.where(F.coalesce(F.col("readable"), F.lit(True)))
                   .groupBy(*keys, "topic").agg(
                       F.collect_set("broker_room").alias("racks"),
                       F.max(F.col("broker_room").isNull().cast("int")).alias("unracked")))
    per_topic = subs.join(topic_racks, [*keys, "topic"])
    by_topic = per_topic.where(F.col("strategy") == "range").groupBy(
        *keys, "consumer_group", "topic").agg(
        F.collect_set("client_room").alias("member_racks"),
        F.first("racks").alias("racks"), F.first("unracked").alias("unracked"))
    by_group = per_topic.where(F.col("strategy") != "range").groupBy(
        *keys, "consumer_group").agg(
        F.collect_set("client_room").alias("member_racks"),
        F.array_distinct(F.flatten(F.collect_list("racks"))).alias("racks"),
        F.max("unracked").alias("unracked"))
    by_rack = ((F.size(F.array_intersect("member_racks", "racks")) > 0)
               & ((F.size("racks") > 1) | (F.col("unracked") == 1)))
    groups = (by_topic.where(by_rack).select(*keys, "consumer_group")
              .unionByName(by_group.where(by_rack).select(*keys, "consumer_group")))
    return {tuple(r) for r in groups.distinct().collect()}


def _cluster(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    queues = pd.DataFrame([
        {"snapshot_id": s, "cluster": "c", "topic": f"t{t}", "broker_name": f"b{q % 3}",
         "queue_id": q, "broker_room": ROOMS[rng.integers(len(ROOMS))],
         "readable": bool(rng.random() > 0.15)}
        for s in ("s1", "s2") for t in range(5) for q in range(int(rng.integers(1, 5)))])
    members = pd.DataFrame([
        {"snapshot_id": s, "cluster": "c", "consumer_group": f"g{g}", "client_id": f"m{m}",
         "topic": None if rng.random() < 0.05 else f"t{t}",
         "strategy": STRATEGIES[(g + int(rng.random() < 0.2)) % len(STRATEGIES)],
         "client_room": ROOMS[rng.integers(len(ROOMS))]}
        for s in ("s1", "s2") for g in range(12) for m in range(int(rng.integers(1, 4)))
        for t in rng.choice(6, size=int(rng.integers(1, 3)), replace=False)])
    return queues, members


def _found_per_bucket(queues: pd.DataFrame, members: pd.DataFrame, buckets: int) -> set:
    """The kernel over each bucket's rows as the pass holds them: the readable queues of
    every subscribed (group, topic), and the members (`rebalance_udfs.spark.assign`)."""
    subscribed = members[members["topic"].notna()][[*GROUP_KEYS, "topic"]].drop_duplicates()
    units = queues[queues["readable"]].merge(subscribed, on=["snapshot_id", "cluster", "topic"])
    bucket = lambda df: df["consumer_group"].str[1:].astype(int) % buckets  # noqa: E731
    found = set()
    for b in range(buckets):
        rows = rack_aware_groups(
            pa.Table.from_pandas(units[bucket(units) == b], preserve_index=False),
            pa.Table.from_pandas(members[bucket(members) == b], preserve_index=False))
        found |= {tuple(r.values()) for r in rows.to_pylist()}
    return found


@pytest.mark.parametrize("seed", range(6))
def test_the_pass_finds_what_one_query_over_everything_finds(spark, seed) -> None:
    queues, members = _cluster(seed)
    expected = _reference(spark.createDataFrame(members), spark.createDataFrame(queues))
    assert expected, "the random cluster should hold some groups assigned by rack"
    for buckets in (1, 4):
        assert _found_per_bucket(queues, members, buckets) == expected
