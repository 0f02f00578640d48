"""`attach_offsets`: the queue rows of a bucket with their offsets row's offsets, against a
row-by-row reference (a left join, the broker null-safe, the first offsets row of a key)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rebalance_udfs.spark.arrow import OFFSET_ROW, OFFSETS, attach_offsets

KEYS = ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name", "queue_id"]


def _rows(seed: int, n: int) -> pa.Table:
    """Queue and offsets rows, interleaved, over few key values: repeated offsets keys,
    null brokers next to empty ones, null keys, queue rows without offsets."""
    rng = np.random.default_rng(seed)

    def pick(values: list, p_null: float = 0.0) -> list:
        return [None if rng.random() < p_null else values[rng.integers(len(values))]
                for _ in range(n)]

    return pa.table({
        "snapshot_id": pa.array(pick(["s1", "s2"], 0.02)),
        "cluster": pa.array(pick(["c"], 0.02)),
        "consumer_group": pa.array(pick(["g1", "g2", "g3", "g\x00", "g"], 0.02)),
        "topic": pa.array(pick(["T", "U", "\U0001f600"], 0.02)),
        "broker_name": pa.array(pick(["b1", "", "b2"], 0.2)),
        "queue_id": pa.array(pick(list(range(6)), 0.02), pa.int32()),
        "payload": pa.array(np.arange(n)),
        "committed_offset": pa.array(rng.integers(0, 10**15, n)),
        "consumed_offset": pa.array(rng.integers(0, 10**15, n)),
        OFFSET_ROW: pa.array(pick([True, False, False], 0.05)),
    })


def _reference(rows: pa.Table) -> list[tuple]:
    found: dict[tuple, tuple] = {}
    records = rows.to_pylist()
    for r in records:
        key = tuple(r[k] for k in KEYS)
        usable = all(r[k] is not None for k in KEYS if k != "broker_name")
        if r[OFFSET_ROW] and usable and key not in found:
            found[key] = tuple(r[k] for k in OFFSETS)
    return [(r["payload"], *found.get(tuple(r[k] for k in KEYS), (None, None)))
            for r in records if not r[OFFSET_ROW]]


@pytest.mark.parametrize("seed", range(4))
def test_queue_rows_get_the_first_offsets_row_of_their_key(seed: int) -> None:
    rows = _rows(seed, 600)
    chunked = pa.Table.from_batches(rows.to_batches(max_chunksize=97))  # as Spark sends them
    got = attach_offsets(chunked)
    assert got.column_names == [*[c for c in rows.column_names
                                  if c not in (OFFSET_ROW, *OFFSETS)], *OFFSETS]
    assert list(zip(*(got[c].to_pylist() for c in ("payload", *OFFSETS)), strict=True)) \
        == _reference(rows)
    matched = sum(v is not None for v in got["committed_offset"].to_pylist())
    assert 0 < matched < got.num_rows


def test_no_offsets_rows_and_no_offset_marker() -> None:
    rows = _rows(9, 50)
    only_queues = rows.filter(pa.array([False] * 50)).set_column(
        rows.schema.get_field_index(OFFSET_ROW), OFFSET_ROW, pa.array([], pa.bool_()))
    assert attach_offsets(only_queues).num_rows == 0
    queues = rows.set_column(rows.schema.get_field_index(OFFSET_ROW), OFFSET_ROW,
                             pa.array([False] * 50))
    got = attach_offsets(queues)
    assert got.num_rows == 50 and got["committed_offset"].null_count == 50
    without = rows.drop_columns([OFFSET_ROW])
    assert attach_offsets(without) is without
