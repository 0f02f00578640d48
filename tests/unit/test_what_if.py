"""What-if candidates simulated with the real kernels, on hand-checkable groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from rebalance_udfs import what_if
from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.hashring import build_rings, node_hashes, route
from rebalance_udfs.what_if import (
    ASSIGNED_COLUMNS,
    COLUMNS,
    TODAY_NO_OPTION,
    UNCLAIMED,
    WHAT_IF_MEMBER_COLUMNS,
    best_change,
    what_if_bucket,
)
from vocabulary.columns import MODE_COLUMNS
from vocabulary.schemas import WHAT_IF_ARROW_SCHEMA


def _group(clients: list[str], topics: dict[str, int], strategy: str,
           virtual_nodes: int | None = None, group: str = "g",
           mode: str | None = None, pop_share: int | None = None) -> tuple[pd.DataFrame, ...]:
    queues = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": group, "topic": t,
         "broker_name": "broker-a", "queue_id": q, "broker_room": None,
         "committed_offset": 100, "consumed_offset": 130}
        for t, n in topics.items() for q in range(n)])
    members = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": group, "client_id": cid,
         "client_addr": None, "topic": t, "strategy": strategy, "message_model": None,
         "client_room": None, "virtual_nodes": virtual_nodes, "rooms": None,
         "config_queues": None, "allocation_mode": mode, "pop_share_queue_num": pop_share}
        for cid in clients for t in topics])
    today = allocate_bucket(queues[[*QUEUE_COLUMNS, "committed_offset", "consumed_offset"]],
                            members[[*MEMBER_COLUMNS, *MODE_COLUMNS]])
    return today[ASSIGNED_COLUMNS], members[WHAT_IF_MEMBER_COLUMNS]


def test_seed_group_gets_a_change_reaching_max_1() -> None:
    """4 clients, 2 topics of 2 queues, AVG: today max 2 where pooled is 1."""
    out = what_if_bucket(*_group([f"consumer-{i}" for i in range(1, 5)],
                                 {"TopicA": 2, "TopicB": 2}, "AVG"))
    assert list(out.columns) == [*COLUMNS, UNCLAIMED, TODAY_NO_OPTION]
    now = out[out["is_current"]].iloc[0]
    assert (now["max_queues"], now["clients"], now["idle_clients"], now["skew"]) == (2, 4, 2, 1)
    best = out[out["recommended"]].iloc[0]
    assert best["max_queues"] == 1 and best["skew"] == 0 and best["clients"] == 4
    assert out["recommended"].sum() == 1
    # roundrobin pools the topics: A0 c1, A1 c2, B0 c3, B1 c4: two queues move
    rr = out[out["candidate"] == "4 clients, roundrobin"].iloc[0]
    assert (rr["max_queues"], rr["queues_moved"], rr["estimated_duplicates"]) == (1, 2, 60)
    # no queue moves: no moved queue's estimate is known, so null, as rebalance_churn's
    # (today's row and every candidate that keeps today's owners wrote 0)
    still = out[out["queues_moved"] == 0]
    assert still["is_current"].any() and (~still["is_current"]).any()
    assert still["estimated_duplicates"].isna().all()
    split = out[out["split_by_topic"]].iloc[0]
    assert (split["clients"], split["max_queues"]) == (4, 1)
    # AVG never helps: the first-sorted client wins queue 0 of both topics at any count
    avg = out[(out["strategy"] == "AVG") & ~out["is_current"] & ~out["split_by_topic"]]
    assert avg["max_queues"].min() == 2 and avg["clients"].max() == 8
    assert "max 1 queue per client instead of 2" in best_change(out)


def test_added_clients_get_synthetic_ids_and_removed_are_last_sorted() -> None:
    out = what_if_bucket(*_group(["a", "b"], {"T": 4}, "AVG"))
    by = out.set_index("candidate")
    # today a {0,1}, b {2,3}. 1 client keeps "a": two queues move; 3 clients:
    # a {0,1}, b {2}, ~whatif-0001 {3}: one moves
    assert by.loc["1 client, AVG", "queues_moved"] == 2
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


def test_the_recommended_row_adds_no_client_though_added_clients_lower_the_max() -> None:
    """3 clients, 2 topics of 4 queues, AVG: the first client wins 2 queues of each topic
    (max 4). Roundrobin at 3 clients pools them (3, 3, 2), as does CONSISTENT_HASH with 40
    virtual nodes here (fewer moves); AVG at 4 clients reaches max 2, listed in the table,
    but the recommendation fixes the strategy, not the fleet size."""
    out = what_if_bucket(*_group(["a", "b", "c"], {"T1": 4, "T2": 4}, "AVG"))
    assert out[out["is_current"]].iloc[0]["max_queues"] == 4
    best = out[out["recommended"]].iloc[0]
    assert (best["clients"], best["max_queues"], bool(best["is_current"])) == (3, 3, False)
    assert out[out["candidate"] == "3 clients, roundrobin"].iloc[0]["max_queues"] == 3
    assert out["recommended"].sum() == 1
    assert out[out["clients"] > 3]["max_queues"].min() == 2
    assert best_change(out).startswith("run 3 clients, ")
    assert "(max 3 queues per client instead of 4" in best_change(out)


def test_a_rocketmq_group_is_not_recommended_a_kafka_assignor_that_pools_its_topics(
        ) -> None:
    """The issue's 14 CONSISTENT_HASH clients over 3 topics of 32 queues: Kafka's
    roundrobin pools the topics (max 7), but RocketMQ rebalances topic by topic, so no
    RocketMQ client can run it; it stays in the table as the comparison. The best the
    group can deploy is max 9 (3 queues of each topic): AVG_BY_CIRCLE at 14 clients, or
    AVG at 11 (ceil(32 / 11) = 3), recommended for its 3 clients fewer."""
    clients = [f"10.0.0.{i}@{9000 + i}" for i in range(1, 15)]
    out = what_if_bucket(*_group(clients, {"t1": 32, "t2": 32, "t3": 32}, "CONSISTENT_HASH",
                                 virtual_nodes=10))
    by = out.set_index("candidate")
    assert by.loc["14 clients, roundrobin", "max_queues"] == 7
    assert by.loc["14 clients, AVG_BY_CIRCLE", "max_queues"] == 9
    best = out[out["recommended"]].iloc[0]
    assert (best["candidate"], best["max_queues"]) == ("11 clients, AVG", 9)
    runnable = out[~out["strategy"].isin(["range", "roundrobin"]) & (out["clients"] <= 14)]
    assert runnable["max_queues"].min() == 9
    assert best_change(out).startswith("run 11 clients, AVG (max 9 queues per client instead "
                                       "of 14, with 3 clients fewer;")


def test_idle_consistent_hash_clients_are_told_fewer_clients_under_avg() -> None:
    """15 CONSISTENT_HASH clients (10 virtual nodes) over one topic of 8 queues: the ring
    gives two clients 2 queues while 9 idle (MORE_CLIENTS_THAN_QUEUES says run fewer).
    Fewer CONSISTENT_HASH clients still load some client twice; AVG at 8 clients gives
    each one queue, so the group's client counts below today's are swept under AVG too."""
    clients = [f"10.231.0.{i}@10231" for i in range(1, 16)]
    out = what_if_bucket(*_group(clients, {"t": 8}, "CONSISTENT_HASH", virtual_nodes=10))
    now = out[out["is_current"]].iloc[0]
    assert (now["max_queues"], now["idle_clients"]) == (2, 9)
    ring = out[(out["strategy"] == "CONSISTENT_HASH") & (out["clients"] <= 15)]
    assert ring["max_queues"].min() == 2
    avg_below = out[(out["strategy"] == "AVG") & (out["clients"] < 15)]
    assert sorted(avg_below["clients"]) == list(range(1, 15))
    best = out[out["recommended"]].iloc[0]
    assert (best["candidate"], best["max_queues"], best["idle_clients"]) == (
        "8 clients, AVG", 1, 0)
    assert best_change(out) == ("run 8 clients, AVG (max 1 queue per client instead of 2, "
                                "with 7 clients fewer; 8 queues move once)")


def test_a_group_whose_sweep_is_even_gets_no_second_sweep() -> None:
    """AVG_BY_CIRCLE loads a count's clients as AVG does, and an AVG group's sweep is AVG:
    neither gets AVG rows below today's count beyond the sweep's own."""
    for strategy in ("AVG", "AVG_BY_CIRCLE"):
        out = what_if_bucket(*_group(["a", "b", "c", "d"], {"T1": 3, "T2": 5}, strategy))
        below = out[~out["is_current"] & (out["clients"] < 4) & ~out["split_by_topic"]]
        assert set(below["strategy"]) == {strategy}
        assert sorted(below["clients"]) == [1, 2, 3]


def test_a_kafka_group_is_not_recommended_a_rocketmq_strategy() -> None:
    """2 range clients, topics of 9, 1 and 3 partitions: the first client wins the larger
    half of each (5 + 1 + 2, max 8). CONSISTENT_HASH with 40 virtual nodes reaches the same
    max 7 as roundrobin with one move fewer, but a Kafka member has no such assignor."""
    out = what_if_bucket(*_group(["c0", "c1"], {"T0": 9, "T1": 1, "T2": 3}, "range"))
    by = out.set_index("candidate")
    ch40 = by.loc["2 clients, CONSISTENT_HASH (40 virtual nodes)"]
    rr = by.loc["2 clients, roundrobin"]
    assert (ch40["max_queues"], ch40["queues_moved"]) == (7, 6)
    assert (rr["max_queues"], rr["queues_moved"]) == (7, 7)
    assert out[out["is_current"]].iloc[0]["max_queues"] == 8
    best = out[out["recommended"]].iloc[0]
    assert best["candidate"] == "2 clients, roundrobin"


def test_a_group_the_broker_allocates_is_recommended_only_what_the_broker_computes(
        ) -> None:
    """3 clients, 2 topics of 4 queues, AVG: its clients could pool the topics with
    CONSISTENT_HASH (40 virtual nodes, max 3), but where the broker allocates
    (clientRebalance=false) it computes AVG and AVG_BY_CIRCLE only: the best it
    can do is today's max 4 with a client fewer. The CONSISTENT_HASH rows stay listed."""
    client_side = what_if_bucket(*_group(["a", "b", "c"], {"T1": 4, "T2": 4}, "AVG"))
    assert client_side[client_side["recommended"]].iloc[0]["candidate"] == (
        "3 clients, CONSISTENT_HASH (40 virtual nodes)")
    out = what_if_bucket(*_group(["a", "b", "c"], {"T1": 4, "T2": 4}, "AVG", mode="BROKER"))
    best = out[out["recommended"]].iloc[0]
    assert (best["candidate"], best["max_queues"]) == ("2 clients, AVG", 4)
    assert best_change(out).startswith("run 2 clients, AVG (max 4 queues per client as today")
    pd.testing.assert_frame_equal(out.drop(columns="recommended"),
                                  client_side.drop(columns="recommended"))


