"""sticky_bucket: Kafka sticky groups chained over snapshots, pandas in, claims out (no
Spark). Expected claims are written out by hand from the assignors' rules."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rebalance_udfs.sticky_chain import MEMBER_SIDE, chained_members, sticky_bucket

COOP = "cooperative-sticky"


def _frames(snapshots: list[tuple[str, list[tuple]]], members: list[tuple],
            prior: list[tuple] = (), first_previous: str | None = None,
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One group ("c", "g"). `snapshots`: (snapshot_id, [(topic, broker, queue_id)]) in
    cluster order; the first one's predecessor is `first_previous` (not in the bucket).
    `members`: (snapshot_id, client_id, topic, strategy, message_model); `prior`: claims
    (snapshot_id it precedes, client_id, topic, broker, queue_id)."""
    rows, previous, in_run = [], first_previous, False
    for position, (snapshot, queues) in enumerate(snapshots, start=1):
        rows += [{"snapshot_id": snapshot, "cluster": "c", "consumer_group": "g", "topic": t,
                  "broker_name": b, "queue_id": q, "_position": position,
                  "_previous": previous, "_previous_in_run": in_run} for t, b, q in queues]
        previous, in_run = snapshot, True
    queues = pd.DataFrame(rows)
    queues["_row"] = range(len(queues))
    side = [{"snapshot_id": s, "cluster": "c", "consumer_group": "g", "client_id": c,
             "topic": t, "strategy": st, "message_model": mm, "broker_name": None,
             "queue_id": None, "_prior": False} for s, c, t, st, mm in members]
    side += [{"snapshot_id": s, "cluster": "c", "consumer_group": "g", "client_id": c,
              "topic": t, "strategy": None, "message_model": None, "broker_name": b,
              "queue_id": q, "_prior": True} for s, c, t, b, q in prior]
    return queues, pd.DataFrame(side, columns=MEMBER_SIDE)


def _claims(queues: pd.DataFrame, members: pd.DataFrame) -> list[tuple]:
    """(snapshot, broker, queue_id, client, strategy, status) in output order (topic "T")."""
    out = sticky_bucket(queues, members)
    q = queues.set_index("_row")
    return [(q.at[r, "snapshot_id"], q.at[r, "broker_name"], int(q.at[r, "queue_id"]),
             client, strategy, status)
            for r, client, strategy, status in zip(out["_row"], out["client_id"],
                                                   out["strategy"], out["status"], strict=True)]


def _members(snapshot: str, clients: str, strategy: str = "sticky") -> list[tuple]:
    return [(snapshot, c, "T", strategy, None) for c in clients]


def _topic(n: int) -> list[tuple]:
    return [("T", None, q) for q in range(n)]


def test_second_snapshot_keeps_owners_and_gives_the_new_member_the_rest() -> None:
    queues, members = _frames([("s1", _topic(6)), ("s2", _topic(6))],
                              _members("s1", "ab") + _members("s2", "abc"))
    # s1: dealt round-robin by member id; s2: a and b keep two each, c takes what they give
    assert _claims(queues, members) == [
        ("s1", None, 0, "a", "sticky", "OK"), ("s1", None, 1, "b", "sticky", "OK"),
        ("s1", None, 2, "a", "sticky", "OK"), ("s1", None, 3, "b", "sticky", "OK"),
        ("s1", None, 4, "a", "sticky", "OK"), ("s1", None, 5, "b", "sticky", "OK"),
        ("s2", None, 0, "a", "sticky", "OK"), ("s2", None, 1, "b", "sticky", "OK"),
        ("s2", None, 2, "a", "sticky", "OK"), ("s2", None, 3, "b", "sticky", "OK"),
        ("s2", None, 4, "c", "sticky", "OK"), ("s2", None, 5, "c", "sticky", "OK"),
    ]


def test_prior_claims_stand_in_for_a_predecessor_outside_the_bucket() -> None:
    # s2 alone, its predecessor s1 given as prior claims: the same s2 as chained above
    prior = [("s2", c, "T", None, q) for c, q in
             [("a", 0), ("b", 1), ("a", 2), ("b", 3), ("a", 4), ("b", 5)]]
    queues, members = _frames([("s2", _topic(6))], _members("s2", "abc"), prior,
                              first_previous="s1")
    assert [(q, c) for _, _, q, c, _, _ in _claims(queues, members)] == [
        (0, "a"), (1, "b"), (2, "a"), (3, "b"), (4, "c"), (5, "c")]


def test_a_prior_queue_claimed_twice_has_no_previous_owner() -> None:
    prior = [("s2", "b", "T", None, 0), ("s2", "a", "T", None, 0), ("s2", "b", "T", None, 1)]
    queues, members = _frames([("s2", _topic(2))], _members("s2", "ab"), prior,
                              first_previous="s1")
    # b keeps queue 1; queue 0 (contended before) goes to a, the member below its quota
    assert [(q, c) for _, _, q, c, _, _ in _claims(queues, members)] == [(0, "a"), (1, "b")]


