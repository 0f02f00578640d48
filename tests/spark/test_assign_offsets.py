"""The offsets joined inside the kernel's call give every assignment row the offsets the
Spark join gives its queue (broker_name null-safe, unmatched and foreign offsets rows)."""

from __future__ import annotations

import random

import pytest
from pyspark.sql import functions as F

from rebalance_udfs.spark.assign import assign, subscribed_units
from vocabulary.columns import GROUP_KEYS

pytestmark = pytest.mark.spark

QUEUES = ("snapshot_id string, cluster string, topic string, broker_name string, "
          "queue_id int, broker_room string, max_offset long, in_rate double, readable boolean")
MEMBERS = ("snapshot_id string, cluster string, consumer_group string, client_id string, "
           "client_addr string, topic string, strategy string, message_model string, "
           "client_room string, virtual_nodes int, rooms string, config_queues string")
OFFSETS = ("snapshot_id string, cluster string, consumer_group string, topic string, "
           "broker_name string, queue_id int, committed_offset long, consumed_offset long")


@pytest.mark.parametrize("seed", [3, 11])
def test_offsets_match_the_spark_join(spark, seed: int) -> None:
    rnd = random.Random(seed)
    brokers = ["b1", "b2", None]  # None: a Kafka topic
    queues, members, offsets = [], [], []
    for topic in ("t1", "t2", "t3"):
        for broker in brokers:
            for q in range(rnd.randint(1, 4)):
                queues.append(("s", "c", topic, broker, q, None, 100, 1.0, True))
    for group in ("g1", "g2", "g3"):
        for client in range(rnd.randint(1, 3)):
            for topic in rnd.sample(["t1", "t2", "t3"], rnd.randint(1, 2)):
                members.append(("s", "c", group, f"c{client}", "a", topic, "AVG", None,
                                None, None, None, None))
        for topic in ("t1", "t2", "t3", "t-not-a-queue"):
            for broker in brokers:
                for q in range(5):  # some match no queue row
                    if rnd.random() < 0.6:
                        offsets.append(("s", "c", group, topic, broker, q,
                                        rnd.choice([None, rnd.randint(0, 100)]),
                                        rnd.choice([None, rnd.randint(0, 100)])))
    q = spark.createDataFrame(queues, QUEUES)
    m = spark.createDataFrame(members, MEMBERS)
    o = spark.createDataFrame(offsets, OFFSETS)
    keys = [*GROUP_KEYS, "topic", "broker_name", "queue_id", "committed_offset",
            "consumed_offset"]
    got = assign(q, m, o, 4).select(*keys).distinct()
    want = subscribed_units(q, m, o).select(*keys)
    assert got.count() == want.count() > 0
    assert got.exceptAll(want).count() == 0 and want.exceptAll(got).count() == 0
    assert got.where(F.col("committed_offset").isNotNull()).count() > 0
