"""When Kafka 3.5+ clients assign a group by rack (KIP-881), the rule of Kafka's
`AbstractPartitionAssignor.useRackAwareAssignment` as its assignors apply it: `range`
topic by topic over the topic's members, the sticky ones once over the whole group."""

from __future__ import annotations

import pytest

from capture.kafka_racks import RackedGroup, partition_racks, rack_aware_topics

BROKERS = {1: "az1", 2: "az2", 3: "az3", 4: None}
# every partition of `spread` on az1 and az2; `skewed` partition 1 only on az1; `bare` on
# the broker without a rack
REPLICAS = {"spread": [[1, 2], [2, 1]], "skewed": [[1, 2], [1]], "bare": [[4], [4]],
            "far": [[3], [3, 1]]}
RACKS = partition_racks(REPLICAS, BROKERS)


def group(assignor: str, racks: dict[str, str], subscriptions: dict[str, list[str]]):
    return RackedGroup("g", assignor, racks, subscriptions)


def test_replica_racks_per_partition_skip_brokers_without_one() -> None:
    assert RACKS["spread"] == [frozenset({"az1", "az2"})] * 2
    assert RACKS["skewed"] == [frozenset({"az1", "az2"}), frozenset({"az1"})]
    assert RACKS["bare"] == [frozenset(), frozenset()]
    assert partition_racks({"t": [[7]]}, BROKERS) == {"t": [frozenset()]}  # unknown broker


@pytest.mark.parametrize("assignor", ["range", "sticky", "cooperative-sticky"])
def test_partitions_on_every_rack_or_on_none_of_the_members_are_assigned_without_racks(
        assignor) -> None:
    every = {"a": ["spread"], "b": ["spread"]}
    assert rack_aware_topics(group(assignor, {"a": "az1"}, every), RACKS) == []
    # the members' racks hold no replica of `skewed`
    assert rack_aware_topics(group(assignor, {"a": "az9"}, {"a": ["skewed"]}), RACKS) == []
    # brokers without racks: no partition rack at all
    assert rack_aware_topics(group(assignor, {"a": "az1"}, {"a": ["bare"]}), RACKS) == []
    # a topic missing from the metadata is not assigned
    assert rack_aware_topics(group(assignor, {"a": "az1"}, {"a": ["gone"]}), RACKS) == []


def test_range_decides_topic_by_topic_over_the_topics_members() -> None:
    members = {"a": ["spread", "skewed", "far"], "b": ["far"]}
    # a (az1) is on skewed's racks, skewed's partition 1 is not on az2: by rack; spread is
    # on every rack; far's partitions differ (az3 / az1, az3) and a is on az1
    assert rack_aware_topics(group("range", {"a": "az1"}, members), RACKS) == ["far", "skewed"]
    # only b has a rack, and b subscribes far alone
    assert rack_aware_topics(group("range", {"b": "az2"}, members), RACKS) == []
    assert rack_aware_topics(group("range", {"b": "az3"}, members), RACKS) == ["far"]


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_sticky_decides_once_for_every_partition_of_the_group(assignor) -> None:
    members = {"a": ["spread"], "b": ["skewed"]}
    # spread alone is on every rack, but with skewed some partition is not: all by rack
    assert rack_aware_topics(group(assignor, {"a": "az2"}, members), RACKS) == [
        "skewed", "spread"]
    # the racks spanned grow with far (az3): spread's partitions are no longer on every rack
    assert rack_aware_topics(group(assignor, {"a": "az1"},
                                   {"a": ["spread"], "b": ["far"]}), RACKS) == ["far", "spread"]
    assert rack_aware_topics(group(assignor, {"a": "az1"}, {"a": ["spread"]}), RACKS) == []


def test_roundrobin_is_never_rack_aware() -> None:
    assert rack_aware_topics(group("roundrobin", {"a": "az1"}, {"a": ["skewed"]}), RACKS) == []