def test_a_removed_queue_is_dropped_and_a_shifted_one_keeps_its_owner() -> None:
    s1 = [("T", "b2", q) for q in range(4)]
    # s2: broker b1 (sorts first, so every b2 queue's partition index shifts by 2) is
    # added and b2:3 is gone
    s2 = [("T", "b1", 0), ("T", "b1", 1), *[("T", "b2", q) for q in range(3)]]
    queues, members = _frames([("s1", s1), ("s2", s2)],
                              _members("s1", "ab") + _members("s2", "ab"))
    assert _claims(queues, members) == [
        ("s1", "b2", 0, "a", "sticky", "OK"), ("s1", "b2", 1, "b", "sticky", "OK"),
        ("s1", "b2", 2, "a", "sticky", "OK"), ("s1", "b2", 3, "b", "sticky", "OK"),
        # a keeps b2:0 and b2:2, b keeps b2:1; b (below the minimum quota of 2) takes
        # b1:0, the one extra (quota 3) goes to a, first by id
        ("s2", "b1", 0, "b", "sticky", "OK"), ("s2", "b1", 1, "a", "sticky", "OK"),
        ("s2", "b2", 0, "a", "sticky", "OK"), ("s2", "b2", 1, "b", "sticky", "OK"),
        ("s2", "b2", 2, "a", "sticky", "OK"),
    ]


def test_a_broadcasting_member_claims_every_queue_after_the_clustering_owner() -> None:
    queues, members = _frames([("s1", _topic(3))],
                              [("s1", "z", "T", "sticky", "BROADCASTING"),
                               ("s1", "b", "T", "sticky", None)])
    assert _claims(queues, members) == [
        ("s1", None, 0, "b", "sticky", "OK"), ("s1", None, 0, "z", "sticky", "BROADCAST"),
        ("s1", None, 1, "b", "sticky", "OK"), ("s1", None, 1, "z", "sticky", "BROADCAST"),
        ("s1", None, 2, "b", "sticky", "OK"), ("s1", None, 2, "z", "sticky", "BROADCAST"),
    ]


def test_a_snapshot_without_members_leaves_its_queues_unconsumed() -> None:
    queues, members = _frames([("s1", _topic(2)), ("s2", _topic(2))], _members("s1", "a"))
    assert _claims(queues, members) == [
        ("s1", None, 0, "a", "sticky", "OK"), ("s1", None, 1, "a", "sticky", "OK"),
        ("s2", None, 0, None, None, "UNCONSUMED"), ("s2", None, 1, None, None, "UNCONSUMED"),
    ]


def test_cooperative_only_when_every_clustering_member_runs_it() -> None:
    # s1: a owns queues 0-3; s2 adds queue 4 and members b, d. Eager sticky hands a's
    # surplus (2, 3) out directly; cooperative first withholds them (a must revoke), so
    # queue 4 is dealt first and the settled owners differ.
    def owners(strategies: dict[str, str]) -> dict[int, str]:
        queues, members = _frames(
            [("s1", _topic(4)), ("s2", _topic(5))],
            [("s1", "a", "T", strategies["a"], None)]
            + [("s2", c, "T", s, None) for c, s in strategies.items()])
        return {q: c for snap, _, q, c, _, _ in _claims(queues, members) if snap == "s2"}

    cooperative = owners({"a": COOP, "b": COOP, "d": COOP})
    assert cooperative == {0: "a", 1: "a", 2: "d", 3: "b", 4: "b"}
    # one member on eager sticky: the group cannot agree on cooperative, eager it is
    assert owners({"a": COOP, "b": "sticky", "d": COOP}) == {
        0: "a", 1: "a", 2: "b", 3: "d", 4: "b"}
    assert owners({"a": "sticky", "b": "sticky", "d": "sticky"}) == {
        0: "a", 1: "a", 2: "b", 3: "d", 4: "b"}


def test_empty_bucket() -> None:
    queues, members = _frames([("s1", [])], [])
    out = sticky_bucket(queues.iloc[0:0], members)
    assert out.empty and list(out.columns) == ["_row", "client_id", "strategy", "status"]


