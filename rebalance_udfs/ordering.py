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
    """Whether any string has a character above U+FFFF (ASCII text, the usual case, is
    answered without looking at a character)."""
    text = "".join(values)
    return not text.isascii() and max(text) > "\uffff"


def _java_order(uniques: np.ndarray) -> np.ndarray:
    """The positions of distinct strings in Java order."""
    if _has_astral(uniques):
        keys = [java_key(value) for value in uniques]
        return np.array(sorted(range(len(keys)), key=keys.__getitem__), np.int64)
    return np.argsort(uniques.astype(str), kind="stable")


def java_sorted_unique(values: np.ndarray) -> np.ndarray:
    """Distinct strings of `values` in Java order (object array; nulls left out)."""
    uniques = np.asarray(pd.factorize(np.asarray(values, dtype=object))[1], dtype=object)
    return uniques[_java_order(uniques)]


def java_rank(values: np.ndarray) -> np.ndarray:
    """Dense rank (0-based, int64) of every string in Java order; equal strings share a
    rank, a null gets -1.

    Vectorized: one hash pass over the rows (`pd.factorize`), one sort over the distinct
    values (a second hash lookup per row, as a sorted-uniques index took, was half the
    cost). pandas' string table ends a string at a NUL and cannot tell lone surrogates
    apart, so `c` and `c\x00` share a rank: the strings must be free of both, which the
    inputs are (validation rejects a NUL; Arrow's UTF-8 cannot hold a lone surrogate)."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    uniques = np.asarray(uniques, dtype=object)
    rank = np.full(len(uniques) + 1, -1, np.int64)  # the last: a null's (code -1)
    rank[_java_order(uniques)] = np.arange(len(uniques))
    return rank[codes]