def _pops(out: pd.DataFrame, n: int, strategy: str = "AVG") -> tuple[int, int, int]:
    row = out[(out["clients"] == n) & (out["strategy"] == strategy) & ~out["split_by_topic"]
              & ~out["is_current"]].iloc[0]
    return row["max_queues"], row["min_queues"], row["queues_moved"]


def test_a_pop_group_is_simulated_sharing_its_queues_as_the_broker_does() -> None:
    """3 POP clients, 7 queues, AVG, popShareQueueNum 1: the broker hands client i its
    own AVG share and the next client's (a: 0-2 + 3-4, b: 3-4 + 5-6, c: 5-6 + 0-2), max 5
    today. Candidates the broker computes share the same way: 4 clients get 2+2, 2+2,
    2+1, 1+2 (max 4); 2 clients or 1 pop all 7 (share >= clients - 1); AVG_BY_CIRCLE at 3
    shares its circles. Today's own configuration is no candidate of its own (the same
    owners), so nothing beats today's max 5 without adding clients: no change."""
    out = what_if_bucket(*_group(["a", "b", "c"], {"T": 7}, "AVG", mode="POP", pop_share=1))
    assert out[out["is_current"]].iloc[0]["max_queues"] == 5
    assert _pops(out, 4)[:2] == (4, 3)
    assert _pops(out, 2)[:2] == (7, 7) and _pops(out, 1)[:2] == (7, 7)
    assert _pops(out, 3, "AVG_BY_CIRCLE")[:2] == (5, 4)
    assert not ((out["clients"] == 3) & (out["strategy"] == "AVG") & ~out["is_current"]
                & ~out["split_by_topic"]).any()
    assert out[out["recommended"]].iloc[0]["is_current"]
    assert best_change(out) == "no simulated change lowers the max load below today's"
    # the strategies the broker does not compute stay client-side comparisons
    assert _pops(out, 3, "roundrobin")[:2] == (3, 2)


