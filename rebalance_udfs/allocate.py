"""Allocate one bucket of many consumer groups: the pure function behind the pandas UDF.

`allocate_bucket(queues, members)` returns one row per (queue, claiming client) and one
row with a null client for every queue nobody claims, with its status:
OK (one clustering claimant), CONTENDED (two or more), UNCONSUMED (none), BROADCAST,
SHARED (two or more, all in POP or MESSAGE mode: shared by design, see `pop`).
Rows are grouped by queue, clustering claims before broadcast ones, so a queue's first
row carries its status (see `first_of_queue`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rebalance_udfs.batch import AllocationBatch, BatchLayout, batch_layout, with_calls
from rebalance_udfs.key_codes import row_of
from rebalance_udfs.pop import every_queue, pop_kernel
from rebalance_udfs.positional import expand_blocks
from rebalance_udfs.strategies import Kernel, kernel_for
from vocabulary.columns import (
    BROADCAST,
    CONTENDED,
    KAFKA_STRATEGIES,
    MESSAGE,
    OK,
    POP,
    SHARED,
    SHARED_MODES,
    UNCONSUMED,
    UNIT_KEYS,
)

MEMBER_COLUMNS = [
    "snapshot_id", "cluster", "consumer_group", "client_id", "client_addr", "topic",
    "strategy", "message_model", "client_room", "virtual_nodes", "rooms", "config_queues",
]
QUEUE_COLUMNS = [*UNIT_KEYS, "broker_name", "queue_id", "broker_room"]


class UnsupportedStrategy(ValueError):
    """A member runs a strategy with no kernel (input validation should have caught it)."""


def claim_all(batch: AllocationBatch, kernels: Mapping[str, Kernel] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """Run every call's own strategy; BROADCASTING calls claim every queue of their unit.
    `kernels`: strategies run by the given kernel rather than the registry's."""
    calls_out, queues_out = [], []
    broadcast = np.flatnonzero(batch.call_broadcast)
    if len(broadcast):
        units = batch.call_unit[broadcast]
        rows, pos = expand_blocks(batch.unit_queue_start[units], batch.unit_queue_count[units])
        calls_out.append(broadcast[rows])
        queues_out.append(pos)
    mode = batch.call_mode if batch.call_mode is not None else np.full(batch.n_calls, None)
    for shared_mode, kernel in ((POP, pop_kernel), (MESSAGE, every_queue)):
        calls = np.flatnonzero(~batch.call_broadcast & (mode == shared_mode))
        if len(calls):
            c, q = kernel(batch, calls)
            calls_out.append(c)
            queues_out.append(q)
    clustering = ~batch.call_broadcast & ~np.isin(mode, SHARED_MODES)
    for name in pd.unique(batch.call_strategy[clustering]):
        kernel = (kernels or {}).get(name) or kernel_for(name)
        if kernel is None:
            raise UnsupportedStrategy(f"no allocation kernel for strategy {name!r}")
        calls = np.flatnonzero(clustering & (batch.call_strategy == name))
        c, q = kernel(batch, calls)
        calls_out.append(c)
        queues_out.append(q)
    if not calls_out:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(calls_out).astype(np.int64), np.concatenate(queues_out).astype(np.int64)


def claims_with_status(
    batch: AllocationBatch, claim_call: np.ndarray, claim_queue: np.ndarray
) -> pd.DataFrame:
    """Claims deduplicated per (queue, client, mode) plus unclaimed queues, with status.

    Columns: queue (position), call (-1 for unclaimed), status.
    """
    n_queues = len(batch.queue_id)
    # A claim outside the caller's own unit would be a kernel bug; fail loudly.
    if len(claim_queue) and (
        (claim_queue < 0).any()
        or (claim_queue >= n_queues).any()
        or (batch.queue_unit[claim_queue] != batch.call_unit[claim_call]).any()
    ):
        raise AssertionError("allocation kernel claimed a queue outside the caller's topic")
    claims = pd.DataFrame(
        {
            "queue": claim_queue,
            "call": claim_call,
            "client": batch.call_client_rank[claim_call],
            "broadcast": batch.call_broadcast[claim_call],
        }
    ).drop_duplicates(["queue", "client", "broadcast"])
    queue = claims["queue"].to_numpy(np.int64)
    call = claims["call"].to_numpy(np.int64)
    broadcast = claims["broadcast"].to_numpy(bool)
    mode = (batch.call_mode[call] if batch.call_mode is not None
            else np.full(len(queue), None))
    by_design = np.isin(mode, SHARED_MODES)
    # a claim is pulled by every process of its client id: two sharing one id both take
    # the share its first slot in cidAll gives, so a queue one of them claims is contended
    pullers = np.where(by_design, 1, processes(batch)[call])
    clustering_count = np.bincount(queue[~broadcast], pullers[~broadcast], n_queues)
    # claims not shared by design: two of them, or one beside shared ones, is contention
    owned_count = np.bincount(queue[~broadcast & ~by_design],
                              pullers[~broadcast & ~by_design], n_queues)
    any_count = np.bincount(queue, minlength=n_queues)
    shared = (clustering_count[queue] > 1) & (owned_count[queue] == 0)
    status = np.where(
        broadcast, BROADCAST,
        np.where(shared, SHARED, np.where(clustering_count[queue] > 1, CONTENDED, OK)),
    ).astype(object)
    unclaimed = np.flatnonzero(any_count == 0)
    return pd.DataFrame(
        {
            "queue": np.concatenate([queue, unclaimed]),
            "call": np.concatenate([claims["call"].to_numpy(np.int64),
                                    np.full(len(unclaimed), -1, np.int64)]),
            "status": np.concatenate([status, np.full(len(unclaimed), UNCONSUMED, object)]),
        }
    )


