"""The Kafka groups whose clients would assign by rack (KIP-881), found per bucket of the
pass (`rebalance_udfs.racks`), without Spark."""

from __future__ import annotations

import pyarrow as pa

from rebalance_udfs.racks import rack_aware_groups
from tests.support.rack_cases import BY_RACK, RACK_GROUPS, TOPIC_RACKS

# partition racks per topic (None: a partition on no rack)
TOPICS = {**TOPIC_RACKS, "X": ["r1", None]}


def _queues(groups: dict) -> pa.Table:
    """The pass's queue rows: each subscribed (group, topic)'s readable partitions."""
    rows = [{"snapshot_id": "s1", "cluster": "c", "consumer_group": g, "topic": t,
             "broker_room": room}
            for g, (_, members) in groups.items()
            for t in sorted({t for _, _, t in members} & TOPICS.keys())
            for room in TOPICS[t]]
    return pa.Table.from_pylist(rows, pa.schema([(k, pa.string()) for k in (
        "snapshot_id", "cluster", "consumer_group", "topic", "broker_room")]))


def _members(groups: dict) -> pa.Table:
    rows = [{"snapshot_id": "s1", "cluster": "c", "consumer_group": g, "client_id": c,
             "topic": t, "strategy": strategy, "client_room": room}
            for g, (strategy, members) in groups.items() for c, room, t in members]
    return pa.Table.from_pylist(rows, pa.schema([(k, pa.string()) for k in (
        "snapshot_id", "cluster", "consumer_group", "client_id", "topic", "strategy",
        "client_room")]))


def _found(groups: dict) -> list[str]:
    found = rack_aware_groups(_queues(groups), _members(groups))
    assert found.column_names == ["snapshot_id", "cluster", "consumer_group"]
    return found.column("consumer_group").to_pylist()


def test_range_per_topic_and_the_sticky_assignors_over_the_groups_topics() -> None:
    """The cases of the audit's own warning test (`tests.support.rack_cases`), plus a
    partition on no rack: Kafka's rule, range per topic, the sticky assignors over all of
    the group's topics, roundrobin never."""
    groups = {**RACK_GROUPS, "unracked-partition": ("range", [("a", "r1", "X")])}
    assert _found(groups) == [*BY_RACK, "unracked-partition"]


def test_range_judges_each_topic_alone_where_sticky_pools_them() -> None:
    """U is on r1 only, V on r2 only. A range member on r1 subscribing both: each topic
    alone is on one rack, so neither qualifies. The same member on a sticky assignor sees
    both topics' racks at once (r1, r2), its own among them: it qualifies."""
    one = [("a", "r1", "U"), ("a", "r1", "V")]
    assert _found({"range": ("range", one), "sticky": ("sticky", one)}) == ["sticky"]


def test_a_member_counts_only_through_a_topic_with_readable_partitions() -> None:
    """The sticky member on r1 subscribes only Z, which has no readable partition (no
    queue row): its rack meets no partition. The group's other topic is on r1 and r2,
    subscribed by a member with no rack: nothing to match."""
    groups = {"g": ("cooperative-sticky", [("a", "r1", "Z"), ("b", None, "T")])}
    assert _found(groups) == []
    groups = {"g": ("cooperative-sticky", [("a", "r1", "Z"), ("b", "r2", "T")])}
    assert _found(groups) == ["g"]


def test_a_mixed_group_is_judged_per_assignor() -> None:
    """The range members' topic W is on one rack; the sticky members' topics U and V are
    on two: the group qualifies through its sticky members. And a member with no topic
    (nothing subscribed) or a null strategy is no member of the rule."""
    groups = {"g": ("range", [("a", "r1", "W")]), "h": ("range", [("a", "r2", "V")])}
    members = _members(groups).to_pylist()
    members += [{**members[0], "client_id": "b", "topic": "U", "strategy": "sticky"},
                {**members[0], "client_id": "c", "topic": "V", "strategy": "sticky",
                 "client_room": "r9"},
                {**members[1], "client_id": "d", "topic": None},
                {**members[1], "client_id": "e", "strategy": None, "topic": "T"}]
    queues = _queues({"g": ("range", [(None, None, t) for t in "WUV"]),
                      "h": ("range", [(None, None, t) for t in "VT"])})
    found = rack_aware_groups(queues, pa.Table.from_pylist(members, _members(groups).schema))
    assert found.column("consumer_group").to_pylist() == ["g"]


def test_no_racked_member_reads_no_queue_row() -> None:
    """A bucket without a racked member on a rack-aware assignor returns at once, empty
    (most buckets: RocketMQ groups, Kafka groups without client.rack)."""
    groups = {"g": ("AVG", [("a", "r1", "T")]), "h": ("range", [("a", None, "T")])}
    found = rack_aware_groups(_queues(groups).slice(0, 0), _members(groups))
    assert found.num_rows == 0 and found.schema.names == [
        "snapshot_id", "cluster", "consumer_group"]


def test_groups_come_once_sorted_over_snapshots_and_clusters() -> None:
    """Two snapshots and a null cluster: each group once per snapshot and cluster, in
    key order, the null cluster first."""
    base = {"g": ("range", [("a", "r1", "T")]), "f": ("range", [("b", "r2", "T")])}
    queues, members = _queues(base), _members(base)
    def moved(table: pa.Table, **values) -> pa.Table:
        return pa.Table.from_pylist([{**r, **values} for r in table.to_pylist()],
                                    table.schema)
    found = rack_aware_groups(
        pa.concat_tables([moved(queues, snapshot_id="s2"), queues,
                          moved(queues, cluster=None), queues]),
        pa.concat_tables([moved(members, snapshot_id="s2"), members,
                          moved(members, cluster=None)]))
    assert found.to_pylist() == [
        {"snapshot_id": "s1", "cluster": None, "consumer_group": "f"},
        {"snapshot_id": "s1", "cluster": None, "consumer_group": "g"},
        {"snapshot_id": "s1", "cluster": "c", "consumer_group": "f"},
        {"snapshot_id": "s1", "cluster": "c", "consumer_group": "g"},
        {"snapshot_id": "s2", "cluster": "c", "consumer_group": "f"},
        {"snapshot_id": "s2", "cluster": "c", "consumer_group": "g"}]
