"""The one Arrow body of the allocation UDFs (batch strategies and sticky alike).

Only the key columns a kernel reads are converted to pandas; the payload columns (offsets,
rates) stay in Arrow and are gathered by row index, so 64-bit offsets never go through
float64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.allocate import first_of_queue
from rebalance_udfs.exact import column_values, take
from rebalance_udfs.key_codes import key_codes, row_of
from vocabulary.columns import GROUP_KEYS, QUEUE_FIRST, UNIT_KEYS
from vocabulary.schemas import ASSIGNED_ARROW_SCHEMA

ROW = "_row"
CLAIM_COLUMNS = ["client_id", "strategy", "status"]
# the assigned columns that come from the queue rows unchanged
QUEUE_SIDE = [n for n in ASSIGNED_ARROW_SCHEMA.names if n not in (*CLAIM_COLUMNS, QUEUE_FIRST)]

Kernel = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]

# offsets rows sent in the queue rows' frame are marked by this column
OFFSET_ROW = "_offset_row"
OFFSETS = ["committed_offset", "consumed_offset"]
_OFFSET_KEYS = [*GROUP_KEYS, "topic", "queue_id"]
# the offsets rows no queue row took (`split_offsets`): rows of `rejects` (source offsets)
UNMATCHED_SCHEMA = pa.schema([*((name, pa.string()) for name in
                                [*GROUP_KEYS, "topic", "broker_name"]),
                              ("queue_id", pa.int32()), ("committed_offset", pa.int64()),
                              ("consumed_offset", pa.int64()), ("reason", pa.string())])
OFFSETS_NOT_READ = ("no queue the group reads in this snapshot has this topic, broker_name "
                    "and queue_id (a topic no member subscribes, a queue the queues table "
                    "lacks or marks unreadable): its offsets are not used")
GROUP_NOT_AUDITED = ("the group has no queue to audit in this snapshot (no usable member "
                     "row, or none subscribing a topic the queues table has): its offsets "
                     "are not used")


def attach_offsets(rows: pa.Table) -> pa.Table:
    """The queue rows of `rows` (OFFSET_ROW false) with the OFFSETS of the offsets row
    (OFFSET_ROW true) of the same group, topic, broker and queue; null when there is none.
    A table without OFFSET_ROW is returned as it is. (`split_offsets` also returns the
    offsets rows no queue row took; this one, for the bare kernel call, does not look for
    them.)"""
    return _attached(rows)[0]


def split_offsets(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """`attach_offsets`' queue rows, and the offsets rows that no queue row took
    (UNMATCHED_SCHEMA: their keys, offsets and why), which the run writes to `rejects`."""
    queues, offsets, taken = _attached(rows)
    if offsets is None:
        return queues, UNMATCHED_SCHEMA.empty_table()
    return queues, _unmatched(offsets, taken, queues)


def _attached(rows: pa.Table) -> tuple[pa.Table, pa.Table | None, np.ndarray | None]:
    """The queue rows with their offsets, the offsets rows and which of them a queue row
    took (None, None without OFFSET_ROW).

    A left join, broker_name null-safe (Kafka has none); a row with another key null
    matches nothing. Offsets keys are unique (validation rejects repeated ones); were one
    repeated, its first row would be taken, not the queue row doubled."""
    if OFFSET_ROW not in rows.column_names:
        return rows, None, None
    is_offset = rows[OFFSET_ROW].fill_null(False)
    queues = rows.filter(pc.invert(is_offset)).drop_columns([OFFSET_ROW, *OFFSETS])
    offsets = rows.filter(is_offset)
    source, taken = _first_offsets_row(rows, is_offset.to_numpy(zero_copy_only=False))
    picks = pa.array(source, mask=source < 0)
    for name in OFFSETS:
        queues = queues.append_column(name, offsets[name].take(picks))
    return queues, offsets, taken


def _first_offsets_row(rows: pa.Table, is_offset: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Per queue row (in order), the index among the offsets rows of the first with the
    same key (-1 when none); and per offsets row whether some queue row has its key.

    The key columns are coded together (`rebalance_udfs.key_codes`: a null broker is a
    value of its own; a row with another key null matches nothing) and the codes matched
    through one lookup array. The Arrow hash join on the six columns this replaces took
    about twice as long."""
    usable = np.ones(rows.num_rows, dtype=bool)
    for name in _OFFSET_KEYS:
        usable &= rows[name].is_valid().to_numpy(zero_copy_only=False)
    code, n = key_codes(*(rows[name] for name in [*_OFFSET_KEYS, "broker_name"]))
    offsets_rows = np.flatnonzero(usable[is_offset])
    offsets_code = code[is_offset][offsets_rows]
    first = ~pd.Index(offsets_code).duplicated(keep="first")
    row_of_code = np.full(n, -1, np.int64)
    row_of_code[offsets_code[first]] = offsets_rows[first]
    queue = ~is_offset
    queue_codes = np.zeros(n, dtype=bool)
    queue_codes[code[queue & usable]] = True
    taken = usable[is_offset] & queue_codes[code[is_offset]]
    return np.where(usable[queue], row_of_code[code[queue]], -1), taken