def processes(batch: AllocationBatch) -> np.ndarray:
    """Per call, the processes that run it: the slots its client id has in its group's
    cidAll (one per distinct client_addr, as the broker lists a connection), 1 for a
    client the list lacks and for Kafka's assignors, whose group keys a member by id."""
    if batch.call_slots is None:
        return np.ones(batch.n_calls, np.int64)
    own = (batch.call_slots > 0) & ~np.isin(batch.call_strategy, KAFKA_STRATEGIES)
    return np.where(own, batch.call_slots, 1)


def first_of_queue(row: np.ndarray) -> np.ndarray:
    """True on the first of consecutive rows of the same queue (`row`: the queue's input
    row index). Reports count a queue's facts (lag, rate, status) on that row only, so
    they need no per-queue aggregation of the assignment rows."""
    first = np.ones(len(row), dtype=bool)
    first[1:] = row[1:] != row[:-1]
    return first


def decided_kernel(position: np.ndarray, client: np.ndarray) -> Kernel:
    """A kernel whose claims were decided elsewhere: the queue at batch position
    `position[i]` goes to `client[i]`'s call in that queue's unit, when the kernel is run
    for that call. The Kafka sticky chain decides a snapshot from the one before
    (`rebalance_udfs.sticky_chain`), outside the batch; its claims enter the batch this
    way, so a queue claimed by a sticky member and by a member on another strategy of the
    same group gets one status (CONTENDED) from `claims_with_status`, like any other two
    claimants. The claim takes its call's strategy: the chain names one per client, and
    a client may run `sticky` on one topic and `cooperative-sticky` on another."""
    def kernel(batch: AllocationBatch, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not len(position) or not len(calls):
            return np.empty(0, np.int64), np.empty(0, np.int64)
        at = row_of([batch.call_unit[calls], batch.call_client[calls]],
                    [batch.queue_unit[position], client])
        kept = at >= 0
        return calls[at[kept]], position[kept]
    return kernel


def allocate_bucket(queues: pd.DataFrame, members: pd.DataFrame,
                    layout: BatchLayout | None = None,
                    kernels: Mapping[str, Kernel] | None = None) -> pd.DataFrame:
    """Assignments of every (group, topic) in the bucket.

    `queues` holds the readable queues of every (snapshot, cluster, group, topic) the group
    subscribes (QUEUE_COLUMNS plus any payload columns, carried to the output unchanged);
    `members` the member rows of those groups (MEMBER_COLUMNS). `layout`: the bucket's
    `batch_layout(queues, members)` when already made (for the same rows, whatever the
    members run). `kernels`: strategies run by the given kernel (`decided_kernel`) rather
    than the registry's.
    Output: the queue columns, then client_id, strategy, status; sorted deterministically.
    """
    if queues.empty or members.empty:
        return pd.DataFrame(columns=[*queues.columns, "client_id", "strategy", "status"])
    if layout is None:
        layout = batch_layout(queues, members)
    batch, ordered = with_calls(layout, members), layout.queues
    rows = claims_with_status(batch, *claim_all(batch, kernels))
    # index -1 (unclaimed) picks the padding entry appended at the end
    call = rows["call"].to_numpy(np.int64)
    client = np.append(batch.call_client, None)[call]
    strategy = np.append(batch.call_strategy, None)[call]
    rank = np.append(batch.call_client_rank, -1)[call]
    status = rows["status"].to_numpy(object)
    queue = rows["queue"].to_numpy(np.int64)
    order = np.lexsort((rank, status == BROADCAST, queue))
    out = ordered.iloc[queue[order]].reset_index(drop=True)
    out["client_id"] = client[order]
    out["strategy"] = strategy[order]
    out["status"] = status[order]
    return out
