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

from rebalance_udfs.allocate import first_of_queue
from vocabulary.columns import QUEUE_FIRST
from vocabulary.schemas import ASSIGNED_ARROW_SCHEMA

ROW = "_row"
CLAIM_COLUMNS = ["client_id", "strategy", "status"]
# the assigned columns that come from the queue rows unchanged
QUEUE_SIDE = [n for n in ASSIGNED_ARROW_SCHEMA.names if n not in (*CLAIM_COLUMNS, QUEUE_FIRST)]

Kernel = Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]


def run_kernel(queues: pa.Table, key_columns: Sequence[str], members: pd.DataFrame,
               kernel: Kernel) -> pa.Table:
    """`kernel(keys, members)` on the `key_columns` of `queues` (plus `_row`, the row's
    index), its claims gathered into assignment rows (see `gather_assigned`)."""
    keys = queues.select(list(key_columns)).to_pandas()
    keys[ROW] = np.arange(len(keys), dtype=np.int64)
    return gather_assigned(queues, kernel(keys, members))


def gather_assigned(queues: pa.Table, claims: pd.DataFrame) -> pa.Table:
    """Assignment rows (ASSIGNED_ARROW_SCHEMA) of `claims`.

    `claims`: `_row` (the claimed queue's row in `queues`), client_id, strategy, status,
    grouped by queue with the row that carries the queue's status first. The queue columns
    are taken from `queues` in Arrow; `queue_first` marks each queue's first row.
    """
    row = claims[ROW].to_numpy(np.int64) if len(claims) else np.empty(0, np.int64)
    taken = queues.select(QUEUE_SIDE).take(pa.array(row))
    columns = {name: taken.column(name) for name in QUEUE_SIDE}
    columns[QUEUE_FIRST] = pa.array(first_of_queue(row), type=pa.bool_())
    for name in CLAIM_COLUMNS:
        values = claims[name].to_numpy(object) if len(claims) else np.empty(0, object)
        columns[name] = pa.array(values, type=pa.string(), from_pandas=True)
    return pa.table([columns[f.name] for f in ASSIGNED_ARROW_SCHEMA],
                    schema=ASSIGNED_ARROW_SCHEMA)
