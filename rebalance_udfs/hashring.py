"""`AllocateMessageQueueConsistentHash` (strategy `CONSISTENT_HASH`), vectorized.

Upstream rebuilds a `ConsistentHashRouter` on every allocate call: a `TreeMap` from the
hash of `<clientId>-<k>` to the client, for every slot of the sorted cidAll and k counting
on from the client's existing replicas (a duplicated id gets k = 10..19 for its second slot
with 10 virtual nodes). A queue goes to the first ring key >= hash(`MessageQueue.toString()`),
wrapping around. Hash = first 4 bytes of MD5 of the key, unsigned big-endian.

Here every ring of the batch lives in one sorted int64 array keyed `ring << 32 | hash`, so
routing all queues of all groups is one `np.searchsorted`. Rings depend only on (client
list, virtual nodes): a group's calls share them, whatever topic they allocate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rebalance_udfs import md5
from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.positional import EMPTY_CLAIMS, Claims, expand_blocks, rocketmq_cid_index

MAX_VIRTUAL_NODES = 100_000
"""Virtual-node counts above this are treated as unusable (the call claims nothing) instead
of exhausting memory; real deployments use tens to hundreds. Input validation may reuse it."""

_HASH_BITS = 32
_NO_SUFFIX = md5.encode([""])


def md5_prefix(keys: list[str] | np.ndarray) -> np.ndarray:
    """Upstream `MD5Hash.hash` of each key: first 4 MD5 bytes, unsigned big-endian (int64).

    Distinct keys are hashed once each (`md5.first_words`). Upstream hashes
    `key.getBytes()` in the platform charset (UTF-8 on Linux, and everywhere since JDK 18),
    where an unpaired surrogate becomes '?', as with errors="replace".
    """
    # distinct keys by a dict: pandas' string table stops at a NUL ('' and '\x00' were one
    # key) and compares UTF-8 buffers a key with an unpaired surrogate lacks
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(k, len(index)) for k in keys), np.int64,
                        count=len(keys))
    uniques = list(index)
    if len(uniques) == 0:
        return np.empty(len(codes), np.int64)
    rows = np.arange(len(uniques))
    hashes = md5.first_words(md5.encode(list(uniques)), rows, _NO_SUFFIX,
                             np.zeros(len(uniques), np.int64))
    return hashes[codes]


def node_hashes(ids: np.ndarray, first: np.ndarray, count: np.ndarray,
                id_codes: np.ndarray | None = None) -> np.ndarray:
    """`md5_prefix` of the ring nodes `<ids[j]>-<k>` for every j and first[j] <= k <
    first[j] + count[j], in `expand_blocks(first, count)` order.

    The nodes are most of a ring's hashing (tens of virtual nodes per client), so each
    distinct id's keys 0 .. its largest k are hashed once, as the id's encoded bytes
    followed by a shared table of `-<k>` suffixes: no string is formatted per node.
    Encoding the id alone is encoding the key: the suffix is ASCII. `id_codes`, when the
    caller has them: non-negative integers, equal only where the ids are (Java ranks)."""
    first = np.asarray(first, np.int64)
    count = np.clip(np.asarray(count, np.int64), 0, None)
    member, k = expand_blocks(first, count)
    if len(k) == 0:
        return np.empty(0, np.int64)
    if id_codes is None:
        # a dict, not pandas' factorize: its string table compares UTF-8 buffers, which
        # an id with an unpaired surrogate does not have (its codes came out
        # nondeterministic)
        index: dict[str, int] = {}
        codes = np.array([index.setdefault(str(c), len(index)) for c in ids], np.int64)
        distinct = list(index)
    else:
        _, at, codes = np.unique(id_codes, return_index=True, return_inverse=True)
        codes = codes.reshape(-1)
        distinct = [str(c) for c in np.asarray(ids, object)[at]]
    need = np.zeros(len(distinct), np.int64)
    np.maximum.at(need, codes, np.where(count > 0, first + count, 0))
    suffixes = md5.encode([f"-{n}" for n in range(int(need.max()))])
    node_id, node_k = expand_blocks(np.zeros(len(need), np.int64), need)
    table = md5.first_words(md5.encode(distinct), node_id, suffixes, node_k)
    return table[(np.cumsum(need) - need)[codes[member]] + k]


def queue_hashes(batch: AllocationBatch, positions: np.ndarray) -> np.ndarray:
    """Hash of `MessageQueue [topic=T, brokerName=B, queueId=N]` for queue positions."""
    return message_queue_hashes(batch.unit_topic[batch.queue_unit[positions]].tolist(),
                                batch.queue_broker[positions].tolist(),
                                batch.queue_id[positions])


def message_queue_hashes(topics: list, brokers: list, queue_ids: np.ndarray) -> np.ndarray:
    """`md5_prefix` of `MessageQueue [topic=T, brokerName=B, queueId=N]` (upstream's
    `MessageQueue.toString()`) for every row.

    A bucket's queues share a few topics, brokers and queue ids: each distinct
    `MessageQueue [topic=T, brokerName=B, queueId=` head and `N]` tail is formatted and
    encoded once, and each distinct message hashed once, not a string made per queue.
    The head ends in ASCII, so encoding the two apart is encoding the key."""
    ids = np.asarray(queue_ids, np.int64)
    if len(ids) == 0:
        return np.empty(0, np.int64)
    # a dict, not pandas' factorize (see node_hashes)
    heads: dict[tuple, int] = {}
    head = np.fromiter((heads.setdefault(key, len(heads)) for key in zip(topics, brokers,
                                                                         strict=True)),
                       np.int64, count=len(ids))
    return coded_message_queue_hashes(head, list(heads), ids)


def coded_message_queue_hashes(head: np.ndarray, heads: list[tuple[str, str]],
                               queue_ids: np.ndarray) -> np.ndarray:
    """`message_queue_hashes` of rows whose (topic, broker name) is already numbered:
    row r is `heads[head[r]]` with queue id `queue_ids[r]`."""
    ids = np.asarray(queue_ids, np.int64)
    if len(ids) == 0:
        return np.empty(0, np.int64)
    tails, tail = np.unique(ids, return_inverse=True)
    messages, inverse = np.unique(np.asarray(head, np.int64) * len(tails) + tail.reshape(-1),
                                  return_inverse=True)
    # a null broker name (a Kafka partition's; "" in the batch) is Java's "null" in the key
    table = md5.first_words(
        md5.encode([f"MessageQueue [topic={t}, brokerName={b or 'null'}, queueId="
                    for t, b in heads]),
        messages // len(tails), md5.encode([f"{q}]" for q in tails.tolist()]),
        messages % len(tails))
    return table[inverse.reshape(-1)]


@dataclass(frozen=True)
class Rings:
    """Many hash rings in one sorted array.

    `key` = ring << 32 | node hash (sorted, one entry per distinct hash of a ring);
    `owner` = the client rank the node routes to; `start`/`count` = each ring's slice.
    """

    key: np.ndarray
    owner: np.ndarray
    start: np.ndarray
    count: np.ndarray


def build_rings(
    member_ring: np.ndarray,
    member_client: np.ndarray,
    member_rank: np.ndarray,
    ring_vnodes: np.ndarray,
) -> Rings:
    """Build rings from their physical nodes.

    Member arrays list each ring's client slots in insertion order (the sorted cidAll,
    duplicates kept), rings contiguous and ascending. `ring_vnodes[r]` >= 0 is the ring's
    virtual-node count.
    """
    n_rings = len(ring_vnodes)
    member_ring = member_ring.astype(np.int64)
    member_rank = member_rank.astype(np.int64)
    vnodes = ring_vnodes.astype(np.int64)[member_ring]
    # replica numbering continues for a repeated client id: occurrence * vnodes, assuming no
    # hash collision removed one of its earlier nodes (checked below)
    occurrence = (
        pd.DataFrame({"r": member_ring, "c": member_rank}).groupby(["r", "c"]).cumcount()
        .to_numpy(np.int64)
    )
    owner_member, _ = expand_blocks(occurrence * vnodes, vnodes)
    hashes = node_hashes(member_client, occurrence * vnodes, vnodes)
    node_ring = member_ring[owner_member]
    node_owner = member_rank[owner_member]
    seq = np.arange(len(hashes), dtype=np.int64)  # insertion order within the batch

    node_key = (node_ring << _HASH_BITS) | hashes
    order = np.lexsort((seq, node_key))
    node_key, node_owner, node_ring = node_key[order], node_owner[order], node_ring[order]
    # TreeMap.put on an equal key replaces the value: the last inserted node wins
    last = np.ones(len(node_key), dtype=bool)
    last[:-1] = node_key[1:] != node_key[:-1]

    # Exactness guard: a collision inside a ring that also holds a duplicated client id can
    # change upstream's replica numbering (getExistingReplicas counts surviving nodes).
    # Rebuild only those rings the way upstream does.
    collided = np.unique(node_ring[~last])
    if len(collided):
        dup = member_ring[occurrence > 0]
        exact = np.intersect1d(collided, dup)
        if len(exact):
            node_key, node_owner, last = _rebuild_exact(
                exact, node_key[last], node_owner[last], member_ring, member_client,
                member_rank, ring_vnodes,
            )
    node_key, node_owner = node_key[last], node_owner[last]
    ring_of = node_key >> _HASH_BITS
    count = np.bincount(ring_of, minlength=n_rings).astype(np.int64)
    return Rings(node_key, node_owner, np.cumsum(count) - count, count)


def _rebuild_exact(
    rings: np.ndarray,
    node_key: np.ndarray,
    node_owner: np.ndarray,
    member_ring: np.ndarray,
    member_client: np.ndarray,
    member_rank: np.ndarray,
    ring_vnodes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replace `rings` by a sequential replay of `ConsistentHashRouter` (rare path)."""
    keep = ~np.isin(node_key >> _HASH_BITS, rings)
    keys, owners = [node_key[keep]], [node_owner[keep]]
    for ring in rings.tolist():
        tree: dict[int, tuple[int, str]] = {}
        for client, rank in zip(member_client[member_ring == ring],
                                member_rank[member_ring == ring].tolist(), strict=True):
            existing = sum(1 for _, c in tree.values() if c == client)
            vnode_keys = [f"{client}-{existing + i}" for i in range(int(ring_vnodes[ring]))]
            for h in md5_prefix(vnode_keys).tolist():
                tree[h] = (rank, client)
        hashes = np.array(sorted(tree), dtype=np.int64)
        keys.append((np.int64(ring) << _HASH_BITS) | hashes)
        owners.append(np.array([tree[h][0] for h in hashes.tolist()], dtype=np.int64))
    key = np.concatenate(keys)
    owner = np.concatenate(owners)
    order = np.argsort(key, kind="stable")
    return key[order], owner[order], np.ones(len(key), dtype=bool)


