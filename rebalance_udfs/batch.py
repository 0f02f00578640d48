"""A flattened batch of allocation calls over many consumer groups at once.

One pandas-UDF call receives the queues and members of many (snapshot, cluster, group)
keys. Instead of looping over groups, everything is flattened into numpy arrays:

* a *unit* is one (snapshot, cluster, group, topic) with its readable queues, sorted like
  `Collections.sort(mqAll)` (broker name in Java order, then queue id), stored contiguously;
* a group's *slots* are its client-id list `cidAll` in Java order, duplicates kept (two
  connections sharing one client id are listed twice, as the broker lists them);
* a *call* is one subscribing client running its own strategy on one unit.

Strategy kernels read these arrays and return claims as (call, queue position) pairs, so a
kernel is plain numpy over every group of the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rebalance_udfs.key_codes import key_codes, numbered_in_key_order, sorted_lookup
from rebalance_udfs.ordering import java_rank
from vocabulary.columns import (
    BROADCASTING,
    BROKER,
    CLIENT,
    CLUSTERING,
    GROUP_KEYS,
    POP,
    RETRY_TOPIC_PREFIX,
)
from vocabulary.findings import BROKER_STRATEGIES


@dataclass(frozen=True)
class AllocationBatch:
    """Arrays describing many allocation calls; see the module docstring.

    Queue arrays (length Q) are sorted by unit, then broker (Java order), then queue id.
    Slot arrays (length S) are sorted by group, then client id (Java order).
    Call arrays (length C) have one entry per (unit, subscribing client, strategy).
    """

    # units (U)
    unit_group: np.ndarray  # int64: group index
    unit_topic: np.ndarray  # object: topic name
    unit_queue_start: np.ndarray  # int64: first queue position of the unit
    unit_queue_count: np.ndarray  # int64: number of readable queues (n)
    unit_subscriber_count: np.ndarray  # int64: distinct client ids subscribing the unit
    # queues (Q)
    queue_unit: np.ndarray  # int64
    queue_broker: np.ndarray  # object: broker name ("" when null)
    queue_id: np.ndarray  # int64
    queue_room: np.ndarray  # object: broker_room (None when unknown)
    # groups (G) and their client slots (S)
    group_slot_start: np.ndarray  # int64
    group_slot_count: np.ndarray  # int64: len(cidAll), duplicates counted
    slot_client: np.ndarray  # object: client id
    slot_client_rank: np.ndarray  # int64: Java-order rank of the client id within the batch
    slot_room: np.ndarray  # object: client_room (None when unknown)
    # calls (C)
    call_unit: np.ndarray  # int64
    call_client: np.ndarray  # object
    call_client_rank: np.ndarray  # int64: Java-order rank within the batch
    call_slot_index: np.ndarray  # int64: cidAll.indexOf(client) within its group, -1 if absent
    call_subscriber_index: np.ndarray  # int64: rank among the unit's distinct subscribers
    call_strategy: np.ndarray  # object: strategy name the client runs
    call_broadcast: np.ndarray  # bool: BROADCASTING message model
    call_virtual_nodes: np.ndarray  # int64: CONSISTENT_HASH virtual nodes (default 10)
    call_rooms: np.ndarray  # object: MACHINE_ROOM `rooms` param (comma list) or None
    call_config_queues: np.ndarray  # object: CONFIG `queues` param or None
    # who allocates (SPEC §6): CLIENT (also for null), BROKER, POP, MESSAGE
    call_mode: np.ndarray | None = None  # object
    # int64: the slots of the call's client id in cidAll, its processes (0 when absent)
    call_slots: np.ndarray | None = None
    call_pop_share: np.ndarray | None = None  # int64: popShareQueueNum (0 when unset)

    @property
    def n_calls(self) -> int:
        return len(self.call_unit)


DEFAULT_VIRTUAL_NODES = 10


def _distinct_addresses(client_key: np.ndarray,
                        addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct client keys ascending, slots of each): a client id has one slot per
    distinct connection address, at least one."""
    keys = np.unique(client_key)
    named = np.flatnonzero(~pd.isna(addresses))
    pairs = np.unique(key_codes(client_key[named], addresses[named])[0], return_index=True)[1]
    per_key = np.bincount(np.searchsorted(keys, client_key[named][pairs]),
                          minlength=len(keys))
    return keys, np.maximum(per_key, 1).astype(np.int64)


