"""A Kafka group whose members run different assignors: each member takes its own
assignor's share among all the members subscribing (README: "Each member runs its own
strategy over the group's full client list"). Kafka's coordinator would not let such a
group form; the inputs can still describe one, and the audit shows what each member's
assignor would claim. `range` counted every subscriber; `roundrobin` dealt over its own
members only, so a lone roundrobin member claimed every partition."""

from __future__ import annotations

import pandas as pd

from rebalance_udfs.allocate import allocate_bucket


def _member(client: str, topic: str, strategy: str) -> dict:
    return {"snapshot_id": "s", "cluster": "c", "consumer_group": "K", "client_id": client,
            "client_addr": None, "topic": topic, "strategy": strategy,
            "message_model": None, "client_room": None, "virtual_nodes": None,
            "rooms": None, "config_queues": None}


def _queues(**partitions: int) -> pd.DataFrame:
    return pd.DataFrame([{"snapshot_id": "s", "cluster": "c", "consumer_group": "K",
                          "topic": topic, "broker_name": None, "queue_id": i,
                          "broker_room": None}
                         for topic, n in partitions.items() for i in range(n)])


def _claims(queues: pd.DataFrame, members: list[dict]) -> dict:
    out = allocate_bucket(queues, pd.DataFrame(members))
    return {(t, q): (sorted(c for c in g["client_id"] if c is not None), set(g["status"]))
            for (t, q), g in out.groupby(["topic", "queue_id"])}


def test_a_roundrobin_member_beside_a_range_member_takes_its_deal_among_both() -> None:
    """a on range takes 0-1 of KT (2 subscribers); b's roundrobin deal over [a, b] is 1, 3."""
    got = _claims(_queues(KT=4), [_member("a", "KT", "range"),
                                  _member("b", "KT", "roundrobin")])
    assert got == {("KT", 0): (["a"], {"OK"}), ("KT", 1): (["a", "b"], {"CONTENDED"}),
                   ("KT", 2): ([], {"UNCONSUMED"}), ("KT", 3): (["b"], {"OK"})}


def test_the_deal_over_all_members_skips_the_ones_not_subscribing_and_carries_over() -> None:
    """Members a (range: A, B), b (roundrobin: A, B), c (roundrobin: B). The deal over
    [a, b, c] of A0 A1 A2 B0 B1: A0 a, A1 b, A2 a (c skipped: not on A), B0 b, B1 c. Range:
    A over [a, b] gives a A0-A1; B over [a, b, c] gives a B0."""
    got = _claims(_queues(A=3, B=2), [
        _member("a", "A", "range"), _member("a", "B", "range"),
        _member("b", "A", "roundrobin"), _member("b", "B", "roundrobin"),
        _member("c", "B", "roundrobin")])
    assert got == {("A", 0): (["a"], {"OK"}), ("A", 1): (["a", "b"], {"CONTENDED"}),
                   ("A", 2): ([], {"UNCONSUMED"}), ("B", 0): (["a", "b"], {"CONTENDED"}),
                   ("B", 1): (["c"], {"OK"})}


def test_a_group_all_on_roundrobin_is_dealt_as_before() -> None:
    got = _claims(_queues(A=3, B=2), [_member(c, t, "roundrobin")
                                      for c in ("a", "b") for t in ("A", "B")])
    assert {k: v[0] for k, v in got.items()} == {
        ("A", 0): ["a"], ("A", 1): ["b"], ("A", 2): ["a"], ("B", 0): ["b"], ("B", 1): ["a"]}
