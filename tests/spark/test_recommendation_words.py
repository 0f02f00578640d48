"""group_balance's recommendation says what its figures show, on the row it is on."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table

pytestmark = pytest.mark.spark


def _group_balance(spark, tmp_path, queues: pd.DataFrame, members: pd.DataFrame,
                   observed: pd.DataFrame | None = None,
                   offsets: pd.DataFrame | None = None) -> pd.DataFrame:
    """The group_balance rows of an audit of `queues`, `members` and, when given,
    `observed` and `offsets` (no what-if)."""
    tables = {"queues": queues, "members": members}
    if observed is not None:
        tables["observed"] = observed
    if offsets is not None:
        tables["offsets"] = offsets
    paths = write_inputs(spark, Path(tmp_path) / "in", **tables)
    out = Path(tmp_path) / "out"
    run(AuditConfig(queues=paths["queues"], members=paths["members"],
                    observed=paths.get("observed"), offsets=paths.get("offsets"),
                    output=str(out), engine="offline",
                    what_if="off", buckets=2), spark=spark)
    return table(out, "group_balance")


def test_more_clients_than_a_topics_queues_is_not_told_to_run_fewer_clients(
        spark, tmp_path) -> None:
    """2 clients on T (4 queues) and on its retry topic R (1 queue): neither idles, yet
    the whole group was told "the extra clients can only idle ... run fewer clients", and
    so was R's row, where the client R leaves out is busy on T."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": "b", "queue_id": q, "readable": True}
                           for t, n in (("T", 4), ("R", 1)) for q in range(n)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": t, "strategy": "AVG"}
                            for c in ("a", "b") for t in ("T", "R")])
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].iloc[0]
    retry = balance[balance["topic"] == "R"].iloc[0]
    assert whole["idle_clients"] == 0
    assert "MORE_CLIENTS_THAN_QUEUES" in list(whole["findings"])
    assert ("More clients than queues in some topic (its row says which): the clients past "
            "its queue count idle on it; add read queues there (at least one per "
            "client).") in whole["recommendation"]
    assert "run fewer clients" not in whole["recommendation"]
    assert ("More subscribing clients than queues in this topic: the clients past its "
            "queue count get none of it; add read queues here (at least one per client).") \
        in retry["recommendation"]
    assert "run fewer clients" not in retry["recommendation"]


def test_a_retry_topics_single_queue_is_no_finding(spark, tmp_path) -> None:
    """Push consumers subscribe their group's %RETRY% topic, of retryQueueNums queues
    (default 1): 3 clients on T (3 queues) and on it. Every such group with two clients
    or more got MORE_CLIENTS_THAN_QUEUES and IDLE_CLIENTS on the retry topic's row and
    the first on the whole group's, with advice to add read queues to it."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": "b", "queue_id": q, "readable": True}
                           for t, n in (("T", 3), ("%RETRY%G", 1)) for q in range(n)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": t, "strategy": "AVG"}
                            for c in ("a", "b", "c") for t in ("T", "%RETRY%G")])
    balance = _group_balance(spark, tmp_path, queues, members)
    retry = balance[balance["topic"] == "%RETRY%G"].iloc[0]
    whole = balance[balance["topic"].isna()].iloc[0]
    assert (retry["subscribing_clients"], retry["queues"], retry["idle_clients"]) == (3, 1, 2)
    assert list(retry["findings"]) == [] and list(whole["findings"]) == []
    assert whole["recommendation"] == "Balanced: no action needed."


def test_a_pooled_assignors_skew_is_not_blamed_on_topics_allocated_apart(
        spark, tmp_path) -> None:
    """roundrobin deals a(4) and b(3) out together; m1 subscribes a only, m2 both: m1
    a0 a2, m2 a1 a3 b0-2 (5 against a pooled max of 4). The skew is the uneven
    subscriptions; MULTI_TOPIC_SKEW said each topic is allocated on its own and the
    first-sorted clients win every topic, which roundrobin does not do."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": None, "queue_id": q, "readable": True}
                           for t, n in (("a", 4), ("b", 3)) for q in range(n)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": t, "strategy": strategy}
                            for strategy in ("roundrobin", "range")
                            for c, t in (("m1", "a"), ("m2", "a"), ("m2", "b"))])
    members["consumer_group"] = members["strategy"]
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].set_index("consumer_group")
    assert whole.loc["roundrobin", "skew"] == 1
    assert "UNEVEN_SUBSCRIPTIONS" in list(whole.loc["roundrobin", "findings"])
    assert "MULTI_TOPIC_SKEW" not in list(whole.loc["roundrobin", "findings"])
    # range does allocate each topic on its own: m1 a0 a1, m2 a2 a3 b0-2, the same skew
    assert "MULTI_TOPIC_SKEW" in list(whole.loc["range", "findings"])


