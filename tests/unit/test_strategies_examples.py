"""AVG_BY_CIRCLE, CONSISTENT_HASH, MACHINE_ROOM, NEARBY, CONFIG and roundrobin against the
upstream worked examples, without Spark."""

from __future__ import annotations

import pandas as pd
import pytest

from rebalance_udfs.allocate import allocate_bucket
from rebalance_udfs.rocketmq import parse_config_queues
from tests.support.examples import (
    _member_row,
    _queue_row,
    _queues_frame,
    claims_of,
    compare,
    config_case,
    kafka_case,
    load,
    member_params,
    rocketmq_case,
    split_dash_first,
    strategy_name,
)

ROCKETMQ_FILES = [
    "rocketmq_averagely_by_circle.json",
    "rocketmq_consistent_hash.json",
    "rocketmq_by_machine_room.json",
    "rocketmq_machine_room_nearby.json",
]
ROCKETMQ_VECTORS = [(f, v) for f in ROCKETMQ_FILES for v in load(f)]


@pytest.mark.parametrize(
    "vector",
    [v for _, v in ROCKETMQ_VECTORS],
    ids=[f"{f}:{v['name']}" for f, v in ROCKETMQ_VECTORS],
)
def test_rocketmq_strategy_matches_upstream(vector: dict) -> None:
    rooms = {}
    if vector["strategy"] == "machine_room_nearby":
        rooms = {"client_room": split_dash_first, "broker_room": split_dash_first}
    case = rocketmq_case(vector, strategy_name(vector), params=member_params(vector), **rooms)
    assert compare(case, allocate_bucket(case.queues, case.members)) == []


@pytest.mark.parametrize("vector", load("rocketmq_by_config.json"), ids=lambda v: v["name"])
def test_config_matches_upstream(vector: dict) -> None:
    case = config_case(vector)
    assert compare(case, allocate_bucket(case.queues, case.members)) == []


@pytest.mark.parametrize("vector", load("kafka_roundrobin.json"), ids=lambda v: v["name"])
def test_roundrobin_matches_upstream(vector: dict) -> None:
    case = kafka_case(vector, "roundrobin")
    assert compare(case, allocate_bucket(case.queues, case.members)) == []


# --- edge cases the vectors do not cover --------------------------------------------------

def _frames(queues: list[tuple], members: list[tuple], **extra: object):
    """queues: (topic, broker, qid, broker_room); members: (client, topic, strategy, room)."""
    q = _queues_frame([_queue_row("s", "G", t, b, i, room) for t, b, i, room in queues])
    m = pd.DataFrame([_member_row("s", "G", c, "10.0.0.1:1", t, s, client_room=r, **extra)
                      for c, t, s, r in members])
    return q, m


def _claims(queues: pd.DataFrame, members: pd.DataFrame) -> dict:
    return claims_of(allocate_bucket(queues, members))


def test_parse_config_queues() -> None:
    assert parse_config_queues("") == []
    assert parse_config_queues(" T@room1@broker:a:7 , U@b:0") == [
        ("T", "room1@broker:a", 7), ("U", "b", 0)]
    for bad in ["T@b", "@b:1", "T@:1", "T@b:-1", "T@b:x", "Tb:1", "T@b:1,", "T@b:99999999999"]:
        with pytest.raises(ValueError, match="config queue"):
            parse_config_queues(bad)


def test_config_skips_malformed_entries_and_claims_the_rest() -> None:
    q, m = _frames([("T", "b", 0, None), ("T", "b", 1, None)],
                   [("c1", "T", "CONFIG", None)], config_queues="T@b:1,garbage,T@b:x,T@b:5")
    assert _claims(q, m) == {("c1", "T"): {("b", 1)}}


def test_machine_room_java_split_and_unset_rooms() -> None:
    queues = [("T", "room1@b@@", 0, None), ("T", "room1@b@c", 1, None),
              ("T", "room1@", 2, None), ("T", "@b", 3, None)]
    q, m = _frames(queues, [("c1", "T", "MACHINE_ROOM", None)], rooms="room1, ")
    assert _claims(q, m) == {("c1", "T"): {("room1@b@@", 0)}}  # only 2-part names count
    q, m = _frames(queues, [("c1", "T", "MACHINE_ROOM", None)], rooms=None)
    assert _claims(q, m) == {}  # upstream: NullPointerException on `room1@b@@`


@pytest.mark.parametrize("bad_room", [None, ""])
def test_nearby_missing_room_claims_nothing(bad_room: str | None) -> None:
    queues = [("T", "b1", 0, "IDC1"), ("T", "b2", 0, "IDC2")]
    members = [("c1", "T", "MACHINE_ROOM_NEARBY-AVG", "IDC1"),
               ("c2", "T", "MACHINE_ROOM_NEARBY-AVG", "IDC2")]
    q, m = _frames(queues, members)
    assert _claims(q, m) == {("c1", "T"): {("b1", 0)}, ("c2", "T"): {("b2", 0)}}
    q.loc[1, "broker_room"] = bad_room
    assert _claims(q, m) == {}
    q, m = _frames(queues, members)
    m.loc[1, "client_room"] = bad_room
    assert _claims(q, m) == {}


@pytest.mark.parametrize("vnodes", [-1, 0, 10**9])
def test_consistent_hash_unusable_virtual_nodes_claim_nothing(vnodes: int) -> None:
    q, m = _frames([("T", "b", 0, None)], [("c1", "T", "CONSISTENT_HASH", None)],
                   virtual_nodes=vnodes)
    out = allocate_bucket(q, m)
    assert out["status"].tolist() == ["UNCONSUMED"]
