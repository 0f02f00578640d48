"""drift_rows: one row per queue whose observed holders differ, with the right kind."""

from __future__ import annotations

import pandas as pd

from rebalance_udfs.drift import drift_rows
from vocabulary.columns import DRIFT_COLUMNS as COLUMNS

K = {"snapshot_id": "s1", "cluster": "c", "consumer_group": "g", "topic": "t"}


def frame(rows: list[tuple[str | None, int, str | None]]) -> pd.DataFrame:
    return pd.DataFrame([{**K, "broker_name": b, "queue_id": q, "client_id": c}
                         for b, q, c in rows])


def by_queue(out: pd.DataFrame) -> dict[tuple, tuple]:
    return {(r.broker_name, r.queue_id): (r.expected_clients, r.observed_clients, r.kind)
            for r in out.itertuples()}


def test_identical_gives_nothing():
    rows = [("b", 0, "a"), ("b", 1, "b"), (None, 2, "a")]
    out = drift_rows(frame(rows), frame(rows))
    assert list(out.columns) == COLUMNS
    assert out.empty


def test_each_kind():
    expected = frame([("b", 0, "c1"), ("b", 1, "c2"), ("b", 2, None), ("b", 3, "c1"),
                      ("b", 4, "c2")])
    observed = frame([("b", 1, "c1"), ("b", 2, "c3"), ("b", 3, "c1"), ("b", 3, "c2"),
                      ("b", 4, "c2"), ("b", 5, "c9")])
    got = by_queue(drift_rows(expected, observed))
    assert got == {
        ("b", 0): (["c1"], [], "NOT_HELD"),
        ("b", 1): (["c2"], ["c1"], "HELD_BY_OTHER"),
        ("b", 2): ([], ["c3"], "NOT_EXPECTED"),
        ("b", 3): (["c1"], ["c1", "c2"], "HELD_TWICE"),
        ("b", 5): ([], ["c9"], "NOT_EXPECTED"),
    }


def test_unclaimed_and_unheld_is_no_drift():
    out = drift_rows(frame([("b", 0, None)]), frame([]).reindex(columns=[*K, "broker_name",
                                                                         "queue_id",
                                                                         "client_id"]))
    assert out.empty


def test_null_broker_is_a_key_and_duplicates_collapse():
    expected = frame([(None, 0, "m1"), (None, 1, "m2")])
    observed = frame([(None, 0, "m1"), (None, 0, "m1"), (None, 1, "m1")])
    got = by_queue(drift_rows(expected, observed))
    assert got == {(None, 1): (["m2"], ["m1"], "HELD_BY_OTHER")}


def test_lists_use_java_string_order():
    # U+FFFF sorts after U+1F600 in Java (surrogates 0xD83D < 0xFFFF), before it in Python
    astral, bmp = "\U0001f600", "\uffff"
    expected = frame([("b", 0, astral), ("b", 0, bmp)])
    observed = frame([("b", 0, bmp)])
    out = drift_rows(expected, observed)
    assert out.loc[0, "expected_clients"] == [astral, bmp]
    assert out.loc[0, "kind"] == "NOT_HELD" or out.loc[0, "kind"] == "HELD_BY_OTHER"


def test_held_twice_even_when_one_is_expected_and_keys_sorted():
    expected = frame([("b", 1, "x"), ("a", 0, "y")])
    observed = frame([("b", 1, "y"), ("b", 1, "x"), ("a", 0, "y")])
    out = drift_rows(expected, observed)
    assert out[["broker_name", "queue_id", "kind"]].values.tolist() == [["b", 1, "HELD_TWICE"]]
    assert out.loc[0, "observed_clients"] == ["x", "y"]


def test_matches_a_naive_set_comparison_on_random_data():
    import numpy as np

    rng = np.random.default_rng(7)

    def rows(n: int) -> pd.DataFrame:
        return frame([(rng.choice(["a", "b", None]), int(rng.integers(0, 6)),
                       rng.choice(["c1", "c2", "c3", None])) for _ in range(n)])

    expected, observed = rows(60), rows(60)
    got = {(r.broker_name, r.queue_id): (r.expected_clients, r.observed_clients)
           for r in drift_rows(expected, observed).itertuples()}

    def sets(df: pd.DataFrame) -> dict:
        out: dict = {}
        for r in df.itertuples():
            out.setdefault((r.broker_name, r.queue_id), set())
            if r.client_id is not None:
                out[(r.broker_name, r.queue_id)].add(r.client_id)
        return out

    e, o = sets(expected), sets(observed)
    want = {k: (sorted(e.get(k, ())), sorted(o.get(k, ())))
            for k in e.keys() | o.keys() if e.get(k, set()) != o.get(k, set())}
    assert got == want


