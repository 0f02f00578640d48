"""Kafka `sticky` / `cooperative-sticky` assignor kernel (pure Python, no Spark).

Kafka's sticky assignors (`AbstractStickyAssignor`) first balance the group, then keep as
many previously owned partitions with their owner as that balance allows. Upstream iterates
Java hash maps, so its exact output depends on `String.hashCode` bucket order; an audit must
be reproducible, so every tie here is broken by member id in Java `String.compareTo` order
and by (topic, partition) order instead. What is kept from upstream:

- the two paths: when every member subscribes the same topic set, the quota-based
  "constrained" algorithm (each member keeps up to its quota of owned partitions, sorted by
  partition then topic; the rest are dealt round-robin over the under-filled members sorted
  by id, then one extra each to members at the minimum quota); otherwise a general algorithm
  (keep valid owners, give unowned partitions to the least-loaded subscriber, fewest
  potential consumers first, then move partitions until none could go to a subscriber with
  2+ fewer partitions — upstream's `isBalanced` / `verifyValidityAndBalance` criterion);
- previous ownership is only honoured for current members and subscribed, existing topics;
  a partition claimed by two current members is treated like upstream's same-generation
  conflict (all our claims come from one snapshot, i.e. one generation): nobody keeps it;
- topics with no partitions are skipped.

Cooperative-sticky: upstream's first rebalance withholds partitions that another member must
revoke first, and a follow-up rebalance hands them out. The audit models the *settled*
group, so `cooperative=True` replays that protocol (withhold, revoke, re-run on the reduced
ownership) until nothing is withheld and returns the complete settled assignment.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence

from rebalance_udfs.ordering import java_key

__all__ = ["sticky_assign", "sticky_owners"]

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
                           constrained=len(set(raw_subs)) <= 1, cooperative=cooperative)
    result: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    ti = 0
    for pid, i in enumerate(owners):  # pid order: topics in Java order, then partition
        while pid >= offset[ti + 1]:
            ti += 1
        if i >= 0:
            result[members[i]].append((topics[ti], pid - offset[ti]))
    return result


def sticky_owners(
    counts: Sequence[int],
    member_topics: Sequence[frozenset[int]],
    claims: Sequence[set[int]],
    *,
    constrained: bool,
    cooperative: bool = False,
) -> list[int]:
    """`sticky_assign` on integer ids, for callers that already hold them in order (the
    sticky chain): no names are converted either way.

    Topic t (0-based) is the t-th subscribed topic in Java order and has `counts[t]` > 0
    partitions; partition id = the partitions of the topics before t + partition number.
    Member i is the i-th member in Java order of id, subscribed to the topic indexes
    `member_topics[i]` and owning the partition ids `claims[i]` before this rebalance.
    `constrained`: every member subscribes the same topic names (counted before topics
    without partitions are dropped, as upstream does). Returns the owner member index of
    every partition id, -1 for nobody.
    """
    layout = _Layout(counts)
    claims = list(claims)
    owners = _assign_once(layout, member_topics, claims, constrained)
    if cooperative:
        for _ in range(_MAX_SETTLE_ROUNDS):
            withheld = _transferring(owners, claims)
            if not withheld:
                break
            # The revoking members gave those partitions up and the receivers did not get
            # them yet: that is what every member owns when the follow-up rebalance runs.
            claims = [set() for _ in member_topics]
            for pid, i in enumerate(owners):
                if i >= 0 and pid not in withheld:
                    claims[i].add(pid)
            owners = _assign_once(layout, member_topics, claims, constrained)
    return owners


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


def _transferring(owners: list[int], claims: list[set[int]]) -> set[int]:
    """Partitions a member gets that another current member still owns (must revoke first)."""
    claimants: dict[int, list[int]] = {}
    for i, mine in enumerate(claims):
        for pid in mine:
            claimants.setdefault(pid, []).append(i)
    return {
        pid
        for pid, who in claimants.items()
        if owners[pid] >= 0 and owners[pid] not in who
    }


def _assign_once(
    layout: _Layout,
    member_topics: list[frozenset[int]],
    claims: list[set[int]],
    constrained: bool,
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
        return _constrained(layout, owned)
    return _general(layout, member_topics, owned)


def _constrained(layout: _Layout, owned: list[list[int]]) -> list[int]:
    """All members subscribe the same topics: quotas, keep owned up to quota, deal the rest.

    Exactly `total % members` members end with the larger quota; members that already own
    that many get it first (in id order), so retention is maximal.
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

    for i, own in enumerate(owned):
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


