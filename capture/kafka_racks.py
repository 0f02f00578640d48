"""Whether Kafka clients assign a group rack-aware, which the audit does not recompute.

Since Kafka 3.5 (KIP-881) the client assignors `range`, `sticky` and `cooperative-sticky`
place partitions on consumers of the same rack when members set `client.rack`, the rack
of some member holds a replica of the partitions at hand, and not every one of those
partitions has replicas on every rack those partitions' replicas span (Kafka's
`AbstractPartitionAssignor.useRackAwareAssignment`). `range` decides topic by topic, over
the members subscribed to the topic; the sticky assignors decide once for the group, over
every partition of the topics it subscribes. The capture knows the members' racks (their
subscriptions), the partitions' replicas (metadata) and the brokers' racks
(DescribeCluster), so it can tell which groups Kafka assigns by rack.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vocabulary.columns import STICKY_STRATEGIES

# topic -> the set of racks of each partition's replicas (a replica on a broker without a
# rack adds none)
PartitionRacks = Mapping[str, list[frozenset[str]]]


@dataclass(frozen=True)
class RackedGroup:
    """A group on a rack-aware assignor whose members (some of them) set client.rack."""

    group: str
    assignor: str
    racks: dict[str, str]  # member id -> client.rack
    subscriptions: dict[str, list[str]]  # member id -> subscribed topics

    def rack_names(self) -> list[str]:
        return sorted(set(self.racks.values()))


def partition_racks(replicas: Mapping[str, list[list[int]]],
                    broker_racks: Mapping[int, str | None]) -> dict[str, list[frozenset[str]]]:
    """Per topic, the racks of each partition's replicas (`replicas`: topic -> the broker
    ids of each partition's replicas, in partition order)."""
    return {topic: [frozenset(r for b in brokers if (r := broker_racks.get(b)))
                    for brokers in partitions]
            for topic, partitions in replicas.items()}


def rack_aware_topics(group: RackedGroup, racks: PartitionRacks) -> list[str]:
    """The topics of `group` that Kafka 3.5+ clients assign by rack, sorted; topics that
    are not in `racks` (not in the metadata) or have no partitions are not assigned."""
    topics = sorted({t for ts in group.subscriptions.values() for t in ts
                     if racks.get(t)})
    if group.assignor == "range":
        return [t for t in topics if _by_rack(
            {group.racks[m] for m, ts in group.subscriptions.items()
             if t in ts and m in group.racks}, racks[t])]
    if group.assignor in STICKY_STRATEGIES:
        every = [p for t in topics for p in racks[t]]
        return topics if _by_rack(set(group.racks.values()), every) else []
    return []


def _by_rack(member_racks: set[str], partitions: list[frozenset[str]]) -> bool:
    """Kafka's rule: members with racks, one of them where some replica is, and a partition
    whose replicas are not on every rack the partitions' replicas span."""
    spanned = frozenset().union(*partitions)
    if not member_racks or not member_racks & spanned:
        return False
    return any(p != spanned for p in partitions)
