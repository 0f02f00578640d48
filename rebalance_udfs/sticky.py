"""Kafka `sticky` / `cooperative-sticky` assignor kernel (pure Python, no Spark).

Kafka's sticky assignors (`AbstractStickyAssignor`) first balance the group, then keep as
many previously owned partitions with their owner as that balance allows. Both of
upstream's paths are followed step for step:

- when every member subscribes the same topic set, the quota-based "constrained"
  algorithm (each member keeps up to its quota of owned partitions, sorted by partition
  then topic; the members that may keep the larger quota are the first met in upstream's
  HashMap of member ids; the rest are dealt round-robin over the under-filled members
  sorted by id, then one extra each to members at the minimum quota);
- otherwise `GeneralAssignmentBuilder` (`_general`): keep valid owners, give unowned
  partitions to the least-loaded subscriber, then walk the partitions moving each from a
  member 2+ above another subscriber until `isBalanced`, undoing a reshuffle that does not
  lower the balance score.

Where upstream iterates a Java hash table (the member map of the constrained path, the
partition sets of a reverse movement), its order is reproduced from the names'
`String.hashCode` (`_java_map_order`, `_JavaHashSet`); members in one hash bucket are
taken in id order (upstream: the order they joined, which no snapshot holds). Previous
ownership is only honoured for current members and subscribed, existing topics; a
partition claimed by two current members is upstream's same-generation conflict (all our
claims come from one snapshot, i.e. one generation): nobody keeps it. Topics with no
partitions are skipped. The tests' KAFKA_CASES hold lists Kafka's own assignors gave.

Cooperative-sticky: upstream's first rebalance withholds partitions that another member must
revoke first, and a follow-up rebalance hands them out. The audit models the *settled*
group, so `cooperative=True` replays that protocol (withhold, revoke, re-run on the reduced
ownership) until nothing is withheld and returns the complete settled assignment.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence

from rebalance_udfs.ordering import java_key

__all__ = ["sticky_assign", "sticky_owners", "subscriptions_equal"]

# Follow-up rebalances replayed for cooperative-sticky. Usually one settles the group; in
# random trials about 2 % needed two and very few three. If it never settles, the last
# (complete, valid, balanced) assignment is returned.
_MAX_SETTLE_ROUNDS = 8


class _Layout:
    """Dense integer ids for partitions: topic index (topics in Java order), then partition
    number. A partition id's natural order is therefore Kafka's (topic, partition) order.
    """

    def __init__(self, counts: Sequence[int]) -> None:
        self.offset: list[int] = []
        self.topic_of: list[int] = []
        total = 0
        for ti, n in enumerate(counts):
            self.offset.append(total)
            self.topic_of.extend([ti] * n)
            total += n
        self.counts = list(counts)
        self.size = total

    @functools.cached_property
    def partition_first(self) -> list[int] | None:
        """Rank of each id in the order upstream keeps owned partitions: partition number,
        then topic (None for one topic, where that is the id order itself)."""
        if len(self.counts) < 2:
            return None
        offset, topic_of = self.offset, self.topic_of
        by_partition = sorted(range(self.size),
                              key=lambda pid: (pid - offset[topic_of[pid]], topic_of[pid]))
        rank = [0] * self.size
        for r, pid in enumerate(by_partition):
            rank[pid] = r
        return rank


def sticky_assign(
    subscriptions: Mapping[str, Sequence[str]],
    partitions: Mapping[str, int],
    previous: Mapping[str, Iterable[Sequence[object]]] | None = None,
    cooperative: bool = False,
) -> dict[str, list[tuple[str, int]]]:
    """Assign a Kafka group's partitions as the sticky assignors do, deterministically.

    `subscriptions` maps member id to subscribed topics, `partitions` topic to partition
    count, `previous` member id to the (topic, partition)s it owned after the previous
    rebalance (None or empty for a first generation). Returns every member, with its
    partitions sorted by (topic in Java order, partition). With `cooperative`, the result is
    the settled assignment after the follow-up rebalance(s), not upstream's first step.
    """
    members = sorted(subscriptions, key=java_key)
    raw_subs = [frozenset(subscriptions[m] or ()) for m in members]
    wanted = {t for s in raw_subs for t in s}
    topics = sorted(
        (t for t in wanted if _partition_count(partitions.get(t)) > 0), key=java_key
    )
    counts = [_partition_count(partitions[t]) for t in topics]
    index = {t: i for i, t in enumerate(topics)}
    offset = [0, *itertools.accumulate(counts)]
    member_topics = [frozenset(index[t] for t in s if t in index) for s in raw_subs]

    previous = previous or {}
    claims: list[set[int]] = []
    for m in members:
        mine: set[int] = set()
        for entry in previous.get(m) or ():
            if isinstance(entry, str) or len(entry) != 2:
                continue
            pid = _pid(index, counts, offset, entry[0], entry[1])
            if pid is not None:
                mine.add(pid)
        claims.append(mine)

    owners = sticky_owners(counts, member_topics, claims,
                           constrained=subscriptions_equal(members, raw_subs),
                           topic_names=topics, member_names=members,
                           cooperative=cooperative)
    result: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    ti = 0
    for pid, i in enumerate(owners):  # pid order: topics in Java order, then partition
        while pid >= offset[ti + 1]:
            ti += 1
        if i >= 0:
            result[members[i]].append((topics[ti], pid - offset[ti]))
    return result


def subscriptions_equal(member_names: Sequence[str],
                        subscriptions: Sequence[frozenset[str]]) -> bool:
    """Whether upstream takes the constrained path (`allSubscriptionsEqual`): it walks the
    members in its HashMap's order (`_java_map_order` of their ids' hashes) and takes the
    first subscription that is not empty as the group's, so a member subscribing nothing
    (a consumer whose pattern matches no topic yet) met before it passes, and one met
    after it does not. Topics are compared by name, those without partitions too.
    `member_names` in Java order of id, the order they are put in the map (members in one
    hash bucket are met in it)."""
    common: frozenset[str] = frozenset()
    for i in _java_map_order([_java_string_hash(m) for m in member_names]):
        if not common:
            common = subscriptions[i]
        elif subscriptions[i] != common:
            return False
    return True


def sticky_owners(
    counts: Sequence[int],
    member_topics: Sequence[frozenset[int]],
    claims: Sequence[set[int]],
    *,
    constrained: bool,
    topic_names: Sequence[str],
    member_names: Sequence[str],
    cooperative: bool = False,
) -> list[int]:
    """`sticky_assign` on integer ids, for callers that already hold them in order (the
    sticky chain): no names are converted either way.

    Topic t (0-based) is the t-th subscribed topic in Java order and has `counts[t]` > 0
    partitions; partition id = the partitions of the topics before t + partition number.
    Member i is the i-th member in Java order of id, subscribed to the topic indexes
    `member_topics[i]` and owning the partition ids `claims[i]` before this rebalance.
    `constrained`: upstream takes the constrained path (`subscriptions_equal`); there a
    member subscribing nothing is dealt a quota of the others' topics, and refuses it
    (`ConsumerCoordinator` rejoins when an assignment does not match its subscription):
    the group rebalances again from what the others accepted, until a round changes
    nothing, and the partitions it is dealt then are nobody's. `topic_names` /
    `member_names`:
    topic t's and member i's names, whose Java hashes order what upstream keeps in hash
    tables (which members keep the larger quota first; which partition a reverse
    movement takes back). Returns the owner member index of every partition id, -1 for
    nobody.
    """
    layout = _Layout(counts)
    claims = [set(mine) for mine in claims]
    common = frozenset().union(*member_topics) if constrained else frozenset()
    refusing = [bool(common) and not topics for topics in member_topics]
    member_topics = [topics or common for topics in member_topics]
    hashes = [_java_string_hash(name) for name in topic_names]
    ids = [_java_string_hash(name) for name in member_names]
    owners = _assign_once(layout, member_topics, claims, constrained, hashes, ids)
    for _ in range(_MAX_SETTLE_ROUNDS):
        withheld = _transferring(owners, claims, constrained) if cooperative else set()
        refused = any(i >= 0 and refusing[i] for i in owners)
        if not withheld and not refused:
            break
        # The revoking members gave the withheld partitions up and the receivers did not
        # get them yet, and a refusing member took nothing: that is what every member
        # owns when the follow-up rebalance runs.
        accepted = [set() for _ in member_topics]
        for pid, i in enumerate(owners):
            if i >= 0 and pid not in withheld and not refusing[i]:
                accepted[i].add(pid)
        if not withheld and accepted == claims:
            break  # the refusing members' rejoin changes nothing any more
        claims = accepted
        owners = _assign_once(layout, member_topics, claims, constrained, hashes, ids)
    return [-1 if i >= 0 and refusing[i] else i for i in owners]


def _pid(index: Mapping[str, int], counts: Sequence[int], offset: Sequence[int],
         topic: object, partition: object) -> int | None:
    """Id of an existing (topic, partition), None for anything else."""
    ti = index.get(topic) if isinstance(topic, str) else None
    if ti is None or isinstance(partition, bool):
        return None
    try:
        p = int(partition)  # numpy ints and numeric strings from JSON/Arrow rows
    except (TypeError, ValueError):
        return None
    if 0 <= p < counts[ti]:
        return offset[ti] + p
    return None


def _partition_count(value: object) -> int:
    """Partition count of a topic; missing, null or non-positive = skipped, as Kafka does."""
    try:
        return max(int(value), 0)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _transferring(owners: list[int], claims: list[set[int]], constrained: bool) -> set[int]:
    """Partitions a member gets that another current member still owns (must revoke first);
    on the constrained path also every partition two members claimed, whoever gets it
    (`ConstrainedAssignmentBuilder.assignNewPartition` counts it as transferring)."""
    claimants: dict[int, list[int]] = {}
    for i, mine in enumerate(claims):
        for pid in mine:
            claimants.setdefault(pid, []).append(i)
    return {
        pid
        for pid, who in claimants.items()
        if owners[pid] >= 0 and (owners[pid] not in who or (constrained and len(who) > 1))
    }


def _assign_once(
    layout: _Layout,
    member_topics: list[frozenset[int]],
    claims: list[set[int]],
    constrained: bool,
    topic_hashes: Sequence[int],
    member_hashes: Sequence[int],
) -> list[int]:
    """One rebalance: owner member index per partition id (-1 = nobody subscribes it)."""
    n_members = len(member_topics)
    if n_members == 0 or layout.size == 0:
        return [-1] * layout.size
    claim_count = Counter(pid for mine in claims for pid in mine)
    owned = [
        sorted(
            pid
            for pid in mine
            if claim_count[pid] == 1 and layout.topic_of[pid] in member_topics[i]
        )
        for i, mine in enumerate(claims)
    ]
    if constrained:
        return _constrained(layout, owned, member_hashes)
    # a member that owned a partition of a topic it no longer subscribes must revoke it
    revoking = any(claim_count[pid] == 1 and layout.topic_of[pid] not in member_topics[i]
                   for i, mine in enumerate(claims) for pid in mine)
    return _general(layout, member_topics, owned, topic_hashes, revoking)


def _constrained(layout: _Layout, owned: list[list[int]],
                 member_hashes: Sequence[int]) -> list[int]:
    """All members subscribe the same topics: quotas, keep owned up to quota, deal the rest.

    Exactly `total % members` members end with the larger quota; members that already own
    that many get it first, in the order Kafka meets them (`ConstrainedAssignmentBuilder`
    walks a HashMap of member ids: `_java_map_order` of their `member_hashes`), so
    retention is maximal; the members still short are then served in id order.
    """
    n_members = len(owned)
    total = layout.size
    min_quota, extra = divmod(total, n_members)
    max_quota = min_quota + (1 if extra else 0)
    owners = [-1] * total
    sizes = [0] * n_members
    under: list[int] = []  # below min quota, id order
    at_min: deque[int] = deque()  # at min quota, may still take one extra
    over = 0  # members given the max quota so far

    def first(own: list[int], n: int) -> list[int]:
        """The first n of a member's owned ids in partition-then-topic order."""
        if len(own) <= n:
            return own
        if layout.partition_first is not None:
            own = sorted(own, key=layout.partition_first.__getitem__)
        return own[:n]

    for i in _java_map_order(member_hashes):
        own = owned[i]
        if len(own) < min_quota:
            keep = own
            under.append(i)
        elif len(own) >= max_quota and over < extra:
            keep = first(own, max_quota)
            over += 1
            if over == extra:
                at_min.clear()
        else:
            keep = first(own, min_quota)
            if over < extra:
                at_min.append(i)
        for pid in keep:
            owners[pid] = i
        sizes[i] = len(keep)
    under.sort()  # Collections.sort of both lists, by member id
    at_min = deque(sorted(at_min))

    pos = 0
    for pid in range(total):
        if owners[pid] >= 0:
            continue
        if pos < len(under):
            i = under[pos]
        elif under:
            pos = 0
            i = under[0]
        else:
            # Never empty: quotas add up to `total`, so while partitions remain some member
            # at the min quota is still owed its extra one.
            i = at_min.popleft()
            owners[pid] = i
            sizes[i] += 1
            continue
        owners[pid] = i
        sizes[i] += 1
        if sizes[i] == min_quota:
            del under[pos]  # the next member slides into `pos`
            at_min.append(i)
        else:
            pos += 1
    return owners