def test_a_pop_group_with_share_0_pops_every_queue_at_every_count() -> None:
    """popShareQueueNum 0: every client pops every queue, whatever the count."""
    out = what_if_bucket(*_group(["a", "b"], {"T": 4}, "AVG_BY_CIRCLE", mode="POP",
                                 pop_share=0))
    popped = out[out["strategy"].isin(["AVG", "AVG_BY_CIRCLE"]) & ~out["split_by_topic"]]
    assert set(popped["max_queues"]) == {4} and set(popped["min_queues"]) == {4}
    assert out[out["recommended"]].iloc[0]["is_current"]


def test_a_pop_groups_retry_topic_is_not_popped_in_its_candidates() -> None:
    """The broker allocates a POP group's %RETRY% topic as a PULL group's: at 2 clients
    both pop all 7 queues of T (share 1 >= clients - 1) but only the first takes the one
    retry queue (min 7, not 8); today the same, at 3 clients (a: 5 + 1)."""
    out = what_if_bucket(*_group(["a", "b", "c"], {"T": 7, "%RETRY%g": 1}, "AVG",
                                 mode="POP", pop_share=1))
    assert out[out["is_current"]].iloc[0]["max_queues"] == 6
    assert _pops(out, 2)[:2] == (8, 7)


def test_a_group_balanced_message_by_message_is_recommended_as_it_is() -> None:
    """5.x gRPC clients (MESSAGE mode) own no queues: each receives from all 7. The
    client-side candidates stay as a comparison, but none is an allocation these clients
    run, so no change is recommended (not 'max 3 instead of 7')."""
    out = what_if_bucket(*_group(["a", "b", "c"], {"T": 7}, "AVG", mode="MESSAGE"))
    assert out[out["is_current"]].iloc[0]["max_queues"] == 7
    assert _pops(out, 3, "AVG_BY_CIRCLE")[:2] == (3, 2)
    assert out[out["recommended"]].iloc[0]["is_current"]
    assert best_change(out) == "no simulated change lowers the max load below today's"


def test_queues_a_broadcaster_consumes_are_consumed_under_every_candidate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """a and b on AVG, c BROADCASTING, 6 queues: AVG over cidAll [a, b, c] leaves 4 and 5
    to c alone, which group_balance counts as consumed (status BROADCAST is a claimant).
    The what-if counted them unconsumed today, so "2 clients, AVG" (max 3, every queue
    to a clustering client) was recommended over today's max 2."""
    queues = pd.DataFrame([{"snapshot_id": "s", "cluster": "c", "consumer_group": "g",
                            "topic": "T", "broker_name": "b", "queue_id": q,
                            "broker_room": None, "committed_offset": 1, "consumed_offset": 1}
                           for q in range(6)])
    members = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "client_id": cid,
         "client_addr": None, "topic": "T", "strategy": "AVG", "message_model": model,
         "client_room": None, "virtual_nodes": None, "rooms": None, "config_queues": None,
         "allocation_mode": None, "pop_share_queue_num": None}
        for cid, model in (("a", None), ("b", None), ("c", "BROADCASTING"))])
    today = allocate_bucket(queues[[*QUEUE_COLUMNS, "committed_offset", "consumed_offset"]],
                            members[[*MEMBER_COLUMNS, *MODE_COLUMNS]])
    args = today[ASSIGNED_COLUMNS], members[WHAT_IF_MEMBER_COLUMNS]
    out = what_if_bucket(*args)
    assert (out[UNCLAIMED] == 0).all()
    best = out[out["recommended"]].iloc[0]
    assert best["is_current"] and best["max_queues"] == 2
    assert best_change(out) == "no simulated change lowers the max load below today's"
    # the kernels' path counts them so too
    monkeypatch.setattr(what_if, "_closed_form_applies",
                        lambda cands, *_: np.zeros(len(cands), dtype=bool))
    pd.testing.assert_frame_equal(out, what_if_bucket(*args))


def test_a_broker_asked_for_a_strategy_it_does_not_compute_is_recommended_one_it_does(
        ) -> None:
    """3 BROKER members on CONSISTENT_HASH, 3 queues: the clients would compute max 1, but
    the broker answers nothing for that strategy, so today's row is no option. Its client
    counts run AVG (what the broker computes), and AVG at today's 3 clients is recommended
    at the same max, saying why."""
    out = what_if_bucket(*_group(["a", "b", "c"], {"B": 3}, "CONSISTENT_HASH", mode="BROKER"))
    assert out[out["is_current"]].iloc[0]["max_queues"] == 1
    best = out[out["recommended"]].iloc[0]
    assert (best["candidate"], best["max_queues"]) == ("3 clients, AVG", 1)
    sweep = out[~out["is_current"] & (out["clients"] != 3)]
    assert set(sweep["strategy"]) == {"AVG"} and len(sweep) == 5
    assert best_change(out) == ("run 3 clients, AVG (max 1 queue per client; the broker "
                                "computes AVG, not today's CONSISTENT_HASH; 3 queues move "
                                "once)")
    client_side = what_if_bucket(*_group(["a", "b", "c"], {"B": 3}, "CONSISTENT_HASH"))
    assert client_side[client_side["recommended"]].iloc[0]["is_current"]


