"""Kafka `sticky` / `cooperative-sticky` snapshots chained per consumer group (pure
pandas, no Spark: `rebalance_udfs.spark.sticky` runs it once per bucket of groups).

The sticky assignors keep previous owners, so a group's snapshots cannot be allocated
independently: `sticky_bucket` runs the sticky assignor (`sticky.sticky_owners`, on integer
ids) per group snapshot after snapshot in cluster order (`_position`), each starting from
the previous snapshot's result.

Kafka semantics:
- only CLUSTERING members take part, a member whose rows name no topic too (it joined
  subscribing nothing: upstream's constrained path may deal it partitions, which it
  refuses, see `sticky.sticky_owners`); a topic's partitions are its
  readable queues in `MessageQueue` order (broker name in Java order, null as "", then
  queue id) and partition index = position in that order;
- BROADCASTING members claim every queue of the topics they subscribe (status BROADCAST)
  and take no part in the sticky assignment;
- the group runs the cooperative protocol only when all its clustering members run
  `cooperative-sticky` (Kafka only lets a group agree on a protocol every member
  supports; with one assignor per member a mixed group cannot really form, so the
  audit falls back to eager `sticky`).

The previous assignment of a snapshot is what the group's clustering members owned (status
OK; CONTENDED where a member on another strategy claims the queue too) in the cluster's
previous snapshot: the result computed in this bucket when that
snapshot is one of its snapshots (`_previous_in_run`), else the prior claims given with the
members (`_prior` rows). Ownership is carried by queue identity (topic, broker_name,
queue_id) and re-indexed on the current snapshot's partition order, so a queue that no
longer exists is dropped and one whose index shifted (a broker added) keeps its owner.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pandas as pd

from rebalance_udfs.key_codes import runs
from rebalance_udfs.ordering import java_key, java_rank
from rebalance_udfs.sticky import sticky_owners, subscriptions_equal
from vocabulary.columns import (
    BROADCAST,
    BROADCASTING,
    CLUSTERING,
    COOPERATIVE_STICKY,
    GROUP_KEYS,
    OK,
    STICKY_STRATEGIES,
    UNCONSUMED,
)

# queue side: QUEUE_KEYS plus the snapshot's place in its cluster's order and its
# predecessor (see `rebalance_udfs.spark.snapshot_order`)
ORDER_COLUMNS = ["_position", "_previous", "_previous_in_run"]
# member side: member rows (_prior false) and prior claims (_prior true, keyed by the
# snapshot whose predecessor they describe)
MEMBER_SIDE = [*GROUP_KEYS, "client_id", "topic", "strategy", "message_model",
               "broker_name", "queue_id", "_prior"]

_CLAIM_COLUMNS = ["_row", "client_id", "strategy", "status"]

# a queue's identity across snapshots: (topic, broker_name or None, queue_id)
Queue = tuple[str, str | None, int]
# a member row: (client_id, topic or None, strategy, broadcasting)
MemberRow = tuple[str, str | None, str, bool]


def member_side(members: pd.DataFrame) -> pd.DataFrame:
    """Member rows (a frame with GROUP_KEYS, client_id, topic, strategy and message_model)
    as MEMBER_SIDE rows: no queue, not a prior claim."""
    return members.assign(broker_name=None, queue_id=None, _prior=False)[MEMBER_SIDE]


def chained_members(members: pd.DataFrame) -> pd.DataFrame:
    """The rows of a bucket's member frame (GROUP_KEYS, client_id, topic, strategy,
    message_model) the chain takes: those on a sticky assignor, a member's that subscribe
    nothing only in a group whose clustering members all run one (it changes the path and
    the quotas, `sticky.sticky_owners`). In a group that mixes assignors (which Kafka's
    coordinator does not let form) the sticky members split the queues among those that
    subscribe, as the other members' kernels count subscribers only."""
    sticky = members["strategy"].isin(STICKY_STRATEGIES)
    clustering = members["message_model"].fillna(CLUSTERING).ne(BROADCASTING)
    mixed = (~sticky & clustering).groupby([members[k] for k in GROUP_KEYS],
                                           dropna=False).transform("any")
    return members[sticky & (members["topic"].notna() | ~mixed.astype(bool))]


