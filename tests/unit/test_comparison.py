"""strategy_comparison's rows of a bucket (`rebalance_udfs.comparison.comparison_rows`):
which groups get rows, the counts of a candidate without figures, what the members run."""

from __future__ import annotations

import pyarrow as pa

from rebalance_udfs.comparison import FIGURES_SCHEMA, ROWS_SCHEMA, comparison_rows

PAIRS = pa.table({"cluster": ["c", "d"], "snapshot_id": ["s2", "s2"],
                  "previous_snapshot_id": ["s1", "s0"], "previous_in_run": [True, True]})


def _members(rows: list[tuple]) -> pa.Table:
    return pa.table({name: pa.array([r[i] for r in rows], pa.string())
                     for i, name in enumerate(["snapshot_id", "cluster", "consumer_group",
                                               "strategy"])})


def _figures(rows: list[tuple]) -> pa.Table:
    return pa.table({name: [r[i] for r in rows] for i, name in enumerate(FIGURES_SCHEMA.names)},
                    schema=FIGURES_SCHEMA)


def _by_key(table: pa.Table) -> dict[tuple, dict]:
    assert table.schema == ROWS_SCHEMA
    return {(r["cluster"], r["consumer_group"], r["strategy"]): r for r in table.to_pylist()}


def test_every_group_of_a_compared_snapshot_gets_a_row_per_candidate():
    members = _members([
        ("s1", "c", "g", "AVG"),  # s1 has no predecessor in the run: not compared
        ("s2", "c", "g", "sticky"), ("s2", "c", "g", "AVG"), ("s2", "c", "g", "AVG"),
        ("s2", "c", "g", "Z"),
        ("s2", "c", "h", None),  # a group whose members name no strategy
        ("s2", "d", "g", "AVG_BY_CIRCLE"),
        ("s3", "c", "k", "AVG"),  # s3 is not a compared snapshot
    ])
    figures = _figures([
        ("s2", "c", "g", "sticky", 12, 3, 40, 2, 5),
        ("s2", "c", "gone", "sticky", 0, 4, None, 0, 0),  # no member rows in s2: dropped
    ])
    rows = _by_key(comparison_rows(figures, members, PAIRS, ("AVG", "sticky")))
    assert sorted(rows) == [("c", "g", "AVG"), ("c", "g", "sticky"), ("c", "h", "AVG"),
                            ("c", "h", "sticky"), ("d", "g", "AVG"), ("d", "g", "sticky")]
    sticky = rows[("c", "g", "sticky")]
    assert (sticky["queues"], sticky["moves"], sticky["estimated_duplicates"],
            sticky["duplicates_known_moves"], sticky["max_client_queues"]) == (12, 3, 40, 2, 5)
    # no figures: zero counts, the duplicate estimate unknown
    avg = rows[("c", "g", "AVG")]
    assert (avg["queues"], avg["moves"], avg["estimated_duplicates"],
            avg["duplicates_known_moves"], avg["max_client_queues"]) == (0, 0, None, 0, 0)
    # distinct, sorted as Spark sorts strings (upper case first), nulls left out
    assert avg["actual_strategy"] == ["AVG", "Z", "sticky"]
    assert rows[("c", "h", "sticky")]["actual_strategy"] == []
    assert rows[("d", "g", "AVG")]["actual_strategy"] == ["AVG_BY_CIRCLE"]
    assert {r["previous_snapshot_id"] for k, r in rows.items() if k[0] == "d"} == {"s0"}
    assert {r["snapshot_id"] for r in rows.values()} == {"s2"}


def test_a_bucket_without_compared_groups_gives_no_rows():
    members = _members([("s1", "c", "g", "AVG")])
    empty = comparison_rows(FIGURES_SCHEMA.empty_table(), members, PAIRS, ("AVG",))
    assert empty.num_rows == 0 and empty.schema == ROWS_SCHEMA
    none = comparison_rows(FIGURES_SCHEMA.empty_table(), members.slice(0, 0), PAIRS,
                           ("AVG", "sticky"))
    assert none.num_rows == 0 and none.schema == ROWS_SCHEMA