def test_a_pooled_group_with_nobody_idle_is_not_short_of_queues(spark, tmp_path) -> None:
    """roundrobin over t(4) and v(2): a t0 t3, b t1 v0, c t2 v1, 2 each. v has more
    clients than queues (its row says so), but the whole group was told "the clients past
    its queue count idle on it; add read queues there" though it is balanced. A pooled
    group where clients idle (4 on u(2)) keeps it on its whole-group row."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": None, "queue_id": q, "readable": True}
                           for t, n in (("t", 4), ("v", 2), ("u", 2)) for q in range(n)])
    subscriptions = {"G": [(c, t) for c in "abc" for t in "tv"],
                     "IDLE": [(c, "u") for c in "abcd"]}
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "client_id": c, "topic": t, "strategy": "roundrobin"}
                            for g, pairs in subscriptions.items() for c, t in pairs])
    balance = _group_balance(spark, tmp_path, queues, members)
    v = balance[balance["topic"] == "v"].iloc[0]
    assert "MORE_CLIENTS_THAN_QUEUES" in list(v["findings"])
    whole = balance[balance["topic"].isna()].set_index("consumer_group")
    assert list(whole.loc["G", "findings"]) == []
    assert whole.loc["G", "recommendation"] == "Balanced: no action needed."
    assert whole.loc["IDLE", "idle_clients"] == 2
    assert "MORE_CLIENTS_THAN_QUEUES" in list(whole.loc["IDLE", "findings"])


def test_small_input_rates_and_lags_keep_their_digits(spark, tmp_path) -> None:
    """20 clients, one queue of 0.5 msg/s and lag 2: the sentences read "carries 0 (100%
    ...; mean per client 0.0 msg/s)" and "carries 2 (100% ...; mean per client 0
    messages)": the rounded mean hid the figure the finding compares with."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "b", "queue_id": 0, "readable": True,
                            "in_rate": 0.5, "max_offset": 10}])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": f"c{i:02}", "topic": "T", "strategy": "AVG"}
                            for i in range(20)])
    offsets = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "topic": "T", "broker_name": "b", "queue_id": 0,
                             "committed_offset": 8}])
    balance = _group_balance(spark, tmp_path, queues, members, offsets=offsets)
    whole = balance[balance["topic"].isna()].iloc[0]
    assert ("By input rate, client c00 carries 0.500 (100% of the group's total; mean per "
            "client 0.025 msg/s).") in whole["recommendation"], whole["recommendation"]
    assert ("By lag, client c00 carries 2 (100% of the group's total; mean per client 0.100 "
            "messages).") in whole["recommendation"], whole["recommendation"]


