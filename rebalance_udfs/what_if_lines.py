"""A group's what-if line: its recommended candidate in words, against today's max load.

`run 16 clients, AVG (max 6 queues per client instead of 16; 41 queues move once)`, or for
a split `give each topic a consumer group of its own, with this group's offsets copied to
it (N clients in all) (...)`; a candidate with fewer clients than today (the recommended
row never adds clients) says how many fewer: `run 8 clients, AVG (max 1 queue per client
instead of 2, with 7 clients fewer; 8 queues move once)`, `run 4 clients, AVG (max 1 queue
per client as today, with 5 clients fewer; no queue moves)`; one recommended because the
broker allocates the group and does not compute today's strategy says that, whatever else
it changes: `run 3 clients, AVG (max 1 queue per client; the broker computes AVG, not
today's CONSISTENT_HASH; 3 queues move once)`; one named as today's group is (`run 3
clients, roundrobin`: the same clients and strategy) says what it changes, what every
candidate is: `, one process per client id, each subscribing every topic`. The
group_balance recommendation and the run's summary quote it (SPEC, group_balance findings).
Made in the report pass from the what-if rows it has just computed (Arrow string kernels
over all the bucket's groups at once), so no Spark job reads the what_if table back for it.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from vocabulary.columns import GROUP_KEYS

LINE = "what_if_line"


def what_if_lines(rows: pa.Table, unclaimed: pa.Array | None = None,
                  no_option: pa.Array | None = None) -> pa.Table:
    """GROUP_KEYS and LINE of every group in `rows` (what_if rows, WHAT_IF_ARROW_SCHEMA)
    whose recommended row is not today's; groups where today is best have none.
    `unclaimed`: per row, the group's queues it leaves unconsumed (`what_if.UNCLAIMED`;
    None: none); a recommended row that consumes queues today leaves unconsumed says how
    many. `no_option`: per row, whether its group's today row is no option
    (`what_if.TODAY_NO_OPTION`; None: taken as so where the row lowers nothing): its line
    says the broker computes the candidate's strategy, not today's."""
    counts = unclaimed if unclaimed is not None else pa.array(
        [0] * rows.num_rows, pa.int64())
    rows = rows.append_column("_unclaimed", pc.cast(counts, pa.int64()))
    if no_option is not None:
        rows = rows.append_column("_no_option", pc.cast(no_option, pa.bool_()))
    today = rows.filter(rows.column("is_current")).select(
        [*GROUP_KEYS, "max_queues", "clients", "strategy", "_unclaimed", "candidate"]
    ).rename_columns([*GROUP_KEYS, "_today_max", "_today_clients", "_today_strategy",
                      "_today_unclaimed", "_today_candidate"])
    best = rows.filter(pc.and_(rows.column("recommended"),
                               pc.invert(rows.column("is_current"))))
    best = best.join(today, GROUP_KEYS, join_type="inner", use_threads=False)
    if not best.num_rows:
        return pa.table({**{k: pa.array([], pa.string()) for k in GROUP_KEYS},
                         LINE: pa.array([], pa.string())})

    def text(name: str) -> pa.ChunkedArray:
        return pc.cast(best.column(name), pa.string())

    def counted(name: str | pa.ChunkedArray, one: str, many: str) -> pa.ChunkedArray:
        """The count in `name` (a column of `best`, or counts) and its noun: `1 queue
        moves`, `41 queues move`; the same rule as `vocabulary.words.counted`, over a
        whole column."""
        counts = best.column(name) if isinstance(name, str) else name
        return pc.binary_join_element_wise(
            pc.cast(counts, pa.string()), pc.if_else(pc.equal(counts, 1), one, many), "")

    what = pc.if_else(
        best.column("split_by_topic"),
        pc.binary_join_element_wise(
            "give each topic a consumer group of its own, with this group's offsets "
            "copied to it (",
            counted("clients", " client", " clients"), " in all)", ""),
        pc.binary_join_element_wise("run ", best.column("candidate"), ""))
    # the candidate named as today's group is (`today: 3 clients, roundrobin`): what it
    # changes is what every candidate is, one process per client id, each subscribing
    # every topic of the group (SPEC, what_if)
    as_named = pc.equal(pc.binary_join_element_wise("today: ", best.column("candidate"), ""),
                        best.column("_today_candidate"))
    what = pc.if_else(pc.fill_null(as_named, False), pc.binary_join_element_wise(
        what, ", one process per client id, each subscribing every topic", ""), what)
    lower = pc.less(best.column("max_queues"), best.column("_today_max"))
    fewer = pc.less(best.column("clients"), best.column("_today_clients"))
    saved = pc.binary_join_element_wise(
        ", with ", counted(pc.subtract(best.column("_today_clients"), best.column("clients")),
                           " client fewer", " clients fewer"), "")
    taken = pc.subtract(best.column("_today_unclaimed"), best.column("_unclaimed"))
    consumes = pc.greater(taken, 0)
    # a lower max or fewer clients: today's max beside it ("as today" only when the same:
    # one that consumes queues today leaves unconsumed may load a client more), and how
    # many clients fewer
    same = pc.equal(best.column("max_queues"), best.column("_today_max"))
    against = pc.if_else(
        pc.or_(lower, fewer), pc.if_else(
            same, " as today", pc.binary_join_element_wise(" instead of ",
                                                           text("_today_max"), "")), "")
    against = pc.if_else(fewer, pc.binary_join_element_wise(against, saved, ""), against)
    # today's row was no option (`what_if._ranked`: the broker allocates the group and
    # does not compute today's strategy), whatever else the row changes; without the
    # flag, a row neither lower nor fewer nor consuming more can only be so
    no_option = (best.column("_no_option") if no_option is not None
                 else pc.invert(pc.or_(pc.or_(lower, fewer), consumes)))
    against = pc.if_else(
        pc.fill_null(no_option, False), pc.binary_join_element_wise(
            against, "; the broker computes ", best.column("strategy"), ", not today's ",
            best.column("_today_strategy"), ""), against)
    against = pc.if_else(consumes, pc.binary_join_element_wise(
        against, "; consumes ", counted(taken, " queue", " queues"),
        " nobody consumes today", ""), against)
    moves = pc.if_else(
        pc.equal(best.column("queues_moved"), 0), "no queue moves",
        pc.binary_join_element_wise(
            counted("queues_moved", " queue moves", " queues move"), " once", ""))
    line = pc.binary_join_element_wise(
        what, " (max ", counted("max_queues", " queue", " queues"), " per client", against,
        "; ", moves, ")", "")
    return pa.table({**{k: best.column(k) for k in GROUP_KEYS}, LINE: line})
