"""A group's what-if line names its recommended candidate against today's max load, and
groups whose best candidate is today's assignment have none."""

from __future__ import annotations

import pytest

from reports.what_if import best_sentence
from vocabulary.schemas import WHAT_IF_SCHEMA

pytestmark = pytest.mark.spark


def _row(group: str, candidate: str, clients: int, max_queues: int, moved: int, *,
         split: bool = False, current: bool = False, recommended: bool = False) -> tuple:
    return ("s1", "c1", group, candidate, clients, "AVG", None, split, max_queues, 0, 0, 0,
            moved, 0, current, recommended)


def test_lines_of_the_recommended_candidates(spark) -> None:
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
    ]
    lines = best_sentence(spark.createDataFrame(rows, WHAT_IF_SCHEMA).repartition(3))
    got = {r.consumer_group: r.what_if_line for r in lines.collect()}
    assert got == {
        "better": "run 4 clients, AVG (max 2 queues per client instead of 4; "
                  "3 queues move once)",
        "split": "split the group by topic, each topic with its own clients (5 clients in "
                 "all) (max 2 queues per client instead of 5; 4 queues move once)",
    }
