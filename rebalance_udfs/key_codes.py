"""Dense integer codes for the distinct combinations of key columns.

How the per-bucket kernels group rows by several keys (snapshot, cluster, group, topic,
client, ...) without pandas' groupby or a join over several columns: each column is
numbered by its distinct values, the numbers are combined in mixed radix into one int64
per row, and one hash pass numbers the combined keys. Combining first and hashing once is
cheaper than hashing after every column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

Column = pa.Array | pa.ChunkedArray | np.ndarray
_SPAN_LIMIT = 1 << 62  # combined keys stay below this, so `key * size + code` fits int64


def key_codes(*columns: Column) -> tuple[np.ndarray, int]:
    """(code per row, n): codes 0..n-1 numbered in the order the combinations first
    appear, equal exactly where two rows are equal in every column. Null (None, NaN) is
    a value of its own. Arrow strings are compared by their bytes; numpy object strings
    by pandas' hashing."""
    rows = len(columns[0])
    key = np.zeros(rows, np.int64)
    span = 1
    for column in columns:
        codes, size = column_codes(column)
        if span > _SPAN_LIMIT // max(size, 1):
            key, span = _dense(key)
        key = key * size + codes
        span *= max(size, 1)
    return _dense(key)


def runs(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length of each run of equal key tuples in already sorted key arrays
    (the groups of sorted rows, without a group-by)."""
    n = len(keys[0])
    brk = np.zeros(n, dtype=bool)
    brk[:1] = True
    for k in keys:
        brk[1:] |= k[1:] != k[:-1]
    start = np.flatnonzero(brk).astype(np.int64)
    return start, np.diff(np.append(start, n)).astype(np.int64)


def row_of(table: list[np.ndarray], query: list[np.ndarray]) -> np.ndarray:
    """For every row of the `query` columns, the first row of the `table` columns equal
    to it in every column, or -1: a join on several keys as one hash pass over both."""
    rows = len(table[0])
    code, size = key_codes(*(np.concatenate([t, q]) for t, q in zip(table, query,
                                                                   strict=True)))
    present, first = np.unique(code[:rows], return_index=True)
    at = np.full(size, -1, np.int64)
    at[present] = first
    return at[code[rows:]]


def numbered_in_key_order(left: pd.DataFrame, right: pd.DataFrame,
                          keys: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(number of each `left` row, number of each `right` row or -1, first `left` row of
    each number): the distinct `keys` combinations of `left` numbered 0, 1, ... in the
    order of the keys themselves (nulls last), as pandas' sorted group-by numbers them,
    both frames' keys coded in one pass."""
    rows = len(left)
    code, size = key_codes(*(np.concatenate([left[k].to_numpy(object),
                                             right[k].to_numpy(object)]) for k in keys))
    present, first = np.unique(code[:rows], return_index=True)
    in_order = (left[keys].iloc[first].reset_index(drop=True)
                .sort_values(keys, na_position="last", kind="stable").index.to_numpy())
    number = np.full(size, -1, np.int64)
    number[present[in_order]] = np.arange(len(present))
    return number[code[:rows]], number[code[rows:]], first[in_order]


def sorted_lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray,
                  default: object) -> np.ndarray:
    """`values[i]` where `keys[i]` (ascending, distinct) equals each wanted key, else
    `default`: a join on one int64 key by binary search."""
    if len(keys) == 0:
        return np.full(len(wanted), default, dtype=values.dtype)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    out = values[at].copy()
    out[keys[at] != wanted] = default
    return out


def column_codes(column: Column) -> tuple[np.ndarray, int]:
    """(code per row, size): int64 codes in 0..size-1, equal exactly where the values are
    (null is a value of its own), with size at most the number of rows. Non-negative
    integers below the row count are their own codes."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if isinstance(column, pa.Array):
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        indices = encoded.indices.to_numpy(zero_copy_only=False)
        return indices.astype(np.int64, copy=False), len(encoded.dictionary)
    if column.dtype.kind in "iub" and len(column):
        low, high = int(column.min()), int(column.max())
        if low >= 0 and high < len(column):
            return column.astype(np.int64, copy=False), high + 1
    # nulls (None, NaN) as the sentinel, then one code after the others: the same classes
    # as use_na_sentinel=False, which pays a pass of its own to find the nulls first
    codes, uniques = pd.factorize(column)
    codes = codes.astype(np.int64, copy=False)
    null = codes < 0
    if null.any():
        codes[null] = len(uniques)
        return codes, len(uniques) + 1
    return codes, len(uniques)


def _dense(key: np.ndarray) -> tuple[np.ndarray, int]:
    """`key` renumbered 0..n-1 in order of first appearance."""
    codes, uniques = pd.factorize(key)
    return codes.astype(np.int64, copy=False), len(uniques)
