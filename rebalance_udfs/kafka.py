"""Kafka client assignors, vectorized. Only members subscribing a topic take part."""

from __future__ import annotations

import numpy as np

from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.positional import EMPTY_CLAIMS, Claims, expand_blocks
from rebalance_udfs.rocketmq import averagely_share

# RangeAssignor with no racks: per topic, contiguous ranges over the members subscribing it,
# sorted by member id, the first n % c members one larger: RocketMQ's AVG block arithmetic.
range_share = averagely_share


def roundrobin_kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
    """`RoundRobinAssignor`: one circular deal per group over all its topic-partitions.

    Partitions are sorted by (topic, partition) and dealt over the group's members sorted by
    member id, skipping members that do not subscribe the partition's topic; the pointer
    carries over from one topic to the next. Within a topic the deal is arithmetic: with
    the topic's subscribers s_0 < ... < s_{k-1} (member indices) and the pointer at p,
    partition r goes to s_{(j0 + r) mod k}, j0 = the first subscriber at or after p
    (wrapping), and the pointer ends after the last one served. So only the pointer is
    sequential, over the topics of a group; each step runs for all groups at once.

    The deal is over every member of the group that subscribes, whatever strategy it runs,
    as `range` counts them: a group that mixes assignors (the inputs can describe one,
    Kafka's coordinator would not let it form) has each member take its own strategy's
    share among all members, and the partitions dealt to a member on another strategy
    are not the roundrobin members' to claim.
    """
    if len(calls) == 0:
        return EMPTY_CLAIMS
    # the deal runs over every call of the groups involved, whatever their strategy
    call_group = batch.unit_group[batch.call_unit]
    dealing = np.flatnonzero(np.isin(call_group, call_group[calls]))
    units = batch.call_unit[dealing]
    ranks = batch.call_client_rank[dealing]
    groups = batch.unit_group[units]
    n_ranks = int(ranks.max()) + 1

    # Members per group: distinct subscribing member ids, Java order (= rank order).
    member_key = np.unique(groups * n_ranks + ranks)
    member_group = member_key // n_ranks
    rel_groups, member_g = np.unique(member_group, return_inverse=True)
    group_members = np.bincount(member_g).astype(np.int64)
    group_first = np.cumsum(group_members) - group_members

    # Subscriptions: one call per (unit, member), sorted by unit then member.
    sub_key, first = np.unique(units * n_ranks + ranks, return_index=True)
    sub_unit_global, sub_rank = sub_key // n_ranks, sub_key % n_ranks
    rr_units, sub_unit = np.unique(sub_unit_global, return_inverse=True)
    sub_member = (np.searchsorted(member_key, batch.unit_group[sub_unit_global] * n_ranks
                                  + sub_rank) - group_first[
                      np.searchsorted(rel_groups, batch.unit_group[sub_unit_global])])
    unit_subs = np.bincount(sub_unit, minlength=len(rr_units)).astype(np.int64)
    unit_sub_start = np.cumsum(unit_subs) - unit_subs

    # Topics of each group in order: units are numbered by (group, topic in Java order).
    unit_g = np.searchsorted(rel_groups, batch.unit_group[rr_units])
    topic_step = np.arange(len(rr_units), dtype=np.int64) - np.searchsorted(unit_g, unit_g)
    n_parts = batch.unit_queue_count[rr_units]
    width = int(group_members.max()) + 1
    ordered_key = sub_unit * width + sub_member  # ascending
    pointer = np.zeros(len(rel_groups), np.int64)
    j0 = np.zeros(len(rr_units), np.int64)
    by_step = np.argsort(topic_step, kind="stable")
    bounds = np.searchsorted(topic_step[by_step], np.arange(topic_step.max() + 2))
    for step in range(len(bounds) - 1):
        u = by_step[bounds[step]:bounds[step + 1]]
        g = unit_g[u]
        j = np.searchsorted(ordered_key, u * width + pointer[g]) - unit_sub_start[u]
        j = np.where(j >= unit_subs[u], 0, j)
        j0[u] = j
        last = unit_sub_start[u] + (j + n_parts[u] - 1) % unit_subs[u]
        pointer[g] = (sub_member[last] + 1) % group_members[g]

    rows, pos = expand_blocks(batch.unit_queue_start[rr_units], n_parts)
    r = pos - batch.unit_queue_start[rr_units][rows]
    owner = unit_sub_start[rows] + (j0[rows] + r) % unit_subs[rows]
    if len(dealing) == len(calls):  # every member of these groups runs roundrobin
        return dealing[first][owner], pos
    # the dealt partitions of the members that run roundrobin, claimed by their call
    dealt = sub_key[owner]
    mine_key, mine_first = np.unique(batch.call_unit[calls] * n_ranks
                                     + batch.call_client_rank[calls], return_index=True)
    at = np.minimum(np.searchsorted(mine_key, dealt), len(mine_key) - 1)
    kept = mine_key[at] == dealt
    return calls[mine_first[at[kept]]], pos[kept]