def sticky(rows: list[tuple[str, int, str | None]], strategy: str = "cooperative-sticky",
           **keys: str) -> pd.DataFrame:
    """Expected rows of the recomputation: each claimant with its strategy."""
    return frame(rows).assign(**keys, strategy=[strategy if c else None for _, _, c in rows])


RECOMPUTED = [(None, 0, "A"), (None, 1, "B"), (None, 2, "A"), (None, 3, "B")]


def test_a_sticky_groups_other_balanced_assignment_is_no_drift():
    """Which balanced assignment the sticky assignors keep depends on what each member
    owned before the first snapshot: p0,p1 / p2,p3 is as valid as the recomputed
    p0,p2 / p1,p3 (it was 2 HELD_BY_OTHER and an OBSERVED_DRIFT)."""
    observed = frame([(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B")])
    for strategy in ("sticky", "cooperative-sticky"):
        assert drift_rows(sticky(RECOMPUTED, strategy), observed).empty
    # a holder read twice (two captures of one snapshot) is one holder
    assert drift_rows(sticky(RECOMPUTED), pd.concat([observed, observed.head(1)])).empty


def test_a_sticky_group_is_compared_queue_by_queue_when_its_assignment_could_not_be():
    cases = {
        "unbalanced": [(None, 0, "A"), (None, 1, "A"), (None, 2, "A"), (None, 3, "B")],
        "a queue not held": [(None, 0, "A"), (None, 1, "A"), (None, 2, "B")],
        "a queue held twice": [(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B"),
                               (None, 3, "A")],
        "a holder no queue of the topic goes to": [(None, 0, "A"), (None, 1, "A"),
                                                   (None, 2, "B"), (None, 3, "C")],
        "a queue nobody is expected to hold": [*RECOMPUTED, (None, 4, "A")],
    }
    for case, rows in cases.items():
        observed = frame(rows)
        assert not drift_rows(sticky(RECOMPUTED), observed).empty, case
        assert by_queue(drift_rows(sticky(RECOMPUTED), observed)) == by_queue(
            drift_rows(frame(RECOMPUTED), observed)), case


def test_only_groups_wholly_on_a_sticky_assignor_are_compared_by_properties():
    observed = frame([(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B")])
    mixed = sticky(RECOMPUTED)
    mixed.loc[1, "strategy"] = "range"
    assert len(drift_rows(mixed, observed)) == 2
    assert len(drift_rows(sticky(RECOMPUTED, "range"), observed)) == 2
    # another group's failing property leaves this one's verdict alone
    other = sticky([(None, 0, "X")], consumer_group="g2")
    unheld = frame([]).reindex(columns=observed.columns)
    got = drift_rows(pd.concat([sticky(RECOMPUTED), other]), pd.concat([observed, unheld]))
    assert got[["consumer_group", "kind"]].values.tolist() == [["g2", "NOT_HELD"]]
    got = drift_rows(pd.concat([sticky(RECOMPUTED), other]),
                     pd.concat([observed, frame([(None, 0, "Y")]).assign(consumer_group="g2")]))
    assert got[["consumer_group", "kind"]].values.tolist() == [["g2", "HELD_BY_OTHER"]]


def test_a_sticky_group_over_several_topics_is_balanced_over_all_of_them():
    recomputed = sticky([(None, 0, "A"), (None, 1, "B")], topic="t1")
    recomputed = pd.concat([recomputed, sticky([(None, 0, "B"), (None, 1, "A")], topic="t2")])
    same_counts = pd.concat([frame([(None, 0, "B"), (None, 1, "A")]).assign(topic="t1"),
                             frame([(None, 0, "A"), (None, 1, "B")]).assign(topic="t2")])
    assert drift_rows(recomputed, same_counts).empty
    one_holds_three = pd.concat([frame([(None, 0, "A"), (None, 1, "A")]).assign(topic="t1"),
                                 frame([(None, 0, "A"), (None, 1, "B")]).assign(topic="t2")])
    assert len(drift_rows(recomputed, one_holds_three)) == 3  # queue by queue
