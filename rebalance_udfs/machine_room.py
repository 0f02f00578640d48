"""`AllocateMessageQueueByMachineRoom` (strategy `MACHINE_ROOM`), vectorized.

The strategy keeps only queues whose broker name is `room@broker` with `room` in the
client's configured rooms, and splits those over *all* of cidAll, whatever room each client
is in. Each call may carry its own `rooms` list, so the filtered queue list is built per
(unit, rooms value), once for all calls that share it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.positional import (
    EMPTY_CLAIMS,
    Claims,
    expand_blocks,
    rocketmq_cid_count,
    rocketmq_cid_index,
)
from rebalance_udfs.rocketmq import machine_room_share

Share = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def parse_rooms(text: str | None) -> frozenset[str] | None:
    """The `rooms` param as a set: comma-separated, blanks around names and empty items dropped.

    None (never configured) stays None: upstream then throws as soon as it meets a
    `room@broker` queue, so such a call claims nothing.
    """
    if text is None:
        return None
    return frozenset(part.strip() for part in str(text).split(",") if part.strip())


def broker_name_rooms(brokers: np.ndarray) -> np.ndarray:
    """Room of each broker name as `brokerName.split("@")` sees it, or None.

    Java's split drops trailing empty strings, so `a@b@@` has 2 parts (room `a`) and `a@`
    has 1; a leading `@` gives an empty room. Only names with exactly 2 parts have a room.
    Parsed once per distinct name.
    """
    codes, names = pd.factorize(pd.Series(brokers, dtype=object))
    stripped = pd.Series(names, dtype=object).str.rstrip("@")
    two_parts = (stripped.str.count("@") == 1).to_numpy(bool)
    rooms = stripped.str.split("@", n=1).str[0].to_numpy(object)
    per_name = np.where(two_parts, rooms, None)
    return per_name[codes] if len(codes) else np.empty(0, object)


def share_in_lists(
    share: Share,
    list_pos: np.ndarray,
    list_start: np.ndarray,
    list_count: np.ndarray,
    sub_list: np.ndarray,
    c: np.ndarray,
    i: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Run a positional share over sub-lists of queues instead of whole units.

    Sub-allocation k runs `share(n, c[k], i[k])` on the list `sub_list[k]`, whose queues are
    `list_pos[list_start[l] : list_start[l] + list_count[l]]` (global queue positions, in
    mqAll order). Returns (sub-allocation row, global queue position).
    """
    rows, local = share(list_count[sub_list], c, i)
    return rows, list_pos[list_start[sub_list[rows]] + local]


def machine_room_kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
    """MACHINE_ROOM: claims of every call, see the module docstring."""
    rooms_param = batch.call_rooms[calls]
    index = rocketmq_cid_index(batch, calls)
    usable = pd.notna(rooms_param) & (index >= 0)
    calls, rooms_param, index = calls[usable], rooms_param[usable], index[usable]
    if len(calls) == 0:
        return EMPTY_CLAIMS
    units = batch.call_unit[calls]

    # Distinct rooms values and the (value, room name) pairs they allow.
    param_code, param_values = pd.factorize(pd.Series(rooms_param, dtype=object))
    allowed = [(k, room) for k, value in enumerate(param_values)
               for room in sorted(parse_rooms(value) or ())]

    # One filtered queue list per (unit, rooms value).
    n_params = len(param_values)
    pair_key, call_pair = np.unique(units * n_params + param_code, return_inverse=True)
    pair_unit, pair_param = pair_key // n_params, pair_key % n_params
    prow, ppos = expand_blocks(batch.unit_queue_start[pair_unit],
                               batch.unit_queue_count[pair_unit])
    queue_rooms = broker_name_rooms(batch.queue_broker[ppos])
    has_room = pd.notna(queue_rooms)
    room_code, room_names = pd.factorize(
        pd.Series(np.concatenate([queue_rooms[has_room],
                                  np.array([r for _, r in allowed], dtype=object)]),
                  dtype=object)
    )
    n_rooms = max(len(room_names), 1)
    queue_room_code = np.full(len(ppos), -1, np.int64)
    queue_room_code[has_room] = room_code[: int(has_room.sum())]
    allowed_keys = (np.array([k for k, _ in allowed], dtype=np.int64) * n_rooms
                    + room_code[int(has_room.sum()):])
    keep = has_room & np.isin(pair_param[prow] * n_rooms + queue_room_code, allowed_keys)
    list_pos = ppos[keep]
    list_count = np.bincount(prow[keep], minlength=len(pair_key)).astype(np.int64)
    list_start = np.cumsum(list_count) - list_count

    rows, pos = share_in_lists(machine_room_share, list_pos, list_start, list_count, call_pair,
                               rocketmq_cid_count(batch, calls), index)
    return calls[rows], pos
