"""A group's what-if line names its recommended candidate against today's max load and the
clients it saves (or, at today's max, the clients it saves, or the strategy the broker
computes where it does not compute today's), and groups whose best candidate is today's
assignment have none."""

from __future__ import annotations

import pyarrow as pa

from rebalance_udfs.what_if_lines import LINE, what_if_lines
from vocabulary.schemas import WHAT_IF_ARROW_SCHEMA


def _row(group: str, candidate: str, clients: int, max_queues: int, moved: int, *,
         split: bool = False, current: bool = False, recommended: bool = False,
         strategy: str = "AVG") -> tuple:
    return ("s1", "c1", group, candidate, clients, strategy, None, split, max_queues, 0, 0,
            0, moved, 0, current, recommended)


def test_lines_of_the_recommended_candidates() -> None:
    rows = [
        # a better client count: recommended, today's row listed after it
        _row("better", "4 clients, AVG", 4, 2, 3, recommended=True),
        _row("better", "today: 2 clients, AVG", 2, 4, 0, current=True),
        _row("better", "3 clients, AVG", 3, 3, 2),
        # today is already the best: no line
        _row("best-today", "today: 3 clients, AVG", 3, 1, 0, current=True, recommended=True),
        _row("best-today", "2 clients, AVG", 2, 2, 1),
        # a split by topic
        _row("split", "today: 2 clients, AVG", 2, 5, 0, current=True),
        _row("split", "5 clients, AVG", 5, 2, 4, split=True, recommended=True),
        # counts of one, in the singular
        _row("one", "today: 1 client, AVG", 1, 2, 0, current=True),
        _row("one", "2 clients, AVG", 2, 1, 1, recommended=True),
        # today's max load with fewer clients, nothing moving
        _row("fewer", "today: 9 clients, AVG", 9, 1, 0, current=True),
        _row("fewer", "4 clients, AVG", 4, 1, 0, recommended=True),
        _row("one-fewer", "today: 3 clients, AVG", 3, 2, 0, current=True),
        _row("one-fewer", "2 clients, AVG", 2, 2, 1, recommended=True),
        # a lower max load with fewer clients too (idle clients under CONSISTENT_HASH)
        _row("lower-fewer", "today: 15 clients, CONSISTENT_HASH", 15, 2, 0, current=True,
             strategy="CONSISTENT_HASH"),
        _row("lower-fewer", "8 clients, AVG", 8, 1, 8, recommended=True),
        _row("split-fewer", "today: 15 clients, AVG", 15, 3, 0, current=True),
        _row("split-fewer", "12 clients, AVG", 12, 1, 8, split=True, recommended=True),
        # the broker allocates and does not compute today's strategy: today is no option
        _row("broker", "today: 3 clients, CONSISTENT_HASH", 3, 1, 0, current=True,
             strategy="CONSISTENT_HASH"),
        _row("broker", "3 clients, AVG", 3, 1, 3, recommended=True),
    ]
    table = pa.Table.from_pylist([dict(zip(WHAT_IF_ARROW_SCHEMA.names, r, strict=True))
                                  for r in rows], schema=WHAT_IF_ARROW_SCHEMA)
    lines = what_if_lines(table).to_pylist()
    got = {r["consumer_group"]: r[LINE] for r in lines}
    assert got == {
        "better": "run 4 clients, AVG (max 2 queues per client instead of 4; "
                  "3 queues move once)",
        "split": "give each topic a consumer group of its own, with this group's offsets "
                 "copied to it (5 clients in all) (max 2 queues per client instead of 5; "
                 "4 queues move once)",
        "one": "run 2 clients, AVG (max 1 queue per client instead of 2; 1 queue moves once)",
        "fewer": "run 4 clients, AVG (max 1 queue per client as today, with 5 clients "
                 "fewer; no queue moves)",
        "one-fewer": "run 2 clients, AVG (max 2 queues per client as today, with 1 client "
                     "fewer; 1 queue moves once)",
        "lower-fewer": "run 8 clients, AVG (max 1 queue per client instead of 2, with 7 "
                       "clients fewer; 8 queues move once)",
        "split-fewer": "give each topic a consumer group of its own, with this group's "
                       "offsets copied to it (12 clients in all) (max 1 queue per client "
                       "instead of 3, with 3 clients fewer; 8 queues move once)",
        "broker": "run 3 clients, AVG (max 1 queue per client; the broker computes AVG, not "
                  "today's CONSISTENT_HASH; 3 queues move once)",
    }


def test_no_rows_no_lines() -> None:
    assert what_if_lines(WHAT_IF_ARROW_SCHEMA.empty_table()).num_rows == 0
