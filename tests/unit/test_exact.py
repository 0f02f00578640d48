"""Exact decimal and integer reductions of the per-bucket report kernel
(`rebalance_udfs.exact`) against Python's decimal arithmetic."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalance_udfs.exact import (
    MEAN_TYPE,
    RATE_TYPE,
    Groups,
    decimal_array,
    decimal_units,
    mean_half_up,
)

# decimal(38, 9) unscaled values: most fit an int64, some do not
UNITS = st.one_of(st.integers(-(2**62), 2**62), st.integers(-(10**37), 10**37))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), UNITS), max_size=30))
def test_decimal_units_round_trip(values) -> None:
    with localcontext(prec=100):
        arr = pa.array([None if v is None else Decimal(v).scaleb(-9) for v in values],
                       RATE_TYPE)
    units, known = decimal_units(arr)
    assert known.tolist() == [v is not None for v in values]
    assert [int(u) for u, k in zip(units, known, strict=True) if k] == \
        [v for v in values if v is not None]
    assert decimal_array(units, known).equals(arr)


def test_decimal_units_of_a_sliced_chunked_column() -> None:
    arr = pa.array([Decimal("1.5"), None, Decimal("-0.000000001"), Decimal("2")], RATE_TYPE)
    units, known = decimal_units(pa.chunked_array([arr.slice(1, 3)]))
    assert units.tolist() == [0, -1, 2_000_000_000]
    assert known.tolist() == [False, True, True]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(UNITS, st.integers(1, 10_000)), min_size=1, max_size=20))
def test_mean_is_spark_half_up_at_scale_13(pairs) -> None:
    for dtype in (np.int64, object):
        if dtype is np.int64 and any(abs(t) >= 2**62 for t, _ in pairs):
            continue
        totals = np.array([t for t, _ in pairs], dtype=dtype)
        counts = np.array([c for _, c in pairs], dtype=np.int64)
        got = mean_half_up(totals, counts)
        for (t, c), g in zip(pairs, got, strict=True):
            with localcontext(prec=100):
                want = (Decimal(t).scaleb(-9) / Decimal(c)).quantize(Decimal("1e-13"),
                                                                     rounding=ROUND_HALF_UP)
                assert Decimal(int(g)).scaleb(-13) == want, (t, c)
    mean = decimal_array(mean_half_up(np.array([1]), np.array([3])), np.array([True]),
                         MEAN_TYPE)
    assert mean.to_pylist() == [Decimal("0.0000000003333")]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), UNITS, st.booleans()), min_size=1,
                max_size=40))
def test_group_reductions_are_exact(rows) -> None:
    present = sorted({g for g, _, _ in rows})
    code = {g: i for i, g in enumerate(present)}
    codes = np.array([code[g] for g, _, _ in rows], dtype=np.int64)
    big = any(abs(v) >= 2**62 for _, v, _ in rows)
    values = np.array([v for _, v, _ in rows], dtype=object if big else np.int64)
    mask = np.array([m for _, _, m in rows])
    groups = Groups(codes, len(present))
    sums, mins, counts = groups.sum(values, mask), groups.min(values, mask), groups.count(mask)
    for g, i in code.items():
        chosen = [v for h, v, m in rows if h == g and m]
        assert int(sums[i]) == sum(chosen)
        assert counts[i] == len(chosen)
        if chosen:
            assert int(mins[i]) == min(chosen)
