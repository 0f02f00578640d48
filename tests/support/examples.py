"""Turn the upstream worked examples (../shared/examples) into input rows and expectations.

A RocketMQ vector becomes one consumer group in which every client of `consumers`
subscribes every topic and runs the vector's strategy; a client id listed twice becomes two
connections (two `client_addr`s). Callers that are not in `consumers` cannot exist in a
members snapshot (the broker's list *is* the members), so they are left out.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

# A copy of the upstream-computed vectors ships with the tests (tests/data); point
# REBALANCE_EXAMPLES at another folder (e.g. ../shared/examples) to test against that.
_DEFAULT_EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "upstream_examples"
EXAMPLES_DIR = Path(os.environ.get("REBALANCE_EXAMPLES", _DEFAULT_EXAMPLES))

ROCKETMQ_FILES = {
    "AVG": "rocketmq_averagely.json",
    "AVG_BY_CIRCLE": "rocketmq_averagely_by_circle.json",
    "CONSISTENT_HASH": "rocketmq_consistent_hash.json",
    "MACHINE_ROOM": "rocketmq_by_machine_room.json",
    "MACHINE_ROOM_NEARBY": "rocketmq_machine_room_nearby.json",
    "CONFIG": "rocketmq_by_config.json",
}
KAFKA_FILES = {"range": "kafka_range.json", "roundrobin": "kafka_roundrobin.json"}


def load(file_name: str) -> list[dict]:
    return json.loads((EXAMPLES_DIR / file_name).read_text(encoding="utf-8"))


@dataclass
class Case:
    """Input rows of one scenario and the expected claims per (client, topic)."""

    name: str
    queues: pd.DataFrame
    members: pd.DataFrame
    expected: dict[tuple[str, str], set[tuple[str, int]]]
    expected_unconsumed: dict[str, set[tuple[str, int]]] = field(default_factory=dict)


def _member_row(snapshot: str, group: str, client: str, addr: str, topic: str | None,
                strategy: str, **extra: object) -> dict:
    row = {
        "snapshot_id": snapshot, "cluster": "examples", "consumer_group": group,
        "client_id": client, "client_addr": addr, "topic": topic, "strategy": strategy,
        "message_model": None, "client_room": None, "virtual_nodes": None, "rooms": None,
        "config_queues": None,
    }
    row.update(extra)
    return row


def _queue_row(snapshot: str, group: str | None, topic: str, broker: str | None, qid: int,
               room: str | None = None) -> dict:
    row = {"snapshot_id": snapshot, "cluster": "examples", "topic": topic,
           "broker_name": broker, "queue_id": qid, "broker_room": room}
    if group is not None:
        row["consumer_group"] = group
    return row


QUEUE_FRAME_COLUMNS = ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                       "queue_id", "broker_room"]


def _queues_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=QUEUE_FRAME_COLUMNS)


def rocketmq_case(vector: dict, strategy: str, params: dict | None = None,
                  snapshot: str | None = None, client_room=None, broker_room=None) -> Case:
    """A consistent group built from one RocketMQ vector."""
    snapshot = snapshot or vector["name"]
    group = vector["group"]
    params = params or {}
    members, seen = [], {}
    for cid in vector["consumers"]:
        seen[cid] = seen.get(cid, 0) + 1
        addr = f"10.1.0.{seen[cid]}:{40000 + seen[cid]}"
        room = client_room(cid) if client_room else None
        for topic in vector["topics"]:
            members.append(_member_row(snapshot, group, cid, addr, topic, strategy,
                                       client_room=room, **params))
    queues = [
        _queue_row(snapshot, group, topic, q["broker"], q["queue_id"],
                   broker_room(q["broker"]) if broker_room else None)
        for topic, qs in vector["topics"].items() for q in qs
    ]
    expected = {}
    for cid in dict.fromkeys(vector["consumers"]):
        for topic in vector["topics"]:
            got = (vector["assignment"].get(cid) or {}).get(topic)
            expected[(cid, topic)] = {(b, q) for b, q in (got or [])}
    unconsumed = {
        t: {(b, q) for b, q in qs}
        for t, qs in (vector.get("unassigned") or {}).items() if qs is not None
    }
    return Case(vector["name"], _queues_frame(queues), pd.DataFrame(members), expected,
                unconsumed)


def kafka_case(vector: dict, assignor: str, snapshot: str | None = None) -> Case:
    """A Kafka group: members subscribe their own topics; partitions map to queues."""
    snapshot = snapshot or vector["name"]
    group = f"GID_{vector['name']}"
    pq = vector.get("partition_queues")

    def queue_of(topic: str, partition: int) -> tuple[str | None, int]:
        if pq and topic in pq:
            broker, qid = pq[topic][partition]
            return broker, qid
        return None, partition

    members = []
    for cid in vector["consumers"]:
        topics = vector["subscriptions"].get(cid) or [None]
        for topic in topics:
            members.append(_member_row(snapshot, group, cid, "10.2.0.1:1", topic, assignor))
    queues = []
    for topic, count in vector["topics"].items():
        if not any(topic in (vector["subscriptions"].get(c) or []) for c in vector["consumers"]):
            continue
        for p in range(count):
            broker, qid = queue_of(topic, p)
            queues.append(_queue_row(snapshot, group, topic, broker, qid))
    expected = {}
    for cid, per_topic in (vector["assignment"] or {}).items():
        for topic, parts in per_topic.items():
            expected[(cid, topic)] = {
                (b or "", q) for b, q in (queue_of(topic, p) for p in parts)
            }
    return Case(vector["name"], _queues_frame(queues), pd.DataFrame(members), expected)


def claims_of(assignments: pd.DataFrame) -> dict[tuple[str, str], set[tuple[str, int]]]:
    """(client, topic) -> {(broker, queue_id)} from assignment rows (broker null -> "")."""
    claimed = assignments[assignments["client_id"].notna()]
    out: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for client, topic, broker, qid in zip(
        claimed["client_id"], claimed["topic"], claimed["broker_name"], claimed["queue_id"],
        strict=True,
    ):
        out.setdefault((client, topic), set()).add((broker or "", int(qid)))
    return out


def compare(case: Case, assignments: pd.DataFrame) -> list[str]:
    """Differences between computed assignments and the upstream expectation (empty = match)."""
    got = claims_of(assignments)
    problems = []
    for key, want in case.expected.items():
        have = got.get(key, set())
        if have != want:
            problems.append(f"{case.name} {key}: expected {sorted(want)}, got {sorted(have)}")
    for key in set(got) - set(case.expected):
        problems.append(f"{case.name} {key}: unexpected claims {sorted(got[key])}")
    unconsumed = assignments[assignments["status"] == "UNCONSUMED"]
    for topic, want in case.expected_unconsumed.items():
        rows = unconsumed[unconsumed["topic"] == topic]
        have = {(b or "", int(q)) for b, q in zip(rows["broker_name"], rows["queue_id"],
                                                   strict=True)}
        if have != want:
            problems.append(f"{case.name} unconsumed {topic}: expected {sorted(want)}, "
                            f"got {sorted(have)}")
    return problems


# --- helpers for the other strategies (additive) -------------------------------------------

NEARBY_INNER = {"averagely": "AVG", "averagely_by_circle": "AVG_BY_CIRCLE",
                "consistent_hash": "CONSISTENT_HASH"}


def split_dash_first(text: str) -> str:
    """The upstream NEARBY test resolver: `text.split("-")[0]` (room of a broker or client)."""
    return text.split("-")[0]


def strategy_name(vector: dict) -> str:
    """Strategy name of a RocketMQ vector as the client logs it (NEARBY: with its inner)."""
    if vector["strategy"] == "machine_room_nearby":
        return "MACHINE_ROOM_NEARBY-" + NEARBY_INNER[vector["params"]["inner_strategy"]]
    return vector["strategy_name"]


def member_params(vector: dict) -> dict:
    """A vector's `params` as member columns (virtual_nodes, rooms, config_queues)."""
    params = vector.get("params") or {}
    out: dict = {}
    if "virtual_node_cnt" in params:
        out["virtual_nodes"] = params["virtual_node_cnt"]
    if "consumeridcs" in params:
        rooms = params["consumeridcs"]
        out["rooms"] = None if rooms is None else ",".join(rooms)
    if "message_queue_list" in params:
        queues = params["message_queue_list"]
        out["config_queues"] = (None if queues is None
                                else ",".join(f"{t}@{b}:{q}" for t, b, q in queues))
    return out


def config_case(vector: dict, snapshot: str | None = None) -> Case:
    """A CONFIG group from a `by_config` vector.

    Upstream returns the configured list as-is on every topic's pass, even for a caller not
    in cidAll, for a topic without queues, and including queues of other or unknown topics.
    In the members model a caller outside the group cannot exist, so only those callers'
    entries are skipped; every member claims, across its topics, the listed queues that
    exist in a topic it subscribes (a claim is always of a readable queue of a topic).
    """
    frames = rocketmq_case({**vector, "assignment": {}, "unassigned": None}, "CONFIG",
                           params=member_params(vector), snapshot=snapshot)
    existing = {(t, q["broker"], q["queue_id"]) for t, qs in vector["topics"].items()
                for q in qs}
    expected = {}
    for cid in dict.fromkeys(vector["consumers"]):
        # every topic's pass returns the list; each listed queue lands in its own topic
        listed = {(t, b, q) for per_topic in (vector["assignment"].get(cid) or {}).values()
                  for t, b, q in (per_topic or [])}
        for topic in vector["topics"]:
            expected[(cid, topic)] = {
                (b, q) for t, b, q in listed if t == topic and (t, b, q) in existing
            }
    return Case(frames.name, frames.queues, frames.members, expected)