def test_a_bucket_is_its_groups_run_alone_whatever_the_row_order() -> None:
    # three groups in two clusters, their snapshots and members interleaved and shuffled:
    # each group's claims are those it gets alone (the chain never crosses groups)
    def group(cluster: str, name: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        rng = np.random.default_rng(seed)
        snapshots = [(s, [(t, b, q) for t in ("T", "U") for b in (None, "b1")
                          for q in range(int(rng.integers(1, 5)))]) for s in ("s1", "s2", "s3")]
        clients = ["a", "B", "c10", "c9"]
        members = [(s, c, t, COOP if name == "g1" else "sticky", None)
                   for s, _ in snapshots for c in rng.choice(clients, 3, replace=False)
                   for t in ("T", "U") if rng.random() < 0.8]
        members += [("s2", "z", "U", "sticky", "BROADCASTING")]
        prior = [("s1", str(rng.choice(clients)), "T", None, q) for q in range(3)]
        queues, side = _frames(snapshots, members, prior, first_previous="s0")
        queues[["cluster", "consumer_group"]] = cluster, name
        side[["cluster", "consumer_group"]] = cluster, name
        return queues, side

    groups = [group("c", "g1", 1), group("c", "g2", 2), group("d", "g1", 3)]
    alone = []
    for queues, members in groups:
        out = sticky_bucket(queues, members)
        alone.append(out.assign(_row=queues["_row"].to_numpy()[out["_row"]].astype(str)
                                + "@" + queues["cluster"].iloc[0]
                                + queues["consumer_group"].iloc[0]))
    queues = pd.concat([q.assign(_key=q["_row"].astype(str) + "@" + q["cluster"]
                                 + q["consumer_group"]) for q, _ in groups])
    queues = queues.sample(frac=1, random_state=7).reset_index(drop=True)
    queues["_row"] = range(len(queues))
    members = pd.concat([m for _, m in groups]).sample(frac=1, random_state=8)
    together = sticky_bucket(queues.drop(columns="_key"), members)
    together["_row"] = queues["_key"].to_numpy()[together["_row"]]
    expected = pd.concat(alone).sort_values(["_row", "client_id"], ignore_index=True)
    got = together.sort_values(["_row", "client_id"], ignore_index=True)
    assert (got["status"] == "OK").sum() > 0 and (got["status"] == "BROADCAST").sum() > 0
    pd.testing.assert_frame_equal(got, expected)


def test_a_member_subscribing_nothing_met_first_refuses_its_share() -> None:
    """Kafka's assignor gets every member that joined. Member "0" subscribes nothing and
    upstream's HashMap meets it first (bucket 0 before a's 1 and b's 2), so
    allSubscriptionsEqual holds and the constrained path deals T's 4 partitions among all
    three: 0 gets 0 and 3, a 1, b 2 (upstream's compiled assignors gave these). 0 refuses
    and rejoins; the next round starts from a's 1 and b's 2 and gives a 3, 0 queue 0
    again; the one after changes nothing: queue 0 is nobody's. In s2 c joins at quota 1:
    a keeps 1, b 2, c takes 3, and 0 is dealt queue 0 again."""
    queues, members = _frames([("s1", _topic(4)), ("s2", _topic(4))],
                              [*_members("s1", "ab"), ("s1", "0", None, "sticky", None),
                               *_members("s2", "abc"), ("s2", "0", None, "sticky", None)])
    assert _claims(queues, members) == [
        ("s1", None, 0, None, None, "UNCONSUMED"), ("s1", None, 1, "a", "sticky", "OK"),
        ("s1", None, 2, "b", "sticky", "OK"), ("s1", None, 3, "a", "sticky", "OK"),
        ("s2", None, 0, None, None, "UNCONSUMED"), ("s2", None, 1, "a", "sticky", "OK"),
        ("s2", None, 2, "b", "sticky", "OK"), ("s2", None, 3, "c", "sticky", "OK"),
    ]


def test_a_member_subscribing_nothing_met_after_the_others_changes_nothing() -> None:
    """"c" (bucket 3) is met after a subscriber: the general path, where a member gets
    only partitions of topics it subscribes, and every queue is claimed."""
    queues, members = _frames([("s1", _topic(4))],
                              [*_members("s1", "ab"), ("s1", "c", None, "sticky", None)])
    assert {c for *_, c, _, _ in _claims(queues, members)} == {"a", "b"}


def test_members_subscribing_nothing_join_the_chain_only_in_wholly_sticky_groups() -> None:
    """chained_members: the sticky rows, and a sticky member's row naming no topic only
    where no clustering member runs another assignor."""
    rows = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": g, "client_id": c,
         "topic": t, "strategy": st, "message_model": mm}
        for g, c, t, st, mm in (
            ("whole", "a", "T", "sticky", None), ("whole", "0", None, "sticky", None),
            ("whole", "x", "T", "range", "BROADCASTING"),
            ("mixed", "a", "T", "sticky", None), ("mixed", "0", None, "sticky", None),
            ("mixed", "r", "T", "range", None))])
    taken = chained_members(rows)
    assert sorted(zip(taken["consumer_group"], taken["client_id"], strict=True)) == [
        ("mixed", "a"), ("whole", "0"), ("whole", "a")]