def test_a_broker_not_computing_today_says_so_when_the_change_also_drops_clients() -> None:
    """5 BROKER members on CONSISTENT_HASH, 3 queues (the hash gives one client 2): AVG at
    3 clients is recommended (max 1, 2 clients fewer); the line still says the broker does
    not compute today's strategy, as at today's count. A client-side group is told nothing
    of the broker."""
    out = what_if_bucket(*_group(list("abcde"), {"B": 3}, "CONSISTENT_HASH", mode="BROKER"))
    assert out[TODAY_NO_OPTION].all()
    assert best_change(out) == (
        "run 3 clients, AVG (max 1 queue per client instead of 2, with 2 clients fewer; the "
        "broker computes AVG, not today's CONSISTENT_HASH; 3 queues move once)")
    client_side = what_if_bucket(*_group(list("abcde"), {"B": 3}, "CONSISTENT_HASH"))
    assert not client_side[TODAY_NO_OPTION].any()
    assert "broker" not in best_change(client_side)


def test_an_even_group_is_recommended_as_it_is_not_scaled_out() -> None:
    """2 clients, 8 queues, AVG: max 4 is the least any count up to today's gives; more
    clients lower it (listed in the table) but no change is recommended."""
    out = what_if_bucket(*_group(["a", "b"], {"T": 8}, "AVG"))
    best = out[out["recommended"]].iloc[0]
    assert bool(best["is_current"]) and best["max_queues"] == 4
    assert out["max_queues"].min() == 1
    assert best_change(out) == "no simulated change lowers the max load below today's"


def test_groups_without_clustering_clients_or_queues_get_no_rows() -> None:
    assigned, members = _group(["a", "b"], {"T": 2}, "AVG")
    broadcast = members.assign(message_model="BROADCASTING")
    assert what_if_bucket(assigned, broadcast).empty
    assert what_if_bucket(assigned.iloc[0:0], members).empty


# --- closed-form candidates equal the kernels' ---------------------------------------------

# ids that sort before, among and after the synthetic `~whatif-0001`, ... in Java order (a
# today's id spelled like a synthetic one, U+FF5E and an astral character whose UTF-16 order
# differs from code-point order), and two whose nodes `<id>-0` share a 32-bit MD5 prefix
CLIENT_IDS = [f"10.0.{k}.{j}@9876" for k in range(3) for j in range(30)] + [
    "consumer-a", "consumer-b", "Z", "~", "~whatif-0002", "~zz", "\uff5e-x", "\U0001f600-y",
    "é@1"]
COLLIDING = ["10.1.197.111@9876", "10.1.210.212@9876"]
STRATEGIES = ["AVG", "AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "range", "roundrobin",
              "sticky", "cooperative-sticky", "CONFIG", "MACHINE_ROOM"]
BROKERS = [None, "broker-9", "broker-10", "b", "\uff5e", "\U0001f600"]