@dataclass(frozen=True)
class BatchLayout:
    """The part of an AllocationBatch that does not depend on what the members run
    (strategy, message model, parameters, allocation mode): its units, queues and client
    slots, and what its calls are looked up by. The strategy comparison lays a bucket out
    once and gives every candidate its calls (`with_calls`)."""

    batch: AllocationBatch  # its call arrays empty
    queues: pd.DataFrame  # the queue rows in the batch's queue positions
    member_group: np.ndarray  # int64 per member row: its group
    member_client_rank: np.ndarray  # int64 per member row: Java rank of its client id
    subscribed: np.ndarray  # bool per member row: it names a topic
    subscribed_topic_rank: np.ndarray  # int64 per subscribed row: its topic's rank
    unit_key: np.ndarray  # int64 per unit, ascending: (group, topic rank)
    topic_span: int
    client_span: int
    client_key: np.ndarray  # int64, ascending: the distinct (group, client rank) keys
    first_slot_of_client: np.ndarray  # int64 per client_key: its indexOf in cidAll
    slots_of_client: np.ndarray  # int64 per client_key: its slots, one per connection


def build_batch(
    queues: pd.DataFrame, members: pd.DataFrame
) -> tuple[AllocationBatch, pd.DataFrame]:
    """Flatten one bucket of queue rows and member rows into an AllocationBatch.

    `queues`: one row per readable queue per (snapshot, cluster, group, topic) the group
    subscribes, with UNIT_KEYS, broker_name, queue_id, broker_room.
    `members`: the member rows of the same groups (UNIT_KEYS with nullable topic,
    client_id, client_addr, strategy, message_model, client_room, virtual_nodes, rooms,
    config_queues).

    Returns the batch and `queues` re-ordered to match the batch's queue positions.
    """
    layout = batch_layout(queues, members)
    return with_calls(layout, members), layout.queues


