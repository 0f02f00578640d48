"""RocketMQ client-side allocation strategies (`AllocateMessageQueueStrategy`), vectorized.

Every share function maps arrays (n = |mqAll|, c = |cidAll|, i = indexOf(currentCID)), one
entry per call, to (call row, position in the sorted mqAll) pairs.
"""

from __future__ import annotations

import numpy as np

from rebalance_udfs.positional import expand_blocks


def averagely_share(n: np.ndarray, c: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`AllocateMessageQueueAveragely`: contiguous blocks, the first n % c clients one larger.

    A caller absent from cidAll (i < 0), an empty mqAll or cidAll claims nothing.
    """
    n = n.astype(np.int64)
    c = np.maximum(c.astype(np.int64), 1)
    i = i.astype(np.int64)
    mod = n % c
    bigger = (mod > 0) & (i < mod)
    size = np.where(n <= c, 1, np.where(bigger, n // c + 1, n // c))
    start = np.where(bigger, i * size, i * size + mod)
    take = np.minimum(size, n - start)
    take[(i < 0) | (n <= 0)] = 0
    return expand_blocks(start, take)
