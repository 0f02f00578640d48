"""Churn between snapshots, per group: one vectorized pass over a bucket of groups.

The definitions are rebalance_churn's (`reports.rebalance_churn`). The rows come linked:
each carries the key of the later snapshot of its pair (snapshot_id, cluster,
consumer_group) and SIDE, whether it belongs to that snapshot (AFTER) or to its
predecessor (BEFORE). All of a compared group's rows, both sides, are in one call, so
every figure is a numpy reduction over integer codes: no per-row Python, no string sort
beyond the few ids a list shows.

Strings are coded by Arrow (`dictionary_encode`) and ordered by Arrow's sort, which
compares UTF-8 bytes as Spark does.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.exact import first_of, nullable, single_chunk, take
from rebalance_udfs.key_codes import key_codes
from vocabulary.columns import GROUP_KEYS
from vocabulary.schemas import CHURN_TOTALS_ARROW_SCHEMA

SIDE = "_side"
BEFORE, AFTER = 0, 1
# a predecessor claim row's re-consumed messages, where both offsets are known
DUPLICATES = "_duplicates"
# a claim row of status SHARED: POP clients the broker pops one queue for, or MESSAGE
# clients balancing message by message; a claimant of such a queue that keeps it goes on
# consuming it whoever joins or leaves it (upstream drops only a pop queue a client no
# longer has), so its move stops nothing and hands no offset over
SHARED_CLAIM = "_shared"
# client_id is null on every row but a clustering claim (OK, CONTENDED, SHARED)
QUEUE_COLUMNS = [*GROUP_KEYS, SIDE, "topic", "broker_name", "queue_id", "client_id",
                 DUPLICATES, SHARED_CLAIM]
# topics / strategies as one comparable string each (null when unknown); EAGER: whether
# the client runs one of Kafka's eager assignors (false when unknown)
TOPICS, STRATEGIES, EAGER = "_topics", "_strategies", "_eager"
CLIENT_COLUMNS = [*GROUP_KEYS, SIDE, "client_id", TOPICS, STRATEGIES, EAGER]

_MOVE_TYPE = CHURN_TOTALS_ARROW_SCHEMA.field("moves").type.value_type


# ------------------------------------------------------------------------- small helpers
def _numpy(column: pa.Array, dtype: type = np.int64) -> np.ndarray:
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=dtype)


def _dictionary(column: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(code per row, the distinct values): null is a value of its own."""
    encoded = pc.dictionary_encode(column, null_encoding="encode")
    return _numpy(encoded.indices), encoded.dictionary


def _flags(codes: np.ndarray, n: int, rows: np.ndarray) -> np.ndarray:
    """Per code 0..n-1: whether any of its rows is in `rows` (a boolean row mask)."""
    out = np.zeros(n, bool)
    out[codes[rows]] = True
    return out


def _count(codes: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes, minlength=n).astype(np.int32)


def _ranks(values: pa.Array) -> np.ndarray:
    """The position of each value in ascending order (UTF-8 byte order, as Spark)."""
    order = _numpy(pc.sort_indices(values))
    ranks = np.empty(len(order), np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def _sorted_lists(owner: np.ndarray, n: int, codes: np.ndarray,
                  names: pa.Array) -> pa.ListArray:
    """Per owner 0..n-1 the list of names[codes] of its rows, ascending (each owner's
    codes are distinct)."""
    order = np.lexsort((_ranks(names)[codes], owner))
    offsets = np.r_[0, np.cumsum(np.bincount(owner, minlength=n))]
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                    take(names, codes[order]))


def _sole(lists: pa.ListArray) -> pa.Array:
    """Each list's element when it has exactly one, else null."""
    names = lists.type.value_type
    if not len(lists.values):
        return pa.nulls(len(lists), names)
    lengths = _numpy(pc.list_value_length(lists))
    first = np.minimum(_numpy(lists.offsets)[:-1], len(lists.values) - 1)
    values = take(lists.values, first)
    return pc.if_else(pa.array(lengths == 1), values, pa.scalar(None, names))


