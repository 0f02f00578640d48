"""Kafka groups whose clients would assign by rack (KIP-881): said, since not recomputed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs


def test_groups_kafka_would_assign_by_rack_are_a_warning(spark, tmp_path) -> None:
    """The inputs can describe one rack per partition (broker_room) and the members'
    client.rack (client_room); the audit recomputed such groups without racks and said
    nothing (probe-found). Kafka's rule (`capture.kafka_racks`): a member's rack where some
    partition is, over partitions on more than one rack; range per topic, the sticky
    assignors over the group's topics; roundrobin never."""
    racks = {"T": ["r1", "r2"], "U": ["r1", "r1"], "V": ["r2", "r2"], "W": ["r1", "r1"]}
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": None, "queue_id": q, "readable": True,
                            "broker_room": room}
                           for t, rooms in racks.items() for q, room in enumerate(rooms)])
    groups = {  # group: (strategy, [(client, rack, topics)])
        "by-rack-range": ("range", [("a", "r1", "T"), ("b", "r2", "T")]),
        "one-rack-range": ("range", [("a", "r1", "W"), ("b", "r1", "W")]),
        "by-rack-sticky": ("cooperative-sticky", [("a", "r1", "U"), ("a", "r1", "V"),
                                                  ("b", "r2", "U"), ("b", "r2", "V")]),
        "roundrobin": ("roundrobin", [("a", "r1", "T"), ("b", "r2", "T")]),
        "other-racks": ("range", [("a", "r7", "T"), ("b", "r8", "T")]),
        "no-racks": ("range", [("a", None, "T"), ("b", None, "T")]),
    }
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "client_id": c, "topic": t, "strategy": strategy,
                             "client_room": room}
                            for g, (strategy, rows) in groups.items() for c, room, t in rows])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members)
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(Path(tmp_path) / "out"), engine="offline",
                             what_if="off"), spark=spark)
    said = [w for w in result.warnings if "KIP-881" in w]
    assert said == [
        "snapshot s1 (cluster c): 2 Kafka group(s) (by-rack-range, by-rack-sticky) have "
        "members with a client_room (client.rack) where some partition's broker_room is, "
        "over partitions on more than one rack: Kafka 3.5+ clients assign range and the "
        "sticky assignors by rack there (KIP-881), which the audit does not recompute, so "
        "their assignments, churn and drift may differ from the clients'"], said