def test_a_sticky_groups_drift_is_not_blamed_on_a_strategy_it_was_not_checked_by(
        spark, tmp_path) -> None:
    """a and b on sticky read T (4 queues); a is observed holding 3, b 1: no balanced
    assignment does that, so the group drifts, queue by queue, with no queue held twice
    or by nobody. The sentence blamed "a different strategy than the one declared",
    though the group was checked by Kafka's validity and balance, not by one strategy's
    outcome."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": None, "queue_id": q, "readable": True}
                           for q in range(4)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": "T", "strategy": "sticky"}
                            for c in ("a", "b")])
    observed = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                              "topic": "T", "broker_name": None, "queue_id": q,
                              "client_id": "a" if q < 3 else "b", "source": "test"}
                             for q in range(4)])
    balance = _group_balance(spark, tmp_path, queues, members, observed)
    whole = balance[balance["topic"].isna()].iloc[0]
    assert "OBSERVED_DRIFT" in list(whole["findings"])
    words = whole["recommendation"]
    assert "(0 held twice, 0 held by nobody, " in words, words
    assert "different strategy than the one declared" not in words, words
    assert ("the group runs a sticky assignor, whose assignment is checked as Kafka checks "
            "it, and this one is not one it could settle on: client a holds 3 queues and b "
            "only 1, though b subscribes T, whose queues a holds (a balanced assignment "
            "moves one to b); the queues are then compared"
            ) in words, words


def test_a_client_idle_on_one_topic_is_not_said_to_claim_nothing(spark, tmp_path) -> None:
    """CONFIG: a lists both queues of T, b both of U; each holds 2, the group is balanced.
    T's row said "1 client(s) claim no queue", though b is busy on U."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": "b", "queue_id": q, "readable": True}
                           for t in ("T", "U") for q in range(2)])
    lists = {"a": "T@b:0,T@b:1", "b": "U@b:0,U@b:1"}
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": t, "strategy": "CONFIG",
                             "strategy_params": {"queues": lists[c]}}
                            for c in ("a", "b") for t in ("T", "U")])
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].iloc[0]
    topic = balance[balance["topic"] == "T"].iloc[0]
    assert "IDLE_CLIENTS" in list(topic["findings"]) and whole["idle_clients"] == 0
    assert ("1 subscribing client(s) claim none of this topic's queues."
            in topic["recommendation"]), topic["recommendation"]
    assert "claim no queue" not in topic["recommendation"]


def test_a_group_with_a_queue_per_client_is_not_said_to_have_more_clients_than_queues(
        spark, tmp_path) -> None:
    """G1: 4 clients on TB and TC of 2 queues each (AVG): 2 idle, yet the whole group has 4
    queues for 4 clients; its row read "More clients than queues: ... or run fewer
    clients". K (range): k1 on A (5 queues) and B (3), k2 on A: k1 holds 6, k2 2; the
    sentence said a pooled balance "is out of reach as configured", though an assignment
    of 4 each exists: it is range that does not reach it."""
    queues = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "topic": t, "broker_name": "b",
          "queue_id": q, "readable": True} for t, n in (("TB", 2), ("TC", 2)) for q in range(n)]
        + [{"snapshot_id": "s1", "cluster": "c", "topic": t, "broker_name": None,
            "queue_id": q, "readable": True} for t, n in (("A", 5), ("B", 3))
           for q in range(n)])
    members = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G1", "client_id": c,
          "topic": t, "strategy": "AVG"} for c in ("c1", "c2", "c3", "c4") for t in ("TB", "TC")]
        + [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "K", "client_id": c,
            "topic": t, "strategy": "range"} for c, t in (("k1", "A"), ("k1", "B"), ("k2", "A"))])
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].set_index("consumer_group")
    g1 = whole.loc["G1"]
    assert (g1["subscribing_clients"], g1["queues"], g1["idle_clients"]) == (4, 4, 2)
    assert "MORE_CLIENTS_THAN_QUEUES" in list(g1["findings"])
    assert ("More clients than queues in some topic (its row says which): the clients past "
            "its queue count idle on it; add read queues there (at least one per "
            "client).") in g1["recommendation"]
    assert "run fewer clients" not in g1["recommendation"]
    k = whole.loc["K"]
    assert (k["max_queues"], k["pooled_max"]) == (6, 4)
    assert "UNEVEN_SUBSCRIPTIONS" in list(k["findings"])
    assert ("Clients subscribe 2 different topic sets, and the group's strategy does not "
            "reach a pooled balance (max 4) over them: give all clients one subscription, or "
            "give each subscription a consumer group of its own.") in k["recommendation"]