def batch_layout(queues: pd.DataFrame, members: pd.DataFrame) -> BatchLayout:
    """The units, queues and client slots of `build_batch`'s batch (same arguments)."""
    members = members.reset_index(drop=True)
    queues = queues.reset_index(drop=True)

    # Groups: every group with members, numbered in key order; queues only ever belong to
    # such groups.
    group_codes, queue_group, first_of_group = numbered_in_key_order(members, queues,
                                                                     GROUP_KEYS)
    n_groups = len(first_of_group)
    if (queue_group < 0).any():
        raise ValueError("queue rows for a consumer group that has no members in this batch")

    # Units and their queues, sorted as Collections.sort(mqAll) within each unit. Topics
    # are ranked over the queues and the subscriptions together, so a call finds its unit
    # by (group, topic rank).
    subscribed = members["topic"].notna().to_numpy(bool)
    topic_rank_all = java_rank(np.concatenate([queues["topic"].to_numpy(object),
                                               members["topic"].to_numpy(object)[subscribed]]))
    topic_rank = topic_rank_all[:len(queues)]
    broker = queues["broker_name"].fillna("").to_numpy(object)
    broker_rank = java_rank(broker)
    qid = queues["queue_id"].to_numpy(np.int64)
    order = np.lexsort((qid, broker_rank, topic_rank, queue_group))
    queues = queues.iloc[order].reset_index(drop=True)
    q_group, q_topic_rank = queue_group[order], topic_rank[order]
    unit_break = np.ones(len(queues), dtype=bool)
    unit_break[1:] = (q_group[1:] != q_group[:-1]) | (q_topic_rank[1:] != q_topic_rank[:-1])
    unit_queue_start = np.flatnonzero(unit_break).astype(np.int64)
    queue_unit = np.cumsum(unit_break).astype(np.int64) - 1
    unit_queue_count = np.diff(np.append(unit_queue_start, len(queues))).astype(np.int64)
    unit_group = q_group[unit_queue_start].astype(np.int64)
    unit_topic = queues["topic"].to_numpy(object)[unit_queue_start]
    unit_topic_rank = q_topic_rank[unit_queue_start]

    # Slots: cidAll per group; one slot per distinct connection (client_addr) of a client id.
    client_rank_all = java_rank(members["client_id"].to_numpy(object))
    # (group, client) pairs as one int64, ascending like (group, Java rank); a null id
    # (rank -1) keeps a key of its own
    span = int(client_rank_all.max(initial=-1)) + 2
    client_key = group_codes * span + client_rank_all + 1
    sc_key, sc_n = _distinct_addresses(client_key, members["client_addr"].to_numpy(object))
    sc_g, sc_r = sc_key // span, sc_key % span - 1
    slot_group = np.repeat(sc_g, sc_n)
    slot_client_rank = np.repeat(sc_r, sc_n)
    group_slot_count = np.bincount(slot_group, minlength=n_groups).astype(np.int64)
    group_slot_start = (np.cumsum(group_slot_count) - group_slot_count).astype(np.int64)
    # first slot of each (group, client): its indexOf in cidAll
    first_slot_of_client = (np.cumsum(sc_n) - sc_n) - group_slot_start[sc_g]
    ranks, first_of_rank = np.unique(client_rank_all, return_index=True)
    slot_client = members["client_id"].to_numpy(object)[
        first_of_rank[np.searchsorted(ranks, slot_client_rank)]]
    # a client's room: the first row of the (group, client) that names one
    room = _nullable_objects(members["client_room"])
    roomed = np.flatnonzero(~pd.isna(room))
    room_key, first_roomed = np.unique(client_key[roomed], return_index=True)
    slot_room = sorted_lookup(room_key, room[roomed][first_roomed],
                               slot_group * span + slot_client_rank + 1, None)

    no_calls = np.empty(0, np.int64)
    batch = AllocationBatch(
        unit_group=unit_group,
        unit_topic=unit_topic,
        unit_queue_start=unit_queue_start,
        unit_queue_count=unit_queue_count,
        unit_subscriber_count=np.zeros(len(unit_queue_start), np.int64),
        queue_unit=queue_unit,
        queue_broker=queues["broker_name"].fillna("").to_numpy(object),
        queue_id=queues["queue_id"].to_numpy(np.int64),
        queue_room=_nullable_objects(queues["broker_room"]),
        group_slot_start=group_slot_start,
        group_slot_count=group_slot_count,
        slot_client=slot_client,
        slot_client_rank=slot_client_rank.astype(np.int64),
        slot_room=slot_room,
        call_unit=no_calls, call_client=np.empty(0, object), call_client_rank=no_calls,
        call_slot_index=no_calls, call_subscriber_index=no_calls,
        call_strategy=np.empty(0, object), call_broadcast=np.empty(0, bool),
        call_virtual_nodes=no_calls, call_rooms=np.empty(0, object),
        call_config_queues=np.empty(0, object),
    )
    # units are in (group, topic rank) order: one int64 key each
    topic_span = int(topic_rank_all.max(initial=-1)) + 2
    return BatchLayout(
        batch=batch, queues=queues, member_group=group_codes,
        member_client_rank=client_rank_all, subscribed=subscribed,
        subscribed_topic_rank=topic_rank_all[len(queues):],
        unit_key=unit_group * topic_span + unit_topic_rank + 1, topic_span=topic_span,
        client_span=span, client_key=sc_key, first_slot_of_client=first_slot_of_client,
        slots_of_client=sc_n)