def _java_string_hash(text: str) -> int:
    """Java's `String.hashCode()`: over UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for k in range(0, len(units), 2):
        h = (31 * h + (units[k] << 8 | units[k + 1])) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    """`HashMap.hash`: a 32-bit hash with its high half folded into the low one."""
    return h ^ (h >> 16)


def _grown(capacity: int, size: int, bin_size: int) -> int:
    """A java.util.HashMap's table size after an insertion that left `size` entries and
    `bin_size` in the new entry's bucket: doubled when a bucket passes 8 entries in a
    table under 64 (treeifyBin resizes instead), and when `size` passes 3/4 of it."""
    if bin_size > 8 and capacity < 64:
        capacity *= 2
    if size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def _java_map_order(hashes: Sequence[int]) -> list[int]:
    """The iteration order of a java.util.HashMap (or HashSet) whose keys, with these
    32-bit `hashCode`s, were put in index order: by bucket of the final table, then in
    insertion order within a bucket (ties the snapshots cannot order otherwise)."""
    spread = [_spread(h) for h in hashes]
    capacity = 16
    in_bin: Counter[int] = Counter()
    for k, h in enumerate(spread):
        bucket = h & (capacity - 1)
        in_bin[bucket] += 1
        grown = _grown(capacity, k + 1, in_bin[bucket])
        if grown != capacity:  # rehash the keys so far into the larger table
            capacity = grown
            in_bin = Counter(x & (capacity - 1) for x in spread[:k + 1])
    mask = capacity - 1
    return sorted(range(len(hashes)), key=lambda k: (spread[k] & mask, k))


class _JavaHashSet:
    """The iteration order of a `java.util.HashSet<TopicPartition>`, for its first element.

    Kafka's general sticky path moves "the first" partition of such a set
    (`PartitionMovements.getTheActualPartitionToBeMoved`): the one in the lowest bucket
    (`hash ^ hash >>> 16` masked by the table size), the earliest inserted within one.
    The table starts at 16 buckets and doubles when the set grows past 3/4 of it, or when
    a bucket would hold a 9th entry in a table under 64 (HashMap's treeify rule; a bucket
    that large in a bigger table keeps insertion order here, an approximation)."""

    def __init__(self, hash_of: list[int]) -> None:
        self.hash_of = hash_of
        self.seq: dict[int, int] = {}
        self.capacity = 16
        self.counter = 0

    def _bucket(self, pid: int) -> int:
        return _spread(self.hash_of[pid]) & (self.capacity - 1)

    def add(self, pid: int) -> None:
        if pid in self.seq:
            return
        bucket = self._bucket(pid)
        self.seq[pid] = self.counter
        self.counter += 1
        in_bin = sum(1 for q in self.seq if self._bucket(q) == bucket)
        self.capacity = _grown(self.capacity, len(self.seq), in_bin)

    def remove(self, pid: int) -> None:
        del self.seq[pid]

    def first(self) -> int:
        return min(self.seq, key=lambda q: (self._bucket(q), self.seq[q]))


def _general(
    layout: _Layout, member_topics: list[frozenset[int]], owned: list[list[int]],
    topic_hashes: Sequence[int], revocation_required: bool,
) -> list[int]:
    """Mixed subscriptions: Kafka's `GeneralAssignmentBuilder`, step for step.

    Owned partitions stay with their members; each unassigned partition, in Kafka's
    partition order (topics by how many members subscribe them, then name; partition
    number), goes to the least-loaded subscriber (size, then member id); then partitions
    are walked in that order, each moved from a member with 2+ more than some other
    subscriber of its topic to the least-loaded one, until `isBalanced` holds, first over
    the newly assigned partitions (unless a member lost a partition it no longer
    subscribes), then over all; a reshuffle that does not lower the balance score
    (sum of pairwise size differences) is undone unless the group started empty. Members
    that cannot take part (they hold every partition they could, of topics no one else
    subscribes) and topics with one subscriber stay out of it. A single generation of
    owned partitions is assumed (the chain's): no `prevAssignment`. `topic_hashes`: Java
    `String.hashCode` of each topic's name, for the one hash-ordered choice (which
    partition a reverse movement takes back, `_JavaHashSet`)."""
    n_members = len(member_topics)
    counts, offset, topic_of = layout.counts, layout.offset, layout.topic_of
    total = layout.size
    potential: list[list[int]] = [[] for _ in counts]
    for i, mine in enumerate(member_topics):
        for t in mine:
            potential[t].append(i)
    owners = [-1] * total
    sizes = [0] * n_members
    holders: list[Counter[int]] = [Counter() for _ in counts]
    for i, own in enumerate(owned):
        for pid in own:
            owners[pid] = i
            holders[topic_of[pid]][i] += 1
        sizes[i] = len(own)
    order = sorted(range(len(counts)), key=lambda t: (len(potential[t]), t))
    sorted_all = [offset[t] + p for t in order for p in range(counts[t])]
    any_owned = any(owned)
    unassigned = [pid for pid in sorted_all if owners[pid] < 0] if any_owned else sorted_all
    active = [True] * n_members  # in sortedCurrentSubscriptions

    def move(pid: int, to: int) -> None:
        old = owners[pid]
        if old >= 0:
            sizes[old] -= 1
            holders[topic_of[pid]][old] -= 1
            if not holders[topic_of[pid]][old]:
                del holders[topic_of[pid]][old]
        owners[pid] = to
        sizes[to] += 1
        holders[topic_of[pid]][to] += 1

    def least_loaded(t: int) -> int:  # first of sortedCurrentSubscriptions subscribing t
        return min((i for i in potential[t] if active[i]), key=lambda i: (sizes[i], i))

    initializing = max(sizes, default=0) == 0
    for pid in unassigned:  # maybeAssign, no racks
        if potential[topic_of[pid]]:
            move(pid, least_loaded(topic_of[pid]))

    fixed_topic = [len(subs) < 2 for subs in potential]
    sorted_all = [pid for pid in sorted_all if not fixed_topic[topic_of[pid]]]
    unassigned = ([pid for pid in unassigned if not fixed_topic[topic_of[pid]]]
                  if any_owned else sorted_all)
    most = [sum(counts[t] for t in mine) for mine in member_topics]
    for i, mine in enumerate(member_topics):
        if sizes[i] >= most[i] and all(fixed_topic[t] for t in mine):
            active[i] = False
    members = [i for i in range(n_members) if active[i]]
    topics = sorted({t for i in members for t in member_topics[i]})

    def balanced() -> bool:
        """`isBalanced` over the members taking part: sizes within one, or no partition
        of a topic held by a member 2+ above some other subscriber of it."""
        if not members:
            return True
        if min(sizes[i] for i in members) >= max(sizes[i] for i in members) - 1:
            return True
        for t in topics:
            if holders[t] and max(sizes[i] for i in holders[t]) > min(
                    sizes[i] for i in potential[t] if active[i]) + 1:
                return False
        return True

    # PartitionMovements: partition -> (src, dst); per topic, (src, dst) -> partitions
    hash_of = [(31 * (31 + (pid - offset[topic_of[pid]])) + topic_hashes[topic_of[pid]])
               & 0xFFFFFFFF for pid in range(total)]
    movement: dict[int, tuple[int, int]] = {}
    by_topic: list[dict[tuple[int, int], _JavaHashSet]] = [{} for _ in counts]

    def record(pid: int, pair: tuple[int, int]) -> None:
        movement[pid] = pair
        by_topic[topic_of[pid]].setdefault(pair, _JavaHashSet(hash_of)).add(pid)

    def unrecord(pid: int) -> tuple[int, int]:
        pair = movement.pop(pid)
        moved = by_topic[topic_of[pid]]
        moved[pair].remove(pid)
        if not moved[pair].seq:
            del moved[pair]
        return pair

    def reassign(pid: int, to: int) -> None:
        old = owners[pid]
        moved = by_topic[topic_of[pid]]
        if moved:  # getTheActualPartitionToBeMoved
            src = movement[pid][0] if pid in movement else old
            if (to, src) in moved:
                pid = moved[(to, src)].first()
        old = owners[pid]
        if pid in movement:  # movePartition
            src, _ = unrecord(pid)
            if src != to:
                record(pid, (src, to))
        else:
            record(pid, (old, to))
        move(pid, to)

    def reassignments(partitions: list[int]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            is_balanced = balanced()
            for pid in partitions:
                if is_balanced:
                    break
                t, holder = topic_of[pid], owners[pid]
                if any(sizes[holder] > sizes[i] + 1 for i in potential[t]):
                    reassign(pid, least_loaded(t))
                    performed = modified = True
                    is_balanced = balanced()
        return performed

    def score() -> int:
        ranked = sorted(sizes[i] for i in members)
        return sum(v * (2 * k - len(ranked) + 1) for k, v in enumerate(ranked))

    before, before_score = owners.copy(), score()
    if not revocation_required:
        reassignments(unassigned)
    performed = reassignments(sorted_all)
    if not initializing and performed and score() >= before_score:
        return before
    return owners