def test_a_kafka_group_is_told_what_to_change_in_kafka_words(spark, tmp_path) -> None:
    """range over A(2) and B(2) with 4 members: max 2 where a pooled assignment gives 1.
    It was told to "add read queues" (RocketMQ's word) and never to change its assignor;
    and "split the group by topic" read as one group with two subscriptions, which in
    RocketMQ is the split brain it warns of. P (roundrobin, 3 members) over PA(1) and
    PB(8): 3 partitions each, none idle, yet PA's row said "add partitions here" as if
    its clients idled. N (MACHINE_ROOM_NEARBY, no rooms): its queues are unconsumed, and
    the causes listed left that one out."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": b, "queue_id": q, "readable": True}
                           for t, b, n in (("A", None, 2), ("B", None, 2), ("RA", "b", 2),
                                           ("RB", "b", 2), ("PA", None, 1), ("PB", None, 8),
                                           ("NT", "b", 2))
                           for q in range(n)]).assign(broker_room=None)
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "client_id": f"m{i}", "topic": t, "strategy": strategy}
                            for g, strategy, topics, n in (("K", "range", "AB", 4),
                                                           ("R", "AVG", ("RA", "RB"), 4),
                                                           ("P", "roundrobin", ("PA", "PB"), 3),
                                                           ("N", "MACHINE_ROOM_NEARBY-AVG",
                                                            ("NT",), 2))
                            for i in range(n) for t in topics]).assign(client_room=None)
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].set_index("consumer_group")
    k, r = whole.loc["K", "recommendation"], whole.loc["R", "recommendation"]
    assert ("; make each topic's partition count a multiple of the client count, run a "
            "pooled assignor (roundrobin, cooperative-sticky), or give each topic a consumer "
            "group of its own.") in k
    assert "add partitions there (at least one per client)" in k and "read queues" not in k
    assert ("; make each topic's queue count a multiple of the client count, or give each "
            "topic a consumer group of its own.") in r
    assert "add read queues there (at least one per client)" in r
    assert "split the group" not in k + r
    # N: no room on its clients or brokers, so each client's allocation throws
    assert whole.loc["N", "unconsumed_queues"] == 2
    assert ("MACHINE_ROOM_NEARBY with a client or broker of no room, on which the client's "
            "allocation throws and the client keeps pulling whatever it held before, which "
            "no snapshot of the queues shows (--observed does)") in whole.loc["N",
                                                                  "recommendation"]
    p = whole.loc["P"]
    assert (p["max_queues"], p["idle_clients"], list(p["findings"])) == (3, 0, [])
    pa_row = balance[balance["topic"] == "PA"].iloc[0]
    assert list(pa_row["findings"]) == ["IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES"]
    assert pa_row["recommendation"] == (
        "More subscribing clients than partitions in this topic: the clients past its "
        "partition count get none of it, and the pooled assignor gives them partitions of "
        "the group's other topics instead (the whole-group row says whether any client "
        "idles); add partitions here only if this topic needs more consumers reading it in "
        "parallel.")


def test_two_processes_sharing_a_client_id_contend_for_its_share(spark, tmp_path) -> None:
    """10.0.5.1@DEFAULT runs as two processes beside 10.0.5.2@DEFAULT on T (4 queues,
    AVG): cidAll lists three ids, both processes take index 0's share (q0, q1), index 1's
    (q2) goes unconsumed and .2 takes q3. q0 and q1 are pulled twice, yet they were OK,
    contended_queues 0, and the words never said any queue is consumed twice."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "b", "queue_id": q, "readable": True}
                           for q in range(4)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "client_addr": a, "topic": "T", "strategy": "AVG"}
                            for c, a in (("10.0.5.1@DEFAULT", "10.0.5.1:1"),
                                         ("10.0.5.1@DEFAULT", "10.0.5.9:1"),
                                         ("10.0.5.2@DEFAULT", "10.0.5.2:1"))])
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].iloc[0]
    assert (whole["contended_queues"], whole["unconsumed_queues"]) == (2, 1)
    assert list(whole["findings"]) == ["DUPLICATE_CLIENT_ID", "UNCONSUMED_QUEUES",
                                       "CONTENDED_QUEUES"]
    assert whole["recommendation"].startswith(
        "2 queue(s) are pulled by two or more clients at once (duplicate consumption): fix "
        "the cause named below. 1 queue(s) are consumed by nobody and their backlog grows; "
        "fix the causes named below. Client id(s) 10.0.5.1@DEFAULT are used by several "
        "processes, and each pulls the id's whole share: give every process a unique "
        "instanceName.")
    assignments = table(Path(tmp_path) / "out", "assignments").sort_values("queue_id")
    assert list(assignments["status"]) == ["CONTENDED", "CONTENDED", "UNCONSUMED", "OK"]