# -------------------------------------------------------------------------------- queues
class _Queues:
    """Per distinct queue of a group on either side: presence, claimant sets, moves."""

    def __init__(self, rows: pa.Table, group: np.ndarray) -> None:
        topic, broker, queue_id = (single_chunk(rows[c]) for c in ("topic", "broker_name",
                                                              "queue_id"))
        self.code, self.n = key_codes(group, topic, broker, queue_id)
        first = first_of(self.code, self.n)
        self.group = group[first]
        self.topic, self.broker, self.queue_id = (
            take(c, first) for c in (topic, broker, queue_id))
        side = _numpy(single_chunk(rows[SIDE]), np.int8)
        self.in_before = _flags(self.code, self.n, side == BEFORE)
        self.in_after = _flags(self.code, self.n, side == AFTER)
        self._claimants(single_chunk(rows["client_id"]), side)
        self._duplicates(single_chunk(rows[DUPLICATES]))
        self.moved = (self.in_before & self.in_after & self.has_before & self.has_after
                      & self.differ)
        # moved, shared on either side, and a claimant on both: consumed throughout
        shared = _numpy(pc.fill_null(single_chunk(rows[SHARED_CLAIM]), False), bool)
        kept = _flags(self.pair_queue, self.n, self.pair_before & self.pair_after)
        self.goes_on = self.moved & _flags(self.code, self.n, shared) & kept

    def _claimants(self, client: pa.Array, side: np.ndarray) -> None:
        claim = _numpy(client.is_valid(), bool)
        queue, side = self.code[claim], side[claim]
        client_code, self.names = _dictionary(client.filter(pa.array(claim)))
        pair, n_pairs = key_codes(queue, client_code)
        first = first_of(pair, n_pairs)
        self.pair_queue, self.pair_client = queue[first], client_code[first]
        self.pair_before = _flags(pair, n_pairs, side == BEFORE)
        self.pair_after = _flags(pair, n_pairs, side == AFTER)
        self.has_before = _flags(self.pair_queue, self.n, self.pair_before)
        self.has_after = _flags(self.pair_queue, self.n, self.pair_after)
        # the sets differ when a claimant is on one side only
        self.differ = _flags(self.pair_queue, self.n, ~(self.pair_before & self.pair_after))

    def _duplicates(self, estimate: pa.Array) -> None:
        known = _numpy(estimate.is_valid(), bool)
        values = _numpy(pc.fill_null(estimate, 0))
        top = np.full(self.n, np.iinfo(np.int64).min)
        np.maximum.at(top, self.code[known], values[known])
        self.dup_known = _flags(self.code, self.n, known)
        self.dup = np.where(self.dup_known, top, 0)

    def moves(self, n_groups: int) -> tuple[pa.ListArray, np.ndarray, np.ndarray]:
        """(moves per group as the table's list of structs, sum of the known duplicate
        estimates per group, how many moves they cover)."""
        moved = np.flatnonzero(self.moved)
        index = pa.array(moved, pa.int64())
        keys = pa.table({"g": self.group[moved], "t": self.topic.take(index),
                         "b": self.broker.take(index), "q": self.queue_id.take(index)})
        # struct order (Spark's array_sort): topic, broker_name (null first), queue_id
        order = moved[_numpy(pc.sort_indices(
            keys, [(k, "ascending", "at_start") for k in ("g", "t", "b", "q")]))]
        position = np.full(self.n, -1, np.int64)
        position[order] = np.arange(len(order))

        def claimants(side: np.ndarray) -> pa.ListArray:
            keep = side & (position[self.pair_queue] >= 0)
            return _sorted_lists(position[self.pair_queue[keep]], len(order),
                                 self.pair_client[keep], self.names)

        before, after = claimants(self.pair_before), claimants(self.pair_after)
        taken = pa.array(order, pa.int64())
        known = self.dup_known[order] & ~self.goes_on[order]
        structs = pa.StructArray.from_arrays(
            [self.topic.take(taken), self.broker.take(taken), self.queue_id.take(taken),
             _sole(before), _sole(after), before, after,
             nullable(self.dup[order], known, pa.int64())],
            names=[f.name for f in _MOVE_TYPE])
        group = self.group[order]
        offsets = np.r_[0, np.cumsum(np.bincount(group, minlength=n_groups))]
        lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), structs)
        dup_sum = np.zeros(n_groups, np.int64)
        np.add.at(dup_sum, group[known], self.dup[order][known])
        return lists, dup_sum, np.bincount(group[known], minlength=n_groups)