def _random_bucket(seed: int, n_groups: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random groups with a random (not necessarily computable) today's assignment: owners,
    unconsumed and contended queues, broadcast members, mixed strategies, partial
    subscriptions, offsets known or not."""
    rng = np.random.default_rng(seed)
    assigned, members = [], []
    for k in range(n_groups):
        group = f"g{k}"
        strategy = STRATEGIES[rng.integers(len(STRATEGIES))]
        pool = COLLIDING + CLIENT_IDS if rng.random() < 0.1 else CLIENT_IDS
        n_clients = int(rng.integers(1, 13))
        clients = list(rng.choice(pool, size=min(n_clients, len(pool)), replace=False))
        if rng.random() < 0.05:
            clients.append("")
        topics = [f"T{t}" for t in range(int(rng.integers(1, 4)))]
        vnodes = [None, 1, 3, 10, 0][rng.integers(5)]
        for i, cid in enumerate(clients):
            mine = topics[:-1] if len(topics) > 1 and rng.random() < 0.15 else topics
            own = "AVG_BY_CIRCLE" if i == 0 and rng.random() < 0.1 else strategy
            members.extend({"snapshot_id": "s", "cluster": "c", "consumer_group": group,
                            "client_id": cid, "topic": t, "strategy": own,
                            "message_model": None, "virtual_nodes": vnodes,
                            "allocation_mode": "BROKER" if k % 7 == 3 else None,
                            "pop_share_queue_num": None}
                           for t in mine)
        members.append({"snapshot_id": "s", "cluster": "c", "consumer_group": group,
                        "client_id": "bcast", "topic": topics[0], "strategy": "AVG",
                        "message_model": "BROADCASTING", "virtual_nodes": None,
                        "allocation_mode": None, "pop_share_queue_num": None})
        for t in topics:
            brokers = list(rng.choice(len(BROKERS), size=int(rng.integers(1, 4)),
                                      replace=False))
            for b in brokers:
                for q in range(int(rng.integers(1, 14))):
                    row = {"snapshot_id": "s", "cluster": "c", "consumer_group": group,
                           "topic": t, "broker_name": BROKERS[b], "queue_id": q,
                           "broker_room": None, "committed_offset": 100,
                           "consumed_offset": int(rng.integers(90, 200))
                           if rng.random() < 0.6 else None}
                    kind = rng.random()
                    if kind < 0.1:
                        assigned.append({**row, "client_id": None, "status": "UNCONSUMED"})
                        continue
                    holders = rng.choice(clients, size=min(2 if kind < 0.15 else 1,
                                                           len(clients)), replace=False)
                    status = "CONTENDED" if len(holders) > 1 else "OK"
                    assigned.extend({**row, "client_id": h, "status": status} for h in holders)
                    assigned.append({**row, "client_id": "bcast", "status": "BROADCAST"})
    return (pd.DataFrame(assigned)[ASSIGNED_COLUMNS],
            pd.DataFrame(members)[WHAT_IF_MEMBER_COLUMNS])


@pytest.mark.parametrize("seed", range(6))
def test_closed_form_rows_equal_the_kernels(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assigned, members = _random_bucket(seed, 40)
    computed: dict[str, int] = {"_arithmetic": 0, "_blocks_sweep": 0, "_hash_ring": 0,
                                "_split_arithmetic": 0}

    def counting(name: str):
        real = getattr(what_if, name)

        def run(cands, *args):
            computed[name] += len(cands)
            return real(cands, *args)
        return run

    for name in computed:
        monkeypatch.setattr(what_if, name, counting(name))
    closed = what_if.what_if_bucket(assigned, members)
    assert computed["_arithmetic"] > 100 and computed["_blocks_sweep"] > 100
    assert computed["_hash_ring"] > 10 and computed["_split_arithmetic"] > 5
    monkeypatch.setattr(what_if, "_closed_form_applies",
                        lambda cands, *_: np.zeros(len(cands), dtype=bool))
    kernels = what_if.what_if_bucket(assigned, members)
    pd.testing.assert_frame_equal(closed, kernels)
    for group, rows in closed.groupby("consumer_group"):
        assert best_change(rows) == best_change(kernels[kernels["consumer_group"] == group])


def test_a_block_client_index_never_decreases_as_clients_are_added() -> None:
    # `_blocks_sweep` finds where a queue stays by bisection over the client count
    size = np.repeat(np.arange(1, 301, dtype=np.int32), np.arange(1, 301))
    p = (np.arange(len(size)) - np.repeat(np.cumsum(np.arange(1, 301)) - np.arange(1, 301),
                                          np.arange(1, 301))).astype(np.int32)
    previous = np.zeros(len(size), np.int64)
    for n in range(1, 300):
        owner = what_if._block_owner(np.full(len(size), n, np.int32), p, size)
        assert (owner >= previous).all() and (owner < n).all()
        previous = owner


@pytest.mark.parametrize("strategy", ["AVG", "range", "AVG_BY_CIRCLE", "roundrobin"])
def test_large_block_sweeps_equal_the_kernels(strategy: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Client counts up to 256 over topics of hundreds of queues (deep bisections), today's
    owners shuffled so that queues stay and move at every count; the split by topic
    (shares of 58, 2 and 16 clients: max 4, as a pooled assignment of 90) as well."""
    assigned, members = _group([f"c{i:03d}" for i in range(90)], {"T": 230, "U": 7, "V": 64},
                               strategy)
    rng = np.random.default_rng(5)
    owned = assigned["client_id"].notna().to_numpy()
    assigned.loc[owned, "client_id"] = rng.permutation(assigned.loc[owned, "client_id"])
    assigned.loc[rng.random(len(assigned)) < 0.2, "consumed_offset"] = None
    closed = what_if_bucket(assigned, members)
    assert closed["clients"].max() == 230 and (closed["queues_moved"].diff() != 0).any()
    split = closed[closed["split_by_topic"]]
    assert len(split) == 1 and split["clients"].item() == 76
    assert split["max_queues"].item() == 4
    monkeypatch.setattr(what_if, "_closed_form_applies",
                        lambda cands, *_: np.zeros(len(cands), dtype=bool))
    pd.testing.assert_frame_equal(closed, what_if_bucket(assigned, members))


def test_a_split_is_sized_to_at_most_todays_clients() -> None:
    """15 AVG clients on two topics of 16 queues: max 4 (client 0 gets two of each) where
    a pooled assignment gives 3. The split took ceil(15 × 16 / 32) = 8 clients per topic,
    16 in all: more than today, so never recommended, and the row recommended kept max 4
    with 8 clients, moving 26 queues. Now 6 + 6 reach max 3, with 3 clients fewer."""
    assigned, members = _group([f"c{i:02d}" for i in range(15)], {"A": 16, "B": 16}, "AVG")
    out = what_if_bucket(assigned, members)
    today = out[out["is_current"]].iloc[0]
    assert (today["clients"], today["max_queues"]) == (15, 4)
    split = out[out["split_by_topic"]].iloc[0]
    assert (split["clients"], split["max_queues"], split["min_queues"]) == (12, 3, 2)
    assert split["recommended"]


def test_large_ring_sweeps_equal_the_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CONSISTENT_HASH sweep up to 120 clients (long walks from each queue's hash to
    client 0's nodes; consistent hashing moves a few more queues at every count), chunks
    of a few candidates each (a ring's candidates split over chunks walk only as far as
    the chunk's smallest count)."""
    assigned, members = _group([f"10.0.0.{i}@9876" for i in range(40)], {"T": 120, "U": 9},
                               "CONSISTENT_HASH", virtual_nodes=5)
    monkeypatch.setattr(what_if, "CHUNK_ROWS", 700)
    closed = what_if_bucket(assigned, members)
    ring = closed[closed["strategy"] == "CONSISTENT_HASH"]
    assert ring["clients"].max() == 120 and ring["queues_moved"].nunique() > 20
    monkeypatch.setattr(what_if, "_closed_form_applies",
                        lambda cands, *_: np.zeros(len(cands), dtype=bool))
    pd.testing.assert_frame_equal(closed, what_if_bucket(assigned, members))


def test_closed_form_leaves_to_the_kernels_what_it_cannot_order() -> None:
    """Client counts above today's when an id sorts after `~whatif-0001` (the split, 3
    clients for 2 today, among them); groups with an empty client id; refused
    virtual-node counts. CONSISTENT_HASH splits are closed form."""
    _assigned, members = _group(["a", "b"], {"T": 4, "U": 2}, "CONSISTENT_HASH",
                                virtual_nodes=10)
    groups = what_if._groups(members).assign(C=2, Q=6, T=2, maxq=4, pop=False)
    cands = what_if._candidates(groups)
    split = cands["split_by_topic"].to_numpy(bool)

    def applies(ids: list[str], frame: pd.DataFrame = cands) -> np.ndarray:
        return what_if._closed_form_applies(frame, groups, pd.DataFrame({"g": 0,
                                                                          "client_id": ids}))

    assert split.any() and applies(["a", "b"]).all()
    assert (applies(["a", "~zz"]) == (cands["clients"] <= 2)).all()
    assert not applies(["", "b"]).any()
    refused = cands.assign(virtual_nodes=cands["virtual_nodes"] * 0)
    assert (applies(["a", "b"], refused) == (cands["strategy"] != "CONSISTENT_HASH")).all()


def test_split_rings_route_as_the_kernels_ring_does() -> None:
    """A CONSISTENT_HASH split's topic rings against the kernels' (`hashring.build_rings`,
    `route`): the topic of clients 0..2 holds two nodes of one hash (the later client's
    keeps the key, as TreeMap.put leaves it), the other a synthetic client; queried at
    every node's hash, the colliding ids' hashes, random hashes and both ends (wrapping
    around)."""
    ids = sorted([*COLLIDING, "a", "b"])
    cands = pd.DataFrame({"g": [0], "clients": [5], "strategy": ["CONSISTENT_HASH"],
                          "virtual_nodes": [10.0], "cand": [0]})
    clients = pd.DataFrame({"g": 0, "client_id": ids, "i": range(4)})
    groups = pd.DataFrame({"g": [0], "C": [4]})
    first, ct = np.array([0, 3]), np.array([3, 2])
    members = [ids[:3], [ids[3], "~whatif-0001"]]
    colliding = set(node_hashes(np.array(COLLIDING, dtype=object), np.zeros(2, np.int64),
                                np.array([10, 10])).tolist())
    assert len(colliding) == 19  # the two ids' 20 nodes: one hash is the other's too
    rng = np.random.default_rng(3)
    for e, names in enumerate(members):
        rings = build_rings(np.zeros(len(names), np.int64), np.array(names, dtype=object),
                            np.arange(len(names)) + first[e], np.array([10]))
        queries = np.concatenate([rings.key & 0xFFFFFFFF, list(colliding),
                                  rng.integers(0, 2**32, 500), [0, 2**32 - 1]]).astype(np.int64)
        expected = route(rings, np.zeros(len(queries), np.int64), queries)
        got = what_if._split_rings(cands, clients, groups, np.array([0, 0]), first, ct,
                                   np.full(len(queries), e), queries)
        np.testing.assert_array_equal(got, expected)


def test_groups_unchanged_between_snapshots_share_their_rings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the same groups in a second snapshot (other offsets): each distinct ring is built
    # once, and every row is what the kernels give
    assigned, members = _random_bucket(3, 30)
    later = assigned.assign(snapshot_id="t", consumed_offset=assigned["consumed_offset"] + 7)
    assigned = pd.concat([assigned, later], ignore_index=True)
    members = pd.concat([members, members.assign(snapshot_id="t")], ignore_index=True)
    shared: list[tuple[int, int]] = []
    real = what_if._ring_nodes

    def recording(*args):
        rings, nodes = real(*args)
        shared.append((len(rings), rings["ring"].nunique()))
        return rings, nodes

    monkeypatch.setattr(what_if, "_ring_nodes", recording)
    closed = what_if.what_if_bucket(assigned, members)
    (rings, distinct), = shared
    assert rings == 2 * distinct > 0
    monkeypatch.setattr(what_if, "_closed_form_applies",
                        lambda cands, *_: np.zeros(len(cands), dtype=bool))
    pd.testing.assert_frame_equal(closed, what_if.what_if_bucket(assigned, members))
    first, second = (closed[closed["snapshot_id"] == s].drop(columns="snapshot_id")
                     .reset_index(drop=True) for s in ("s", "t"))
    pd.testing.assert_frame_equal(first.drop(columns="estimated_duplicates"),
                                  second.drop(columns="estimated_duplicates"))


def test_a_ring_with_equal_node_hashes_is_left_to_the_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the TreeMap keeps the later of two equal keys: the kernel replays that
    assigned, members = _group([*COLLIDING, "a", "b"], {"T": 8, "U": 5}, "CONSISTENT_HASH",
                               virtual_nodes=10)
    groups = what_if._groups(members).assign(C=4)
    cands = what_if._candidates(groups.assign(Q=13, T=2, maxq=8))
    clients = pd.DataFrame({"g": 0, "client_id": sorted([*COLLIDING, "a", "b"]),
                            "i": range(4)})
    rings, _ = what_if._ring_nodes(cands[cands["strategy"] == "CONSISTENT_HASH"], clients,
                                   groups)
    assert rings["collided"].all()
    closed = what_if.what_if_bucket(assigned, members)
    monkeypatch.setattr(what_if, "_closed_form_applies",
                        lambda cands, *_: np.zeros(len(cands), dtype=bool))
    pd.testing.assert_frame_equal(closed, what_if.what_if_bucket(assigned, members))


# --- the bucket's tables, numbered once, equal pandas' joins and sorts ----------------------

def _reference_tables(assigned: pd.DataFrame, members: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The groups, clients, queues and topics as pandas' group-bys, merges and sorts over
    the strings give them (how `what_if_bucket` built them before it numbered the keys)."""
    keys = list(what_if.GROUP_KEYS)
    m = members[members["message_model"].fillna("CLUSTERING") != "BROADCASTING"]
    counts = m.groupby([*keys, "strategy"], sort=True).size().rename("n").reset_index()
    own = counts.sort_values("n", ascending=False, kind="stable").drop_duplicates(keys)
    vn = pd.to_numeric(m["virtual_nodes"], errors="coerce").fillna(10)
    vnodes = (m.assign(_vn=vn).merge(own[[*keys, "strategy"]], on=[*keys, "strategy"])
              .groupby(keys)["_vn"].max().rename("vnodes").reset_index())
    today = (m[[*keys, "strategy"]].drop_duplicates().sort_values([*keys, "strategy"])
             .groupby(keys)["strategy"].agg("/".join).rename("today_strategy").reset_index())
    groups = (own[[*keys, "strategy"]].rename(columns={"strategy": "own"})
              .merge(vnodes, on=keys).merge(today, on=keys).sort_values(keys)
              .reset_index(drop=True))
    groups["g"] = np.arange(len(groups))
    gindex = pd.MultiIndex.from_frame(groups[keys])
    clients = m[[*keys, "client_id"]].drop_duplicates()
    clients = clients.assign(g=gindex.get_indexer(pd.MultiIndex.from_frame(clients[keys])),
                             _rank=what_if.java_rank(clients["client_id"].to_numpy(object)))
    clients = clients.sort_values(["g", "_rank"]).reset_index(drop=True)
    clients["i"] = clients.groupby("g").cumcount()
    a = assigned.assign(g=gindex.get_indexer(pd.MultiIndex.from_frame(assigned[keys])))
    a = a[a["g"] >= 0].assign(_broker=lambda f: f["broker_name"].fillna(""))
    qkey = ["g", "topic", "_broker", "queue_id"]
    queues = a.drop_duplicates(qkey).reset_index(drop=True)
    queues["_topic_rank"] = what_if.java_rank(queues["topic"].to_numpy(object))
    queues["_broker_rank"] = what_if.java_rank(queues["_broker"].to_numpy(object))
    queues = queues.sort_values(["g", "_topic_rank", "_broker_rank", "queue_id"]
                                ).reset_index(drop=True)
    queues["dup"] = (pd.to_numeric(queues["consumed_offset"])
                     - pd.to_numeric(queues["committed_offset"])).clip(lower=0)
    claims = a[a["status"].isin(what_if.CLAIM_STATUSES) & a["client_id"].notna()]
    claims = claims.assign(_rank=what_if.java_rank(claims["client_id"].to_numpy(object)))
    owner = (claims.sort_values("_rank").drop_duplicates(qkey)[[*qkey, "client_id"]]
             .rename(columns={"client_id": "owner"}))
    queues = queues.merge(owner, on=qkey, how="left")
    topics = (queues.groupby(["g", "_topic_rank", "topic"], sort=True).size().rename("qt")
              .reset_index())
    per_client = claims.groupby(["g", "client_id"]).size().rename("n").reset_index()
    load = clients.merge(per_client, on=["g", "client_id"], how="left").fillna({"n": 0})
    figures = load.groupby("g")["n"].agg(["max", "min"])
    figures["idle"] = (load["n"] == 0).groupby(load["g"]).sum()
    return {"groups": groups, "clients": clients, "queues": queues, "topics": topics,
            "figures": figures}


def _two_snapshots(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A random bucket and a later snapshot of it with some members gone, rows shuffled."""
    assigned, members = _random_bucket(seed, 30)
    rng = np.random.default_rng(seed)
    later = members[rng.random(len(members)) > 0.2].assign(snapshot_id="t")
    assigned = pd.concat([assigned, assigned.assign(snapshot_id="t")], ignore_index=True)
    members = pd.concat([members, later], ignore_index=True)
    return (assigned.sample(frac=1, random_state=seed).reset_index(drop=True),
            members.sample(frac=1, random_state=seed + 1).reset_index(drop=True))


@pytest.mark.parametrize("seed", range(4))
def test_bucket_tables_equal_pandas_joins_over_the_strings(seed: int) -> None:
    assigned, members = _two_snapshots(seed)
    got = what_if._bucket_tables(assigned, members)
    want = _reference_tables(assigned, members)
    groups = want["groups"]
    assert len(groups) > 50 and (groups["today_strategy"].str.contains("/")).any()
    kept = got.groups["g"].to_numpy()
    columns = [*what_if.GROUP_KEYS, "own", "vnodes", "today_strategy", "g"]
    pd.testing.assert_frame_equal(got.groups[columns].reset_index(drop=True),
                                  groups[columns].iloc[kept].reset_index(drop=True),
                                  check_dtype=False)
    pd.testing.assert_frame_equal(got.clients[["g", "client_id", "i"]],
                                  want["clients"][["g", "client_id", "i"]], check_dtype=False)
    queue_columns = ["g", "topic", "_broker", "queue_id", "broker_name", "_topic_rank",
                     "_broker_rank", "dup", "owner"]
    pd.testing.assert_frame_equal(got.queues[queue_columns].fillna(-1),
                                  want["queues"][queue_columns].fillna(-1), check_dtype=False)
    pd.testing.assert_frame_equal(got.topics, want["topics"], check_dtype=False)
    figures = want["figures"].loc[kept]
    current = got.current
    assert (current["max_queues"].to_numpy() == figures["max"].to_numpy()).all()
    assert (current["min_queues"].to_numpy() == figures["min"].to_numpy()).all()
    assert (current["idle_clients"].to_numpy() == figures["idle"].to_numpy()).all()


def test_rows_do_not_depend_on_the_input_row_order() -> None:
    assigned, members = _two_snapshots(7)
    first = what_if_bucket(assigned, members)
    again = what_if_bucket(assigned.iloc[::-1].reset_index(drop=True),
                           members.sample(frac=1, random_state=3).reset_index(drop=True))
    assert len(first) > 1000
    pd.testing.assert_frame_equal(first, again)


@pytest.mark.parametrize("base", [what_if._LIST_HASH_BASE, 0])
def test_groups_share_a_client_list_number_exactly_when_their_lists_are_equal(
        base: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # base 0 makes every list of one length hash alike: the id-by-id check falls back
    monkeypatch.setattr(what_if, "_LIST_HASH_BASE", base)
    rng = np.random.default_rng(11)
    lists = [tuple(rng.choice(["a", "b", "c", "é", "\U0001f600"], size=int(rng.integers(1, 4))))
             for _ in range(300)]
    clients = pd.DataFrame([{"g": g, "client_id": c} for g, ids in enumerate(lists)
                            for c in ids])
    numbers = what_if._client_lists(clients)
    for g in range(len(lists)):
        same = numbers == numbers[g]
        assert same.tolist() == [other == lists[g] for other in lists]


def test_rows_typed_straight_to_arrow_equal_the_typed_pandas_rows() -> None:
    assigned, members = _random_bucket(2, 30)
    rows = what_if_bucket(assigned, members)
    rows.loc[rows.index[::7], "estimated_duplicates"] = np.nan  # unknown offsets
    assert rows["virtual_nodes"].isna().any() and rows["virtual_nodes"].notna().any()
    expected = pa.Table.from_pandas(what_if.typed(rows)[WHAT_IF_ARROW_SCHEMA.names],
                                    schema=WHAT_IF_ARROW_SCHEMA, preserve_index=False)
    assert what_if.typed_arrow(rows, WHAT_IF_ARROW_SCHEMA).equals(expected)


def test_a_higher_max_with_fewer_clients_is_not_said_to_be_as_today() -> None:
    """A member subscribing nothing sorts first and takes AVG's first share of W's 5
    queues, which nobody consumes: today max 1 over n1, n2, n3. The recommendation (3
    clients, AVG) consumes them at max 2; its line said "max 2 queues per client as
    today" (any max not lower, with fewer clients, read "as today")."""
    queues = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "topic": "W",
         "broker_name": "broker-a", "queue_id": q, "broker_room": None,
         "committed_offset": 100, "consumed_offset": 130} for q in range(5)])
    members = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "client_id": cid,
         "client_addr": None, "topic": topic, "strategy": "AVG", "message_model": None,
         "client_room": None, "virtual_nodes": None, "rooms": None, "config_queues": None,
         "allocation_mode": None, "pop_share_queue_num": None}
        for cid, topic in (("0@idle", None), ("n1@1", "W"), ("n2@2", "W"), ("n3@3", "W"))])
    today = allocate_bucket(queues[[*QUEUE_COLUMNS, "committed_offset", "consumed_offset"]],
                            members[[*MEMBER_COLUMNS, *MODE_COLUMNS]])
    out = what_if_bucket(today[ASSIGNED_COLUMNS], members[WHAT_IF_MEMBER_COLUMNS])
    assert out[out["is_current"]].iloc[0]["max_queues"] == 1
    line = best_change(out)
    assert line.startswith("run 3 clients, AVG (max 2 queues per client instead of 1, "
                           "with 1 client fewer; consumes 2 queues nobody consumes today"), line