def route(rings: Rings, ring: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """`routeNode`: owner rank of each (ring, hash) query; -1 for an empty ring."""
    ring = ring.astype(np.int64)
    if len(rings.key) == 0:
        return np.full(len(ring), -1, np.int64)
    idx = np.searchsorted(rings.key, (ring << _HASH_BITS) | hashes, side="left")
    end = rings.start[ring] + rings.count[ring]
    idx = np.where(idx >= end, rings.start[ring], idx)  # tailMap empty: wrap to firstKey
    return np.where(rings.count[ring] > 0, rings.owner[np.minimum(idx, len(rings.key) - 1)], -1)


def segment_claims(
    batch: AllocationBatch,
    rings: Rings,
    sub_call: np.ndarray,
    sub_ring: np.ndarray,
    sub_list: np.ndarray,
    list_pos: np.ndarray,
    list_start: np.ndarray,
    list_count: np.ndarray,
) -> Claims:
    """Claims of hash sub-allocations: call `sub_call[k]` routes the queues of list
    `sub_list[k]` through ring `sub_ring[k]` and keeps those routed to its own client.

    Each distinct (list, ring) pair is routed once, whatever number of calls share it.
    """
    if len(sub_call) == 0:
        return EMPTY_CLAIMS
    n_rings = max(len(rings.count), 1)
    pair_key, sub_pair = np.unique(sub_list * n_rings + sub_ring, return_inverse=True)
    pair_list, pair_ring = pair_key // n_rings, pair_key % n_rings
    prow, offset = expand_blocks(list_start[pair_list], list_count[pair_list])
    positions = list_pos[offset]
    unique_pos, inverse = np.unique(positions, return_inverse=True)
    owner = route(rings, pair_ring[prow], queue_hashes(batch, unique_pos)[inverse])

    routed = pd.DataFrame({"pair": prow, "client": owner, "pos": positions})
    wanted = pd.DataFrame({"pair": sub_pair, "client": batch.call_client_rank[sub_call],
                           "call": sub_call})
    joined = wanted.merge(routed, on=["pair", "client"], how="inner", sort=False)
    return joined["call"].to_numpy(np.int64), joined["pos"].to_numpy(np.int64)


def usable_virtual_nodes(batch: AllocationBatch, calls: np.ndarray) -> np.ndarray:
    """Mask of calls whose ring is non-empty and buildable (0 nodes: nobody gets anything;
    negative: upstream's constructor throws)."""
    v = batch.call_virtual_nodes[calls]
    return (v > 0) & (v <= MAX_VIRTUAL_NODES)


def consistent_hash_kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
    """CONSISTENT_HASH: one ring per (group, virtual nodes) over the group's cidAll."""
    calls = calls[usable_virtual_nodes(batch, calls) & (rocketmq_cid_index(batch, calls) >= 0)]
    if len(calls) == 0:
        return EMPTY_CLAIMS
    units = batch.call_unit[calls]
    groups = batch.unit_group[units]
    vnodes = batch.call_virtual_nodes[calls]
    ring_table = pd.DataFrame({"g": groups, "v": vnodes}).drop_duplicates().sort_values(["g", "v"])
    ring_group = ring_table["g"].to_numpy(np.int64)
    ring_vnodes = ring_table["v"].to_numpy(np.int64)
    call_ring = pd.MultiIndex.from_arrays([ring_group, ring_vnodes]).get_indexer(
        pd.MultiIndex.from_arrays([groups, vnodes])
    ).astype(np.int64)
    member_ring, slot = expand_blocks(batch.group_slot_start[ring_group],
                                      batch.group_slot_count[ring_group])
    rings = build_rings(member_ring, batch.slot_client[slot], batch.slot_client_rank[slot],
                        ring_vnodes)
    # each unit's whole mqAll is one list
    list_pos = np.arange(len(batch.queue_id), dtype=np.int64)
    return segment_claims(batch, rings, calls, call_ring, units, list_pos,
                          batch.unit_queue_start, batch.unit_queue_count)
