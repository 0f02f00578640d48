"""What-if candidates simulated with the real kernels, on hand-checkable groups."""

from __future__ import annotations

import pandas as pd

from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.what_if import (
    ASSIGNED_COLUMNS,
    COLUMNS,
    WHAT_IF_MEMBER_COLUMNS,
    best_change,
    what_if_bucket,
)


def _group(clients: list[str], topics: dict[str, int], strategy: str,
           virtual_nodes: int | None = None, group: str = "g") -> tuple[pd.DataFrame, ...]:
    queues = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": group, "topic": t,
         "broker_name": "broker-a", "queue_id": q, "broker_room": None,
         "committed_offset": 100, "consumed_offset": 130}
        for t, n in topics.items() for q in range(n)])
    members = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": group, "client_id": cid,
         "client_addr": None, "topic": t, "strategy": strategy, "message_model": None,
         "client_room": None, "virtual_nodes": virtual_nodes, "rooms": None,
         "config_queues": None}
        for cid in clients for t in topics])
    today = allocate_bucket(queues[[*QUEUE_COLUMNS, "committed_offset", "consumed_offset"]],
                            members[MEMBER_COLUMNS])
    return today[ASSIGNED_COLUMNS], members[WHAT_IF_MEMBER_COLUMNS]


def test_seed_group_gets_a_change_reaching_max_1() -> None:
    """4 clients, 2 topics of 2 queues, AVG: today max 2 where pooled is 1."""
    out = what_if_bucket(*_group([f"consumer-{i}" for i in range(1, 5)],
                                 {"TopicA": 2, "TopicB": 2}, "AVG"))
    assert list(out.columns) == COLUMNS
    now = out[out["is_current"]].iloc[0]
    assert (now["max_queues"], now["clients"], now["idle_clients"], now["skew"]) == (2, 4, 2, 1)
    best = out[out["recommended"]].iloc[0]
    assert best["max_queues"] == 1 and best["skew"] == 0 and best["clients"] == 4
    assert out["recommended"].sum() == 1
    # roundrobin pools the topics: A0 c1, A1 c2, B0 c3, B1 c4: two queues move
    rr = out[out["candidate"] == "4 clients, roundrobin"].iloc[0]
    assert (rr["max_queues"], rr["queues_moved"], rr["estimated_duplicates"]) == (1, 2, 60)
    split = out[out["split_by_topic"]].iloc[0]
    assert (split["clients"], split["max_queues"]) == (4, 1)
    # AVG never helps: the first-sorted client wins queue 0 of both topics at any count
    avg = out[(out["strategy"] == "AVG") & ~out["is_current"] & ~out["split_by_topic"]]
    assert avg["max_queues"].min() == 2 and avg["clients"].max() == 8
    assert "max 1 queues per client instead of 2" in best_change(out)


def test_added_clients_get_synthetic_ids_and_removed_are_last_sorted() -> None:
    out = what_if_bucket(*_group(["a", "b"], {"T": 4}, "AVG"))
    by = out.set_index("candidate")
    # today a {0,1}, b {2,3}. 1 client keeps "a": two queues move; 3 clients:
    # a {0,1}, b {2}, ~whatif-0001 {3}: one moves
    assert by.loc["1 clients, AVG", "queues_moved"] == 2
    assert by.loc["3 clients, AVG", "queues_moved"] == 1
    assert by.loc["4 clients, AVG", ["max_queues", "idle_clients"]].tolist() == [1, 0]


def test_consistent_hash_group_like_the_issue_has_a_fix_at_todays_count() -> None:
    clients = [f"10.0.0.{i}@{9000 + i}" for i in range(1, 15)]
    out = what_if_bucket(*_group(clients, {"t1": 32, "t2": 32, "t3": 32}, "CONSISTENT_HASH",
                                 virtual_nodes=10))
    now = out[out["is_current"]].iloc[0]
    assert now["skew"] > 0
    at_14 = out[(out["clients"] == 14) & ~out["is_current"] & ~out["split_by_topic"]]
    fixes = at_14[at_14["max_queues"] < now["max_queues"]]
    assert {"roundrobin"} <= set(fixes["strategy"])
    ch40 = at_14[(at_14["strategy"] == "CONSISTENT_HASH") & (at_14["virtual_nodes"] == 40)]
    assert len(ch40) == 1


def test_groups_without_clustering_clients_or_queues_get_no_rows() -> None:
    assigned, members = _group(["a", "b"], {"T": 2}, "AVG")
    broadcast = members.assign(message_model="BROADCASTING")
    assert what_if_bucket(assigned, broadcast).empty
    assert what_if_bucket(assigned.iloc[0:0], members).empty
