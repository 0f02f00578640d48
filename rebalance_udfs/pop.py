"""Broker-side allocation in POP mode (`QueryAssignmentProcessor.allocate4Pop`), vectorized.

In POP mode the broker, not the client, computes each client's queues, and several
clients may pop one queue by design (status SHARED, not CONTENDED):

* `popShareQueueNum <= 0` or `>= len(cidAll) - 1`: every client pops every queue;
* else, with `len(cidAll) <= len(mqAll)`: client i gets its own share under the group's
  strategy (AVG, or AVG_BY_CIRCLE) plus the shares of the next popShareQueueNum clients
  of the sorted cidAll, wrapping around (a ring);
* else (more clients than queues): client i gets queue `i % len(mqAll)`.

Only AVG and AVG_BY_CIRCLE are popped, and never a retry topic (%RETRY%<group>, which
the broker allocates as a PULL group's): `batch.with_calls` gives such calls the BROKER
mode, so they claim what their strategy computes (for another strategy the broker
answers nothing: BROKER_UNSUPPORTED_STRATEGY, the rows what the clients would compute).

MESSAGE mode (5.x gRPC clients: message-level balancing) has no queue ownership at all:
every client receives from every queue, which `every_queue` expresses.
"""

from __future__ import annotations

import numpy as np

from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.positional import EMPTY_CLAIMS, Claims, expand_blocks
from rebalance_udfs.rocketmq import averagely_by_circle_share, averagely_share


def every_queue(batch: AllocationBatch, calls: np.ndarray) -> Claims:
    """Each call claims every queue of its unit."""
    units = batch.call_unit[calls]
    rows, pos = expand_blocks(batch.unit_queue_start[units], batch.unit_queue_count[units])
    return calls[rows], pos


def _first_slot_index(batch: AllocationBatch) -> np.ndarray:
    """Per slot: cidAll.indexOf(the slot's client id) within its group (duplicated ids
    are contiguous, as slots are sorted by client id)."""
    n_slots = len(batch.slot_client_rank)
    slot_group = np.repeat(np.arange(len(batch.group_slot_count)), batch.group_slot_count)
    new_run = np.ones(n_slots, dtype=bool)
    new_run[1:] = ((batch.slot_client_rank[1:] != batch.slot_client_rank[:-1])
                   | (slot_group[1:] != slot_group[:-1]))
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n_slots), 0))
    return run_start - batch.group_slot_start[slot_group]


def pop_kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
    """The broker's POP assignment of each call (see the module docstring)."""
    if len(calls) == 0:
        return EMPTY_CLAIMS
    units = batch.call_unit[calls]
    n = batch.unit_queue_count[units]
    group = batch.unit_group[units]
    c = batch.group_slot_count[group]
    i = batch.call_slot_index[calls]
    k = (batch.call_pop_share[calls] if batch.call_pop_share is not None
         else np.zeros(len(calls), np.int64))
    start = batch.unit_queue_start[units]
    present = (i >= 0) & (n > 0)

    everything = present & ((k <= 0) | (k >= c - 1))
    ring = present & ~everything & (c <= n)
    single = present & ~everything & (c > n)

    out_calls, out_pos = [], []
    all_c, all_q = every_queue(batch, calls[everything])
    out_calls.append(all_c)
    out_pos.append(all_q)

    sel = np.flatnonzero(single)
    out_calls.append(calls[sel])
    out_pos.append(start[sel] + i[sel] % n[sel])

    sel = np.flatnonzero(ring)
    if len(sel):
        owner, j = expand_blocks(np.zeros(len(sel), np.int64), k[sel] + 1)
        row = sel[owner]
        slot = (i[row] + j) % c[row]
        index = _first_slot_index(batch)[batch.group_slot_start[group[row]] + slot]
        circle = batch.call_strategy[calls[row]] == "AVG_BY_CIRCLE"
        for use_circle, share in ((False, averagely_share), (True, averagely_by_circle_share)):
            part = np.flatnonzero(circle == use_circle)
            r, pos = share(n[row[part]], c[row[part]], index[part])
            out_calls.append(calls[row[part][r]])
            out_pos.append(start[row[part][r]] + pos)
    return (np.concatenate(out_calls).astype(np.int64),
            np.concatenate(out_pos).astype(np.int64))