def test_members_differing_in_parameters_no_strategy_reads_are_not_mixed(spark,
                                                                          tmp_path) -> None:
    """MIXED_STRATEGIES compared the raw parameter maps: a misspelt key on one AVG member,
    virtual_nodes "10" beside none (10 is the default), the same rooms spaced and ordered
    otherwise, and pop_share_queue_num on a CLIENT-mode member each made a group "mixed",
    and on CONSISTENT_HASH hid STRATEGY_IMBALANCE, the real cause. So did a POP member's
    unset share beside "0" and "-1" (the broker reads all three as 0: every client pops
    every queue), and shares on a strategy the broker does not pop with (it allocates
    those as under BROKER). 10 beside 20 virtual nodes, and shares 1 beside 2, still
    differ."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": b, "queue_id": q, "readable": True}
                           for b in ("r1@b1", "r2@b2") for q in range(2)])
    cases = {"TYPO": ("AVG", [{"virtual_node": "5"}, None]),
             "DEFAULT10": ("CONSISTENT_HASH", [{"virtual_nodes": "10"}, None]),
             "SPACED": ("MACHINE_ROOM", [{"rooms": " r1 , r2 "}, {"rooms": "r2,r1"}]),
             "POPKEY": ("AVG", [{"pop_share_queue_num": "2"}, None]),
             "TWENTY": ("CONSISTENT_HASH", [{"virtual_nodes": "10"}, {"virtual_nodes": "20"}]),
             "POPZERO": ("AVG", [None, {"pop_share_queue_num": "0"},
                                 {"pop_share_queue_num": "-1"}]),
             "POPHASH": ("CONSISTENT_HASH", [{"pop_share_queue_num": "1"},
                                             {"pop_share_queue_num": "2"}]),
             "POPTWO": ("AVG", [{"pop_share_queue_num": "1"}, {"pop_share_queue_num": "2"}])}
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "client_id": f"m{i}", "topic": "T", "strategy": strategy,
                             "strategy_params": params,
                             "allocation_mode": "POP" if g in ("POPZERO", "POPHASH", "POPTWO")
                             else None}
                            for g, (strategy, per_member) in cases.items()
                            for i, params in enumerate(per_member)])
    balance = _group_balance(spark, tmp_path, queues, members)
    findings = {r["consumer_group"]: list(r["findings"])
                for r in balance[balance["topic"].isna()].to_dict("records")}
    for group in ("TYPO", "DEFAULT10", "SPACED", "POPKEY", "POPZERO", "POPHASH"):
        assert "MIXED_STRATEGIES" not in findings[group], (group, findings[group])
    assert "MIXED_STRATEGIES" in findings["TWENTY"]
    assert "MIXED_STRATEGIES" in findings["POPTWO"]
