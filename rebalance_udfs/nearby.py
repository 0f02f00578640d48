"""`AllocateMachineRoomNearby` (strategies `MACHINE_ROOM_NEARBY-<inner>`), vectorized.

Upstream groups mqAll by broker room and cidAll by client room (both `TreeMap`s). The
caller first runs the inner strategy on its own room's queues with its own room's clients
(sorted order and duplicates kept), then, for every broker room that has no client at all,
on that room's queues with the whole cidAll. Rooms come from the `broker_room` and
`client_room` columns (upstream: a user-supplied `MachineRoomResolver`). A null or empty
room anywhere in mqAll or cidAll makes upstream throw `IllegalArgumentException`
(`StringUtils.isNoneEmpty(null)` is false too), so that call claims nothing: upstream's
`RebalanceImpl` then returns before it updates the client's queues, and the client goes
on pulling the queues it held, which no snapshot of the queues records.

Everything is flattened into *sub-allocations* (call, queue list, client list): a queue list
is one (unit, broker room), a client list one (group, client room) or the whole cidAll.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.hashring import build_rings, segment_claims, usable_virtual_nodes
from rebalance_udfs.key_codes import runs
from rebalance_udfs.machine_room import Share, share_in_lists
from rebalance_udfs.positional import EMPTY_CLAIMS, Claims, expand_blocks, rocketmq_cid_index
from rebalance_udfs.rocketmq import averagely_by_circle_share, averagely_share

INNER_SHARES: dict[str, Share | None] = {
    "AVG": averagely_share,
    "AVG_BY_CIRCLE": averagely_by_circle_share,
    "CONSISTENT_HASH": None,  # not positional: routed through hash rings
}
PREFIX = "MACHINE_ROOM_NEARBY-"


def _room_codes(rooms: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer code per room string; -1 for a null or empty room (upstream throws on it)."""
    values = pd.Series(rooms, dtype=object)
    codes, names = pd.factorize(values)
    empty = np.flatnonzero(pd.Series(names, dtype=object).astype(str).to_numpy() == "")
    codes = np.where(np.isin(codes, empty), -1, codes).astype(np.int64)
    return codes, max(len(names), 1)


def nearby_kernel(inner: str) -> Callable[[AllocationBatch, np.ndarray], Claims]:
    """Kernel for `MACHINE_ROOM_NEARBY-<inner>`; inner is a key of INNER_SHARES."""
    share = INNER_SHARES[inner]

    def kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
        return _nearby(batch, calls, share, hashed=share is None)

    kernel.__doc__ = f"{PREFIX}{inner}: see rebalance_udfs.nearby."
    return kernel