def sticky_bucket(queues: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """Sticky assignments of every snapshot of every group in one bucket.

    `queues`: one row per readable subscribed queue per (snapshot, cluster, group, topic),
    with QUEUE_KEYS, ORDER_COLUMNS and `_row` (the row's index in the caller's table).
    `members`: MEMBER_SIDE rows. Returns one row per (queue, claiming client) and one with a
    null client per queue nobody claims: `_row`, client_id, strategy, status, ordered by
    queue (group, snapshot order, topic, MessageQueue order), clustering claims before
    broadcast ones, then client id.

    The bucket's columns are read once into arrays and its group snapshots found as runs of
    the sorted rows: only the assignor and the lists it takes and gives run per group
    snapshot. It takes and gives integer ids (`sticky.sticky_owners`): converting each
    partition to a (topic, partition) pair and back cost about a fifth of the chain.
    Claims are collected as (sorted row, client, strategy, status) and
    ordered once at the end; the queues nobody claims are found by counting (a pandas
    group-by per snapshot cost about 2 ms each, and a loop over every queue row about a
    third of what was left).
    """
    if queues.empty:
        return pd.DataFrame(columns=_CLAIM_COLUMNS)
    q = queues.reset_index(drop=True)
    broker = q["broker_name"].to_numpy(object)
    broker_null = pd.isna(broker)
    order = np.lexsort((
        q["queue_id"].to_numpy(np.int64), java_rank(np.where(broker_null, "", broker)),
        java_rank(q["topic"].to_numpy(object)),
        q["_position"].to_numpy(np.int64),
        java_rank(q["consumer_group"].to_numpy(object)),
        java_rank(q["cluster"].to_numpy(object)),
    ))
    topic = q["topic"].to_numpy(object)[order]
    cluster = q["cluster"].to_numpy(object)[order]
    group = q["consumer_group"].to_numpy(object)[order]
    position = q["_position"].to_numpy(np.int64)[order]
    idents: list[Queue] = list(zip(
        topic.tolist(), np.where(broker_null, None, broker)[order].tolist(),
        q["queue_id"].to_numpy(np.int64)[order].tolist(), strict=True))
    snapshot = q["snapshot_id"].to_numpy(object)[order]
    previous = q["_previous"].to_numpy(object)[order]
    previous_in_run = q["_previous_in_run"].to_numpy(object)[order]

    group_starts = set(runs(cluster, group)[0].tolist())
    snapshot_runs = _spans(*runs(cluster, group, position))
    topic_runs = _spans(*runs(cluster, group, position, topic))
    roster, prior = _member_rows(members)

    claims = _Claims()
    owned_in: dict[str, dict[Queue, str]] = {}  # snapshot -> queue identity -> owner
    t = 0  # the next topic run
    for start, end in snapshot_runs:
        if start in group_starts:
            owned_in = {}
        key = (snapshot[start], cluster[start], group[start])
        topics: dict[str, tuple[int, int]] = {}  # topic -> its run of rows
        while t < len(topic_runs) and topic_runs[t][0] < end:
            topics[topic[topic_runs[t][0]]] = topic_runs[t]
            t += 1
        if _flag(previous_in_run[start]):
            before = owned_in.get(previous[start], {})
        else:
            before = _prior_owners(prior.get(key))
        owned_in[key[0]] = _assign_snapshot(idents, topics, roster.get(key), before, claims)
    row, client, strategy, status = claims.rows(len(idents))
    # queue order (the sorted rows); within a queue, clustering claims first (the first
    # row carries the queue's status, see first_of_queue), claimants in Java order of id
    client_rank = java_rank(np.where(pd.isna(client), "", client))
    ranked = np.lexsort((client_rank, status == BROADCAST, row))
    return pd.DataFrame({
        "_row": q["_row"].to_numpy(np.int64)[order][row[ranked]],
        "client_id": client[ranked], "strategy": strategy[ranked], "status": status[ranked]})


class _Claims:
    """Claims as they are made: (sorted row, client, strategy, status), in lists."""

    def __init__(self) -> None:
        self.row: list[int] = []
        self.client: list[str] = []
        self.strategy: list[str] = []
        self.status: list[str] = []

    def add(self, rows: list[int] | range, client: str, strategy: str, status: str) -> None:
        self.row.extend(rows)
        n = len(rows)
        self.client.extend([client] * n)
        self.strategy.extend([strategy] * n)
        self.status.extend([status] * n)

    def rows(self, n_queues: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The claims, and a row with a null client (UNCONSUMED) for each of the
        `n_queues` sorted rows nobody claims."""
        row = np.asarray(self.row, np.int64)
        nobody = np.flatnonzero(np.bincount(row, minlength=n_queues) == 0)
        k = len(nobody)
        return (np.concatenate([row, nobody]),
                np.array([*self.client, *[None] * k], dtype=object),
                np.array([*self.strategy, *[None] * k], dtype=object),
                np.array([*self.status, *[UNCONSUMED] * k], dtype=object))


def _spans(start: np.ndarray, length: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run (`key_codes.runs`)."""
    return list(zip(start.tolist(), (start + length).tolist(), strict=True))


def _flag(value: object) -> bool:
    """A nullable boolean from a pandas row (None / NaN = false)."""
    return False if value is None or pd.isna(value) else bool(value)


def _member_rows(members: pd.DataFrame
                 ) -> tuple[dict[tuple, list[MemberRow]], dict[tuple, list[tuple]]]:
    """Per group snapshot (GROUP_KEYS): its member rows (a topic null: the member
    subscribes nothing, and still joins the group), and its prior claims (topic,
    broker_name or None, queue_id, client_id), in row order."""
    is_prior = members["_prior"].fillna(False).astype(bool).to_numpy()
    keys = zip(*(members[c].to_numpy(object).tolist() for c in GROUP_KEYS), strict=True)
    client = members["client_id"].to_numpy(object).tolist()
    topic = members["topic"].to_numpy(object)
    topic = np.where(pd.isna(topic), None, topic).tolist()
    strategy = members["strategy"].to_numpy(object).tolist()
    broadcasting = members["message_model"].fillna(CLUSTERING).eq(BROADCASTING).tolist()
    broker = members["broker_name"].to_numpy(object)
    broker = np.where(pd.isna(broker), None, broker).tolist()
    queue_id = members["queue_id"].to_numpy(object).tolist()
    roster: dict[tuple, list[MemberRow]] = defaultdict(list)
    prior: dict[tuple, list[tuple]] = defaultdict(list)
    for i, key in enumerate(keys):
        if is_prior[i]:
            prior[key].append((topic[i], broker[i], queue_id[i], client[i]))
        else:
            roster[key].append((client[i], topic[i], strategy[i], broadcasting[i]))
    return roster, prior


def _prior_owners(claims: list[tuple] | None) -> dict[Queue, str]:
    """Queue identity -> owner from prior assignment rows (a queue claimed twice: nobody)."""
    if not claims:
        return {}
    out: dict[Queue, str] = {}
    contended: set[Queue] = set()
    for topic, broker, qid, client in claims:
        ident = (topic, broker, int(qid))
        if ident in out and out[ident] != client:
            contended.add(ident)
        out[ident] = client
    for ident in contended:
        del out[ident]
    return out


def _assign_snapshot(
    idents: list[Queue],
    topics: dict[str, tuple[int, int]],
    roster: list[MemberRow] | None,
    before: dict[Queue, str],
    claims: _Claims,
) -> dict[Queue, str]:
    """One group snapshot, whose queues are `idents[start:end]` per topic (`topics`: in
    Java order, each run in partition order): its claims added to `claims`; returns who
    owns which queue (status OK), what the next snapshot starts from."""
    owned: dict[Queue, str] = {}
    if not roster:
        return owned
    strategy_of: dict[str, str] = {}
    subscribed: dict[str, set[str]] = defaultdict(set)
    broadcasts: set[tuple[str, str, str]] = set()
    cooperative = True
    for client, topic, strategy, broadcasting in roster:
        if broadcasting:
            if topic is not None:
                broadcasts.add((client, topic, strategy))
            continue
        # a member subscribing nothing is a member of the group all the same (upstream's
        # assignor gets every member that joined): its set stays empty
        mine = subscribed[client]
        if topic is not None:
            mine.add(topic)
        if client not in strategy_of or strategy < strategy_of[client]:
            strategy_of[client] = strategy
        cooperative = cooperative and strategy == COOPERATIVE_STICKY

    if subscribed:
        clients = sorted(subscribed, key=java_key)
        rows = _sticky_rows(idents, topics, clients, subscribed, before, cooperative)
        for client, mine in zip(clients, rows, strict=True):
            claims.add(mine, client, strategy_of[client], OK)
            owned.update(dict.fromkeys([idents[r] for r in mine], client))
    for client, topic, strategy in sorted(broadcasts):
        if topic in topics:
            claims.add(range(*topics[topic]), client, strategy, BROADCAST)
    return owned


def _sticky_rows(
    idents: list[Queue],
    topics: dict[str, tuple[int, int]],
    clients: list[str],
    subscribed: dict[str, set[str]],
    before: dict[Queue, str],
    cooperative: bool,
) -> list[list[int]]:
    """The sorted rows each clustering client (`clients`, in Java order) gets from the
    sticky assignor. Its topics are the subscribed ones with queues, in Java order (that
    of `topics`), as integer ids; a partition's id is its topic's first id plus its index
    in the topic's run."""
    wanted = set().union(*subscribed.values())
    names = [name for name in topics if name in wanted]
    spans = [topics[name] for name in names]
    index = {name: t for t, name in enumerate(names)}
    member_of = {client: i for i, client in enumerate(clients)}
    claimed: list[set[int]] = [set() for _ in clients]
    first_id = 0
    for start, end in spans:
        if before:
            for p, owner in enumerate([before.get(i) for i in idents[start:end]]):
                i = member_of.get(owner)  # type: ignore[arg-type]
                if i is not None:
                    claimed[i].add(first_id + p)
        first_id += end - start
    owner_of = sticky_owners(
        [end - start for start, end in spans],
        [frozenset(index[t] for t in subscribed[c] if t in index) for c in clients],
        claimed, constrained=subscriptions_equal(
            clients, [frozenset(subscribed[c]) for c in clients]),
        topic_names=names, member_names=clients, cooperative=cooperative)
    rows: list[list[int]] = [[] for _ in clients]
    for row, i in zip(itertools.chain.from_iterable(range(*span) for span in spans),
                      owner_of, strict=True):
        if i >= 0:
            rows[i].append(row)
    return rows
