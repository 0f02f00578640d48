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


def subscribers(topics: dict[str, list[str]], strategy: str = "cooperative-sticky",
                group: str = "g") -> pd.DataFrame:
    """The members rows of a group: each client's subscribed topics and its strategy."""
    return pd.DataFrame([{**K, "consumer_group": group, "topic": t, "client_id": c,
                          "strategy": strategy} for c, ts in topics.items() for t in ts])


RECOMPUTED = frame([(None, 0, "A"), (None, 1, "B"), (None, 2, "A"), (None, 3, "B")])
AB = subscribers({"A": ["t"], "B": ["t"]})


def test_a_sticky_groups_other_balanced_assignment_is_no_drift():
    """Which balanced assignment the sticky assignors keep depends on what each member
    owned before the first snapshot: p0,p1 / p2,p3 is as valid as the recomputed
    p0,p2 / p1,p3 (it was 2 HELD_BY_OTHER and an OBSERVED_DRIFT)."""
    observed = frame([(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B")])
    for strategy in ("sticky", "cooperative-sticky"):
        members = subscribers({"A": ["t"], "B": ["t"]}, strategy)
        assert drift_rows(RECOMPUTED, observed, members).empty
    # a holder read twice (two captures of one snapshot) is one holder
    assert drift_rows(RECOMPUTED, pd.concat([observed, observed.head(1)]), AB).empty
    # without the members, holder by holder
    assert len(drift_rows(RECOMPUTED, observed)) == 2


def test_a_sticky_group_is_compared_queue_by_queue_when_its_assignment_could_not_be():
    cases = {
        "unbalanced": [(None, 0, "A"), (None, 1, "A"), (None, 2, "A"), (None, 3, "B")],
        "a queue not held": [(None, 0, "A"), (None, 1, "A"), (None, 2, "B")],
        "a queue held twice": [(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B"),
                               (None, 3, "A")],
        "a holder not subscribing the topic": [(None, 0, "A"), (None, 1, "A"),
                                               (None, 2, "B"), (None, 3, "C")],
        "a queue nobody is expected to hold": [(None, 0, "A"), (None, 1, "A"),
                                               (None, 2, "B"), (None, 3, "B"), (None, 4, "A")],
    }
    members = subscribers({"A": ["t"], "B": ["t"], "C": ["u"]})
    for case, rows in cases.items():
        observed = frame(rows)
        got = drift_rows(RECOMPUTED, observed, members)
        assert not got.empty, case
        assert by_queue(got) == by_queue(drift_rows(RECOMPUTED, observed)), case


def test_a_sticky_group_that_fails_the_check_is_told_which_property_failed():
    """The OBSERVED_DRIFT sentence quotes why (it listed every property that could fail,
    whichever did): one reason per failing property, on each of the group's rows."""
    members = subscribers({"A": ["t"], "B": ["t"], "C": ["u"]})
    cases = {
        "client A holds 3 queues and B only 1, though B subscribes t, whose queues A holds "
        "(a balanced assignment moves one to B)":
            [(None, 0, "A"), (None, 1, "A"), (None, 2, "A"), (None, 3, "B")],
        "a queue is held by nobody": [(None, 0, "A"), (None, 1, "A"), (None, 2, "B")],
        "a queue is held by two or more clients":
            [(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B"), (None, 3, "A")],
        "client C holds queues of t without subscribing it":
            [(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "C")],
        "a queue the recomputation leaves unassigned is held":
            [(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B"), (None, 4, "A")],
        "a queue is held by nobody; client A holds 3 queues and B only 0, though B "
        "subscribes t, whose queues A holds (a balanced assignment moves one to B)":
            [(None, 0, "A"), (None, 1, "A"), (None, 2, "A")],
    }
    for reason, rows in cases.items():
        got = drift_rows(RECOMPUTED, frame(rows), members, explained=True)
        assert set(got["_sticky_break"]) == {reason}, (reason, got)
    # other groups' rows carry none; the drift table's columns come first, unchanged
    got = drift_rows(RECOMPUTED, frame(cases["a queue is held by nobody"]), explained=True)
    assert got["_sticky_break"].isna().all()
    assert list(got.columns[:-1]) == list(drift_rows(RECOMPUTED, frame(rows)).columns)


def test_only_groups_wholly_on_a_sticky_assignor_are_compared_by_properties():
    observed = frame([(None, 0, "A"), (None, 1, "A"), (None, 2, "B"), (None, 3, "B")])
    mixed = pd.concat([subscribers({"A": ["t"]}), subscribers({"B": ["t"]}, "range")])
    assert len(drift_rows(RECOMPUTED, observed, mixed)) == 2
    # a member subscribing nothing counts too: its group is not wholly sticky
    idle_range = pd.concat([AB, subscribers({"Z": [None]}, "range")])
    assert len(drift_rows(RECOMPUTED, observed, idle_range)) == 2
    # another group's failing property leaves this one's verdict alone
    other = frame([(None, 0, "X")]).assign(consumer_group="g2")
    both = pd.concat([AB, subscribers({"X": ["t"], "Y": ["t"]}, group="g2")])
    got = drift_rows(pd.concat([RECOMPUTED, other]),
                     pd.concat([observed, frame([(None, 0, "X"), (None, 0, "Y")])
                                .assign(consumer_group="g2")]), both)
    assert got[["consumer_group", "kind"]].values.tolist() == [["g2", "HELD_TWICE"]]


def test_fewer_partitions_than_members_and_uneven_subscriptions_are_no_drift():
    """Kafka's own check (verifyValidityAndBalance): valid, and no holder with two more
    queues than a member that could take one. The recomputation's takers and counts are
    one such assignment among several (probe-found: an idle member other than the
    recomputation's, or 0/1/2 where it gives 1/1/1, were drift)."""
    three = subscribers({"a": ["t"], "b": ["t"], "c": ["t"]})
    assert drift_rows(frame([(None, 0, "a"), (None, 1, "b")]),
                      frame([(None, 0, "b"), (None, 1, "c")]), three).empty
    uneven = subscribers({"a": ["T1"], "b": ["T1", "T2"], "c": ["T2"]})
    recomputed = pd.concat([frame([(None, 0, "a")]).assign(topic="T1"),
                            frame([(None, 0, "b"), (None, 1, "c")]).assign(topic="T2")])
    observed = pd.concat([frame([(None, 0, "b")]).assign(topic="T1"),
                          frame([(None, 0, "c"), (None, 1, "c")]).assign(topic="T2")])
    assert drift_rows(recomputed, observed, uneven).empty
    # c, subscribing T1 too, holding its queue: 3 queues against a's 0, and a could take it
    unfair = pd.concat([frame([(None, 0, "c")]).assign(topic="T1"),
                        frame([(None, 0, "c"), (None, 1, "c")]).assign(topic="T2")])
    members = pd.concat([uneven, subscribers({"c": ["T1"]})])
    assert drift_rows(recomputed, observed, members).empty
    assert not drift_rows(recomputed, unfair, members).empty


def test_a_sticky_group_over_several_topics_is_balanced_over_all_of_them():
    recomputed = pd.concat([frame([(None, 0, "A"), (None, 1, "B")]).assign(topic="t1"),
                            frame([(None, 0, "B"), (None, 1, "A")]).assign(topic="t2")])
    members = subscribers({"A": ["t1", "t2"], "B": ["t1", "t2"]})
    same_counts = pd.concat([frame([(None, 0, "B"), (None, 1, "A")]).assign(topic="t1"),
                             frame([(None, 0, "A"), (None, 1, "B")]).assign(topic="t2")])
    assert drift_rows(recomputed, same_counts, members).empty
    one_holds_three = pd.concat([frame([(None, 0, "A"), (None, 1, "A")]).assign(topic="t1"),
                                 frame([(None, 0, "A"), (None, 1, "B")]).assign(topic="t2")])
    assert len(drift_rows(recomputed, one_holds_three, members)) == 3  # queue by queue
