"""A live Tansu broker with two real librdkafka consumer groups (range and roundrobin),
formed once per test session (group formation on Tansu takes ~25 s)."""

from __future__ import annotations

import pytest

from tests.support.tansu import create_topics, form_groups, produce, tansu_broker

PARTITIONS = {"alpha": 3, "beta": 2, "gamma": 4}
RECORDS = {("alpha", 0): 3, ("alpha", 1): 1, ("alpha", 2): 0, ("beta", 0): 2, ("beta", 1): 4,
           ("gamma", 0): 1, ("gamma", 1): 0, ("gamma", 2): 2, ("gamma", 3): 1}
GROUPS = {"g-range": ("range", ["alpha", "beta"], 2),
          "g-rr": ("roundrobin", ["beta", "gamma"], 2)}


@pytest.fixture(scope="session")
def tansu(tmp_path_factory):
    with tansu_broker(tmp_path_factory.mktemp("tansu") / "tansu.log") as bootstrap:
        yield bootstrap


@pytest.fixture(scope="session")
def live(tansu):
    """Topics, records, formed groups and committed offsets; consumers stay in the group."""
    from confluent_kafka import TopicPartition

    create_topics(tansu, PARTITIONS)
    produce(tansu, RECORDS)
    consumers = form_groups(tansu, GROUPS, PARTITIONS)
    committed: dict[tuple[str, str, int], int] = {}
    for group, cs in consumers.items():
        for c in cs:
            tps = sorted((tp.topic, tp.partition) for tp in c.assignment())
            # commit every held partition: its record count, except 0 for partition 0
            offsets = [TopicPartition(t, p, 0 if p == 0 else RECORDS[(t, p)]) for t, p in tps]
            c.commit(offsets=offsets, asynchronous=False)
            committed.update({(group, tp.topic, tp.partition): tp.offset for tp in offsets})
    assignments = {c.memberid(): sorted((tp.topic, tp.partition) for tp in c.assignment())
                   for cs in consumers.values() for c in cs}
    yield {"bootstrap": tansu, "consumers": consumers, "committed": committed,
           "assignments": assignments}
    for cs in consumers.values():
        for c in cs:
            c.close()
