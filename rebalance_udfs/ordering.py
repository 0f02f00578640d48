"""Java `String.compareTo` order for whole arrays of strings.

RocketMQ and Kafka sort topics, broker names and client ids with `String.compareTo`, which
compares UTF-16 code units. Python (and numpy) compare code points. The two orders differ
only when a character above U+FFFF (a surrogate pair in UTF-16) meets one in
U+E000..U+FFFF, so the fast code-point sort is exact unless such a character is present;
then we sort by the UTF-16BE encoding, whose byte order is the code-unit order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def java_key(value: str) -> bytes:
    """Sort key of one string in Java `String.compareTo` order."""
    return value.encode("utf-16-be", "surrogatepass")


def _has_astral(values: np.ndarray) -> bool:
    return bool(pd.Series(values, dtype=object).str.contains("[\U00010000-\U0010ffff]").any())


def java_sorted_unique(values: np.ndarray) -> np.ndarray:
    """Distinct strings of `values` in Java order (object array)."""
    uniques = pd.unique(pd.Series(values, dtype=object))
    if len(uniques) == 0:
        return np.empty(0, dtype=object)
    if _has_astral(uniques):
        return np.array(sorted(uniques, key=java_key), dtype=object)
    return np.sort(uniques.astype(str)).astype(object)


def java_rank(values: np.ndarray) -> np.ndarray:
    """Dense rank (0-based, int64) of every string in Java order; equal strings share a rank.

    Vectorized: one sort over the distinct values, then a hash lookup per row.
    """
    values = np.asarray(values, dtype=object)
    order = java_sorted_unique(values)
    codes = pd.Index(order).get_indexer(values)
    return codes.astype(np.int64)
