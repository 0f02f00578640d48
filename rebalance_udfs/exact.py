"""Exact integer and decimal reductions over rows grouped by integer codes, for the
per-bucket report kernels (`rebalance_udfs.group_figures`, `rebalance_udfs.churn`).

Input rates are summed as Spark's decimal(38,9) (`rebalance_udfs.spark.rates.EXACT_RATE`): here they
travel as integer units of 1e-9, read straight from the Arrow decimal buffer and summed as
integers, so a sum is the same in any order and equals Spark's. Values or sums that do not
fit an int64 switch to Python integers (exact, slower; rates that large do not occur in
practice, but nothing may be rounded silently).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

RATE_SCALE = 9
RATE_TYPE = pa.decimal128(38, RATE_SCALE)
_INT64_SAFE = 2**62
_BIG = 1 << 200  # beyond any decimal(38, 9) value: the neutral start of a min over units


def single_chunk(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous Arrow array of a column, whatever it came as (a table's column is
    chunked, a computed one often not)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def column_values(table: pa.Table, name: str) -> np.ndarray:
    """Column `name` of `table` as one numpy array (object for strings, nulls as None)."""
    return table.column(name).to_numpy(zero_copy_only=False)


def decimal_units(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(units, known) of a decimal128 column: its unscaled integers (0 where null) as int64,
    or as Python ints when some do not fit, and which rows are not null."""
    arr = single_chunk(column)
    n = len(arr)
    known = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if n == 0:
        return np.zeros(0, np.int64), known
    words = np.frombuffer(arr.buffers()[1], dtype="<i8")[2 * arr.offset: 2 * (arr.offset + n)]
    words = words.reshape(n, 2)
    low, high = words[:, 0].copy(), words[:, 1]
    low[~known] = 0
    wide = known & (high != (low >> 63))
    if not wide.any():
        return low, known
    units = low.astype(object)
    for i in np.flatnonzero(wide):  # only the rows beyond int64, normally none
        units[i] = (int(high[i]) << 64) + (int(low[i]) & 0xFFFF_FFFF_FFFF_FFFF)
    return units, known


def decimal_array(units: np.ndarray, known: np.ndarray,
                  type_: pa.Decimal128Type = RATE_TYPE) -> pa.Array:
    """A decimal Arrow array (decimal(38, 9) unless told) of integer `units` of its scale
    (null where not `known`)."""
    n = len(units)
    known = np.asarray(known, dtype=bool)
    if units.dtype == object:
        values = [int(u) if k else 0 for u, k in zip(units, known, strict=True)]
        low = np.array([v & 0xFFFF_FFFF_FFFF_FFFF for v in values], dtype=np.uint64)
        high = np.array([v >> 64 for v in values], dtype=np.int64)
        words = np.empty((n, 2), dtype=np.int64)
        words[:, 0] = low.view(np.int64)
        words[:, 1] = high
    else:
        low = np.where(known, units.astype(np.int64), 0)
        words = np.empty((n, 2), dtype=np.int64)
        words[:, 0] = low
        words[:, 1] = low >> 63
    validity = pa.py_buffer(np.packbits(known, bitorder="little").tobytes())
    return pa.Array.from_buffers(type_, n, [validity, pa.py_buffer(words.tobytes())])


def first_of(codes: np.ndarray, n: int) -> np.ndarray:
    """The first row of each code 0..n-1."""
    first = np.full(n, -1, np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    return first


def take(array: pa.Array | pa.Table, index: np.ndarray) -> pa.Array | pa.Table:
    """`array`'s rows at the positions `index` (numpy)."""
    return array.take(pa.array(index, pa.int64()))


def nullable(values: np.ndarray, known: np.ndarray, type_: pa.DataType) -> pa.Array:
    """`values` where `known`, else null (what is not known may hold a reduction's
    neutral value, out of the type's range)."""
    known = np.asarray(known, dtype=bool)
    return pa.array(np.where(known, values, 0), type_, mask=~known)


def widened(values: np.ndarray, rows: int) -> np.ndarray:
    """`values` as Python ints when a sum of `rows` of them could overflow int64."""
    if values.dtype == object or not len(values):
        return values
    if int(np.abs(values).max()) * max(rows, 1) < _INT64_SAFE:
        return values
    return values.astype(object)


class Groups:
    """Rows grouped by `codes` (0 .. n-1, every code present): sorted once, then reduced."""

    def __init__(self, codes: np.ndarray, n: int) -> None:
        self.n = n
        self.rows = len(codes)
        self.order = np.argsort(codes, kind="stable")
        ordered = codes[self.order]
        self.starts = (np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
                       if self.rows else np.zeros(0, np.int64))
        if len(self.starts) != n:
            raise ValueError(f"Groups: {len(self.starts)} of {n} codes have rows")

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        if not self.n:
            return values[:0]
        return ufunc.reduceat(values[self.order], self.starts)

    def count(self, mask: np.ndarray) -> np.ndarray:
        return self._reduce(np.add, np.asarray(mask, dtype=np.int64))

    def sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Exact sum of `values` where `mask` (int64, or Python ints when it could
        overflow)."""
        values = widened(values, self.rows)
        if mask is not None:
            values = np.where(mask, values, 0)
        return self._reduce(np.add, values)

    def min(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Min of `values` where `mask` (meaningless where `count(mask)` is 0)."""
        return self._reduce(np.minimum, np.where(mask, values, _neutral(values, +1)))

    def max(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self._reduce(np.maximum, np.where(mask, values, _neutral(values, -1)))

    def any(self, mask: np.ndarray) -> np.ndarray:
        return self.count(mask) > 0

    def bit_or(self, bits: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The union of the int64 bit masks `bits` where `mask`."""
        return self._reduce(np.bitwise_or, np.where(mask, bits, np.int64(0)))


def _neutral(values: np.ndarray, sign: int):
    if values.dtype == object:
        return sign * _BIG
    info = np.iinfo(values.dtype)
    return info.max if sign > 0 else info.min


MEAN_DIGITS = 4  # a decimal mean has 4 more decimals than its sum (Spark: scale s + 4)
MEAN_TYPE = pa.decimal128(38, RATE_SCALE + MEAN_DIGITS)


def mean_half_up(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Spark's mean of a decimal(38, 9) sum, in units of its scale 13: total / count,
    rounded half away from zero to 4 more decimals than `total`'s units (count > 0)."""
    count = np.maximum(count, 1)
    scale = 10**MEAN_DIGITS
    if total.dtype != object:
        magnitude = np.abs(total)
        whole, rest = np.divmod(magnitude, count)
        if not len(whole) or int(whole.max()) < _INT64_SAFE // scale:
            frac, left = np.divmod(rest * scale, count)  # rest < count: no overflow
            mean = whole * scale + frac + (2 * left >= count)
            return np.where(total < 0, -mean, mean)
    out = np.empty(len(total), dtype=object)
    for i, (t, c) in enumerate(zip(total, count, strict=True)):
        t, c = int(t), int(c)
        q, r = divmod(abs(t) * scale, c)
        out[i] = (q + int(2 * r >= c)) * (1 if t >= 0 else -1)
    return out