def _unmatched(offsets: pa.Table, taken: np.ndarray, queues: pa.Table) -> pa.Table:
    """The offsets rows no queue row took, with the reason: their group has queue rows in
    the snapshot (the topic, broker or queue is not one it reads), or none at all."""
    left = offsets.filter(pa.array(~taken)).select(UNMATCHED_SCHEMA.names[:-1])
    if not left.num_rows:
        return UNMATCHED_SCHEMA.empty_table()
    both = pa.concat_tables([queues.select(GROUP_KEYS), left.select(GROUP_KEYS)])
    code, n = key_codes(*(both[name] for name in GROUP_KEYS))
    has_queues = np.zeros(n, dtype=bool)
    has_queues[code[:queues.num_rows]] = True
    reason = np.where(has_queues[code[queues.num_rows:]], OFFSETS_NOT_READ, GROUP_NOT_AUDITED)
    return left.append_column("reason", pa.array(reason, pa.string())).cast(UNMATCHED_SCHEMA)


def run_kernel(queues: pa.Table, key_columns: Sequence[str], members: pd.DataFrame,
               kernel: Kernel) -> pa.Table:
    """`kernel(keys, members)` on the `key_columns` of `queues` (plus `_row`, the row's
    index), its claims gathered into assignment rows (see `gather_assigned`)."""
    return gather_assigned(queues, kernel_claims(queues, key_columns, members, kernel))


def kernel_claims(queues: pa.Table, key_columns: Sequence[str], members: pd.DataFrame,
                  kernel: Kernel) -> pd.DataFrame:
    """The claims `kernel(keys, members)` returns: `_row` (the claimed queue's row in
    `queues`), client_id, strategy, status, grouped by queue."""
    return kernel(kernel_keys(queues, key_columns), members)


def kernel_keys(queues: pa.Table, key_columns: Sequence[str]) -> pd.DataFrame:
    """The `key_columns` of `queues` as a kernel reads them (pandas), with `_row`, the
    row's index in `queues`."""
    keys = queues.select(list(key_columns)).to_pandas()
    keys[ROW] = np.arange(len(keys), dtype=np.int64)
    return keys


def subscribed_rows(queues: pa.Table, members: pd.DataFrame) -> np.ndarray:
    """Mask of the queue rows whose unit (snapshot, cluster, group, topic) some row of
    `members` subscribes: the queues a kernel run for those members allocates."""
    named = members[members["topic"].notna()]
    return row_of([named[c].to_numpy(object) for c in UNIT_KEYS],
                  [column_values(queues, c) for c in UNIT_KEYS]) >= 0


def claimed_rows(claims: pd.DataFrame) -> np.ndarray:
    """The queue row (`_row`) of every claim, as int64 positions."""
    return claims[ROW].to_numpy(np.int64) if len(claims) else np.empty(0, np.int64)


def gather_assigned(queues: pa.Table, claims: pd.DataFrame) -> pa.Table:
    """Assignment rows (ASSIGNED_ARROW_SCHEMA) of `claims`.

    `claims`: `_row` (the claimed queue's row in `queues`), client_id, strategy, status,
    grouped by queue with the row that carries the queue's status first. The queue columns
    are taken from `queues` in Arrow; `queue_first` marks each queue's first row.
    """
    row = claimed_rows(claims)
    taken = take(queues.select(QUEUE_SIDE), row)
    columns = {name: taken.column(name) for name in QUEUE_SIDE}
    columns[QUEUE_FIRST] = pa.array(first_of_queue(row), type=pa.bool_())
    for name in CLAIM_COLUMNS:
        values = claims[name].to_numpy(object) if len(claims) else np.empty(0, object)
        columns[name] = pa.array(values, type=pa.string(), from_pandas=True)
    return pa.table([columns[f.name] for f in ASSIGNED_ARROW_SCHEMA],
                    schema=ASSIGNED_ARROW_SCHEMA)
