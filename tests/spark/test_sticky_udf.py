"""assign_sticky: Kafka sticky groups chained over snapshots inside one Spark job."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from rebalance_udfs.ordering import java_key
from rebalance_udfs.spark.sticky import assign_sticky
from rebalance_udfs.sticky import sticky_assign
from tests.support.stability import MEMBERS_SCHEMA, QUEUES_SCHEMA
from vocabulary.schemas import ASSIGNED_SCHEMA

pytestmark = pytest.mark.spark

BIG = 2**53 + 1  # not representable as float64
# (snapshot, captured_at, clustering members); a BROADCASTING member "zz" is in every one
STEPS = [("s1", datetime(2024, 3, 1, 8, 0), ["m-a", "m-b"]),
         ("s2", datetime(2024, 3, 1, 8, 1), ["m-a", "m-b", "m-c"]),  # add member
         ("s3", datetime(2024, 3, 1, 8, 2), ["m-b", "m-c"])]  # remove the first member
# topic "orders": Kafka partitions (broker null); topic "audit": RocketMQ-style queues whose
# partition index follows broker Java order ("broker-10" < "broker-9"), then queue id
QUEUES = [("orders", None, p) for p in range(7)] + [
    ("audit", b, q) for b in ("broker-9", "broker-10") for q in range(2)]
GROUPS = {"g-eager": "sticky", "g-coop": "cooperative-sticky"}
OFFSETS_SCHEMA = ("snapshot_id string, cluster string, consumer_group string, topic string, "
                  "broker_name string, queue_id int, committed_offset long, "
                  "consumed_offset long")


def _inputs(spark, steps=STEPS):
    queues, members, offsets = [], [], []
    for snap, at, clients in steps:
        for topic, broker, qid in QUEUES:
            big = topic == "orders" and qid == 3
            queues.append((snap, "kc", at, topic, broker, qid, True, None,
                           BIG if big else 10 * qid, 0.5 if big else None))
            offsets.extend((snap, "kc", g, topic, broker, qid, BIG + 2 if big else qid,
                            BIG + 7 if big else None) for g in GROUPS)
        for group, strategy in GROUPS.items():
            for i, client in enumerate([*clients, "zz"]):
                model = "BROADCASTING" if client == "zz" else None
                members.extend((snap, "kc", group, client, f"10.0.0.{i}:1", topic, strategy,
                                model, None, None, None, None, None)
                               for topic in ("orders", "audit"))
    return (spark.createDataFrame(queues, QUEUES_SCHEMA),
            spark.createDataFrame(members, MEMBERS_SCHEMA),
            spark.createDataFrame(offsets, OFFSETS_SCHEMA))


def _partition_order() -> dict[str, list[tuple[str | None, int]]]:
    out: dict[str, list] = {}
    for topic, broker, qid in QUEUES:
        out.setdefault(topic, []).append((broker, qid))
    return {t: sorted(qs, key=lambda q: (java_key(q[0] or ""), q[1])) for t, qs in out.items()}


def _expected_chain(cooperative: bool) -> dict[str, dict[tuple, str]]:
    """The pure kernel chained by hand: snapshot -> (topic, broker, queue_id) -> owner."""
    order = _partition_order()
    partitions = {t: len(qs) for t, qs in order.items()}
    previous, out = None, {}
    for snap, _, clients in STEPS:
        result = sticky_assign({c: ["orders", "audit"] for c in clients}, partitions, previous,
                               cooperative)
        out[snap] = {(t, *order[t][p]): c for c, tps in result.items() for t, p in tps}
        previous = result
    return out


def _owners(rows, group: str) -> dict[str, dict[tuple, str]]:
    out: dict[str, dict[tuple, str]] = {}
    for r in rows:
        if r["consumer_group"] == group and r["status"] == "OK":
            key = (r["topic"], r["broker_name"], r["queue_id"])
            assert key not in out.setdefault(r["snapshot_id"], {}), f"{key} claimed twice"
            out[r["snapshot_id"]][key] = r["client_id"]
    return out


def test_chained_snapshots_valid_balanced_sticky(spark):
    queues, members, offsets = _inputs(spark)
    df = assign_sticky(queues, members, offsets, buckets=2)
    assert df.schema == ASSIGNED_SCHEMA
    rows = df.collect()

    for group, strategy in GROUPS.items():
        owners = _owners(rows, group)
        assert owners == _expected_chain(strategy == "cooperative-sticky"), group
        for snap, _, clients in STEPS:
            mine = owners[snap]
            assert len(mine) == len(QUEUES)  # valid: every queue exactly once
            load = Counter(mine.values())
            assert set(load) == set(clients)
            assert max(load.values()) - min(load.values()) <= 1  # balanced
        # sticky: adding m-c moves only what m-c needs (11 queues / 3 -> it takes 3);
        # removing m-a moves only m-a's queues
        s1, s2, s3 = (owners[s] for s in ("s1", "s2", "s3"))
        moved_12 = {q for q in s1 if s1[q] != s2[q]}
        assert {s2[q] for q in moved_12} == {"m-c"} and len(moved_12) == 3
        moved_23 = {q for q in s2 if s2[q] != s3[q]}
        assert moved_23 == {q for q, c in s2.items() if c == "m-a"}

        broadcast = [r for r in rows if r["consumer_group"] == group
                     and r["status"] == "BROADCAST"]
        assert len(broadcast) == len(QUEUES) * len(STEPS)
        assert {r["client_id"] for r in broadcast} == {"zz"}
        assert {r["strategy"] for r in rows if r["consumer_group"] == group} == {strategy}

    # payload carried exactly (no float64 round trip)
    big = [r for r in rows if r["topic"] == "orders" and r["queue_id"] == 3]
    assert {(r["max_offset"], r["committed_offset"], r["consumed_offset"], r["in_rate"])
            for r in big} == {(BIG, BIG + 2, BIG + 7, 0.5)}
    assert all(r["broker_name"] is None for r in rows if r["topic"] == "orders")


def test_prior_assignments_continue_the_chain(spark):
    queues, members, offsets = _inputs(spark)
    full = assign_sticky(queues, members, offsets, buckets=2).collect()
    expected = sorted(r for r in full if r["snapshot_id"] != "s1")

    # an earlier run wrote s1 (the assignments table: captured_at, run_id, ...); this run
    # only has s2 and s3 and must continue from s1's owners
    prior = (spark.createDataFrame([r for r in full if r["snapshot_id"] == "s1"],
                                   ASSIGNED_SCHEMA)
             .withColumn("captured_at", F.lit(STEPS[0][1]).cast("timestamp"))
             .withColumn("run_id", F.lit("r0")))
    later = F.col("snapshot_id") != "s1"
    incremental = assign_sticky(queues.where(later), members.where(later), offsets, buckets=3,
                                prior_assignments=prior)
    assert_df_equality(incremental, spark.createDataFrame(expected, ASSIGNED_SCHEMA),
                       ignore_row_order=True, ignore_nullable=True)

    # without the prior rows s2 is a first generation: a fresh (different) assignment
    fresh = assign_sticky(queues.where(later), members.where(later), offsets, buckets=3)
    assert sorted(fresh.collect()) != expected
