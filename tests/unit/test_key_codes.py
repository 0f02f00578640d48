"""`rebalance_udfs.key_codes`: one dense code per distinct combination of key columns,
checked against a row-by-row Python reference (first-appearance numbering of tuples)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from rebalance_udfs.key_codes import (
    column_codes,
    key_codes,
    numbered_in_key_order,
    row_of,
    sorted_lookup,
)


def _reference(*columns: list) -> tuple[list[int], int]:
    """First-appearance codes of the rows' tuples; None and NaN are values of their own."""
    def norm(v: object) -> object:
        return ("NaN",) if isinstance(v, float) and math.isnan(v) else v

    seen: dict[tuple, int] = {}
    codes = [seen.setdefault(tuple(norm(c[i]) for c in columns), len(seen))
             for i in range(len(columns[0]))]
    return codes, len(seen)


def _check(*columns: pa.Array | pa.ChunkedArray | np.ndarray) -> None:
    as_lists = [c.to_pylist() if isinstance(c, pa.Array | pa.ChunkedArray) else list(c)
                for c in columns]
    codes, n = key_codes(*columns)
    assert codes.dtype == np.int64
    assert (codes.tolist(), n) == _reference(*as_lists)


def test_null_is_a_value_of_its_own_in_arrow_and_numpy_columns() -> None:
    a = ["x", "x", None, "x", "", None]
    b = [None, "", "", None, None, ""]
    _check(pa.array(a), pa.array(b))
    _check(np.array(a, dtype=object), np.array(b, dtype=object))
    codes, n = key_codes(pa.array(a), pa.array(b))
    assert n == 4 and codes[0] == codes[3] and codes[2] == codes[5] and len({*codes[:3]}) == 3


@pytest.mark.parametrize("seed", range(4))
def test_mixed_columns_match_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = 2_000
    words = np.array(["a", "b", "", "é", "long-key-" * 3, None], dtype=object)
    text = words[rng.integers(0, len(words), rows)]
    chunked = pa.chunked_array([pa.array(text[:997], pa.string()),
                                pa.array(text[997:], pa.string())])
    dense = rng.integers(0, 7, rows)                          # codes already
    sparse = rng.choice([-5, 3, 2**40, 2**62], rows)          # integers, not codes
    floats = rng.choice([0.5, -1.0, np.nan], rows)
    flags = rng.random(rows) < 0.5
    _check(chunked, dense, sparse, floats, flags, text)
    _check(pa.array(rng.integers(0, 3, rows)), chunked)


def test_wide_keys_are_renumbered_before_they_overflow() -> None:
    rng = np.random.default_rng(9)
    rows = 50_000
    # eight columns of ~40,000 distinct values each: 40,000**8 is far beyond int64
    columns = [rng.integers(0, 40_000, rows) for _ in range(8)]
    columns[3] = np.repeat(columns[3][:rows // 2], 2)           # some tuples repeat...
    for c in columns:
        c[rows // 2:] = c[:rows // 2]                           # ...every second half does
    codes, n = key_codes(*columns)
    reference = _reference(*[c.tolist() for c in columns])
    assert (codes.tolist(), n) == reference and n == rows // 2


def test_empty_columns_have_no_codes() -> None:
    codes, n = key_codes(pa.array([], pa.string()), np.zeros(0, np.int64))
    assert len(codes) == 0 and n == 0


def test_column_codes_keep_small_integer_codes_and_number_the_rest() -> None:
    assert column_codes(np.array([2, 0, 2]))[1] == 3
    assert column_codes(np.array([2, 0, 2]))[0].tolist() == [2, 0, 2]
    codes, size = column_codes(np.array([7, -1, 7]))
    assert codes.tolist() == [0, 1, 0] and size == 2
    codes, size = column_codes(pa.array(["b", None, "b"]))
    assert codes.tolist() == [0, 1, 0] and size == 2


@pytest.mark.parametrize("values", [
    np.array([None, "b", np.nan, "a", "b", None], dtype=object),
    np.array([np.nan, 2.5, np.nan, 1.0, 2.5, np.nan]),
    np.array(["b", "a", "b"], dtype=object),
])
def test_column_codes_give_the_nulls_one_code_after_the_values(values: np.ndarray) -> None:
    """The nulls of a numpy column (None, NaN) are one value, numbered after the others:
    the classes pandas' use_na_sentinel=False gives, without its pass to find them."""
    codes, size = column_codes(values)
    expected, uniques = pd.factorize(values, use_na_sentinel=False)
    assert size == len(uniques) and codes.dtype == np.int64
    assert sorted(set(codes.tolist())) == list(range(size))
    assert all((codes[i] == codes[j]) == (expected[i] == expected[j])
               for i in range(len(values)) for j in range(len(values)))
    null = pd.isna(values)
    assert (codes[null] == size - 1).all() and (codes[~null] < size - int(null.any())).all()


def test_row_of_finds_the_first_equal_table_row_of_every_query_row() -> None:
    rng = np.random.default_rng(4)
    names = np.array(["a", "b", "é", "\U0001f600", None], dtype=object)
    table = [rng.integers(0, 6, 300), names[rng.integers(0, 5, 300)]]
    query = [rng.integers(0, 8, 500), names[rng.integers(0, 5, 500)]]
    first: dict[tuple, int] = {}
    for i, key in enumerate(zip(*table, strict=True)):
        first.setdefault(key, i)
    expected = [first.get(key, -1) for key in zip(*query, strict=True)]
    got = row_of(table, query)
    assert got.tolist() == expected
    assert (got == -1).any() and (got >= 0).any()
    assert row_of([np.zeros(0, np.int64)], [np.arange(3)]).tolist() == [-1, -1, -1]


def test_numbered_in_key_order_numbers_left_keys_as_a_sorted_group_by_does() -> None:
    left = pd.DataFrame({"a": ["s2", "s1", "s2", "s1", "é"], "b": ["x", "y", "x", "b", "a"]})
    right = pd.DataFrame({"a": ["s1", "zz", "s2"], "b": ["b", "x", "x"]})
    left_n, right_n, first = numbered_in_key_order(left, right, ["a", "b"])
    expected = left.groupby(["a", "b"], sort=True).ngroup().to_numpy()
    assert left_n.tolist() == expected.tolist()
    assert right_n.tolist() == [expected[3], -1, expected[0]]
    assert first.tolist() == [3, 1, 0, 4]  # (s1, b), (s1, y), (s2, x), (é, a)


def test_sorted_lookup_takes_the_value_of_an_equal_key_or_the_default() -> None:
    keys = np.array([2, 5, 9], np.int64)
    values = np.array([20, 50, 90], np.int64)
    got = sorted_lookup(keys, values, np.array([9, 1, 5, 10, 2]), -1)
    assert got.tolist() == [90, -1, 50, -1, 20]
    assert sorted_lookup(keys[:0], values[:0], np.array([3]), -1).tolist() == [-1]
