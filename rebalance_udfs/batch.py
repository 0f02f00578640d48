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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rebalance_udfs.ordering import java_rank
from vocabulary.columns import BROADCASTING, CLIENT, CLUSTERING, GROUP_KEYS


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
    call_pop_share: np.ndarray | None = None  # int64: popShareQueueNum (0 when unset)

    @property
    def n_calls(self) -> int:
        return len(self.call_unit)


DEFAULT_VIRTUAL_NODES = 10


def _factorize(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Integer code per row for the key columns, and the distinct keys in code order."""
    codes = frame.groupby(keys, sort=True, dropna=False).ngroup().to_numpy(np.int64)
    first = np.unique(codes, return_index=True)[1]
    return codes, frame.iloc[first][keys].reset_index(drop=True)


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
    members = members.reset_index(drop=True)
    queues = queues.reset_index(drop=True)

    # Groups: every group with members; queues only ever belong to such groups.
    group_codes, group_keys = _factorize(members, GROUP_KEYS)
    n_groups = len(group_keys)
    group_index = pd.MultiIndex.from_frame(group_keys)
    queue_group = group_index.get_indexer(pd.MultiIndex.from_frame(queues[GROUP_KEYS]))
    if (queue_group < 0).any():
        raise ValueError("queue rows for a consumer group that has no members in this batch")

    # Units and their queues, sorted as Collections.sort(mqAll) within each unit.
    topic_rank = java_rank(queues["topic"].to_numpy(object))
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

    # Slots: cidAll per group; one slot per distinct connection (client_addr) of a client id.
    client_rank_all = java_rank(members["client_id"].to_numpy(object))
    conn = pd.DataFrame(
        {"g": group_codes, "r": client_rank_all, "addr": members["client_addr"].to_numpy(object)}
    )
    slots_per_client = (
        conn.groupby(["g", "r"], sort=False)["addr"].nunique(dropna=True).clip(lower=1)
    )
    sc_g = slots_per_client.index.get_level_values(0).to_numpy(np.int64)
    sc_r = slots_per_client.index.get_level_values(1).to_numpy(np.int64)
    sc_n = slots_per_client.to_numpy(np.int64)
    sc_order = np.lexsort((sc_r, sc_g))
    sc_g, sc_r, sc_n = sc_g[sc_order], sc_r[sc_order], sc_n[sc_order]
    slot_group = np.repeat(sc_g, sc_n)
    slot_client_rank = np.repeat(sc_r, sc_n)
    group_slot_count = np.bincount(slot_group, minlength=n_groups).astype(np.int64)
    group_slot_start = (np.cumsum(group_slot_count) - group_slot_count).astype(np.int64)
    # first slot of each (group, client): its indexOf in cidAll
    first_slot_of_client = (np.cumsum(sc_n) - sc_n) - group_slot_start[sc_g]
    rank_to_client = pd.Series(members["client_id"].to_numpy(object), index=client_rank_all)
    rank_to_client = rank_to_client[~rank_to_client.index.duplicated()]
    slot_client = rank_to_client.reindex(slot_client_rank).to_numpy(object)
    room_of = (
        pd.DataFrame({"g": group_codes, "r": client_rank_all, "room": members["client_room"]})
        .dropna(subset=["room"])
        .drop_duplicates(["g", "r"])
        .set_index(["g", "r"])["room"]
    )
    slot_room = _lookup(room_of, slot_group, slot_client_rank)

    # Calls: one per (group, topic, client, strategy, model, params) that has a unit.
    subs = members[members["topic"].notna()].copy()
    subs["_g"] = group_codes[subs.index.to_numpy()]
    subs["_r"] = client_rank_all[subs.index.to_numpy()]
    subs["_broadcast"] = subs["message_model"].fillna(CLUSTERING).eq(BROADCASTING)
    subs["_mode"] = (subs["allocation_mode"].fillna(CLIENT) if "allocation_mode" in subs
                     else CLIENT)
    subs["_pop"] = (pd.to_numeric(subs["pop_share_queue_num"], errors="coerce").fillna(0)
                    if "pop_share_queue_num" in subs else 0)
    call_cols = ["_g", "topic", "_r", "strategy", "_broadcast", "virtual_nodes", "rooms",
                 "config_queues", "_mode", "_pop"]
    calls = subs.drop_duplicates(call_cols)
    unit_index = pd.MultiIndex.from_arrays([unit_group, unit_topic])
    call_unit = unit_index.get_indexer(
        pd.MultiIndex.from_arrays([calls["_g"].to_numpy(np.int64), calls["topic"].to_numpy(object)])
    )
    has_unit = call_unit >= 0
    calls, call_unit = calls[has_unit], call_unit[has_unit].astype(np.int64)
    call_r = calls["_r"].to_numpy(np.int64)
    call_g = calls["_g"].to_numpy(np.int64)

    first_slot = pd.Series(first_slot_of_client, index=pd.MultiIndex.from_arrays([sc_g, sc_r]))
    call_slot_index = _lookup(first_slot, call_g, call_r, default=-1).astype(np.int64)

    # Kafka membership: distinct subscribing client ids of each unit, in Java order.
    sub_pairs = pd.DataFrame({"u": call_unit, "r": call_r}).drop_duplicates()
    sub_pairs = sub_pairs.sort_values(["u", "r"], kind="stable")
    sub_pairs["i"] = sub_pairs.groupby("u", sort=False).cumcount()
    unit_subscriber_count = np.bincount(sub_pairs["u"], minlength=len(unit_queue_start))
    sub_index = sub_pairs.set_index(["u", "r"])["i"]
    call_subscriber_index = _lookup(sub_index, call_unit, call_r, default=-1).astype(np.int64)

    vnodes = pd.to_numeric(calls["virtual_nodes"], errors="coerce")
    batch = AllocationBatch(
        unit_group=unit_group,
        unit_topic=unit_topic,
        unit_queue_start=unit_queue_start,
        unit_queue_count=unit_queue_count,
        unit_subscriber_count=unit_subscriber_count.astype(np.int64),
        queue_unit=queue_unit,
        queue_broker=queues["broker_name"].fillna("").to_numpy(object),
        queue_id=queues["queue_id"].to_numpy(np.int64),
        queue_room=_nullable_objects(queues["broker_room"]),
        group_slot_start=group_slot_start,
        group_slot_count=group_slot_count,
        slot_client=slot_client,
        slot_client_rank=slot_client_rank.astype(np.int64),
        slot_room=slot_room,
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
        call_pop_share=calls["_pop"].to_numpy(np.int64),
    )
    return batch, queues


def _nullable_objects(series: pd.Series) -> np.ndarray:
    """Object array with None (not NaN) for missing values."""
    values = series.to_numpy(object)
    return np.where(pd.isna(values), None, values)


def _lookup(
    table: pd.Series, level0: np.ndarray, level1: np.ndarray, default: object = None
) -> np.ndarray:
    """Vectorized lookup of (level0, level1) keys in a two-level indexed Series."""
    if len(level0) == 0:
        return np.empty(0, dtype=object if default is None else np.int64)
    if len(table) == 0:
        return np.full(len(level0), default, dtype=object)
    pos = table.index.get_indexer(pd.MultiIndex.from_arrays([level0, level1]))
    values = table.to_numpy()
    out = np.where(pos >= 0, values[np.clip(pos, 0, None)], default)
    return out if default is None else out.astype(np.int64)
