"""The strategy registry: every strategy name of the contract and the kernel that runs it.

A kernel takes (batch, call indices running that strategy) and returns claims as
(call index, global queue position) arrays. Names are exactly as the clients log them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rebalance_udfs import kafka, rocketmq
from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.hashring import consistent_hash_kernel
from rebalance_udfs.machine_room import machine_room_kernel
from rebalance_udfs.nearby import INNER_SHARES, PREFIX, nearby_kernel
from rebalance_udfs.positional import (
    Claims,
    kafka_member_count,
    kafka_member_index,
    positional_kernel,
    rocketmq_cid_count,
    rocketmq_cid_index,
)
from vocabulary.columns import STICKY_STRATEGIES

Kernel = Callable[[AllocationBatch, np.ndarray], Claims]

KERNELS: dict[str, Kernel] = {
    "AVG": positional_kernel(rocketmq.averagely_share, rocketmq_cid_count, rocketmq_cid_index),
    "AVG_BY_CIRCLE": positional_kernel(
        rocketmq.averagely_by_circle_share, rocketmq_cid_count, rocketmq_cid_index
    ),
    "CONSISTENT_HASH": consistent_hash_kernel,
    "CONFIG": rocketmq.config_kernel,
    "MACHINE_ROOM": machine_room_kernel,
    **{f"{PREFIX}{inner}": nearby_kernel(inner) for inner in INNER_SHARES},
    "range": positional_kernel(kafka.range_share, kafka_member_count, kafka_member_index),
    "roundrobin": kafka.roundrobin_kernel,
}


def supported_strategies() -> list[str]:
    """Strategy names this build computes (the input validator accepts exactly these)."""
    # Kafka's sticky assignors depend on the previous assignment: they run snapshot after
    # snapshot per group (rebalance_udfs/sticky_chain.py), not in the batch kernels
    return sorted([*KERNELS, *STICKY_STRATEGIES])


def kernel_for(name: str) -> Kernel | None:
    return KERNELS.get(name)
