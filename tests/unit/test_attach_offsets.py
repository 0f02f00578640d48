"""`attach_offsets` / `split_offsets`: the queue rows of a bucket with their offsets row's
offsets, and the offsets rows no queue row takes, against a row-by-row reference (a left
join, the broker null-safe, the first offsets row of a key)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rebalance_udfs.spark.arrow import (
    GROUP_NOT_AUDITED,
    OFFSET_ROW,
    OFFSETS,
    OFFSETS_NOT_READ,
    UNMATCHED_SCHEMA,
    attach_offsets,
    split_offsets,
)

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


def _unmatched_reference(rows: pa.Table) -> list[tuple]:
    """Offsets rows whose key no queue row has (a null key other than the broker matches
    nothing), with their reason: whether their group has queue rows at all."""
    records = rows.to_pylist()

    def usable(r: dict) -> bool:
        return all(r[k] is not None for k in KEYS if k != "broker_name")

    queue_keys = {tuple(r[k] for k in KEYS) for r in records
                  if not r[OFFSET_ROW] and usable(r)}
    queue_groups = {tuple(r[k] for k in KEYS[:3]) for r in records if not r[OFFSET_ROW]}
    return [(*(r[k] for k in KEYS), *(r[k] for k in OFFSETS),
             OFFSETS_NOT_READ if tuple(r[k] for k in KEYS[:3]) in queue_groups
             else GROUP_NOT_AUDITED)
            for r in records
            if r[OFFSET_ROW] and not (usable(r) and tuple(r[k] for k in KEYS) in queue_keys)]


@pytest.mark.parametrize("seed", range(4))
def test_offsets_rows_no_queue_row_takes_come_back_with_their_reason(seed: int) -> None:
    rows = _rows(seed, 600)
    queues, unmatched = split_offsets(pa.Table.from_batches(rows.to_batches(max_chunksize=97)))
    assert queues.equals(attach_offsets(rows))
    assert unmatched.schema == UNMATCHED_SCHEMA
    got = list(zip(*(unmatched[c].to_pylist() for c in UNMATCHED_SCHEMA.names), strict=True))
    assert got == _unmatched_reference(rows)
    assert {r[-1] for r in got} == {OFFSETS_NOT_READ, GROUP_NOT_AUDITED}  # both drawn


def test_a_group_without_queue_rows_and_a_queue_it_does_not_read() -> None:
    def row(group: str, queue: int, offset: bool) -> dict:
        return {"snapshot_id": "s", "cluster": "c", "consumer_group": group, "topic": "T",
                "broker_name": "b", "queue_id": queue, "payload": 0,
                "committed_offset": 5 if offset else None, "consumed_offset": None,
                OFFSET_ROW: offset}
    rows = pa.Table.from_pylist([row("g", 0, False), row("g", 0, True), row("g", 9, True),
                                 row("gone", 0, True)])
    queues, unmatched = split_offsets(rows)
    assert queues["committed_offset"].to_pylist() == [5]
    assert list(zip(unmatched["consumer_group"].to_pylist(), unmatched["queue_id"].to_pylist(),
                    unmatched["reason"].to_pylist(), strict=True)) == [
        ("g", 9, OFFSETS_NOT_READ), ("gone", 0, GROUP_NOT_AUDITED)]
    assert split_offsets(rows.drop_columns([OFFSET_ROW]))[1].num_rows == 0