def _general(
    layout: _Layout, member_topics: list[frozenset[int]], owned: list[list[int]]
) -> list[int]:
    """Mixed subscriptions: keep owners, fill least-loaded, then move until balanced.

    Balanced means no partition could move to a member subscribed to its topic that has 2+
    fewer partitions. Every move lowers the sum of squared member sizes, so it terminates;
    the topic with the largest gap is fixed first, preferring partitions that return to
    their previous owner or were not owned by the giver before this rebalance.
    """
    n_members = len(member_topics)
    n_topics = len(layout.counts)
    total = layout.size
    topic_of = layout.topic_of
    subscribers: list[list[int]] = [[] for _ in range(n_topics)]
    for i, mine in enumerate(member_topics):
        for t in mine:
            subscribers[t].append(i)

    owners = [-1] * total
    previous_owner = [-1] * total
    sizes = [0] * n_members
    held: list[dict[int, set[int]]] = [{} for _ in range(n_topics)]
    for i, own in enumerate(owned):
        for pid in own:
            owners[pid] = previous_owner[pid] = i
            held[topic_of[pid]].setdefault(i, set()).add(pid)
        sizes[i] = len(own)

    # Lazy heaps per topic: least-loaded subscriber (size, id) and most-loaded holder.
    low: list[list[tuple[int, int]]] = [[(sizes[i], i) for i in subs] for subs in subscribers]
    for heap in low:
        heapq.heapify(heap)

    def least_loaded(t: int) -> int:
        heap = low[t]
        while heap[0][0] != sizes[heap[0][1]]:
            heapq.heappop(heap)
        return heap[0][1]

    # Unowned partitions, fewest potential consumers first, then (topic, partition).
    unowned = [pid for pid in range(total) if owners[pid] < 0]
    unowned.sort(key=lambda pid: (len(subscribers[topic_of[pid]]), pid))
    for pid in unowned:
        t = topic_of[pid]
        i = least_loaded(t)
        owners[pid] = i
        held[t].setdefault(i, set()).add(pid)
        sizes[i] += 1
        for tt in member_topics[i]:
            heapq.heappush(low[tt], (sizes[i], i))

    high: list[list[tuple[int, int]]] = [
        [(-sizes[i], i) for i in holders] for holders in held
    ]
    for heap in high:
        heapq.heapify(heap)

    def most_loaded(t: int) -> int:
        heap = high[t]
        while heap and (-heap[0][0] != sizes[heap[0][1]] or heap[0][1] not in held[t]):
            heapq.heappop(heap)
        return heap[0][1] if heap else -1

    def gap(t: int) -> tuple[int, int, int]:
        hi = most_loaded(t)
        if hi < 0:
            return 0, -1, -1
        lo = least_loaded(t)
        return sizes[hi] - sizes[lo], hi, lo

    def refresh(i: int) -> None:
        for tt in member_topics[i]:
            heapq.heappush(low[tt], (sizes[i], i))
            if i in held[tt]:
                heapq.heappush(high[tt], (-sizes[i], i))

    # Topics by imbalance, largest first. Whenever a topic's gap may change its new value is
    # pushed, so an entry whose value is no longer current can simply be dropped.
    gaps = [(-g, t) for t in range(n_topics) if (g := gap(t)[0]) >= 2]
    heapq.heapify(gaps)
    while gaps:
        neg, t = heapq.heappop(gaps)
        g, hi, lo = gap(t)
        if g < 2 or g != -neg:
            continue
        candidates = held[t][hi]
        pid = min(
            candidates,
            key=lambda p: (
                0 if previous_owner[p] == lo else 1 if previous_owner[p] != hi else 2,
                p,
            ),
        )
        candidates.remove(pid)
        if not candidates:
            del held[t][hi]
        held[t].setdefault(lo, set()).add(pid)
        owners[pid] = lo
        sizes[hi] -= 1
        sizes[lo] += 1
        refresh(hi)
        refresh(lo)
        for tt in member_topics[hi] | member_topics[lo]:
            g2 = gap(tt)[0]
            if g2 >= 2:
                heapq.heappush(gaps, (-g2, tt))
    return owners