def test_a_change_named_as_today_says_what_it_changes() -> None:
    """roundrobin, a and b on clicks(5) and views(4), c on views only: today max 4. The
    recommendation is "3 clients, roundrobin", what the group already runs; the line said
    only that. Its change is what every candidate is: each client subscribing every
    topic (and one process per id)."""
    queues = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "topic": t,
         "broker_name": None, "queue_id": q, "broker_room": None,
         "committed_offset": 100, "consumed_offset": 130}
        for t, n in (("clicks", 5), ("views", 4)) for q in range(n)])
    subscriptions = {"a": ["clicks", "views"], "b": ["clicks", "views"], "c": ["views"]}
    members = pd.DataFrame([
        {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "client_id": cid,
         "client_addr": None, "topic": topic, "strategy": "roundrobin",
         "message_model": None, "client_room": None, "virtual_nodes": None, "rooms": None,
         "config_queues": None, "allocation_mode": None, "pop_share_queue_num": None}
        for cid, topics in subscriptions.items() for topic in topics])
    today = allocate_bucket(queues[[*QUEUE_COLUMNS, "committed_offset", "consumed_offset"]],
                            members[[*MEMBER_COLUMNS, *MODE_COLUMNS]])
    out = what_if_bucket(today[ASSIGNED_COLUMNS], members[WHAT_IF_MEMBER_COLUMNS])
    assert out[out["is_current"]].iloc[0]["candidate"] == "today: 3 clients, roundrobin"
    assert best_change(out) == (
        "run 3 clients, roundrobin, one process per client id, each subscribing every topic "
        "(max 3 queues per client instead of 4; 7 queues move once)")
    # a change named otherwise says nothing of it
    assert "each subscribing" not in best_change(what_if_bucket(*_group(
        [f"consumer-{i}" for i in range(1, 5)], {"TopicA": 2, "TopicB": 2}, "AVG")))


def test_a_candidate_that_consumes_nothing_is_never_recommended() -> None:
    """3 clients on CONSISTENT_HASH with 0 virtual nodes claim none of 7 queues: today's
    max is 0, and so was that of every 0-node candidate, so `1 client, CONSISTENT_HASH
    (0 virtual nodes)` was recommended ("2 clients fewer") while the backlog grew. The
    recommendation consumes every queue, and its line says so."""
    out = what_if_bucket(*_group(["a", "b", "c"], {"A": 7}, "CONSISTENT_HASH",
                                 virtual_nodes=0))
    now = out[out["is_current"]].iloc[0]
    assert (now["max_queues"], now[UNCLAIMED]) == (0, 7)
    zero = out[(out["strategy"] == "CONSISTENT_HASH") & (out["virtual_nodes"] == 0)]
    assert (zero[UNCLAIMED] == 7).all() and not zero["recommended"].any()
    best = out[out["recommended"]].iloc[0]
    assert (best["candidate"], best["max_queues"], best[UNCLAIMED]) == (
        "3 clients, AVG", 3, 0)
    assert best_change(out) == ("run 3 clients, AVG (max 3 queues per client; consumes 7 "
                                "queues nobody consumes today; no queue moves)")
