"""Property tests of the allocation kernels (hypothesis, no Spark).

* consistent groups: every queue claimed exactly once by the balanced strategies;
* row order of the input frames does not matter;
* batching many groups gives what each group gives alone (nothing leaks across groups);
* one layout of a bucket serves every strategy its members are switched to;
* consistent hash moves only what it must when one client leaves or joins;
* messy groups (mixed strategies and params, partial subscriptions, duplicate ids, missing
  rooms) match a plain-Python transcription of the upstream algorithms.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebalance_udfs.allocate import (
    MEMBER_COLUMNS,
    QUEUE_COLUMNS,
    allocate_bucket,
    first_of_queue,
)
from rebalance_udfs.batch import batch_layout
from rebalance_udfs.comparison import switched
from rebalance_udfs.hashring import build_rings, node_hashes, route
from rebalance_udfs.ordering import java_key
from tests.support.examples import claims_of

# PROPERTY_EXAMPLES=2000 for a long soak run
SETTINGS = settings(max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

ROCKETMQ = ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "MACHINE_ROOM", "CONFIG",
            "MACHINE_ROOM_NEARBY-AVG", "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE",
            "MACHINE_ROOM_NEARBY-CONSISTENT_HASH"]
KAFKA = ["range", "roundrobin"]
BALANCED = ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "range", "roundrobin"]
TOPICS = ["TopicTest", "topic-b", "Zeta", "alpha", "%RETRY%GID", "t😀", "t～"]
BROKERS = ["IDC1-broker-a", "IDC2-broker-b", "IDC1-broker-10", "IDC3-broker-9",
           "room1@broker-a", "room2@broker-b@@", "@broker-c", "IDC2-x@y@z", "room1@IDC1-b",
           "room2@IDC2-c", "room1@broker-d"]
ROOMS = ["IDC1", "IDC2", "IDC3", "room1", "room2"]


# --- building input frames ----------------------------------------------------------------

@dataclass
class Group:
    """One consumer group: queues per topic and member rows (one dict per member per topic)."""

    name: str
    snapshot: str
    topics: dict[str, list[tuple[str | None, int]]]
    members: list[dict] = field(default_factory=list)
    broker_room: dict[str, str | None] = field(default_factory=dict)

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        queues, members = self.rows()
        return (pd.DataFrame(queues, columns=QUEUE_COLUMNS),
                pd.DataFrame(members, columns=MEMBER_COLUMNS))

    def rows(self) -> tuple[list[dict], list[dict]]:
        subscribed = {m["topic"] for m in self.members}
        queues = [
            {"snapshot_id": self.snapshot, "cluster": "c1", "consumer_group": self.name,
             "topic": t, "broker_name": b, "queue_id": q,
             "broker_room": self.broker_room.get(b) if b else None}
            for t, qs in self.topics.items() if t in subscribed for b, q in qs
        ]
        members = [{"snapshot_id": self.snapshot, "cluster": "c1",
                    "consumer_group": self.name, **m} for m in self.members]
        return queues, members


def member(client: str, topic: str | None, strategy: str, addr: str = "10.9.0.1:1",
           **extra: object) -> dict:
    row = {"client_id": client, "client_addr": addr, "topic": topic, "strategy": strategy,
           "message_model": None, "client_room": None, "virtual_nodes": None, "rooms": None,
           "config_queues": None}
    row.update(extra)
    return row


def frames_of(groups: list[Group]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [g.rows() for g in groups]
    return (pd.DataFrame([r for q, _ in rows for r in q], columns=QUEUE_COLUMNS),
            pd.DataFrame([r for _, m in rows for r in m], columns=MEMBER_COLUMNS))


def canonical(out: pd.DataFrame) -> pd.DataFrame:
    keys = ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name", "queue_id",
            "client_id"]
    out = out.assign(broker_name=out["broker_name"].fillna(""),
                     client_id=out["client_id"].fillna(""),
                     queue_id=out["queue_id"].astype(np.int64))
    return out.sort_values(keys).reset_index(drop=True)[[*keys, "strategy", "status"]]


client_ids = st.builds(
    lambda room, a, b, pid: f"{room}-10.0.{a}.{b}@{pid}",
    st.sampled_from(["IDC1", "IDC2", "IDC3"]), st.integers(0, 12), st.integers(0, 255),
    st.integers(1, 99999),
)


@st.composite
def topologies(draw, kafka: bool = False, max_topics: int = 3):
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=max_topics,
                           unique=True))
    out = {}
    for t in topics:
        if kafka:
            out[t] = [(None, p) for p in range(draw(st.integers(1, 12)))]
            continue
        brokers = draw(st.lists(st.sampled_from(BROKERS), min_size=1, max_size=3, unique=True))
        out[t] = [(b, q) for b in brokers for q in range(draw(st.integers(1, 6)))]
    return out


@st.composite
def consistent_groups(draw, strategy: str, name: str = "GID_a", snapshot: str = "s1"):
    """All members subscribe all topics, run one strategy, have distinct ids."""
    topics = draw(topologies(kafka=strategy in KAFKA))
    clients = draw(st.lists(client_ids, min_size=1, max_size=10, unique=True))
    vnodes = draw(st.sampled_from([None, 1, 3, 10])) if strategy == "CONSISTENT_HASH" else None
    group = Group(name, snapshot, topics)
    for c in clients:
        for t in topics:
            group.members.append(member(c, t, strategy, virtual_nodes=vnodes))
    return group


def _params(draw, strategy: str, topics: dict) -> dict:
    if "CONSISTENT_HASH" in strategy:
        return {"virtual_nodes": draw(st.sampled_from([None, 0, 1, 3, 10, -1]))}
    if strategy == "MACHINE_ROOM":
        rooms = draw(st.lists(st.sampled_from(["room1", "room2", "", "IDC1", " room2 "]),
                              max_size=3))
        return {"rooms": None if draw(st.integers(0, 4)) == 0 else ",".join(rooms)}
    if strategy == "CONFIG":
        pool = [f"{t}@{b}:{q}" for t, qs in topics.items() for b, q in qs if b]
        pool += ["Other@broker-z:7", "bad-entry", "TopicTest@broker-a:x"]
        chosen = draw(st.lists(st.sampled_from(pool), max_size=5))
        return {"config_queues": None if draw(st.integers(0, 4)) == 0 else ",".join(chosen)}
    return {}


@st.composite
def messy_groups(draw, name: str = "GID_m", snapshot: str = "s1", kafka: bool = False):
    """Mixed strategies and params, partial subscriptions, duplicated ids, odd rooms."""
    topics = draw(topologies(kafka=kafka))
    clients = draw(st.lists(client_ids, min_size=1, max_size=8, unique=True))
    if draw(st.integers(0, 3)) == 0:  # now and then an id upstream chokes on
        clients.append(draw(st.sampled_from(["", "solo", "-x"]).filter(
            lambda c: c not in clients)))
    group = Group(name, snapshot, topics)
    # mostly clean rooms (as the NEARBY resolver gives), sometimes other, null or empty ones
    clean = draw(st.integers(0, 3)) > 0
    odd_room = st.sampled_from([*ROOMS, None, ""])
    for b in sorted({b for qs in topics.values() for b, _ in qs if b}):
        group.broker_room[b] = b.split("-")[0] if clean else draw(odd_room)
    for c in clients:
        strategy = draw(st.sampled_from(KAFKA if kafka else ROCKETMQ))
        params = _params(draw, strategy, topics)
        room = c.split("-")[0] if clean else draw(odd_room)
        subscribed = draw(st.lists(st.sampled_from(list(topics)), max_size=len(topics),
                                   unique=True))
        addrs = ["10.9.0.1:1"] + (["10.9.0.2:2"] if draw(st.booleans()) and not kafka else [])
        for addr in addrs:
            for t in subscribed or [None]:
                group.members.append(member(c, t, strategy, addr, client_room=room, **params))
    return group


# --- properties ---------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", BALANCED)
@SETTINGS
@given(data=st.data())
def test_consistent_group_claims_every_queue_once(strategy: str, data: st.DataObject) -> None:
    group = data.draw(consistent_groups(strategy))
    queues, members = group.frames()
    out = allocate_bucket(queues, members)
    assert len(out) == len(queues)
    assert set(out["status"]) == {"OK"}
    assert not out.duplicated(["topic", "broker_name", "queue_id"]).any()


@SETTINGS
@given(data=st.data(), kafka=st.booleans())
def test_row_order_does_not_matter(data: st.DataObject, kafka: bool) -> None:
    groups = [data.draw(messy_groups(f"GID_{k}", kafka=kafka)) for k in range(2)]
    queues, members = frames_of(groups)
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shuffled = allocate_bucket(queues.iloc[rng.permutation(len(queues))],
                               members.iloc[rng.permutation(len(members))])
    pd.testing.assert_frame_equal(allocate_bucket(queues, members), shuffled)


@SETTINGS
@given(data=st.data(), kafka=st.booleans())
def test_one_layout_serves_whatever_the_members_run(data: st.DataObject, kafka: bool) -> None:
    # the strategy comparison lays a bucket out once for every candidate it switches to
    groups = [data.draw(messy_groups(f"GID_{k}", kafka=kafka)) for k in range(2)]
    queues, members = frames_of(groups)
    layout = batch_layout(queues, members)
    runs = [members, *(switched(members, s) for s in (KAFKA if kafka else ROCKETMQ)),
            members]  # the members as they are, again last: nothing was changed in place
    for run in runs:
        pd.testing.assert_frame_equal(allocate_bucket(queues, run, layout),
                                      allocate_bucket(queues, run))


@SETTINGS
@given(data=st.data(), kafka=st.booleans())
def test_batching_does_not_leak_across_groups(data: st.DataObject, kafka: bool) -> None:
    n = data.draw(st.integers(2, 4))
    # same client ids and topics in several groups and snapshots, on purpose
    base = data.draw(messy_groups("GID_0", kafka=kafka))
    groups = [base]
    for k in range(1, n):
        other = data.draw(messy_groups(f"GID_{k % 2}", snapshot=f"s{k}", kafka=kafka))
        if data.draw(st.booleans()):
            other.topics = base.topics  # same topology, other members
            other.broker_room = base.broker_room
            other.members = [m for m in other.members if m["topic"] in base.topics
                             or m["topic"] is None]
        groups.append(other)
    together = canonical(allocate_bucket(*frames_of(groups)))
    alone = canonical(pd.concat([allocate_bucket(*g.frames()) for g in groups],
                                ignore_index=True))
    pd.testing.assert_frame_equal(together, alone)


def _owners(group: Group) -> dict[tuple[str, str, int], str]:
    out = allocate_bucket(*group.frames())
    return {(t, b, int(q)): c for t, b, q, c in
            zip(out["topic"], out["broker_name"], out["queue_id"], out["client_id"],
                strict=True)}


@SETTINGS
@given(data=st.data())
def test_consistent_hash_moves_only_what_it_must(data: st.DataObject) -> None:
    group = data.draw(consistent_groups("CONSISTENT_HASH"))
    clients = list(dict.fromkeys(m["client_id"] for m in group.members))
    vnodes = group.members[0]["virtual_nodes"]
    before = _owners(group)

    gone = data.draw(st.sampled_from(clients))
    if len(clients) > 1:
        removed = Group(group.name, group.snapshot, group.topics,
                        [m for m in group.members if m["client_id"] != gone])
        after = _owners(removed)
        for q, owner in before.items():
            if owner != gone:
                assert after[q] == owner, q

    newcomer = data.draw(client_ids.filter(lambda c: c not in clients))
    added = Group(group.name, group.snapshot, group.topics, list(group.members))
    added.members += [member(newcomer, t, "CONSISTENT_HASH", virtual_nodes=vnodes)
                      for t in group.topics]
    after = _owners(added)
    for q, owner in after.items():
        assert owner in (before[q], newcomer), q


# --- a plain-Python transcription of upstream, for messy groups ----------------------------

class Threw(Exception):
    """Upstream's allocate threw: the client keeps nothing new for that topic."""