# ------------------------------------------------------------------------------- clients
class _Clients:
    """Per client of a group on either side: presence, and whether its topics or
    strategies differ between the sides."""

    def __init__(self, rows: pa.Table, group: np.ndarray) -> None:
        client = single_chunk(rows["client_id"])
        self.code, self.n = key_codes(group, client)
        first = first_of(self.code, self.n)
        self.group = group[first]
        self.client = take(client, first)
        side = _numpy(single_chunk(rows[SIDE]), np.int8)
        self.in_before = _flags(self.code, self.n, side == BEFORE)
        self.in_after = _flags(self.code, self.n, side == AFTER)
        both = self.in_before & self.in_after
        self.subscription = both & self._differs(single_chunk(rows[TOPICS]), side)
        self.strategy = both & self._differs(single_chunk(rows[STRATEGIES]), side)
        eager = _numpy(pc.fill_null(single_chunk(rows[EAGER]), False), bool)
        self.eager_before = _flags(self.code, self.n, eager & (side == BEFORE))

    def _differs(self, values: pa.Array, side: np.ndarray) -> np.ndarray:
        """Whether the first known value of a client's BEFORE rows and of its AFTER rows
        are both known and differ."""
        codes, _ = _dictionary(values)
        known = _numpy(values.is_valid(), bool)

        def first_known(on: int) -> np.ndarray:
            rows = np.flatnonzero(known & (side == on))
            out = np.full(self.n, -1, np.int64)
            out[self.code[rows[::-1]]] = codes[rows[::-1]]
            return out

        before, after = first_known(BEFORE), first_known(AFTER)
        return (before >= 0) & (after >= 0) & (before != after)

    def ids(self, n_groups: int, keep: np.ndarray) -> pa.ListArray:
        """Per group the sorted client ids where `keep`."""
        index = np.flatnonzero(keep)
        return _sorted_lists(self.group[index], n_groups, np.arange(len(index)),
                             take(self.client, index))


# ---------------------------------------------------------------------------------- pass
def churn_totals(queues: pa.Table, clients: pa.Table) -> pa.Table:
    """One CHURN_TOTALS row per (later snapshot, cluster, group) of the rows.

    `queues`: QUEUE_COLUMNS, the assignment rows of both sides; `clients`: CLIENT_COLUMNS,
    one row per member of a group on each side. A group with rows on one side only still
    gets a row (it vanished, or it is new)."""
    keys = {k: pa.concat_arrays([single_chunk(queues[k]), single_chunk(clients[k])])
            for k in GROUP_KEYS}
    group, n = key_codes(*keys.values())
    first = pa.array(first_of(group, n), pa.int64())
    q = _Queues(queues.select(QUEUE_COLUMNS), group[:queues.num_rows])
    c = _Clients(clients.select(CLIENT_COLUMNS), group[queues.num_rows:])
    moves, dup_sum, dup_moves = q.moves(n)
    joined, left = c.in_after & ~c.in_before, c.in_before & ~c.in_after

    def count(table: _Queues | _Clients, keep: np.ndarray) -> pa.Array:
        return pa.array(_count(table.group[keep], n), pa.int32())

    columns = {k: v.take(first) for k, v in keys.items()}
    columns |= {
        "clients_before": count(c, c.in_before), "clients_after": count(c, c.in_after),
        "clients_joined": c.ids(n, joined),
        "clients_left": c.ids(n, left),
        "queues_before": count(q, q.in_before), "queues_after": count(q, q.in_after),
        "queues_added": count(q, q.in_after & ~q.in_before),
        "queues_removed": count(q, q.in_before & ~q.in_after),
        "queues_moved": count(q, q.moved),
        "paused_queues": pa.array(_paused(q, c, n, joined, left), pa.int32()),
        "moves": moves,
        "estimated_duplicates": nullable(dup_sum, dup_moves > 0, pa.int64()),
        "duplicates_known_moves": pa.array(dup_moves, pa.int32()),
        "_subscription": pa.array(_flags(c.group, n, c.subscription)),
        "_strategy": pa.array(_flags(c.group, n, c.strategy)),
    }
    return pa.table(columns).cast(CHURN_TOTALS_ARROW_SCHEMA)


def _paused(q: _Queues, c: _Clients, n: int, joined: np.ndarray,
            left: np.ndarray) -> np.ndarray:
    """Per group the queues a rebalance between the sides stops. A moved queue pauses
    while it changes owner; under Kafka's eager protocol (a client of the earlier snapshot
    on range, roundrobin or sticky) a rebalance first revokes every partition of every
    member, so every queue claimed before that the group still has pauses, moved or not.
    A rebalance is what any of the churn's changes takes: a client joined or left, a queue
    added or removed, other topics or strategies, or a queue moved. A shared queue one of
    its claimants keeps (`_Queues.goes_on`) does not pause."""
    moved = _count(q.group[q.moved], n)
    claimed = _count(q.group[q.in_before & q.in_after & q.has_before], n)
    changed = (_flags(c.group, n, joined | left | c.subscription | c.strategy)
               | _flags(q.group, n, q.in_before ^ q.in_after) | (moved > 0))
    eager = _flags(c.group, n, c.eager_before)
    return np.where(eager & changed, claimed, _count(q.group[q.moved & ~q.goes_on], n))
