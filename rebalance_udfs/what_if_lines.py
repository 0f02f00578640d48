"""A group's what-if line: its recommended candidate in words, against today's max load.

`run 16 clients, AVG (max 6 queues per client instead of 16; 41 queues move once)`, or
for a split `split the group by topic, each topic with its own clients (N clients in all)
(...)`. The group_balance recommendation and the run's summary quote it (SPEC,
group_balance findings). Made in the report pass from the what-if rows it has just
computed (Arrow string kernels over all the bucket's groups at once), so no Spark job
reads the what_if table back for it.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from vocabulary.columns import GROUP_KEYS

LINE = "what_if_line"


def what_if_lines(rows: pa.Table) -> pa.Table:
    """GROUP_KEYS and LINE of every group in `rows` (what_if rows, WHAT_IF_ARROW_SCHEMA)
    whose recommended row is not today's; groups where today is best have none."""
    today = rows.filter(rows.column("is_current")).select(
        [*GROUP_KEYS, "max_queues"]).rename_columns([*GROUP_KEYS, "_today_max"])
    best = rows.filter(pc.and_(rows.column("recommended"),
                               pc.invert(rows.column("is_current"))))
    best = best.join(today, GROUP_KEYS, join_type="inner", use_threads=False)
    if not best.num_rows:
        return pa.table({**{k: pa.array([], pa.string()) for k in GROUP_KEYS},
                         LINE: pa.array([], pa.string())})

    def text(name: str) -> pa.ChunkedArray:
        return pc.cast(best.column(name), pa.string())

    def counted(name: str, one: str, many: str) -> pa.ChunkedArray:
        """The count in `name` and its noun: `1 queue moves`, `41 queues move`; the same
        rule as `vocabulary.words.counted`, over a whole column."""
        return pc.binary_join_element_wise(
            text(name), pc.if_else(pc.equal(best.column(name), 1), one, many), "")

    what = pc.if_else(
        best.column("split_by_topic"),
        pc.binary_join_element_wise(
            "split the group by topic, each topic with its own clients (",
            counted("clients", " client", " clients"), " in all)", ""),
        pc.binary_join_element_wise("run ", best.column("candidate"), ""))
    line = pc.binary_join_element_wise(
        what, " (max ", counted("max_queues", " queue", " queues"), " per client instead of ",
        text("_today_max"), "; ", counted("queues_moved", " queue moves", " queues move"),
        " once)", "")
    return pa.table({**{k: best.column(k) for k in GROUP_KEYS}, LINE: line})
