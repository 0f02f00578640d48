"""Kafka `sticky` / `cooperative-sticky` snapshots chained per consumer group (pure
pandas, no Spark: `rebalance_udfs.spark.sticky` runs it once per bucket of groups).

The sticky assignors keep previous owners, so a group's snapshots cannot be allocated
independently: `sticky_bucket` runs `sticky.sticky_assign` per group snapshot after
snapshot in cluster order (`_position`), each starting from the previous snapshot's result.

Kafka semantics:
- only CLUSTERING members that subscribe a topic take part; a topic's partitions are its
  readable queues in `MessageQueue` order (broker name in Java order, null as "", then
  queue id) and partition index = position in that order;
- BROADCASTING members claim every queue of the topics they subscribe (status BROADCAST)
  and take no part in the sticky assignment;
- the group runs the cooperative protocol only when all its clustering members run
  `cooperative-sticky` (Kafka only lets a group agree on a protocol every member
  supports; with one assignor per member a mixed group cannot really form, so the
  audit falls back to eager `sticky`).

The previous assignment of a snapshot is what the group's clustering members owned (status
OK) in the cluster's previous snapshot: the result computed in this bucket when that
snapshot is one of its snapshots (`_previous_in_run`), else the prior claims given with the
members (`_prior` rows). Ownership is carried by queue identity (topic, broker_name,
queue_id) and re-indexed on the current snapshot's partition order, so a queue that no
longer exists is dropped and one whose index shifted (a broker added) keeps its owner.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from rebalance_udfs.allocate import first_of_queue
from rebalance_udfs.ordering import java_rank
from rebalance_udfs.sticky import sticky_assign
from vocabulary.columns import (
    BROADCAST,
    BROADCASTING,
    CLUSTERING,
    COOPERATIVE_STICKY,
    GROUP_KEYS,
    OK,
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


def sticky_bucket(queues: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """Sticky assignments of every snapshot of every group in one bucket.

    `queues`: one row per readable subscribed queue per (snapshot, cluster, group, topic),
    with QUEUE_KEYS, ORDER_COLUMNS and `_row` (the row's index in the caller's table).
    `members`: MEMBER_SIDE rows. Returns one row per (queue, claiming client) and one with a
    null client per queue nobody claims: `_row`, client_id, strategy, status, ordered by
    queue (group, snapshot order, topic, MessageQueue order), clustering claims before
    broadcast ones, then client id.
    """
    if queues.empty:
        return pd.DataFrame(columns=_CLAIM_COLUMNS)
    q = queues.reset_index(drop=True)
    broker = q["broker_name"].fillna("").to_numpy(object)
    order = np.lexsort((
        q["queue_id"].to_numpy(np.int64), java_rank(broker),
        java_rank(q["topic"].to_numpy(object)),
        q["_position"].to_numpy(np.int64),
        java_rank(q["consumer_group"].to_numpy(object)),
        java_rank(q["cluster"].to_numpy(object)),
    ))
    q = q.iloc[order].reset_index(drop=True)

    is_prior = members["_prior"].fillna(False).astype(bool)
    roster = {k: g for k, g in members[~is_prior].groupby(GROUP_KEYS, sort=False)}
    prior = {k: g for k, g in members[is_prior].groupby(GROUP_KEYS, sort=False)}

    rows: list[int] = []
    clients: list[str | None] = []
    strategies: list[str | None] = []
    statuses: list[str] = []
    for _, gq in q.groupby(["cluster", "consumer_group"], sort=False):
        owned_in: dict[str, dict[tuple, str]] = {}  # snapshot -> queue identity -> owner
        for _, sq in gq.groupby("_position", sort=False):
            first = sq.iloc[0]
            key = (first["snapshot_id"], first["cluster"], first["consumer_group"])
            topics = _topic_queues(sq)
            if _flag(first["_previous_in_run"]):
                before = owned_in.get(first["_previous"], {})
            else:
                before = _prior_owners(prior.get(key))
            claims = _assign_snapshot(topics, roster.get(key), before)
            owned = owned_in[key[0]] = {}
            for topic, (idents, row_ids) in topics.items():
                for ident, row in zip(idents, row_ids, strict=True):
                    queue = (topic, *ident)
                    for client, strategy, status in claims.get(queue) or _NOBODY:
                        rows.append(row)
                        clients.append(client)
                        strategies.append(strategy)
                        statuses.append(status)
                        if status == OK:
                            owned[queue] = client
    out = pd.DataFrame({"_row": np.asarray(rows, np.int64), "client_id": clients,
                        "strategy": strategies, "status": statuses})
    # rows are in queue order already; within a queue, clustering claims first (the first
    # row carries the queue's status, see first_of_queue), claimants in Java order of id
    row = out["_row"].to_numpy()
    queue_rank = np.cumsum(first_of_queue(row))
    client_rank = java_rank(out["client_id"].fillna("").to_numpy(object))
    broadcast = out["status"].to_numpy(object) == BROADCAST
    return out.iloc[np.lexsort((client_rank, broadcast, queue_rank))].reset_index(drop=True)


_NOBODY = [(None, None, UNCONSUMED)]


def _flag(value: object) -> bool:
    """A nullable boolean from a pandas row (None / NaN = false)."""
    return False if value is None or pd.isna(value) else bool(value)


def _topic_queues(sq: pd.DataFrame) -> dict[str, tuple[list[tuple], np.ndarray]]:
    """topic -> (queue identities (broker_name, queue_id) in partition order, `_row`s)."""
    out = {}
    for topic, tq in sq.groupby("topic", sort=False):
        brokers = tq["broker_name"].to_numpy(object)
        idents = [(None if pd.isna(b) else b, int(i))
                  for b, i in zip(brokers, tq["queue_id"].to_numpy(np.int64), strict=True)]
        out[topic] = (idents, tq["_row"].to_numpy(np.int64))
    return out


def _prior_owners(claims: pd.DataFrame | None) -> dict[tuple, str]:
    """Queue identity -> owner from prior assignment rows (a queue claimed twice: nobody)."""
    if claims is None or claims.empty:
        return {}
    out: dict[tuple, str] = {}
    contended: set[tuple] = set()
    for topic, broker, qid, client in zip(
        claims["topic"], claims["broker_name"], claims["queue_id"], claims["client_id"],
        strict=True,
    ):
        ident = (topic, None if pd.isna(broker) else broker, int(qid))
        if ident in out and out[ident] != client:
            contended.add(ident)
        out[ident] = client
    for ident in contended:
        del out[ident]
    return out


def _assign_snapshot(
    topics: dict[str, tuple[list[tuple], np.ndarray]],
    roster: pd.DataFrame | None,
    before: dict[tuple, str],
) -> dict[tuple, list[tuple[str, str, str]]]:
    """(topic, broker, queue_id) -> [(client, strategy, status)] for one group snapshot."""
    if roster is None or roster.empty:
        return {}
    subscribed = roster[roster["topic"].notna()]
    broadcast = subscribed["message_model"].fillna(CLUSTERING).eq(BROADCASTING)
    clustering = subscribed[~broadcast]
    strategy_of = clustering.groupby("client_id")["strategy"].min().to_dict()
    subscriptions = {c: sorted(set(ts)) for c, ts in clustering.groupby("client_id")["topic"]}
    cooperative = bool(len(clustering)) and bool(
        (clustering["strategy"] == COOPERATIVE_STICKY).all())

    position = {(t, *ident): (t, p) for t, (idents, _) in topics.items()
                for p, ident in enumerate(idents)}
    previous: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for ident, client in before.items():
        if ident in position:
            previous[client].append(position[ident])

    out: dict[tuple, list[tuple[str, str, str]]] = defaultdict(list)
    if subscriptions:
        partitions = {t: len(idents) for t, (idents, _) in topics.items()}
        result = sticky_assign(subscriptions, partitions, previous, cooperative)
        for client, tps in result.items():
            for topic, p in tps:
                out[(topic, *topics[topic][0][p])].append((client, strategy_of[client], OK))
    b_rows = subscribed[broadcast]
    for client, topic, strategy in sorted(
        set(zip(b_rows["client_id"], b_rows["topic"], b_rows["strategy"], strict=True))
    ):
        if topic in topics:
            for ident in topics[topic][0]:
                out[(topic, *ident)].append((client, strategy, BROADCAST))
    return out
