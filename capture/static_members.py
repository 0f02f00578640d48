"""Kafka's static members (group.instance.id, KIP-345) and the order its assignors see.

Kafka's `range` and `roundrobin` sort a group's members with static members first, by
their instance id, then the others by member id (AbstractPartitionAssignor.MemberInfo).
The members table has no instance id column, and the audit recomputes them ordering every
member by member id (SPEC §3): a group with a static member may then show drift that is
that ordering, not its clients. Both captures (the live one and kafka-consumer-groups'
--members --verbose) say so, naming the members.
"""

from __future__ import annotations

from collections.abc import Mapping

from capture.words import spoken

ORDERED_BY_MEMBER = ("range", "roundrobin")


def static_order_warning(group: str, instances: Mapping[str, str | None],
                         strategy: str) -> str | None:
    """The warning for `group` (its members' instance ids by member id, None for a dynamic
    member) running `strategy`, or None when the order is the audit's."""
    static = sorted(f"{member} as {instance}" for member, instance in instances.items()
                    if instance)
    if not static or strategy not in ORDERED_BY_MEMBER:
        return None
    dynamic = len(instances) - len(static)
    listed = spoken(static)
    # "no dynamic one read", not "only static members": a dynamic member's line that
    # was rejected (a rejects row) is not in `instances`
    said = f"{len(static)} static member(s) ({listed}) and " + (
        f"{dynamic} dynamic" if dynamic else "no dynamic one read")
    return (f"group {group} has {said}; Kafka's {strategy} assignor orders static members "
            "first, by group.instance.id, then the others by member id, while the audit "
            "recomputes the assignment ordering every member by member id: this group's "
            "drift may be that ordering, not its clients")