def md5_hash(key: str) -> int:
    return int.from_bytes(hashlib.md5(key.encode()).digest()[:4], "big")


def java_split(text: str, sep: str) -> list[str]:
    parts = text.split(sep)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def check(caller: str, mq: list, cids: list[str]) -> bool:
    if not caller:
        raise Threw("currentCID is empty")
    if not mq:
        raise Threw("mqAll is null or mqAll empty")
    if not cids:
        raise Threw("cidAll is null or cidAll empty")
    return caller in cids


def ref_avg(caller, mq, cids, params):
    if not check(caller, mq, cids):
        return []
    i, n, c = cids.index(caller), len(mq), len(cids)
    mod = n % c
    size = 1 if n <= c else (n // c + 1 if mod > 0 and i < mod else n // c)
    start = i * size if mod > 0 and i < mod else i * size + mod
    return [mq[(start + k) % n] for k in range(min(size, n - start))]


def ref_circle(caller, mq, cids, params):
    if not check(caller, mq, cids):
        return []
    i = cids.index(caller)
    return [mq[k] for k in range(i, len(mq)) if k % len(cids) == i]


def ref_hash(caller, mq, cids, params):
    v = params.get("virtual_nodes")
    v = 10 if v is None else v
    if v < 0:
        raise Threw("illegal virtualNodeCnt")
    if not check(caller, mq, cids):
        return []
    ring: dict[int, str] = {}
    for cid in cids:
        existing = sum(1 for owner in ring.values() if owner == cid)
        for k in range(v):
            ring[md5_hash(f"{cid}-{existing + k}")] = cid
    keys = sorted(ring)
    out = []
    for q in mq:
        if not keys:
            continue
        h = md5_hash(f"MessageQueue [topic={q[0]}, brokerName={q[1]}, queueId={q[2]}]")
        at = next((k for k in keys if k >= h), keys[0])
        if ring[at] == caller:
            out.append(q)
    return out


def ref_machine_room(caller, mq, cids, params):
    if not check(caller, mq, cids):
        return []
    text = params.get("rooms")
    rooms = None if text is None else {r.strip() for r in text.split(",") if r.strip()}
    pre = []
    for q in mq:
        parts = java_split(q[1], "@")
        if len(parts) == 2:
            if rooms is None:
                raise Threw("NullPointerException")
            if parts[0] in rooms:
                pre.append(q)
    i, c = cids.index(caller), len(cids)
    mod, rem = len(pre) // c, len(pre) % c
    out = pre[i * mod: i * mod + mod]
    if rem > i:
        out.append(pre[i + mod * c])
    return out


def ref_config(caller, mq, cids, params):
    text = params.get("config_queues")
    if text is None:
        return []
    out = []
    for entry in text.split(","):
        topic, _, rest = entry.partition("@")
        broker, _, qid = rest.rpartition(":")
        if topic and broker and qid.isdigit():
            out.append((topic, broker, int(qid)))
    return out


def ref_nearby(inner):
    def allocate(caller, mq, cids, params, q_room, c_room):
        if not check(caller, mq, cids):
            return []
        by_q: dict[str, list] = {}
        for q in mq:
            room = q_room(q)
            if not room:
                raise Threw("Machine room is null for mq")
            by_q.setdefault(room, []).append(q)
        by_c: dict[str, list] = {}
        for cid in cids:
            room = c_room(cid)
            if not room:
                raise Threw("Machine room is null for consumer id")
            by_c.setdefault(room, []).append(cid)
        mine = c_room(caller)
        out = []
        local = by_q.pop(mine, None)
        if local:
            out += inner(caller, local, by_c[mine], params)
        for room in sorted(by_q, key=java_key):
            if room not in by_c:
                out += inner(caller, by_q[room], cids, params)
        return out
    return allocate


REFERENCE = {
    "AVG": ref_avg, "AVG_BY_CIRCLE": ref_circle, "CONSISTENT_HASH": ref_hash,
    "MACHINE_ROOM": ref_machine_room, "CONFIG": ref_config,
    "MACHINE_ROOM_NEARBY-AVG": ref_nearby(ref_avg),
    "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE": ref_nearby(ref_circle),
    "MACHINE_ROOM_NEARBY-CONSISTENT_HASH": ref_nearby(ref_hash),
}


def reference_rocketmq(group: Group) -> dict[tuple[str, str], set[tuple[str, int]]]:
    """Claims per (client, topic) the way each RocketMQ client computes its own share."""
    slots = {}
    for m in group.members:
        slots.setdefault(m["client_id"], set()).add(m["client_addr"])
    cids = sorted((c for c, addrs in slots.items() for _ in addrs), key=java_key)
    c_rooms = {m["client_id"]: m["client_room"] for m in group.members}
    expected: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for m in group.members:
        topic = m["topic"]
        if topic is None or not group.topics.get(topic):
            continue
        mq = sorted(((topic, b, q) for b, q in group.topics[topic]),
                    key=lambda x: (java_key(x[1]), x[2]))
        strategy = REFERENCE[m["strategy"]]
        args = (m["client_id"], mq, cids, m)
        if m["strategy"].startswith("MACHINE_ROOM_NEARBY"):
            args += (lambda q: group.broker_room.get(q[1]), lambda c: c_rooms[c])
        try:
            got = strategy(*args)
        except Threw:
            got = []
        # every listed queue lands in its own topic, if that topic is subscribed and exists
        for t, b, q in got:
            if (b, q) in group.topics.get(t, []) and any(
                    x["client_id"] == m["client_id"] and x["topic"] == t
                    for x in group.members):
                expected.setdefault((m["client_id"], t), set()).add((b, q))
    return expected


def reference_roundrobin(group: Group) -> dict[tuple[str, str], set[tuple[str, int]]]:
    subs: dict[str, set[str]] = {}
    for m in group.members:
        subs.setdefault(m["client_id"], set())
        if m["topic"] is not None:
            subs[m["client_id"]].add(m["topic"])
    members = sorted(subs, key=java_key)
    topics = sorted({t for ts in subs.values() for t in ts}, key=java_key)
    expected: dict[tuple[str, str], set[tuple[str, int]]] = {}
    pointer = 0
    for t in topics:
        for b, p in group.topics[t]:
            while t not in subs[members[pointer]]:
                pointer = (pointer + 1) % len(members)
            expected.setdefault((members[pointer], t), set()).add((b or "", p))
            pointer = (pointer + 1) % len(members)
    return expected


@SETTINGS
@given(data=st.data())
def test_messy_rocketmq_groups_match_reference(data: st.DataObject) -> None:
    group = data.draw(messy_groups())
    out = allocate_bucket(*group.frames())
    expected = reference_rocketmq(group)
    assert claims_of(out) == expected
    # a queue's status counts the processes that pull it: each of a client id's
    # connections pulls the id's share, so two sharing an id contend for it
    processes = {m["client_id"]: set() for m in group.members}
    for m in group.members:
        processes[m["client_id"]].add(m["client_addr"])
    pullers: dict[tuple[str, str, int], int] = {}
    for (client, topic), queues in expected.items():
        for b, q in queues:
            key = (topic, b, q)
            pullers[key] = pullers.get(key, 0) + len(processes[client])
    status = {(t, b or "", q): s for t, b, q, s in zip(
        out["topic"], out["broker_name"], out["queue_id"], out["status"], strict=True)}
    assert status == {k: ("OK" if pullers.get(k, 0) == 1 else
                          "CONTENDED" if pullers.get(k, 0) > 1 else "UNCONSUMED")
                      for k in status}


@SETTINGS
@given(data=st.data())
def test_roundrobin_matches_reference(data: st.DataObject) -> None:
    groups = [data.draw(messy_groups(f"GID_{k}", kafka=True)) for k in range(3)]
    for g in groups:
        for m in g.members:
            m["strategy"] = "roundrobin"
    out = allocate_bucket(*frames_of(groups))
    for g in groups:
        mine = out[out["consumer_group"] == g.name]
        assert claims_of(mine) == reference_roundrobin(g)


# --- hash ring internals --------------------------------------------------------------------

def test_ring_with_colliding_duplicate_replays_upstream_numbering() -> None:
    """`10.0.0.58@dup-3681` and `-7315` share an MD5 prefix: with 7316 virtual nodes the
    first slot keeps 7315 ring entries, so upstream numbers the duplicate slot from 7315."""
    client, vnodes = "10.0.0.58@dup", 7316
    assert md5_hash(f"{client}-3681") == md5_hash(f"{client}-7315")
    members = np.array([client, client, "10.0.0.1@1"], dtype=object)
    rings = build_rings(np.zeros(3, np.int64), members, np.array([5, 5, 1]),
                        np.array([vnodes]))
    ring: dict[int, int] = {}
    for cid, rank in zip(members, [5, 5, 1], strict=True):
        existing = sum(1 for r in ring.values() if r == rank)
        for k in range(vnodes):
            ring[md5_hash(f"{cid}-{existing + k}")] = rank
    assert len(rings.key) == len(ring)
    assert set((rings.key & 0xFFFFFFFF).tolist()) == set(ring)
    probes = np.arange(0, 2**32, 2**32 // 4096, dtype=np.int64)
    keys = np.array(sorted(ring), dtype=np.int64)
    expect = [ring[int(keys[i % len(keys)])] for i in np.searchsorted(keys, probes)]
    assert route(rings, np.zeros(len(probes), np.int64), probes).tolist() == expect


@SETTINGS
@given(ids=st.lists(st.sampled_from(["a", "", "10.0.0.1@1", "é@2", "x\ud800", "~whatif-0001"]),
                    max_size=6),
       data=st.data())
def test_node_hashes_hash_every_node_key(ids: list[str], data: st.DataObject) -> None:
    """Each `<id>-<k>` as upstream keys it (an unpaired surrogate as '?', as Java encodes
    it), repeated ids and empty ranges included."""
    first = [data.draw(st.integers(0, 30)) for _ in ids]
    count = [data.draw(st.integers(0, 25)) for _ in ids]
    expect = [md5_hash(f"{c}-{f + k}".encode("utf-8", "replace").decode())
              for c, f, n in zip(ids, first, count, strict=True) for k in range(n)]
    got = node_hashes(np.array(ids, dtype=object), np.array(first, np.int64),
                      np.array(count, np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == expect
    # given codes equal only where the ids are (an id may have several)
    names = sorted(set(ids))
    codes = [names.index(c) * 2 + data.draw(st.integers(0, 1)) for c in ids]
    coded = node_hashes(np.array(ids, dtype=object), np.array(first, np.int64),
                        np.array(count, np.int64), np.array(codes, np.int64))
    assert coded.tolist() == expect


@SETTINGS
@given(data=st.data(), kafka=st.booleans())
def test_first_row_of_each_queue_carries_its_status(data: st.DataObject, kafka: bool) -> None:
    """Reports count a queue's facts on its first row (queue_first): every queue's rows
    are contiguous and its first row is a clustering claim whenever there is one."""
    group = data.draw(messy_groups(kafka=kafka))
    for topic in data.draw(st.lists(st.sampled_from(list(group.topics)), unique=True)):
        # a broadcasting member whose id sorts before every clustering one
        group.members.append(member("!bcast", topic, "AVG", message_model="BROADCASTING"))
    queues, members = group.frames()
    out = allocate_bucket(queues.assign(_row=np.arange(len(queues))), members)
    first = first_of_queue(out["_row"].to_numpy(np.int64))
    keys = ["topic", "broker_name", "queue_id"]
    assert first.sum() == len(queues) == out.drop_duplicates(keys).shape[0]
    statuses = out.groupby(out["_row"])["status"].agg(set)
    expected = statuses.map(lambda s: ("CONTENDED" if "CONTENDED" in s else "OK" if "OK" in s
                                       else "BROADCAST" if "BROADCAST" in s else "UNCONSUMED"))
    got = out.loc[first].set_index("_row")["status"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
