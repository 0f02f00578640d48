"""The claim facts of one bucket's assignment rows: one row per (group, topic, client_id).

What `rebalance_udfs.group_figures` computes consumer_load and group_balance from, counted
here from the assignment rows the report pass holds anyway (`rebalance_udfs.report_pass`),
so no Spark aggregation of the rows runs before it. The figures are those of the Spark
aggregation this replaced (kept as the tests' oracle, `tests/support/facts_oracle.py`),
to the last digit:

* counts are of the group's rows (`rows`), of its clustering claims (`claims`, status OK,
  CONTENDED or SHARED) and of its queues' first rows (`queues`, `unconsumed_queues`,
  `contended_queues`: a queue's own facts are counted on its first row only, see
  `rebalance_udfs.allocate.first_of_queue`);
* sums of lag are exact int64 and null where no value is known, as Spark's `sum`; a sum
  beyond int64 fails, as Spark's does (ANSI mode);
* rates arrive as exact decimal(38, 9) units (Spark's `try_cast` of the double, made in
  Spark before the pass) and are summed as integers, so a sum does not depend on row
  order; a sum beyond decimal(38, 9) fails too.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.exact import RATE_TYPE, Groups, decimal_array, decimal_units, first_of
from rebalance_udfs.key_codes import key_codes
from vocabulary.columns import CLAIM_STATUSES, CONTENDED, GROUP_KEYS, QUEUE_FIRST, UNCONSUMED

KEYS = [*GROUP_KEYS, "topic", "client_id"]
# what the facts read of an assignment row: `lag` is max_offset - committed_offset, `rate`
# the in_rate as decimal(38, 9) (null where unknown or not representable)
ROW_COLUMNS = [*KEYS, "status", "lag", "rate", QUEUE_FIRST]
_INT64_MAX = 2**63 - 1
_DECIMAL_MAX = 10**38 - 1


def claim_facts(rows: pa.Table) -> pa.Table:
    """The facts (`rebalance_udfs.group_figures.FACT_COLUMNS`) of the assignment rows
    `rows` (ROW_COLUMNS), one row per distinct (snapshot, cluster, group, topic,
    client_id); a null client_id is a value of its own (a topic's unconsumed queues)."""
    codes, n = key_codes(*(rows.column(k) for k in KEYS))
    groups = Groups(codes, n)
    first = first_of(codes, n)
    status = rows.column("status")
    claim = _bools(pc.is_in(status, pa.array(CLAIM_STATUSES)))
    contended = _bools(pc.equal(status, CONTENDED))
    unconsumed = _bools(pc.equal(status, UNCONSUMED))
    queue = _bools(rows.column(QUEUE_FIRST))
    lag, lag_known = _int_values(rows.column("lag"))
    rate, rate_known = decimal_units(rows.column("rate"))

    def total(values: np.ndarray, known: np.ndarray, where: np.ndarray | None,
              name: str, decimal: bool = False) -> pa.Array:
        mask = known if where is None else known & where
        sums = groups.sum(values, mask)
        present = groups.any(mask)
        if decimal:
            _check(sums, _DECIMAL_MAX, name, rows, first)
            return decimal_array(sums, present, RATE_TYPE)
        _check(sums, _INT64_MAX, name, rows, first)
        return pa.array(np.where(present, sums, 0).astype(np.int64), pa.int64(),
                        mask=~present)

    def count(mask: np.ndarray) -> pa.Array:
        return pa.array(groups.count(mask), pa.int32())

    everything = np.ones(rows.num_rows, bool)
    return pa.table({
        **{k: rows.column(k).take(pa.array(first, pa.int64())) for k in KEYS},
        "rows": count(everything),
        "lag_all": total(lag, lag_known, None, "lag"),
        "lag_all_known": count(lag_known),
        "rate_all_known": count(rate_known),
        "contended": count(contended),
        "claims": count(claim),
        "claim_lag": total(lag, lag_known, claim, "lag"),
        "queues": count(queue),
        "unconsumed_queues": count(queue & unconsumed),
        "contended_queues": count(queue & contended),
        "queue_lag": total(lag, lag_known, queue, "lag"),
        "queue_lag_known": count(queue & lag_known),
        "queue_rate_known": count(queue & rate_known),
        "rate_all": total(rate, rate_known, None, "in_rate", decimal=True),
        "claim_rate": total(rate, rate_known, claim, "in_rate", decimal=True),
        "queue_rate": total(rate, rate_known, queue, "in_rate", decimal=True),
    })


def lag_of(max_offset: pa.Array | pa.ChunkedArray,
           committed: pa.Array | pa.ChunkedArray) -> pa.Array:
    """max_offset - committed_offset, null where either is; a difference beyond int64
    fails, as Spark's subtraction does (ANSI mode). A commit past the max offset is no
    backlog (a capture that read the max a moment before a caught-up consumer committed, a
    queue truncated under its group): its lag is 0, as the assignments table's is, not a
    negative lag that would shrink the group's total and inflate a client's share."""
    a, a_known = _int_values(max_offset)
    b, b_known = _int_values(committed)
    with np.errstate(over="ignore"):
        diff = a - b
    known = a_known & b_known
    if (known & (((a ^ b) & (a ^ diff)) < 0)).any():
        raise OverflowError("lag (max_offset - committed_offset) is beyond a long")
    return pa.array(np.where(known, np.maximum(diff, 0), 0), pa.int64(),
                    mask=~known)


def _bools(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), dtype=bool)


def _int_values(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(values with 0 for null, known) of an integer column."""
    known = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False),
                        dtype=np.int64)
    return values, known


def _check(sums: np.ndarray, bound: int, name: str, rows: pa.Table,
           first: np.ndarray) -> None:
    """Fail where an exact sum is beyond its type, as Spark's sum does in ANSI mode,
    naming the first such client of a group (the run fails on it: the user must find the
    rows that hold the sentinel)."""
    if sums.dtype != object or not len(sums):
        return
    beyond = [i for i, s in enumerate(sums) if abs(int(s)) > bound]
    if beyond:
        at = int(first[beyond[0]])
        key = {k: rows.column(k)[at].as_py() for k in KEYS}
        raise OverflowError(
            f"the sum of {name} of the queues of client {key['client_id']!r} is beyond its "
            f"type (snapshot {key['snapshot_id']!r}, cluster {key['cluster']!r}, group "
            f"{key['consumer_group']!r}, topic {key['topic']!r})")