def with_calls(layout: BatchLayout, members: pd.DataFrame) -> AllocationBatch:
    """`layout`'s batch with the calls of `members`: the rows it was laid out from, in the
    same order, whatever they run (`build_batch`)."""
    members = members.reset_index(drop=True)
    subscribed, span = layout.subscribed, layout.client_span
    # Calls: one per (group, topic, client, strategy, model, params) that has a unit.
    subs = members[subscribed].copy()
    subs["_g"] = layout.member_group[subscribed]
    subs["_r"] = layout.member_client_rank[subscribed]
    subs["_t"] = layout.subscribed_topic_rank
    subs["_broadcast"] = subs["message_model"].fillna(CLUSTERING).eq(BROADCASTING)
    subs["_mode"] = (subs["allocation_mode"].fillna(CLIENT) if "allocation_mode" in subs
                     else CLIENT)
    # the broker pops a POP group's queues with AVG or AVG_BY_CIRCLE only; its retry
    # topics it allocates as a PULL group's, and for any other strategy it answers
    # nothing, where the rows are what the clients compute (as for BROKER)
    unpopped = (subs["_mode"].eq(POP)
                & (subs["topic"].astype(str).str.startswith(RETRY_TOPIC_PREFIX)
                   | ~subs["strategy"].isin(BROKER_STRATEGIES)))
    subs.loc[unpopped, "_mode"] = BROKER
    subs["_pop"] = (pd.to_numeric(subs["pop_share_queue_num"], errors="coerce").fillna(0)
                    if "pop_share_queue_num" in subs else 0)
    call_cols = ["_g", "_t", "_r", "strategy", "_broadcast", "virtual_nodes", "rooms",
                 "config_queues", "_mode", "_pop"]
    calls = subs.drop_duplicates(call_cols)
    call_unit = sorted_lookup(layout.unit_key, np.arange(len(layout.unit_key), dtype=np.int64),
                               calls["_g"].to_numpy(np.int64) * layout.topic_span
                               + calls["_t"].to_numpy(np.int64) + 1, -1)
    has_unit = call_unit >= 0
    calls, call_unit = calls[has_unit], call_unit[has_unit].astype(np.int64)
    call_r = calls["_r"].to_numpy(np.int64)
    call_g = calls["_g"].to_numpy(np.int64)

    call_key = call_g * span + call_r + 1
    call_slot_index = sorted_lookup(layout.client_key, layout.first_slot_of_client,
                                     call_key, -1)
    call_slots = sorted_lookup(layout.client_key, layout.slots_of_client, call_key, 0)

    # Kafka membership: distinct subscribing client ids of each unit, in Java order.
    call_pair = call_unit * span + call_r + 1
    pairs = np.unique(call_pair)  # by (unit, rank)
    pair_unit = pairs // span
    unit_subscriber_count = np.bincount(pair_unit, minlength=len(layout.unit_key))
    pair_index = np.arange(len(pairs)) - np.searchsorted(pair_unit, pair_unit)
    call_subscriber_index = pair_index[np.searchsorted(pairs, call_pair)]

    vnodes = pd.to_numeric(calls["virtual_nodes"], errors="coerce")
    return replace(
        layout.batch,
        unit_subscriber_count=unit_subscriber_count.astype(np.int64),
        call_unit=call_unit,
        call_client=calls["client_id"].to_numpy(object),
        call_client_rank=call_r,
        call_slot_index=call_slot_index,
        call_subscriber_index=call_subscriber_index,
        call_strategy=calls["strategy"].to_numpy(object),
        call_broadcast=calls["_broadcast"].to_numpy(bool),
        call_virtual_nodes=vnodes.fillna(DEFAULT_VIRTUAL_NODES).to_numpy(np.int64),
        call_rooms=_nullable_objects(calls["rooms"]),
        call_config_queues=_nullable_objects(calls["config_queues"]),
        call_mode=calls["_mode"].to_numpy(object),
        call_slots=call_slots.astype(np.int64),
        call_pop_share=calls["_pop"].to_numpy(np.int64),
    )


def _nullable_objects(series: pd.Series) -> np.ndarray:
    """Object array with None (not NaN) for missing values."""
    values = series.to_numpy(object)
    return np.where(pd.isna(values), None, values)
