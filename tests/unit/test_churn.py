"""The churn pass without Spark: buckets with one side empty (a cogroup hands those over),
a hand-checked group, and the same figures under any row order. The pass is held equal to
the Spark aggregations it replaced in tests/spark/test_rebalance_churn.py."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rebalance_udfs.churn import AFTER, BEFORE, CLIENT_COLUMNS, QUEUE_COLUMNS, churn_totals
from vocabulary.schemas import CHURN_TOTALS_ARROW_SCHEMA

_INTS = {"_side": pa.int32(), "queue_id": pa.int32(), "_duplicates": pa.int64(),
         "_eager": pa.bool_(), "_shared": pa.bool_()}


def _table(columns: list[str], rows: list[tuple]) -> pa.Table:
    return pa.table({c: pa.array([r[i] for r in rows], _INTS.get(c, pa.string()))
                     for i, c in enumerate(columns)})


def _q(group: str, side: int, broker: str | None, qid: int, client: str | None,
       dup: int | None = None, shared: bool = False) -> tuple:
    return ("s2", "k", group, side, "t", broker, qid, client, dup, shared)


def _c(group: str, side: int, client: str, topics: str | None = '["t"]',
       strategies: str | None = '["AVG"]', eager: bool = False) -> tuple:
    return ("s2", "k", group, side, client, topics, strategies, eager)


QUEUES = [
    _q("g", BEFORE, "b", 0, "a", 7), _q("g", AFTER, "b", 0, "b"),      # moved a -> b
    _q("g", BEFORE, None, 1, "a"), _q("g", BEFORE, None, 1, "b"),       # {a, b} -> {b}
    _q("g", AFTER, None, 1, "b"),
    _q("g", BEFORE, "b", 2, None), _q("g", AFTER, "b", 2, "a"),         # unclaimed before
    _q("g", BEFORE, "b", 3, "a", 2),                                    # removed
    _q("g", AFTER, "b", 4, "b"),                                        # added
]
CLIENTS = [_c("g", BEFORE, "a"), _c("g", BEFORE, "b"), _c("g", AFTER, "b", '["t","u"]'),
           _c("g", AFTER, "ç")]


def test_one_group_by_hand():
    (row,) = churn_totals(_table(QUEUE_COLUMNS, QUEUES),
                          _table(CLIENT_COLUMNS, CLIENTS)).to_pylist()
    assert (row["queues_before"], row["queues_after"]) == (4, 4)
    assert (row["queues_added"], row["queues_removed"], row["queues_moved"]) == (1, 1, 2)
    # the null broker sorts first, as Spark's array_sort orders the move structs
    assert [(m["broker_name"], m["queue_id"]) for m in row["moves"]] == [(None, 1), ("b", 0)]
    assert row["moves"][0] == {
        "topic": "t", "broker_name": None, "queue_id": 1, "from_client": None,
        "to_client": "b", "from_clients": ["a", "b"], "to_clients": ["b"],
        "duplicate_estimate": None}
    assert row["moves"][1]["duplicate_estimate"] == 7
    assert (row["estimated_duplicates"], row["duplicates_known_moves"]) == (7, 1)
    assert (row["clients_before"], row["clients_after"]) == (2, 2)
    assert (row["clients_joined"], row["clients_left"]) == (["ç"], ["a"])
    assert (row["_subscription"], row["_strategy"]) == (True, False)
    assert row["paused_queues"] == 2  # RocketMQ: the moved queues pause


def test_a_shared_queue_a_claimant_keeps_moves_but_does_not_pause():
    """POP / MESSAGE claims (status SHARED): a claimant that keeps a queue goes on consuming
    it (upstream drops only a pop queue a client no longer has), so that move pauses
    nothing and hands no offset over (no duplicate estimate). Queue 0: {a, b} -> {a, b,
    c}, kept; queue 1: {a} -> {b, c}, nobody keeps it: paused, with a's estimate; queue 2:
    CONTENDED {a, b} -> {b}, not shared: paused as before."""
    queues = [
        _q("p", BEFORE, "b", 0, "a", 5, True), _q("p", BEFORE, "b", 0, "b", 5, True),
        *[_q("p", AFTER, "b", 0, c, None, True) for c in "abc"],
        _q("p", BEFORE, "b", 1, "a", 3), _q("p", AFTER, "b", 1, "b", None, True),
        _q("p", AFTER, "b", 1, "c", None, True),
        _q("p", BEFORE, "b", 2, "a"), _q("p", BEFORE, "b", 2, "b"), _q("p", AFTER, "b", 2, "b"),
    ]
    clients = [*[_c("p", BEFORE, c) for c in "ab"], *[_c("p", AFTER, c) for c in "abc"]]
    (row,) = churn_totals(_table(QUEUE_COLUMNS, queues),
                          _table(CLIENT_COLUMNS, clients)).to_pylist()
    assert row["queues_moved"] == 3
    assert [(m["queue_id"], m["duplicate_estimate"]) for m in row["moves"]] == [
        (0, None), (1, 3), (2, None)]
    assert row["paused_queues"] == 2
    assert (row["estimated_duplicates"], row["duplicates_known_moves"]) == (3, 1)


def _kafka_join(group: str, assignor: str, eager: bool) -> tuple[list, list]:
    """Six partitions over m1..m3, then m4 joins: range and cooperative-sticky both move
    partition 5 only (m3 -> m4)."""
    before = {0: "m1", 1: "m1", 2: "m2", 3: "m2", 4: "m3", 5: "m3"}
    after = {**before, 5: "m4"}
    queues = [*(_q(group, BEFORE, None, p, c) for p, c in before.items()),
              *(_q(group, AFTER, None, p, c) for p, c in after.items())]
    clients = [_c(group, side, m, strategies=f'["{assignor}"]', eager=eager)
               for side, ms in ((BEFORE, "123"), (AFTER, "1234")) for m in
               (f"m{i}" for i in ms)]
    return queues, clients


def test_an_eager_kafka_rebalance_pauses_every_claimed_partition():
    """Kafka's eager protocol (range, roundrobin, sticky) revokes every partition of every
    member before a rebalance assigns them again; cooperative-sticky revokes the moved
    ones only. paused_queues said the moved queues for both (1, not 6)."""
    eager_q, eager_c = _kafka_join("eager", "range", True)
    coop_q, coop_c = _kafka_join("coop", "cooperative-sticky", False)
    # the same group, nothing changed between the snapshots: no rebalance, nothing paused
    still = [r for r in eager_q if r[6] < 5 or r[3] == BEFORE]
    still_q = [("s2", "k", "still", *r[3:]) for r in [*still, _q("x", AFTER, None, 5, "m3")]]
    still_c = [("s2", "k", "still", *r[3:]) for r in eager_c if r[4] != "m4"]
    # a member joins and takes nothing (two partitions, range): both still pause
    idle_q = [_q("idle", side, None, p, f"m{p + 1}") for side in (BEFORE, AFTER)
              for p in (0, 1)]
    idle_c = [_c("idle", side, m, strategies='["range"]', eager=True)
              for side, ms in ((BEFORE, "12"), (AFTER, "123")) for m in (f"m{i}" for i in ms)]
    rows = {r["consumer_group"]: r for r in churn_totals(
        _table(QUEUE_COLUMNS, [*eager_q, *coop_q, *still_q, *idle_q]),
        _table(CLIENT_COLUMNS, [*eager_c, *coop_c, *still_c, *idle_c])).to_pylist()}
    assert {g: (r["queues_moved"], r["paused_queues"]) for g, r in rows.items()} == {
        "eager": (1, 6), "coop": (1, 1), "still": (0, 0), "idle": (0, 2)}


def test_one_side_empty():
    queues, clients = _table(QUEUE_COLUMNS, QUEUES), _table(CLIENT_COLUMNS, CLIENTS)
    empty = churn_totals(queues.slice(0, 0), clients.slice(0, 0))
    assert empty.num_rows == 0 and empty.schema == CHURN_TOTALS_ARROW_SCHEMA
    (only_clients,) = churn_totals(queues.slice(0, 0), clients).to_pylist()
    assert only_clients["moves"] == [] and only_clients["queues_before"] == 0
    assert only_clients["estimated_duplicates"] is None
    (only_queues,) = churn_totals(queues, clients.slice(0, 0)).to_pylist()
    assert only_queues["clients_joined"] == [] and only_queues["queues_moved"] == 2


def test_any_row_order_same_figures():
    queues = _table(QUEUE_COLUMNS, [*QUEUES, _q("h", AFTER, "b", 0, "x")])
    clients = _table(CLIENT_COLUMNS, [*CLIENTS, _c("h", AFTER, "x")])
    want = sorted(churn_totals(queues, clients).to_pylist(), key=lambda r: r["consumer_group"])
    rng = np.random.default_rng(7)
    for _ in range(5):
        got = churn_totals(queues.take(rng.permutation(queues.num_rows)),
                           clients.take(rng.permutation(clients.num_rows)))
        assert sorted(got.to_pylist(), key=lambda r: r["consumer_group"]) == want