def _nearby(batch: AllocationBatch, calls: np.ndarray, share: Share | None,
            hashed: bool) -> Claims:
    index = rocketmq_cid_index(batch, calls)
    ok = index >= 0
    if hashed:
        ok &= usable_virtual_nodes(batch, calls)
    calls, index = calls[ok], index[ok]
    if len(calls) == 0:
        return EMPTY_CLAIMS
    units = batch.call_unit[calls]
    groups = batch.unit_group[units]

    # Rooms of the queues of the callers' units and of the slots of their groups.
    rel_units, call_u = np.unique(units, return_inverse=True)
    rel_groups, call_g = np.unique(groups, return_inverse=True)
    q_u, q_pos = expand_blocks(batch.unit_queue_start[rel_units],
                               batch.unit_queue_count[rel_units])
    s_g, s_pos = expand_blocks(batch.group_slot_start[rel_groups],
                               batch.group_slot_count[rel_groups])
    codes, n_rooms = _room_codes(np.concatenate([batch.queue_room[q_pos],
                                                 batch.slot_room[s_pos]]))
    q_room, s_room = codes[: len(q_pos)], codes[len(q_pos):]

    # A room missing anywhere in mqAll or cidAll: upstream throws for every caller.
    unit_bad = np.bincount(q_u[q_room < 0], minlength=len(rel_units)) > 0
    group_bad = np.bincount(s_g[s_room < 0], minlength=len(rel_groups)) > 0
    ok = ~unit_bad[call_u] & ~group_bad[call_g]
    calls, index, call_u, call_g = calls[ok], index[ok], call_u[ok], call_g[ok]
    groups = groups[ok]
    if len(calls) == 0:
        return EMPTY_CLAIMS
    keep_q, keep_s = ~unit_bad[q_u], ~group_bad[s_g]
    q_u, q_pos, q_room = q_u[keep_q], q_pos[keep_q], q_room[keep_q]
    s_g, s_pos, s_room = s_g[keep_s], s_pos[keep_s], s_room[keep_s]

    # Queue lists: (unit, broker room), queues in mqAll order.
    order = np.lexsort((q_pos, q_room, q_u))
    list_pos, lq_u, lq_room = q_pos[order], q_u[order], q_room[order]
    list_start, list_count = runs(lq_u, lq_room)
    list_unit, list_room = lq_u[list_start], lq_room[list_start]
    list_group = batch.unit_group[rel_units[list_unit]]
    list_group = np.searchsorted(rel_groups, list_group)

    # Client lists: (group, client room), slots in cidAll order, duplicates kept.
    order = np.lexsort((s_pos, s_room, s_g))
    cl_slots, cs_g, cs_room = s_pos[order], s_g[order], s_room[order]
    cl_start, cl_count = runs(cs_g, cs_room)
    cl_key = cs_g[cl_start] * n_rooms + cs_room[cl_start]
    seg_of = np.repeat(np.arange(len(cl_start), dtype=np.int64), cl_count)
    index_in_room = np.empty(len(cl_slots), np.int64)
    index_in_room[order] = np.arange(len(cl_slots), dtype=np.int64) - cl_start[seg_of]
    room_seg = np.empty(len(cl_slots), np.int64)
    room_seg[order] = seg_of

    # Part 1: the caller's room's queues among the caller's room's clients.
    first_slot = batch.group_slot_start[groups] + index
    at = np.searchsorted(s_pos, first_slot)  # s_pos is ascending
    caller_room, caller_seg = s_room[at], room_seg[at]
    list_key = list_unit * n_rooms + list_room
    wanted = call_u * n_rooms + caller_room
    hit = np.minimum(np.searchsorted(list_key, wanted), len(list_key) - 1)
    has_local = list_key[hit] == wanted
    p1 = np.flatnonzero(has_local)

    # Part 2: every broker room with no client in the group, among all of cidAll.
    orphan = np.flatnonzero(~np.isin(list_group * n_rooms + list_room, cl_key))
    orphan_count = np.bincount(list_unit[orphan], minlength=len(rel_units)).astype(np.int64)
    orphan_start = np.cumsum(orphan_count) - orphan_count
    p2, o = expand_blocks(orphan_start[call_u], orphan_count[call_u])

    sub_call = np.concatenate([p1, p2])  # rows into the filtered calls
    sub_list = np.concatenate([hit[p1], orphan[o]])
    if not hashed:
        c = np.concatenate([cl_count[caller_seg[p1]],
                            batch.group_slot_count[rel_groups[call_g[p2]]]])
        i = np.concatenate([index_in_room[at[p1]], index[p2]])
        rows, pos = share_in_lists(share, list_pos, list_start, list_count, sub_list, c, i)
        return calls[sub_call[rows]], pos

    # Hashed inner: one ring per (group, client room or the whole cidAll, virtual nodes).
    whole = -1
    vnodes = batch.call_virtual_nodes[calls]
    ring_table = pd.DataFrame({
        "g": np.concatenate([call_g[p1], call_g[p2]]),
        "room": np.concatenate([caller_room[p1], np.full(len(p2), whole, np.int64)]),
        "seg": np.concatenate([caller_seg[p1], np.full(len(p2), -1, np.int64)]),
        "v": vnodes[sub_call],
    })
    sub_ring = ring_table.groupby(["g", "room", "v"], sort=True).ngroup().to_numpy(np.int64)
    rings = ring_table.drop_duplicates(["g", "room", "v"]).sort_values(["g", "room", "v"])
    is_whole = rings["room"].to_numpy() == whole
    ring_g = rings["g"].to_numpy(np.int64)
    seg = rings["seg"].to_numpy(np.int64)
    # members from one source array: room-sorted slots, then every slot of the batch
    source = np.concatenate([cl_slots, np.arange(len(batch.slot_client), dtype=np.int64)])
    src_start = np.where(is_whole, len(cl_slots) + batch.group_slot_start[rel_groups[ring_g]],
                         cl_start[np.maximum(seg, 0)])
    src_count = np.where(is_whole, batch.group_slot_count[rel_groups[ring_g]],
                         cl_count[np.maximum(seg, 0)])
    member_ring, src = expand_blocks(src_start, src_count)
    slots = source[src]
    ring_set = build_rings(member_ring, batch.slot_client[slots], batch.slot_client_rank[slots],
                           rings["v"].to_numpy(np.int64))
    return segment_claims(batch, ring_set, calls[sub_call], sub_ring, sub_list, list_pos,
                          list_start, list_count)
