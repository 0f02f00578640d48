"""Helpers for strategies whose share depends only on (n queues, c clients, index i)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rebalance_udfs.batch import AllocationBatch

Claims = tuple[np.ndarray, np.ndarray]
"""(call index, global queue position) pairs, both int64 arrays of equal length."""

EMPTY_CLAIMS: Claims = (np.empty(0, np.int64), np.empty(0, np.int64))


def expand_blocks(start: np.ndarray, take: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row k of the result is (owner j, start[j] + offset) for every j and offset < take[j].

    The vectorized form of `for j: for o in range(take[j]): yield j, start[j] + o`.
    """
    take = np.clip(take, 0, None).astype(np.int64)
    owner = np.repeat(np.arange(len(take), dtype=np.int64), take)
    first_row = np.cumsum(take) - take
    offset = np.arange(len(owner), dtype=np.int64) - first_row[owner]
    return owner, start[owner] + offset


def expand_strided(
    start: np.ndarray, stride: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Like expand_blocks, but positions step by `stride[j]`: start, start+stride, ..."""
    count = np.clip(count, 0, None).astype(np.int64)
    owner = np.repeat(np.arange(len(count), dtype=np.int64), count)
    first_row = np.cumsum(count) - count
    k = np.arange(len(owner), dtype=np.int64) - first_row[owner]
    return owner, start[owner] + k * stride[owner]


def positional_kernel(
    share: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    client_count: Callable[[AllocationBatch, np.ndarray], np.ndarray],
    client_index: Callable[[AllocationBatch, np.ndarray], np.ndarray],
) -> Callable[[AllocationBatch, np.ndarray], Claims]:
    """Build a batch kernel from `share(n, c, i) -> (row, position in mqAll)`.

    `client_count` / `client_index` pick the client list the strategy sees (RocketMQ's
    cidAll or Kafka's subscribing members).
    """

    def kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
        units = batch.call_unit[calls]
        n = batch.unit_queue_count[units]
        c = client_count(batch, calls)
        i = client_index(batch, calls)
        rows, pos = share(n, c, i)
        return calls[rows], batch.unit_queue_start[units[rows]] + pos

    return kernel


def rocketmq_cid_count(batch: AllocationBatch, calls: np.ndarray) -> np.ndarray:
    """len(cidAll): every client slot of the caller's group."""
    return batch.group_slot_count[batch.unit_group[batch.call_unit[calls]]]


def rocketmq_cid_index(batch: AllocationBatch, calls: np.ndarray) -> np.ndarray:
    """cidAll.indexOf(currentCID); an empty client id is refused by check() (-1)."""
    index = batch.call_slot_index[calls].copy()
    index[batch.call_client[calls] == ""] = -1
    return index


def kafka_member_count(batch: AllocationBatch, calls: np.ndarray) -> np.ndarray:
    """Distinct members subscribing the topic."""
    return batch.unit_subscriber_count[batch.call_unit[calls]]


def kafka_member_index(batch: AllocationBatch, calls: np.ndarray) -> np.ndarray:
    """Index of the member among the topic's sorted subscribers."""
    return batch.call_subscriber_index[calls]
