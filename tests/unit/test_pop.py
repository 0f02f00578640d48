"""Broker-side POP allocation against the broker's rule, computed by hand."""

from __future__ import annotations

import pandas as pd

from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from vocabulary.columns import MODE_COLUMNS


def _allocate(clients: list[str], queues: int, share: int, strategy: str = "AVG",
              mode: str = "POP", topic: str = "T") -> pd.DataFrame:
    q = pd.DataFrame([{"snapshot_id": "s", "cluster": "c", "consumer_group": "g",
                       "topic": topic, "broker_name": "b", "queue_id": i, "broker_room": None}
                      for i in range(queues)])[QUEUE_COLUMNS]
    m = pd.DataFrame([{"snapshot_id": "s", "cluster": "c", "consumer_group": "g",
                       "client_id": cid, "client_addr": None, "topic": topic,
                       "strategy": strategy, "message_model": None, "client_room": None,
                       "virtual_nodes": None, "rooms": None, "config_queues": None,
                       "allocation_mode": mode, "pop_share_queue_num": share}
                      for cid in clients])[[*MEMBER_COLUMNS, *MODE_COLUMNS]]
    return allocate_bucket(q, m)


def _held(out: pd.DataFrame) -> dict[str, set[int]]:
    claimed = out[out["client_id"].notna()]
    return {c: set(rows["queue_id"]) for c, rows in claimed.groupby("client_id")}


def test_pop_share_1_over_3_clients_and_8_queues() -> None:
    """AVG shares of 8 queues over [a, b, c]: a {0,1,2}, b {3,4,5}, c {6,7}. With
    popShareQueueNum 1 each client also pops the share of the next client in the ring:
    a = a + b, b = b + c, c = c + a. Every queue is popped by exactly two clients."""
    out = _allocate(["a", "b", "c"], 8, 1)
    assert _held(out) == {"a": {0, 1, 2, 3, 4, 5}, "b": {3, 4, 5, 6, 7},
                          "c": {6, 7, 0, 1, 2}}
    assert set(out["status"]) == {"SHARED"}


def test_pop_share_at_or_above_clients_minus_one_pops_everything() -> None:
    for share in (0, -1, 2, 5):
        held = _held(_allocate(["a", "b", "c"], 4, share))
        assert held == {c: {0, 1, 2, 3} for c in "abc"}, share


def test_pop_more_clients_than_queues_takes_index_mod_queues() -> None:
    held = _held(_allocate(["a", "b", "c", "d", "e"], 2, 1))
    assert held == {"a": {0}, "b": {1}, "c": {0}, "d": {1}, "e": {0}}


def test_pop_ring_with_avg_by_circle_and_single_owner_is_ok() -> None:
    # by circle over 5 queues, [a, b, c, d]: a {0,4}, b {1}, c {2}, d {3}; share 1
    out = _allocate(["a", "b", "c", "d"], 5, 1, strategy="AVG_BY_CIRCLE")
    assert _held(out) == {"a": {0, 4, 1}, "b": {1, 2}, "c": {2, 3}, "d": {3, 0, 4}}
    assert set(out["status"]) == {"SHARED"}


def test_message_mode_every_client_every_queue_shared() -> None:
    out = _allocate(["a", "b"], 3, 0, mode="MESSAGE")
    assert _held(out) == {"a": {0, 1, 2}, "b": {0, 1, 2}}
    assert set(out["status"]) == {"SHARED"}


def test_client_and_broker_modes_allocate_as_the_client_does() -> None:
    for mode in (None, "CLIENT", "BROKER"):
        out = _allocate(["a", "b"], 4, 1, mode=mode)
        assert _held(out) == {"a": {0, 1}, "b": {2, 3}}
        assert set(out["status"]) == {"OK"}


def test_a_pop_groups_retry_topic_is_allocated_not_popped() -> None:
    """The broker allocates %RETRY% topics as a PULL group's (QueryAssignmentProcessor:
    a retry topic is never in POP mode): plain AVG, one owner per queue, whatever
    popShareQueueNum says (it was popped: two or three SHARED claimants per queue)."""
    for share in (0, 1):
        out = _allocate(["p1", "p2", "p3", "p4"], 8, share, topic="%RETRY%G")
        assert _held(out) == {"p1": {0, 1}, "p2": {2, 3}, "p3": {4, 5}, "p4": {6, 7}}
        assert set(out["status"]) == {"OK"}
    out = _allocate(["p1", "p2", "p3"], 4, 0, topic="%RETRY%G")
    assert _held(out) == {"p1": {0, 1}, "p2": {2}, "p3": {3}}


def test_pop_with_a_strategy_the_broker_lacks_is_what_the_clients_compute() -> None:
    """The broker pops only AVG and AVG_BY_CIRCLE; for another strategy it answers nothing
    (BROKER_UNSUPPORTED_STRATEGY) and, as for BROKER, the rows are what the clients
    would compute: CONFIG's own lists here (they were an AVG ring, all SHARED)."""
    q = pd.DataFrame([{"snapshot_id": "s", "cluster": "c", "consumer_group": "g",
                       "topic": "T", "broker_name": "b", "queue_id": i, "broker_room": None}
                      for i in range(4)])[QUEUE_COLUMNS]
    lists = {"a": "T@b:3", "b": "T@b:0,T@b:1", "c": "T@b:2"}
    m = pd.DataFrame([{"snapshot_id": "s", "cluster": "c", "consumer_group": "g",
                       "client_id": cid, "client_addr": None, "topic": "T",
                       "strategy": "CONFIG", "message_model": None, "client_room": None,
                       "virtual_nodes": None, "rooms": None, "config_queues": lists[cid],
                       "allocation_mode": "POP", "pop_share_queue_num": 1}
                      for cid in "abc"])[[*MEMBER_COLUMNS, *MODE_COLUMNS]]
    out = allocate_bucket(q, m)
    assert _held(out) == {"a": {3}, "b": {0, 1}, "c": {2}}
    assert set(out["status"]) == {"OK"}
