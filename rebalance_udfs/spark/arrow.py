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
from rebalance_udfs.exact import take
from vocabulary.columns import GROUP_KEYS, QUEUE_FIRST
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


def attach_offsets(rows: pa.Table) -> pa.Table:
    """The queue rows of `rows` (OFFSET_ROW false) with the OFFSETS of the offsets row
    (OFFSET_ROW true) of the same group, topic, broker and queue; null when there is none.
    A table without OFFSET_ROW is returned as it is.

    A left join, broker_name null-safe (Kafka has none), as one Arrow hash join. Offsets
    keys are unique (validation rejects repeated ones); were one repeated, its first
    row would be taken, not the queue row doubled."""
    if OFFSET_ROW not in rows.column_names:
        return rows
    is_offset = rows[OFFSET_ROW].fill_null(False)
    queues = rows.filter(pc.invert(is_offset)).drop_columns([OFFSET_ROW, *OFFSETS])
    offsets = rows.filter(is_offset)

    def keyed(table: pa.Table, index: str) -> pa.Table:
        broker = table["broker_name"]
        return pa.table({**{k: table[k] for k in _OFFSET_KEYS},
                         "_broker": pc.fill_null(broker, ""), "_no_broker": pc.is_null(broker),
                         index: pa.array(np.arange(table.num_rows, dtype=np.int64))})

    matched = keyed(queues, "_q").join(
        keyed(offsets, "_o"), [*_OFFSET_KEYS, "_broker", "_no_broker"],
        join_type="inner", use_threads=False)
    q = matched["_q"].to_numpy()
    o = matched["_o"].to_numpy()
    first = np.lexsort((o, q))
    q, o = q[first], o[first]
    keep = np.ones(len(q), dtype=bool)
    keep[1:] = q[1:] != q[:-1]
    # per queue row the offsets row it matched, or -1
    source = np.full(queues.num_rows, -1, np.int64)
    source[q[keep]] = o[keep]
    take = pa.array(source, mask=source < 0)
    for name in OFFSETS:
        queues = queues.append_column(name, offsets[name].take(take))
    return queues


def run_kernel(queues: pa.Table, key_columns: Sequence[str], members: pd.DataFrame,
               kernel: Kernel) -> pa.Table:
    """`kernel(keys, members)` on the `key_columns` of `queues` (plus `_row`, the row's
    index), its claims gathered into assignment rows (see `gather_assigned`)."""
    return gather_assigned(queues, kernel_claims(queues, key_columns, members, kernel))


def kernel_claims(queues: pa.Table, key_columns: Sequence[str], members: pd.DataFrame,
                  kernel: Kernel) -> pd.DataFrame:
    """The claims `kernel(keys, members)` returns: `_row` (the claimed queue's row in
    `queues`), client_id, strategy, status, grouped by queue."""
    keys = queues.select(list(key_columns)).to_pandas()
    keys[ROW] = np.arange(len(keys), dtype=np.int64)
    return kernel(keys, members)


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
