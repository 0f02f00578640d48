"""Java String.compareTo order: the sort traps listed in ../shared/examples/README.md."""

from __future__ import annotations

import numpy as np

from rebalance_udfs.ordering import java_rank, java_sorted_unique


def test_client_ids_sort_as_strings_not_numbers() -> None:
    ids = np.array(["10.0.3.7@12345", "10.0.3.100@5", "10.0.3.12@987"], dtype=object)
    assert list(java_sorted_unique(ids)) == ["10.0.3.100@5", "10.0.3.12@987", "10.0.3.7@12345"]


def test_broker_names_sort_as_strings() -> None:
    assert list(java_sorted_unique(np.array(["broker-9", "broker-10", "broker-1"], dtype=object))) \
        == ["broker-1", "broker-10", "broker-9"]


def test_utf16_code_units_not_code_points() -> None:
    # U+1F600 is a surrogate pair (0xD83D...) and sorts before U+FF5E in UTF-16
    values = np.array(["@～", "@😀", "@a", "@Z"], dtype=object)
    assert list(java_sorted_unique(values)) == ["@Z", "@a", "@😀", "@～"]


def test_rank_is_dense_and_shared_by_equal_strings() -> None:
    ranks = java_rank(np.array(["b", "a", "b", "c"], dtype=object))
    assert ranks.tolist() == [1, 0, 1, 2]


def test_rank_orders_as_java_with_nulls_apart() -> None:
    # Java order with a surrogate pair; a null has no rank (-1) and leaves no gap
    values = np.array(["@～", None, "@😀", "@a", "@Z", "@😀"], dtype=object)
    assert java_rank(values).tolist() == [3, -1, 2, 1, 0, 2]
    assert list(java_sorted_unique(values)) == ["@Z", "@a", "@😀", "@～"]
