"""What-if: the group's queues under other client counts and strategies, simulated by the
same kernels (`allocate_bucket`) that compute today's assignment.

For every group of a bucket the candidates are built as hypothetical groups — arrays of
queue rows and member rows, many candidates of many groups in one `allocate_bucket` call —
and each is summarized against today's assignment:

* client counts 1 .. min(256, max(2 × today's, the largest topic's queue count)) under
  the group's own strategy (AVG for CONFIG / MACHINE_ROOM / NEARBY groups, roundrobin for
  the sticky assignors: those depend on per-client lists, rooms or history; AVG where
  the broker allocates and the own strategy is one it does not compute);
* at today's client count: AVG, AVG_BY_CIRCLE, CONSISTENT_HASH with today's and with 4×
  the virtual nodes, Kafka range and roundrobin (cooperative-sticky is not simulated);
* client counts 1 .. today's − 1 under the allocator's even strategy (AVG for RocketMQ,
  roundrobin for Kafka) where the sweep runs CONSISTENT_HASH or range: such a group
  with idle clients may need fewer clients *and* a strategy that spreads its queues;
* split by topic (groups of two or more topics): topic t gets its own group of
  c_t = ceil(q_t / L) clients, L the lowest max load a split of at most today's C
  clients reaches (the least L with sum_t ceil(q_t / L) <= C); with fewer clients than
  topics, c_t = min(q_t, max(1, ceil(C × q_t / Q))) (Q all queues).

Where the broker allocates, the candidates it computes (AVG, AVG_BY_CIRCLE) are what it
would hand out: on a group's POP topics they share queues by the group's popShareQueueNum
as today's assignment does (kernels only, `pop`), so their loads compare with today's.
Clients that balance message by message (MESSAGE mode) own no queues: their candidates
are client-side comparisons, none recommended.

Every candidate client subscribes every topic of the group. Clients are today's
clustering clients in Java order; a smaller count keeps the first-sorted ones (removed
clients are the last-sorted); added clients get synthetic ids `~whatif-0001`, ... ('~'
sorts after letters and digits, so they sort after ordinary ids). A split assigns
today's clients, then synthetic ones, to the topics in topic order.

Cost: the client-count sweep is most of the candidates (up to 256 per group), so whole-group
candidates are not run through `allocate_bucket` where each queue's owner has a closed
form once every candidate client subscribes every topic; their rows (loads, idle
clients, moves, duplicates) follow from numpy passes:
* `_blocks_sweep`: AVG and Kafka range (contiguous blocks, the first q_t % n clients one
  larger), most of the sweep, in work per queue and per (candidate, topic): loads in
  closed form, and the client counts where a queue stays with today's owner are one
  interval (a queue's client index never decreases as clients are added);
* `_arithmetic`: AVG_BY_CIRCLE (position in the topic mod n) and roundrobin (position in
  the group's (topic, queue) order mod n), one pass over (candidate, queue) pairs;
* `_hash_ring`: CONSISTENT_HASH — every node `<client_id>-<k>` and every queue of the group
  hashed once; candidate n routes through the nodes of its first n clients;
* `_split_arithmetic`: splits by topic of the five strategies above — each topic a group
  of its own share of the clients, the same formulas within it (CONSISTENT_HASH: the
  ring of the topic's clients, built per split, `_split_rings`).
That holds where a client's index in the hypothetical list is its position in the
kernels' Java-sorted list (counts up to today's, or today's ids all sort before
`~whatif-0001`), no client id is empty, and (CONSISTENT_HASH) the virtual-node count is
usable and, for the sweep, no two nodes of the ring share a hash. Everything else — the
rare groups outside those conditions — is simulated by the kernels. The rows are the
same either way (tests/unit/test_what_if.py compares both on random groups).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.batch import DEFAULT_VIRTUAL_NODES
from rebalance_udfs.hashring import (
    MAX_VIRTUAL_NODES,
    build_rings,
    coded_message_queue_hashes,
    node_hashes,
    route,
)
from rebalance_udfs.key_codes import key_codes, numbered_in_key_order, row_of, sorted_lookup
from rebalance_udfs.ordering import java_key, java_rank
from rebalance_udfs.positional import expand_blocks
from rebalance_udfs.what_if_lines import LINE, what_if_lines
from vocabulary.columns import (
    BROADCAST,
    BROADCASTING,
    BROKER_MODES,
    CLAIM_STATUSES,
    CLUSTERING,
    GROUP_KEYS,
    KAFKA_STRATEGIES,
    MESSAGE,
    MODE_COLUMNS,
    POP,
)
from vocabulary.findings import BROKER_STRATEGIES
from vocabulary.words import counted

MAX_CLIENTS = 256
SYNTHETIC_PREFIX = "~whatif-"
SWEEPABLE = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "range", "roundrobin")
# sweeps whose loads at a count are not the even strategy's (AVG_BY_CIRCLE's are AVG's):
# their groups also sweep the even strategy below today's count
UNEVEN_SWEEPS = ("CONSISTENT_HASH", "range")
ALTERNATIVES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONSISTENT_HASH_4X", "range",
                "roundrobin")
# hypothetical queue rows per allocate_bucket call (and (candidate, queue) pairs per
# closed-form pass): bounds the Python worker's memory
CHUNK_ROWS = 1_000_000
# strategies whose whole-group candidates `_arithmetic` computes without the kernels
CLOSED_FORM = ("AVG", "AVG_BY_CIRCLE", "range", "roundrobin")
# the polynomial hash that proposes which groups share a client list (`_client_lists`)
_LIST_HASH_BASE = 1_000_003

ASSIGNED_COLUMNS = [*GROUP_KEYS, "topic", "broker_name", "queue_id", "broker_room",
                    "client_id", "status", "committed_offset", "consumed_offset"]
WHAT_IF_MEMBER_COLUMNS = [*GROUP_KEYS, "client_id", "topic", "strategy", "message_model",
                          "virtual_nodes", "allocation_mode", "pop_share_queue_num"]
COLUMNS = [*GROUP_KEYS, "candidate", "clients", "strategy", "virtual_nodes",
           "split_by_topic", "max_queues", "min_queues", "idle_clients", "skew",
           "queues_moved", "estimated_duplicates", "is_current", "recommended"]
# beside COLUMNS in `what_if_bucket`'s rows, not in the table: the group's queues the row
# leaves unconsumed (a candidate of CONSISTENT_HASH with 0 virtual nodes claims none, and
# today's row those no client's subscription or strategy takes). The recommendation
# prefers rows that leave fewer (`_ranked`), and the what-if line says so. A queue a
# BROADCASTING member claims is consumed whatever the clustering clients do, as
# group_balance counts it (status BROADCAST is a claimant): no row leaves it unconsumed
UNCLAIMED = "unclaimed_queues"
# beside them too: whether the group's today row is no option (the broker is asked for a
# strategy it does not compute, `_ranked`): its what-if line says why the change
TODAY_NO_OPTION = "today_no_option"


def _group_rows(groups: pd.DataFrame, g: np.ndarray) -> np.ndarray:
    """The row of `groups` (which are in g order) of each group number in `g`, every one a
    group of `groups`: a binary search, not an index built per call."""
    return np.searchsorted(groups["g"].to_numpy(np.int64), g)


def _ceil_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return -(-np.asarray(a, np.int64) // np.maximum(np.asarray(b, np.int64), 1))


class _Tables(NamedTuple):
    """What the candidates are built from: groups (with C clients, Q queues, T topics and
    maxq, the largest topic's queue count), their clients, queues and topics, today's
    row of each group and the (g, topic) the broker allocates in POP mode (`_pop_topics`)."""

    groups: pd.DataFrame
    clients: pd.DataFrame
    queues: pd.DataFrame
    topics: pd.DataFrame
    current: pd.DataFrame
    pop: pd.DataFrame


def _bucket_tables(assigned: pd.DataFrame, members: pd.DataFrame) -> _Tables:
    """`_Tables` of the groups with clustering clients and queues, every key numbered once:
    groups over both inputs' GROUP_KEYS, client ids by Java rank over both."""
    clust = members[_clustering(members)]
    both = len(clust)
    member_key, row_key, first = numbered_in_key_order(clust, assigned, GROUP_KEYS)
    groups, g_of = _group_table(clust, member_key, first)
    g_of = np.append(g_of, -1)  # number -1, a group only `assigned` has: none
    member_g, row_g = g_of[member_key], g_of[row_key]
    rank = java_rank(np.concatenate([clust["client_id"].to_numpy(object),
                                     assigned["client_id"].to_numpy(object)]))
    clients = _client_table(clust["client_id"].to_numpy(object), member_g, rank[:both])
    groups["C"] = np.bincount(clients["g"], minlength=len(groups))
    known = row_g >= 0
    queues, claim = _queue_table(assigned[known], row_g[known], rank[both:][known], clients)
    topics = _topic_table(queues)
    groups["Q"] = np.bincount(queues["g"], minlength=len(groups))
    groups["T"] = np.bincount(topics["g"], minlength=len(groups))
    groups["maxq"] = topics.groupby("g")["qt"].max().reindex(groups["g"]).fillna(0).to_numpy()
    groups = groups[(groups["C"] > 0) & (groups["Q"] > 0)]
    current = _current_rows(groups, clients, claim, clust, member_g, topics)
    consumed = queues["owner"].notna().to_numpy(bool) | queues["_broadcast"].to_numpy(bool)
    owned = np.bincount(queues["g"].to_numpy(np.int64), consumed.astype(float),
                        minlength=int(groups["g"].max()) + 1 if len(groups) else 0)
    current[UNCLAIMED] = (groups["Q"].to_numpy() - owned[groups["g"].to_numpy(np.int64)]
                          ).astype(np.int64)
    pop = _pop_topics(clust, member_g)
    groups["pop"] = np.isin(groups["g"].to_numpy(np.int64), pop["g"].to_numpy(np.int64))
    return _Tables(groups, clients, queues, topics, current, pop)


def _pop_topics(clust: pd.DataFrame, member_g: np.ndarray) -> pd.DataFrame:
    """(g, topic, pop_share_queue_num) of each group's topics in POP mode: the broker pops
    them for the clients, sharing queues by popShareQueueNum (one value per group and
    topic on a real broker; the largest of the rows where captures disagree, null: 0).
    A candidate the broker computes (BROKER_STRATEGIES) shares those topics' queues as
    today's assignment does, so its loads compare with today's."""
    pop = (clust["allocation_mode"].to_numpy(object) == POP) & (member_g >= 0)
    share = pd.to_numeric(clust["pop_share_queue_num"], errors="coerce").fillna(0)
    rows = pd.DataFrame({"g": member_g[pop], "topic": clust["topic"].to_numpy(object)[pop],
                         "pop_share_queue_num": share.to_numpy(np.int64)[pop]})
    return rows.groupby(["g", "topic"], as_index=False, sort=True)["pop_share_queue_num"].max()


def _clustering(members: pd.DataFrame) -> np.ndarray:
    return (members["message_model"].fillna(CLUSTERING) != BROADCASTING).to_numpy(bool)


def _groups(members: pd.DataFrame) -> pd.DataFrame:
    """`_group_table` of the members' clustering rows."""
    clust = members[_clustering(members)]
    code, _, first = numbered_in_key_order(clust, clust.iloc[:0], GROUP_KEYS)
    return _group_table(clust, code, first)[0]


def _group_table(clust: pd.DataFrame, code: np.ndarray,
                 first: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """Per group with a named strategy, in GROUP_KEYS order (g = 0, 1, ...): its own
    strategy (the one most of its clustering rows run, ties: the first name), that
    strategy's largest virtual-node count, today's strategies ('/'-joined, by name) and
    the strategy its client-count sweep runs and its allocator's even one; and the g of
    every key number (`code`: the rows' numbers in key order, `first`: each number's
    first row; -1 for a number without a named strategy).

    Strategies are numbered by name, so every step is an integer sort or count."""
    n_codes = len(first)
    names, s_code = _by_name(clust["strategy"].to_numpy(object))
    named = s_code >= 0
    pair = code[named] * len(names) + s_code[named]
    pairs, count = np.unique(pair, return_counts=True)  # by (group, strategy name)
    p_code, p_name = pairs // max(len(names), 1), pairs % max(len(names), 1)
    starts = np.flatnonzero(np.diff(p_code, prepend=-1) != 0)
    coded = p_code[starts]  # the numbers with a strategy, ascending: in key order
    best = np.lexsort((p_name, -count, p_code))
    own = p_name[best[np.diff(p_code[best], prepend=-1) != 0]]
    own_of = np.full(n_codes, -1, np.int64)
    own_of[coded] = own
    vn = pd.to_numeric(clust["virtual_nodes"], errors="coerce").fillna(DEFAULT_VIRTUAL_NODES)
    runs_own = named & (s_code == own_of[code])
    vnodes = vn[runs_own].groupby(code[runs_own]).max()  # index: `coded`
    today = names[p_name][starts].copy()
    several = np.flatnonzero(np.diff(np.r_[starts, len(pairs)]) > 1)
    for j, lo, hi in zip(several, starts[several], np.r_[starts, len(pairs)][several + 1],
                         strict=True):
        today[j] = "/".join(names[p_name[lo:hi]])
    groups = clust[GROUP_KEYS].iloc[first[coded]].reset_index(drop=True)
    groups["own"] = names[own]
    groups["vnodes"] = vnodes.to_numpy()
    groups["today_strategy"] = today
    groups["g"] = np.arange(len(groups))
    # the broker allocates for BROKER_MODES members and knows only BROKER_STRATEGIES: for
    # any other it answers nothing (BROKER_UNSUPPORTED_STRATEGY), so today's is no option
    mode = clust["allocation_mode"].to_numpy(object)
    broker_rows = np.isin(mode, list(BROKER_MODES))
    unsupported = broker_rows & ~np.isin(clust["strategy"].to_numpy(object), BROKER_STRATEGIES)
    for name, rows in (("by_broker", broker_rows), ("broker_unsupported", unsupported),
                       ("_owns_queues", mode != MESSAGE)):
        per_code = np.zeros(n_codes, bool)
        per_code[code[rows]] = True
        groups[name] = per_code[coded]
    # clients that all balance message by message (5.x gRPC: MESSAGE mode) own no queues:
    # no candidate is an allocation they run, so today's row is the group's recommendation
    # and the others a comparison (what clients that allocate queues would get)
    groups["by_message"] = ~groups.pop("_owns_queues")
    # the allocator's even strategy: the sweep of a group whose own strategy cannot be
    # swept, and swept below today's count where the sweep's loads are not even (fewer
    # clients help such a group only under a strategy that spreads)
    groups["even"] = np.where(groups["own"].isin(KAFKA_STRATEGIES), "roundrobin", "AVG")
    groups["sweep"] = np.where(groups["own"].isin(SWEEPABLE), groups["own"], groups["even"])
    # ... and where the broker allocates, the client counts run a strategy it computes
    groups.loc[groups["by_broker"] & ~groups["own"].isin(BROKER_STRATEGIES), "sweep"] = "AVG"
    g_of = np.full(n_codes, -1, np.int64)
    g_of[coded] = np.arange(len(groups))
    return groups, g_of


def _by_name(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct non-null strings in code-point order, each value's index in them or -1
    for a null)."""
    codes, uniques = pd.factorize(values)
    uniques = np.asarray(uniques, dtype=object)
    order = np.argsort(uniques.astype(str), kind="stable")
    rank = np.full(len(uniques) + 1, -1, np.int64)  # the last: a null's (code -1)
    rank[order] = np.arange(len(uniques))
    return uniques[order], rank[codes]


def what_if_bucket(assigned: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """Candidate rows (COLUMNS, UNCLAIMED and TODAY_NO_OPTION) of every group in the
    bucket; see the module docstring.

    `assigned`: today's assignment rows of the groups (ASSIGNED_COLUMNS); `members`: their
    member rows (WHAT_IF_MEMBER_COLUMNS)."""
    if assigned.empty or members.empty:
        return pd.DataFrame(columns=[*COLUMNS, UNCLAIMED, TODAY_NO_OPTION])
    groups, clients, queues, topics, current, pop = _bucket_tables(assigned, members)
    candidates = _candidates(groups)
    split = candidates["split_by_topic"].to_numpy(bool)
    if split.any():  # a split's clients: the sum of its topics' shares
        candidates.loc[split, "clients"] = _split_shares(candidates[split], groups, topics)[-1]
    closed = _closed_form_applies(candidates, groups, clients)
    hashed = closed & (candidates["strategy"] == "CONSISTENT_HASH").to_numpy(bool)
    ring = hashed & ~split
    summaries = []
    if closed.any():
        positions = _queue_positions(queues, clients, groups)
        queue_hash = _queue_hashes(queues, candidates.loc[hashed, "g"].unique())
        blocks = closed & ~split & candidates["strategy"].isin(("AVG", "range")).to_numpy(bool)
        if blocks.any():
            summaries.append(_blocks_sweep(candidates[blocks], groups, positions))
        for chunk in _chunks(candidates[closed & ~ring & ~blocks & ~split], groups):
            summaries.append(_arithmetic(chunk, groups, positions))
        for chunk in _chunks(candidates[closed & split], groups):
            summaries.append(_split_arithmetic(chunk, groups, positions, topics, clients,
                                               queue_hash))
    if ring.any():
        rings, nodes = _ring_nodes(candidates[ring], clients, groups)
        # a ring with two equal node hashes keeps the later node: left to the kernel
        candidates["_ring"] = row_of([rings["g"].to_numpy(), rings["virtual_nodes"].to_numpy()],
                                     [candidates["g"].to_numpy(),
                                      candidates["virtual_nodes"].to_numpy()])
        left = ring & np.append(rings["collided"].to_numpy(bool), False)[candidates["_ring"]]
        ring &= ~left
        closed &= ~left
        for chunk in _chunks(candidates[ring], groups):
            summaries.append(_hash_ring(chunk, groups, positions, rings, nodes, queue_hash))
    for chunk in _chunks(candidates[~closed], groups):
        summaries.append(_simulate(chunk, groups, clients, queues, topics, pop))
    simulated = pd.concat(summaries, ignore_index=True) if summaries else None
    out = current if simulated is None else pd.concat([current, simulated], ignore_index=True)
    return _ranked(out, groups)


def _ranked(out: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """The candidate rows (COLUMNS) in (group, candidate order), with each group's
    recommended one: of the rows the group could run as it is — no more clients than
    today, a strategy its allocator has (RocketMQ's for a RocketMQ group, Kafka's assignors
    for a Kafka group, AVG / AVG_BY_CIRCLE where the broker allocates; today's row unless
    the broker is asked for a strategy it does not compute, only today's where every
    client balances message by message, only today's count where the broker pops queues
    for several clients) — the fewest queues left
    unconsumed (UNCLAIMED), then the least max_queues, then clients, then queues moved,
    today's row before a simulated one, then candidate order.
    The other rows stay in the table: added clients are the price of a lower max (else
    scaling out would win for every group, whatever its finding), other strategies a
    comparison (Kafka's roundrobin pools a RocketMQ group's topics, which RocketMQ's
    per-topic rebalance cannot). A simulated candidate identical to today (same owners,
    none of today's unconsumed queues claimed) adds nothing to today's row and is left
    out.

    (g, order) is unique, so both orders are numpy lexsorts of integer columns."""
    is_current = out["is_current"].to_numpy(bool)
    unclaimed = out[UNCLAIMED].to_numpy(np.int64)
    today_unclaimed = np.zeros(int(out["g"].max()) + 1 if len(out) else 0, np.int64)
    today_unclaimed[out["g"].to_numpy(np.int64)[is_current]] = unclaimed[is_current]
    # same owners as today: no move, and no queue consumed that today leaves unconsumed
    same = (~is_current & (out["queues_moved"].to_numpy() == 0)
            & (unclaimed == today_unclaimed[out["g"].to_numpy(np.int64)])
            & (out["clients"].to_numpy() == out["C_today"].to_numpy())
            & (out["strategy"].to_numpy(object) == out["own_today"].to_numpy(object))
            & ~out["split_by_topic"].to_numpy(bool))
    out = out[~same]
    unclaimed = unclaimed[~same]
    g = out["g"].to_numpy(np.int64)
    order = out["order"].to_numpy(np.int64)
    clients = out["clients"].to_numpy()
    is_current = is_current[~same]
    # a RocketMQ client cannot run a Kafka assignor, nor a Kafka member a RocketMQ
    # strategy, nor the broker (BROKER / POP members) any but BROKER_STRATEGIES
    at = _group_rows(groups, g)
    strategy = out["strategy"]
    kafka = strategy.isin(KAFKA_STRATEGIES).to_numpy(bool)
    own_kafka = groups["own"].isin(KAFKA_STRATEGIES).to_numpy(bool)[at]
    has_it = np.where(groups["by_broker"].to_numpy(bool)[at],
                      strategy.isin(BROKER_STRATEGIES).to_numpy(bool), kafka == own_kafka)
    has_it[is_current] = ~groups["broker_unsupported"].to_numpy(bool)[at[is_current]]
    has_it &= is_current | ~groups["by_message"].to_numpy(bool)[at]
    # where the broker pops queues for several clients (POP topics), a client's share of
    # the messages shrinks with more clients whatever its queue count: fewer clients at
    # the same max_queues are no improvement, so only today's count is recommended
    today_clients = out["C_today"].to_numpy()
    fewer_popping = groups["pop"].to_numpy(bool)[at] & (clients < today_clients)
    unrunnable = (clients > today_clients) | ~has_it | fewer_popping
    # a row that leaves queues unconsumed is no better for a lower max (claiming nothing,
    # a max of 0): the fewest left unconsumed first
    best = np.lexsort((order, ~is_current, out["queues_moved"].to_numpy(), clients,
                       out["max_queues"].to_numpy(), unclaimed, unrunnable, g))
    recommended = np.zeros(len(g), bool)
    recommended[best[np.diff(g[best], prepend=-1) != 0]] = True  # g >= 0
    final = np.lexsort((order, g))
    row = _group_rows(groups, g[final])
    columns = {key: groups[key].to_numpy()[row] for key in GROUP_KEYS}
    for name in COLUMNS[len(GROUP_KEYS):-1]:
        columns[name] = out[name].to_numpy()[final]
    columns["recommended"] = recommended[final]
    columns[UNCLAIMED] = unclaimed[final]
    columns[TODAY_NO_OPTION] = groups["broker_unsupported"].to_numpy(bool)[row]
    return pd.DataFrame(columns)


def _client_table(ids: np.ndarray, g: np.ndarray, rank: np.ndarray) -> pd.DataFrame:
    """Today's clients of each group (g, client_id, _rank, i), in Java order: `ids`, `g`
    and `rank` (Java rank, -1 for null) per clustering member row."""
    at = np.flatnonzero(g >= 0)
    _, first = np.unique(g[at] * (int(rank.max(initial=-1)) + 2) + rank[at] + 1,
                           return_index=True)  # by (group, rank): each client once
    rows = at[first]
    client_g = g[rows]
    return pd.DataFrame({"g": client_g, "client_id": ids[rows], "_rank": rank[rows],
                         "i": np.arange(len(rows)) - np.searchsorted(client_g, client_g)})


def _client_index(clients: pd.DataFrame, g: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The row in `clients` of each (g, Java rank), -1 where the group has no such
    client."""
    span = int(max(clients["_rank"].to_numpy(np.int64).max(initial=-1),
                   rank.max(initial=-1))) + 2
    keys = clients["g"].to_numpy(np.int64) * span + clients["_rank"].to_numpy(np.int64) + 1
    at = sorted_lookup(keys, np.arange(len(keys), dtype=np.int64), g * span + rank + 1, -1)
    return np.where(rank >= 0, at, -1)


def _queue_table(a: pd.DataFrame, g: np.ndarray, client_rank: np.ndarray,
                 clients: pd.DataFrame) -> tuple[pd.DataFrame, tuple[np.ndarray, ...]]:
    """Each group's queues once, in the kernels' mqAll order (topic, broker name, both
    Java order, queue id), from today's assignment rows `a` (group g, client Java rank):
    the first row of each queue, its duplicate estimate, its owner today (the
    first-sorted client claiming it, `_owner_i` its row in `clients` or -1) and whether a
    BROADCASTING member claims it (`_broadcast`). Also the claims (g, client rank) of the
    rows."""
    broker = a["broker_name"].fillna("").to_numpy(object)
    topic_rank = java_rank(a["topic"].to_numpy(object))
    broker_rank = java_rank(broker)
    queue_id = a["queue_id"].to_numpy()
    order = np.lexsort((queue_id, broker_rank, topic_rank, g))  # stable: first rows first
    new = np.zeros(len(order), bool)  # the first row of each queue
    new[:1] = True
    for key in (g, topic_rank, broker_rank, queue_id):
        ordered = key[order]
        new[1:] |= ordered[1:] != ordered[:-1]
    first = order[new]
    q_of = np.empty(len(order), np.int64)
    q_of[order] = np.cumsum(new) - 1
    dup = (pd.to_numeric(a["consumed_offset"].iloc[first], errors="coerce").to_numpy(float)
           - pd.to_numeric(a["committed_offset"].iloc[first], errors="coerce").to_numpy(float))
    queues = pd.DataFrame({
        "g": g[first], "topic": a["topic"].to_numpy(object)[first], "_broker": broker[first],
        "queue_id": queue_id[first], "broker_name": a["broker_name"].to_numpy(object)[first],
        "broker_room": a["broker_room"].to_numpy(object)[first],
        "_topic_rank": topic_rank[first], "_broker_rank": broker_rank[first],
        "q": np.arange(len(first)), "dup": np.where(dup < 0, 0.0, dup)})
    claims = np.flatnonzero(a["status"].isin(CLAIM_STATUSES).to_numpy(bool)
                            & (client_rank >= 0))
    by_queue = claims[np.lexsort((client_rank[claims], q_of[claims]))]
    owning = by_queue[np.diff(q_of[by_queue], prepend=-1) != 0]
    owner = np.full(len(first), None, dtype=object)
    owner[q_of[owning]] = a["client_id"].to_numpy(object)[owning]
    queues["owner"] = owner
    owner_i = np.full(len(first), -1, np.int64)
    owner_i[q_of[owning]] = _client_index(clients, g[owning], client_rank[owning])
    queues["_owner_i"] = owner_i
    broadcast = np.zeros(len(first), bool)
    broadcast[q_of[a["status"].eq(BROADCAST).to_numpy(bool)]] = True
    queues["_broadcast"] = broadcast
    return queues, (g[claims], client_rank[claims])


def _topic_table(queues: pd.DataFrame) -> pd.DataFrame:
    """Each group's topics (g, _topic_rank, topic, qt: its queue count), in queue order."""
    g = queues["g"].to_numpy(np.int64)
    rank = queues["_topic_rank"].to_numpy(np.int64)
    starts = np.flatnonzero((np.diff(g, prepend=-1) != 0) | (np.diff(rank, prepend=-2) != 0))
    return pd.DataFrame({"g": g[starts], "_topic_rank": rank[starts],
                         "topic": queues["topic"].to_numpy(object)[starts],
                         "qt": np.diff(np.r_[starts, len(g)]).astype(np.int64)})


def _current_rows(groups: pd.DataFrame, clients: pd.DataFrame,
                  claim: tuple[np.ndarray, np.ndarray], clust: pd.DataFrame,
                  member_g: np.ndarray, topics: pd.DataFrame) -> pd.DataFrame:
    """Today's figures of each group, from its real assignment rows (`claim`: the
    claiming rows' g and client Java rank; `member_g`: each clustering row's g)."""
    held = _client_index(clients, *claim)
    load = np.bincount(held[held >= 0], minlength=len(clients))
    client_g = clients["g"].to_numpy(np.int64)
    starts = np.flatnonzero(np.diff(client_g, prepend=-1) != 0)
    at = np.searchsorted(client_g[starts], groups["g"].to_numpy(np.int64))
    most = np.maximum.reduceat(load, starts)[at] if len(starts) else load[:0]
    least = np.minimum.reduceat(load, starts)[at] if len(starts) else load[:0]
    idle = np.add.reduceat((load == 0).astype(np.int64), starts)[at] if len(starts) else load[:0]
    # pooled_max as group_balance computes it: max(ceil(Q / S), max_t ceil(q_t / s_t))
    subscribed = (member_g >= 0) & clust["topic"].notna().to_numpy(bool)
    topic_names = pd.Index(topics["topic"].unique())
    topic = topic_names.get_indexer(clust["topic"].to_numpy(object)[subscribed])
    client, _ = key_codes(clust["client_id"].to_numpy(object)[subscribed])
    sub_g = member_g[subscribed]
    distinct = np.unique(key_codes(sub_g, topic, client)[0], return_index=True)[1]
    sub_g, topic, client = sub_g[distinct], topic[distinct], client[distinct]
    # each distinct (group, topic, client) subscription counted on its topic row
    row = row_of([topics["g"].to_numpy(np.int64),
                  topic_names.get_indexer(topics["topic"].to_numpy(object))], [sub_g, topic])
    st = np.bincount(row[row >= 0], minlength=len(topics))
    ideal = _ceil_div(topics["qt"].to_numpy(np.int64), st)
    topic_ideal = pd.Series(ideal).groupby(topics["g"].to_numpy(np.int64)).max()
    s_all = pd.Series(client).groupby(sub_g).nunique()
    pooled = np.maximum(
        _ceil_div(groups["Q"].to_numpy(), s_all.reindex(groups["g"]).fillna(0).to_numpy()),
        topic_ideal.reindex(groups["g"]).fillna(0).to_numpy())
    is_ch = groups["own"].to_numpy() == "CONSISTENT_HASH"
    return pd.DataFrame({
        "g": groups["g"].to_numpy(),
        "candidate": [f"today: {counted(c, 'client')}, {s}" for c, s in
                      zip(groups["C"], groups["today_strategy"], strict=True)],
        "clients": groups["C"].to_numpy(),
        "strategy": groups["today_strategy"].to_numpy(),
        "virtual_nodes": np.where(is_ch, groups["vnodes"].to_numpy(), np.nan),
        "split_by_topic": False,
        "max_queues": most.astype(np.int64),
        "min_queues": least.astype(np.int64),
        "idle_clients": idle.astype(np.int64),
        "skew": most.astype(np.int64) - pooled,
        "queues_moved": 0,
        # no queue moves, so no moved queue's estimate is known: null, as rebalance_churn's
        "estimated_duplicates": np.nan,
        "is_current": True,
        "order": -1,
        "C_today": groups["C"].to_numpy(),
        "own_today": groups["own"].to_numpy(),
    })


def _candidates(groups: pd.DataFrame) -> pd.DataFrame:
    """One row per (group, candidate): clients, strategy, virtual nodes, split."""
    g = groups["g"].to_numpy(np.int64)
    C = groups["C"].to_numpy(np.int64)
    top = np.minimum(MAX_CLIENTS, np.maximum(2 * C, groups["maxq"].to_numpy(np.int64)))
    top = np.maximum(top, 1)
    row, n0 = expand_blocks(np.ones(len(g), np.int64), top)
    vnodes = groups["vnodes"].to_numpy(np.int64)
    sweep = pd.DataFrame({"g": g[row], "clients": n0, "strategy": groups["sweep"].to_numpy()[row],
                          "virtual_nodes": vnodes[row], "split_by_topic": False})
    alt = []
    for name in ALTERNATIVES:
        strategy = "CONSISTENT_HASH" if name.startswith("CONSISTENT_HASH") else name
        vn = vnodes * 4 if name.endswith("_4X") else vnodes
        alt.append(pd.DataFrame({"g": g, "clients": C, "strategy": strategy,
                                 "virtual_nodes": vn, "split_by_topic": False}))
    even = groups["even"].to_numpy(object)
    below = np.where(groups["sweep"].isin(UNEVEN_SWEEPS).to_numpy(bool), C - 1, 0)
    row, n0 = expand_blocks(np.ones(len(g), np.int64), below)
    fewer = pd.DataFrame({"g": g[row], "clients": n0, "strategy": even[row],
                          "virtual_nodes": vnodes[row], "split_by_topic": False})
    split = pd.DataFrame({"g": g, "clients": C, "strategy": groups["sweep"].to_numpy(),
                          "virtual_nodes": vnodes, "split_by_topic": True})
    split = split[groups["T"].to_numpy() >= 2]
    cands = pd.concat([sweep, *alt, fewer, split], ignore_index=True)
    ch = cands["strategy"] == "CONSISTENT_HASH"
    cands["virtual_nodes"] = cands["virtual_nodes"].where(ch)
    cands = cands.drop_duplicates(["g", "clients", "strategy", "virtual_nodes",
                                   "split_by_topic"]).reset_index(drop=True)
    cands["order"] = np.arange(len(cands))
    cands["cand"] = np.arange(len(cands))
    return cands


def _chunks(cands: pd.DataFrame, groups: pd.DataFrame):
    """Candidates in slices of about CHUNK_ROWS hypothetical queue rows."""
    rows = groups["Q"].to_numpy()[_group_rows(groups, cands["g"].to_numpy(np.int64))]
    edge = np.cumsum(rows) // CHUNK_ROWS
    for k in np.unique(edge):
        yield cands[edge == k]


def _synthetic(index: np.ndarray) -> np.ndarray:
    return np.array([f"{SYNTHETIC_PREFIX}{i:04d}" for i in range(1, int(index.max()) + 2)]
                    if len(index) else [], dtype=object)


def _hyp_clients(cands: pd.DataFrame, clients: pd.DataFrame,
                 groups: pd.DataFrame) -> pd.DataFrame:
    """(cand, client index, client id) of every candidate: today's first, then synthetic."""
    row, i = expand_blocks(np.zeros(len(cands), np.int64), cands["clients"].to_numpy(np.int64))
    g = cands["g"].to_numpy(np.int64)[row]
    C = groups["C"].to_numpy()[_group_rows(groups, g)]
    start = np.searchsorted(clients["g"].to_numpy(np.int64), g)
    today = clients["client_id"].to_numpy(object)
    ids = np.empty(len(row), dtype=object)
    own = i < C
    ids[own] = today[start[own] + i[own]]
    extra = i[~own] - C[~own]
    ids[~own] = _synthetic(extra)[extra] if len(extra) else []
    out = pd.DataFrame({"cand": cands["cand"].to_numpy()[row], "g": g, "i": i, "client_id": ids})
    if "_rank" in clients:  # a number per distinct id: Java ranks, then synthetic ones
        rank = clients["_rank"].to_numpy(np.int64)
        code = np.empty(len(row), np.int64)
        code[own] = rank[start[own] + i[own]]
        code[~own] = int(rank.max(initial=-1)) + 1 + extra
        out["_code"] = code
    return out


def _simulate(cands: pd.DataFrame, groups: pd.DataFrame, clients: pd.DataFrame,
              queues: pd.DataFrame, topics: pd.DataFrame, pop: pd.DataFrame) -> pd.DataFrame:
    """Allocate one chunk of candidates with the real kernels and summarize each; a
    candidate the broker computes pops the group's POP topics (`pop`) as today."""
    split = cands["split_by_topic"].to_numpy(bool)
    # split: each topic's share of the clients, and its clients' index range (a split
    # candidate's clients are already the shares' sum)
    row, topic, ct, first, _total = _split_shares(cands[split], groups, topics)
    st = topics.iloc[topic][["g", "_topic_rank", "topic", "qt"]].assign(
        cand=cands["cand"].to_numpy()[split][row], ct=ct, first=first)

    hc = _hyp_clients(cands, clients, groups)
    spec = cands.set_index("cand")
    # member rows: non-split candidates subscribe every topic; split ones their own topic
    whole = hc[~hc["cand"].map(spec["split_by_topic"]).to_numpy(bool)]
    m_whole = whole.merge(topics[["g", "topic"]], on="g").assign(unit=-1)
    parts = hc.merge(st[["cand", "topic", "first", "ct", "_topic_rank"]], on="cand")
    parts = parts[(parts["i"] >= parts["first"]) & (parts["i"] < parts["first"] + parts["ct"])]
    m_split = parts.assign(unit=parts["_topic_rank"])[["cand", "g", "i", "client_id", "topic",
                                                       "unit"]]
    hm = pd.concat([m_whole, m_split], ignore_index=True)
    hm["consumer_group"] = hm["cand"].astype(str) + "/" + hm["unit"].astype(str)
    hm["strategy"] = hm["cand"].map(spec["strategy"]).to_numpy(object)
    hm["virtual_nodes"] = hm["cand"].map(spec["virtual_nodes"])
    hm = hm.assign(snapshot_id="w", cluster="w", client_addr=None, message_model=None,
                   client_room=None, rooms=None, config_queues=None)
    hm = hm.merge(pop, on=["g", "topic"], how="left")
    popped = hm["pop_share_queue_num"].notna() & hm["strategy"].isin(BROKER_STRATEGIES)
    hm["allocation_mode"] = np.where(popped, POP, None)
    hm["pop_share_queue_num"] = hm["pop_share_queue_num"].where(popped)

    # queue rows: every queue of the group, once per candidate (split: under its topic)
    hq = cands[["cand", "g", "split_by_topic"]].merge(
        queues[["g", "q", "topic", "_topic_rank", "broker_name", "queue_id", "broker_room"]],
        on="g")
    hq["consumer_group"] = (hq["cand"].astype(str) + "/"
                            + np.where(hq["split_by_topic"], hq["_topic_rank"], -1).astype(str))
    hq = hq.assign(snapshot_id="w", cluster="w")
    out = allocate_bucket(hq[[*QUEUE_COLUMNS, "cand", "q"]], hm[[*MEMBER_COLUMNS, *MODE_COLUMNS]])

    held = out[out["client_id"].notna() & out["status"].isin(CLAIM_STATUSES)]
    # a queue a broadcaster claims today is consumed under every candidate too
    broadcast = queues["_broadcast"].to_numpy(bool)
    taken = pd.concat([held[["cand", "q"]], cands[["cand", "g"]].merge(
        queues.loc[broadcast, ["g", "q"]], on="g")[["cand", "q"]]])
    claimed = taken.drop_duplicates(["cand", "q"]).groupby("cand").size()
    per_client = held.groupby(["cand", "client_id"]).size().rename("n").reset_index()
    load = hc[["cand", "client_id"]].drop_duplicates().merge(
        per_client, on=["cand", "client_id"], how="left").fillna({"n": 0})
    fig = load.groupby("cand")["n"].agg(["max", "min"])
    idle = load.assign(z=load["n"] == 0).groupby("cand")["z"].sum()
    first = held.drop_duplicates(["cand", "q"])[["cand", "q", "client_id"]]
    moves = first.merge(queues[["q", "owner", "dup"]], on="q")
    moved = moves["owner"].notna() & (moves["owner"] != moves["client_id"])
    moves = moves[moved]
    n_moved = moves.groupby("cand").size()
    dup_known = moves["dup"].notna().groupby(moves["cand"]).sum()
    dup_sum = moves.groupby("cand")["dup"].sum()

    c = cands.set_index("cand")
    n = c["clients"].to_numpy(np.int64)
    g = c["g"].to_numpy(np.int64)
    at = _group_rows(groups, g)
    q_all = groups["Q"].to_numpy()[at]
    split_ideal = (st.assign(ideal=_ceil_div(st["qt"], st["ct"])).groupby("cand")["ideal"].max()
                   .reindex(c.index).fillna(0).to_numpy(np.int64))
    pooled = np.maximum(_ceil_div(q_all, n), split_ideal)
    mx = fig["max"].reindex(c.index).fillna(0).to_numpy(np.int64)
    moved_n = n_moved.reindex(c.index).fillna(0).to_numpy(np.int64)
    dups = np.where(dup_known.reindex(c.index).fillna(0).to_numpy() > 0,
                    dup_sum.reindex(c.index).fillna(0).to_numpy(float), np.nan)
    vn = c["virtual_nodes"].to_numpy(float)
    labels = np.where(c["split_by_topic"].to_numpy(bool), "split by topic",
                      _labels(n, c["strategy"].to_numpy(object), vn))
    return pd.DataFrame({
        "g": g, "candidate": labels, "clients": n, "strategy": c["strategy"].to_numpy(object),
        "virtual_nodes": vn, "split_by_topic": c["split_by_topic"].to_numpy(bool),
        "max_queues": mx, "min_queues": fig["min"].reindex(c.index).fillna(0).to_numpy(np.int64),
        "idle_clients": idle.reindex(c.index).fillna(0).to_numpy(np.int64),
        "skew": mx - pooled, "queues_moved": moved_n, "estimated_duplicates": dups,
        "is_current": False, "order": c["order"].to_numpy(np.int64),
        "C_today": groups["C"].to_numpy()[at],
        "own_today": groups["own"].to_numpy()[at],
        UNCLAIMED: (q_all - claimed.reindex(c.index).fillna(0).to_numpy()).astype(np.int64),
    })


def _closed_form_applies(cands: pd.DataFrame, groups: pd.DataFrame,
                         clients: pd.DataFrame) -> np.ndarray:
    """Mask of the candidates computed without the kernels (see the module docstring).

    A client's index in the hypothetical list is its position in the kernels' sorted list
    when the candidate keeps only today's first-sorted clients, or when today's last-sorted
    id sorts before the first synthetic one (so no id is also a synthetic one). An empty
    client id claims nothing under the RocketMQ strategies, so its group is simulated;
    so is a CONSISTENT_HASH candidate whose virtual-node count the kernel refuses, and a
    candidate the broker computes for a group with POP topics (the closed forms give each
    queue one owner; the broker shares them)."""
    last = clients.groupby("g")["client_id"].last()  # clients are in Java order per group
    first_synthetic = java_key(f"{SYNTHETIC_PREFIX}0001")
    ordered = pd.Series([java_key(c) < first_synthetic for c in last.to_numpy(object)],
                        index=last.index, dtype=bool)
    empty_id = clients["client_id"].eq("").groupby(clients["g"]).any()
    g = cands["g"].to_numpy(np.int64)
    today = groups["C"].to_numpy()[_group_rows(groups, g)]
    strategy = cands["strategy"].to_numpy(object)
    vn = cands["virtual_nodes"].to_numpy(float)
    usable_ring = (strategy == "CONSISTENT_HASH") & (vn > 0) & (vn <= MAX_VIRTUAL_NODES)
    popped = groups["pop"].to_numpy(bool)[_group_rows(groups, g)] & np.isin(strategy,
                                                                         BROKER_STRATEGIES)
    return ((np.isin(strategy, CLOSED_FORM) | usable_ring) & ~popped
            & ~empty_id.reindex(g, fill_value=True).to_numpy(bool)
            & ((cands["clients"].to_numpy(np.int64) <= today)
               | ordered.reindex(g, fill_value=False).to_numpy(bool)))


def _synthetic_number(ids: np.ndarray) -> np.ndarray:
    """k for ids spelled exactly `~whatif-%04d` (k >= 1), else -1."""
    s = pd.Series(ids, dtype=object)
    digits = s.str.extract(rf"^{SYNTHETIC_PREFIX}([0-9]{{4,9}})$", expand=False)
    k = pd.to_numeric(digits, errors="coerce").fillna(-1).astype(np.int64).to_numpy()
    spelled = np.array([f"{SYNTHETIC_PREFIX}{v:04d}" for v in k.tolist()], dtype=object)
    return np.where((k >= 1) & (spelled == s.to_numpy(object)), k, -1)


def _queue_positions(queues: pd.DataFrame, clients: pd.DataFrame,
                     groups: pd.DataFrame) -> pd.DataFrame:
    """Per queue (in `q` order, groups contiguous): its position in the group's (topic,
    queue) order and within its topic, the topic's size, and today's owner as an index
    into the hypothetical client list (today's clients, then ~whatif-0001, ...; -1 when
    the owner is in neither, -2 when the queue has no owner today)."""
    by_topic = queues.groupby(["g", "_topic_rank"], sort=False)
    at = queues["_owner_i"].to_numpy(np.int64)
    index = np.where(at >= 0, clients["i"].to_numpy(np.int64)[np.maximum(at, 0)], -1)
    today = groups.set_index("g")["C"].reindex(queues["g"]).to_numpy(np.int64)
    # an owner that is not one of today's clients may be spelled like a synthetic one
    other = (at < 0) & queues["owner"].notna().to_numpy(bool)
    synthetic = _synthetic_number(queues["owner"].to_numpy(object)[other])
    index[other] = np.where(synthetic > 0, today[other] + synthetic - 1, -1)
    return pd.DataFrame({
        "g": queues["g"].to_numpy(np.int64),
        # int32: the closed forms divide by them (`_arithmetic`)
        "pos_group": queues.groupby("g", sort=False).cumcount().to_numpy(np.int32),
        "pos_topic": by_topic.cumcount().to_numpy(np.int32),
        "topic_size": by_topic["q"].transform("size").to_numpy(np.int32),
        "owner": np.where(queues["owner"].notna(), index, -2).astype(np.int64),
        "dup": queues["dup"].to_numpy(float),
    })


def _queue_hashes(queues: pd.DataFrame, groups: np.ndarray) -> np.ndarray:
    """Per queue (`q` order): the hash of `MessageQueue [topic=T, brokerName=B, queueId=N]`
    as the kernel keys it (`hashring.queue_hashes`); 0 outside `groups`."""
    out = np.zeros(len(queues), np.int64)
    mask = queues["g"].isin(groups).to_numpy(bool)
    sub = queues[mask]
    # java ranks number the distinct topics and broker names of the bucket
    head, _ = key_codes(sub["_topic_rank"].to_numpy(np.int64),
                        sub["_broker_rank"].to_numpy(np.int64))
    first = np.unique(head, return_index=True)[1]
    heads = list(zip(sub["topic"].to_numpy(object)[first],
                     sub["_broker"].to_numpy(object)[first], strict=True))
    out[mask] = coded_message_queue_hashes(head, heads, sub["queue_id"].to_numpy(np.int64))
    return out


def _pairs(cands: pd.DataFrame, groups: pd.DataFrame,
           positions: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(candidate row, queue) for every queue of every candidate's group, candidate by
    candidate, as int32 (`expand_blocks` in two repeats: these are tens of millions)."""
    g = cands["g"].to_numpy(np.int64)
    first_queue = np.searchsorted(positions["g"].to_numpy(np.int64), g)
    take = groups["Q"].to_numpy()[_group_rows(groups, g)]
    row = np.repeat(np.arange(len(g), dtype=np.int32), take)
    shift = (first_queue - (np.cumsum(take) - take)).astype(np.int32)
    return row, np.arange(len(row), dtype=np.int32) + np.repeat(shift, take)


def _arithmetic(cands: pd.DataFrame, groups: pd.DataFrame,
                positions: pd.DataFrame) -> pd.DataFrame:
    """AVG / AVG_BY_CIRCLE / range / roundrobin candidates, each queue's owner computed.

    With n clients all subscribing every topic, a queue at position p of a topic of q_t
    queues (position P in the group's (topic, queue) order) goes to client
    * AVG, range: b = q_t // n, m = q_t % n: p // (b + 1) if p < m (b + 1), else
      (p - m) // b (the first m clients hold blocks one larger; q_t <= n: client p);
    * AVG_BY_CIRCLE: p mod n;
    * roundrobin: P mod n (one pointer over the topics, no member skipped).
    Each formula runs only on the pairs of the candidates that use it, with one integer
    division per pair (a 10M-row benchmark bucket sweeps about 12 million pairs), in
    int32: numpy divides int64 about ten times slower (11M pairs: 0.27 s against 0.03 s)."""
    row, queue = _pairs(cands, groups, positions)
    strategy = cands["strategy"].to_numpy(object)
    n = cands["clients"].to_numpy(np.int32)
    owner = np.empty(len(row), np.int64)
    for names, formula in ((("AVG", "range"), _blocks), (("AVG_BY_CIRCLE",), _circle),
                           (("roundrobin",), _round_robin)):
        uses = np.isin(strategy, names)
        if uses.all():
            owner = formula(n[row], queue, positions)
        elif uses.any():
            at = uses[row]
            owner[at] = formula(n[row[at]], queue[at], positions)
    return _summarize(cands, groups, positions, row, queue, owner)


def _split_shares(cands: pd.DataFrame, groups: pd.DataFrame, topics: pd.DataFrame
                  ) -> tuple[np.ndarray, ...]:
    """Split-by-topic candidates: per (candidate row, topic of its group), in candidate
    then topic order, the row, the topic's row in `topics` (sorted by group, then topic
    rank), its share c_t of today's C clients (`_split_sizes`) and its first client's
    index; and per candidate the shares' sum."""
    g = cands["g"].to_numpy(np.int64)
    at = _group_rows(groups, g)
    C, Q = groups["C"].to_numpy()[at], groups["Q"].to_numpy()[at]
    topic_g = topics["g"].to_numpy(np.int64)
    start = np.searchsorted(topic_g, g)
    row, topic = expand_blocks(start, np.searchsorted(topic_g, g, side="right") - start)
    qt = topics["qt"].to_numpy(np.int64)[topic]
    ct = _split_sizes(row, qt, C, Q)
    total = np.bincount(row, ct, minlength=len(g)).astype(np.int64)
    first = (np.cumsum(ct) - ct) - (np.cumsum(total) - total)[row]
    return row, topic, ct, first, total


def _split_sizes(row: np.ndarray, qt: np.ndarray, C: np.ndarray, Q: np.ndarray
                 ) -> np.ndarray:
    """c_t per (candidate, topic) entry (`row`: the candidate, `qt`: the topic's queues):
    the fewest clients that reach the lowest max load a split of at most today's C clients
    can, c_t = ceil(q_t / L) for the least L with sum_t ceil(q_t / L) <= C (a bisection
    over all candidates at once). A split that takes more than C clients is never
    recommended, so sizing it in proportion (ceil(C × q_t / Q), 16 clients for 15 on two
    topics of 16) offered none that could be. With fewer clients than topics no L fits:
    c_t = min(q_t, max(1, ceil(C × q_t / Q)))."""
    n = len(C)
    topics = np.bincount(row, minlength=n)
    low = np.ones(n, np.int64)
    high = np.ones(n, np.int64)
    np.maximum.at(high, row, qt)
    while (open_ := low < high).any():
        mid = (low + high) // 2
        fits = np.bincount(row, _ceil_div(qt, mid[row]), minlength=n) <= C
        high = np.where(open_ & fits, mid, high)
        low = np.where(open_ & ~fits, mid + 1, low)
    proportional = np.minimum(qt, np.maximum(1, _ceil_div(C[row] * qt, Q[row])))
    return np.where((topics <= C)[row], _ceil_div(qt, low[row]), proportional)


def _split_arithmetic(cands: pd.DataFrame, groups: pd.DataFrame, positions: pd.DataFrame,
                      topics: pd.DataFrame, clients: pd.DataFrame,
                      queue_hash: np.ndarray) -> pd.DataFrame:
    """Split-by-topic candidates: topic t is a group of its own with clients first_t ..
    first_t + c_t - 1 (`_split_shares`), so a queue's owner is first_t plus its client in
    that group: `_block_owner` among c_t (AVG, range), its position in the topic mod c_t
    (AVG_BY_CIRCLE; roundrobin over one topic), or the client of the first node at or
    after its hash in the ring of those c_t clients (CONSISTENT_HASH, `_split_rings`).
    Skew is against max(ceil(Q / n), max_t ceil(q_t / c_t)), as `_simulate`'s."""
    row_t, topic, ct, first, total = _split_shares(cands, groups, topics)
    per_cand = np.bincount(row_t, minlength=len(cands))
    entry_start = np.cumsum(per_cand) - per_cand
    row, queue = _pairs(cands, groups, positions)
    pos_topic = positions["pos_topic"].to_numpy(np.int32)
    # a queue's topic, counted over all groups' topics (the queues at position 0 start one)
    queue_topic = np.cumsum(pos_topic == 0) - 1
    group_first_topic = queue_topic[np.searchsorted(positions["g"].to_numpy(np.int64),
                                                    cands["g"].to_numpy(np.int64))]
    entry = entry_start[row] + queue_topic[queue] - group_first_topic[row]
    share = ct[entry].astype(np.int32)
    # within its topic, each pair by its candidate's formula only (`_arithmetic`'s, with
    # the topic's share for n): blocks for AVG and range, the position mod n otherwise
    strategy = cands["strategy"].to_numpy(object)
    blocks = np.isin(strategy, ("AVG", "range"))[row]
    local = _circle(share, queue, positions)
    local[blocks] = _blocks(share[blocks], queue[blocks], positions)
    owner = first[entry] + local
    hashed = (strategy == "CONSISTENT_HASH")[row]
    if hashed.any():
        owner[hashed] = _split_rings(cands, clients, groups, row_t, first, ct,
                                     entry[hashed], queue_hash[queue[hashed]])
    rows = _summarize(cands, groups, positions, row, queue, owner)
    Q = groups["Q"].to_numpy()[_group_rows(groups, cands["g"].to_numpy(np.int64))]
    ideal = np.maximum.reduceat(_ceil_div(topics["qt"].to_numpy(np.int64)[topic], ct),
                                entry_start)  # a split group has two topics or more
    pooled = np.maximum(_ceil_div(Q, total), ideal)
    return rows.assign(candidate="split by topic", split_by_topic=True,
                       skew=rows["max_queues"].to_numpy(np.int64) - pooled)


def _split_rings(cands: pd.DataFrame, clients: pd.DataFrame, groups: pd.DataFrame,
                 row_t: np.ndarray, first: np.ndarray, ct: np.ndarray, entry: np.ndarray,
                 queue_hash: np.ndarray) -> np.ndarray:
    """CONSISTENT_HASH splits: the owner index of each (topic entry, queue hash) query.

    Entry e (`_split_shares`: a candidate's topic) is a group of clients first_e ..
    first_e + c_e - 1 of the candidate's hypothetical list, which is their Java order, so
    its ring is the kernel's (`hashring.build_rings`, one ring per entry, the clients
    inserted in that order; `route` finds a queue's owner). Split candidates are a few
    per group, so their rings are built whole, not walked like `_hash_ring`'s sweeps."""
    is_ch = (cands["strategy"] == "CONSISTENT_HASH").to_numpy(bool)
    hc = _hyp_clients(cands[is_ch], clients, groups)
    n = cands["clients"].to_numpy(np.int64)
    offset = np.zeros(len(cands), np.int64)  # a CH candidate's first row in `hc`
    offset[is_ch] = np.cumsum(n[is_ch]) - n[is_ch]
    vnodes = np.where(is_ch, cands["virtual_nodes"].to_numpy(float), 0).astype(np.int64)
    ring_entry = np.flatnonzero(is_ch[row_t])
    member_entry, member = expand_blocks(offset[row_t[ring_entry]] + first[ring_entry],
                                         ct[ring_entry])
    rings = build_rings(ring_entry[member_entry], hc["client_id"].to_numpy(object)[member],
                        hc["i"].to_numpy(np.int64)[member], vnodes[row_t])
    return route(rings, entry, queue_hash)


def _blocks(n: np.ndarray, queue: np.ndarray, positions: pd.DataFrame) -> np.ndarray:
    return _block_owner(n, positions["pos_topic"].to_numpy(np.int32)[queue],
                        positions["topic_size"].to_numpy(np.int32)[queue])


def _block_owner(n: np.ndarray, p: np.ndarray, size: np.ndarray) -> np.ndarray:
    """AVG / range: the client of position p of a topic of `size` queues among n."""
    b = size // n
    m = size - b * n
    big = p < m * (b + 1)
    return np.where(big, p, p - m) // np.where(big, b + 1, np.maximum(b, 1))


def _blocks_sweep(cands: pd.DataFrame, groups: pd.DataFrame,
                  positions: pd.DataFrame) -> pd.DataFrame:
    """AVG and range candidates (`_blocks`) of every group at once, in work per queue and
    per (candidate, topic), not per (candidate, queue): they are most of the sweep.

    * Loads: with n clients a topic of q_t queues gives the first q_t % n clients
      q_t // n + 1 queues and the others q_t // n, so the most loaded client has
      sum_t ceil(q_t / n), the least sum_t floor(q_t / n), and n - max_t q_t clients are
      idle when n exceeds every q_t (none otherwise).
    * Stays: as n grows every client's block starts at or before where it started (its
      start is the sum of the largest parts of q_t split as evenly as possible into n,
      and each part only shrinks), so a queue's client index never decreases: the n where
      it stays with today's owner o form one interval [first n with index >= o, first n
      with index >= o + 1), found by bisection. Each group counts its intervals over
      1 .. its largest candidate's n with one difference array."""
    g = cands["g"].to_numpy(np.int64)
    n = cands["clients"].to_numpy(np.int64)
    queue_g = positions["g"].to_numpy(np.int64)
    groups_n = int(queue_g.max()) + 1
    top = np.zeros(groups_n, np.int64)
    np.maximum.at(top, g, n)

    owner = positions["owner"].to_numpy(np.int64)
    at = np.flatnonzero((top[queue_g] > 0) & (owner >= 0))
    qg, o = queue_g[at], owner[at]
    p = positions["pos_topic"].to_numpy(np.int32)[at]
    size = positions["topic_size"].to_numpy(np.int32)[at]

    def first_n(target: np.ndarray) -> np.ndarray:
        """Least n in 1 .. top with the client index >= target; top + 1 when none."""
        lo, hi = np.ones(len(at), np.int64), top[qg] + 1
        while (lo < hi).any():
            mid = (lo + hi) // 2
            reached = _block_owner(mid.astype(np.int32), p, size) >= target
            hi = np.where(reached, mid, hi)
            lo = np.where(reached, lo, np.minimum(mid + 1, hi))
        return lo

    enter, leave = first_n(o), first_n(o + 1)
    width = top + 2
    base = np.cumsum(width) - width
    dup, known = _dup(positions)

    def stays(weights: np.ndarray | None) -> np.ndarray:
        diff = (np.bincount(base[qg] + enter, weights, minlength=int(width.sum()))
                - np.bincount(base[qg] + leave, weights, minlength=int(width.sum())))
        return np.cumsum(diff)[base[g] + n]  # every group's differences sum to zero

    # per (candidate, topic): topics are the queues at position 0 of their topic
    first = np.flatnonzero(positions["pos_topic"].to_numpy(np.int32) == 0)
    topic_g = queue_g[first]
    topic_size = positions["topic_size"].to_numpy(np.int64)[first]
    start = np.searchsorted(topic_g, g)
    row, topic = expand_blocks(start, np.searchsorted(topic_g, g, side="right") - start)
    q_t, k = topic_size[topic], n[row]
    mx = np.bincount(row, -(-q_t // k), minlength=len(n)).astype(np.int64)
    mn = np.bincount(row, q_t // k, minlength=len(n)).astype(np.int64)
    maxq = np.zeros(len(n), np.int64)
    np.maximum.at(maxq, row, q_t)
    idle = np.maximum(n - maxq, 0)
    return _rows(cands, groups, positions, mx, mn, idle,
                 (stays(None), stays(known[at].astype(float)), stays(dup[at])))


def _circle(n: np.ndarray, queue: np.ndarray, positions: pd.DataFrame) -> np.ndarray:
    return positions["pos_topic"].to_numpy(np.int32)[queue] % n


def _round_robin(n: np.ndarray, queue: np.ndarray, positions: pd.DataFrame) -> np.ndarray:
    return positions["pos_group"].to_numpy(np.int32)[queue] % n


def _ring_nodes(cands: pd.DataFrame, clients: pd.DataFrame,
                groups: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Hash-ring nodes of every (group, virtual nodes) of CONSISTENT_HASH candidates: the
    nodes `<client_id>-<k>` of the clients the largest candidate has, hashed once.

    Returns (rings: g, virtual_nodes, clients, ring, start, count, collided) and per node
    (ascending) its key `ring << 32 | hash` and the client's index in the hypothetical
    list.
    A prefix of n clients routes through the nodes of clients < n: without equal hashes in
    a ring the TreeMap holds exactly those, whatever the insertion order.

    Rings of the same today's clients, virtual nodes and size have the same nodes (a group
    unchanged between snapshots: 42–43% of the nodes in 10M benchmark buckets), so each
    distinct ring is built once: `ring` numbers the distinct rings, and `start` / `count`
    are the slice of its nodes."""
    rings = (cands.groupby(["g", "virtual_nodes"], sort=True)["clients"].max()
             .rename("clients").reset_index())
    today = _client_lists(clients)
    rings["ring"] = key_codes(today[rings["g"].to_numpy(np.int64)],
                              rings["virtual_nodes"].to_numpy(), rings["clients"].to_numpy())[0]
    built = rings.drop_duplicates("ring")  # first occurrences: ring 0, 1, ...
    hc = _hyp_clients(built.assign(cand=built["ring"]), clients, groups)
    v = built["virtual_nodes"].to_numpy(np.int64)
    member_v = v[hc["cand"].to_numpy(np.int64)]
    member, _ = expand_blocks(np.zeros(len(hc), np.int64), member_v)
    ring = hc["cand"].to_numpy(np.int64)[member]
    # a client id recurs across rings (today's and 4× the virtual nodes), groups (one
    # client in several) and, synthetic, in every group: node_hashes hashes each once
    hashes = node_hashes(hc["client_id"].to_numpy(object), np.zeros(len(hc), np.int64),
                         member_v, hc["_code"].to_numpy() if "_code" in hc else None)
    index = hc["i"].to_numpy(np.int64)[member]
    # by ring, then hash (hashes are 32-bit); the nodes come in ring order, and a stable
    # sort merges ordered blocks in about a quarter of a quicksort's time (1.3M nodes)
    key = (ring << 32) | hashes
    order = np.argsort(key, kind="stable")
    ring, index, key = ring[order], index[order], key[order]
    same = key[1:] == key[:-1]  # two nodes of a ring with one hash
    count = np.bincount(ring, minlength=len(built)).astype(np.int64)
    collided = np.isin(np.arange(len(built)), ring[1:][same])
    of = rings["ring"].to_numpy(np.int64)
    rings["start"] = (np.cumsum(count) - count)[of]
    rings["count"] = count[of]
    rings["collided"] = collided[of]
    return rings, (key, index)


def _client_lists(clients: pd.DataFrame) -> np.ndarray:
    """Per group g (0 .. the largest g of `clients`): a number equal exactly where two
    groups have the same client list (ids in `clients`' order).

    One polynomial hash of each group's id codes proposes the classes, and every list is
    then compared id by id with its class's first list: the rare class that does not hold
    falls back to comparing the lists as tuples."""
    g = clients["g"].to_numpy(np.int64)
    if len(g) == 0:
        return np.zeros(0, np.int64)
    code, _ = key_codes(clients["client_id"].to_numpy(object))
    position = clients.groupby("g", sort=False).cumcount().to_numpy(np.int64)
    power = np.cumprod(np.full(int(position.max()) + 1, _LIST_HASH_BASE, np.uint64))
    terms = (code.astype(np.uint64) + np.uint64(1)) * power[position]  # wraps mod 2**64
    groups_n = int(g.max()) + 1
    digest = np.zeros(groups_n, np.uint64)
    np.add.at(digest, g, terms)
    length = np.bincount(g, minlength=groups_n)
    lists, _ = key_codes(digest, length)
    first = np.full(groups_n, len(g), np.int64)
    np.minimum.at(first, g, np.arange(len(g)))
    head = np.unique(lists, return_index=True)[1]  # each class's first group
    if np.array_equal(code, code[first[head[lists[g]]] + position]):
        return lists
    ids = clients.groupby("g", sort=False)["client_id"].agg(tuple)
    return key_codes(ids.reindex(np.arange(groups_n)).to_numpy(object))[0]


def _hash_ring(cands: pd.DataFrame, groups: pd.DataFrame, positions: pd.DataFrame,
               rings: pd.DataFrame, nodes: np.ndarray, queue_hash: np.ndarray) -> pd.DataFrame:
    """CONSISTENT_HASH candidates: each queue goes to the first node of the candidate's
    clients at or after its hash, wrapping around (`hashring.route`).

    The candidates of a ring differ only in how many clients they keep (its first n), so
    a queue is routed once per ring, not once per candidate: walking the ring from the
    queue's hash, the nodes whose client index is below every earlier one's (the
    *records*, about ln n of them on average) are the only owners any candidate can get, and
    candidate n takes the first record below n. The walk stops at the first record below
    the ring's smallest n in the chunk: a ring of one candidate takes one step. (Each
    candidate routed through its own copy of the ring was 12 times the nodes of the
    (candidate, queue) pairs in a 1M-row benchmark bucket, with client-count sweeps.)"""
    ring = cands["_ring"].to_numpy(np.int64)
    n = cands["clients"].to_numpy(np.int64)
    used, ring_of = np.unique(ring, return_inverse=True)  # the chunk's rings, 0..
    smallest = np.full(len(used), np.iinfo(np.int64).max)
    np.minimum.at(smallest, ring_of, n)
    # one item per (ring, queue of its group), in ring then queue order
    queue_g = positions["g"].to_numpy(np.int64)
    ring_g = rings["g"].to_numpy(np.int64)[used]
    first_queue = np.searchsorted(queue_g, ring_g)
    size = np.searchsorted(queue_g, ring_g, side="right") - first_queue
    item_ring, item_queue = expand_blocks(first_queue, size)
    first_item = np.cumsum(size) - size
    # where each item's walk starts: its hash's ceiling in the ring, or the ring's first
    # node past the last (node keys are ring << 32 | hash, ascending; hashes are 32-bit)
    start = rings["start"].to_numpy(np.int64)[used][item_ring]
    end = start + rings["count"].to_numpy(np.int64)[used][item_ring]
    ring_nodes = rings["ring"].to_numpy(np.int64)[used]
    at = np.searchsorted(nodes[0], (ring_nodes[item_ring] << 32) | queue_hash[item_queue],
                         side="left")
    at = np.where(at >= end, start, at)
    records_item, records_client = _records(nodes[1], at, start, end,
                                            smallest[item_ring])
    order = np.argsort(records_item, kind="stable")  # per item, in walking order
    records_item, records_client = records_item[order], records_client[order]
    row, queue = _pairs(cands, groups, positions)
    item = first_item[ring_of[row]] + (queue - first_queue[ring_of[row]])
    # a pair takes its item's first record below its n. An item's records fall in client
    # index, so item × span + (span - 1 - client) ascends over all records, and that record
    # is the first whose key passes item × span + (span - 1 - n): one binary search
    span = int(max(records_client.max(), n.max())) + 1
    keys = records_item * span + (span - 1 - records_client)
    record = np.searchsorted(keys, item * span + (span - 1 - n[row]), side="right")
    return _summarize(cands, groups, positions, row, queue, records_client[record])


def _records(client: np.ndarray, at: np.ndarray, start: np.ndarray, end: np.ndarray,
             stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(item, client) of every record of every item's walk: from node `at` on, wrapping
    from `end` to `start`, each node whose client index is below all before it, until one
    is below `stop` (every ring holds client 0, so every walk ends)."""
    lowest = np.full(len(at), np.iinfo(np.int64).max)
    position = at.copy()
    active = np.arange(len(at))
    found_item, found_client = [], []
    while len(active):
        c = client[position[active]]
        record = c < lowest[active]
        found_item.append(active[record])
        found_client.append(c[record])
        lowest[active[record]] = c[record]
        active = active[lowest[active] >= stop[active]]
        step = position[active] + 1
        position[active] = np.where(step == end[active], start[active], step)
    return np.concatenate(found_item), np.concatenate(found_client)


def _summarize(cands: pd.DataFrame, groups: pd.DataFrame, positions: pd.DataFrame,
               row: np.ndarray, queue: np.ndarray, owner: np.ndarray) -> pd.DataFrame:
    """`_simulate`'s rows from the owner index of every (candidate row, queue) pair.

    Loads are counted per (candidate, client) and reduced per candidate over the
    candidates' client blocks; no block is empty (a candidate has a client or more)."""
    n = cands["clients"].to_numpy(np.int64)
    first_client = np.cumsum(n) - n
    load = np.bincount(first_client[row] + owner, minlength=int(n.sum()))
    mx = np.maximum.reduceat(load, first_client).astype(np.int64)
    mn = np.minimum.reduceat(load, first_client).astype(np.int64)
    idle = np.add.reduceat((load == 0).astype(np.int64), first_client)
    # the pairs whose queue stays with today's owner (one compare per pair)
    stay = np.flatnonzero(positions["owner"].to_numpy(np.int64)[queue] == owner)
    stay_row, stay_queue = row[stay], queue[stay]
    dup, known = _dup(positions)

    def staying(weights: np.ndarray | None) -> np.ndarray:
        return np.bincount(stay_row, weights, minlength=len(n))

    return _rows(cands, groups, positions, mx, mn, idle,
                 (staying(None), staying(known[stay_queue]), staying(dup[stay_queue])))


def _dup(positions: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per queue: its estimated duplicates (0 where unknown) and whether they are known."""
    dup = positions["dup"].to_numpy(float)
    known = ~np.isnan(dup)
    return np.where(known, dup, 0.0), known


def _rows(cands: pd.DataFrame, groups: pd.DataFrame, positions: pd.DataFrame,
          mx: np.ndarray, mn: np.ndarray, idle: np.ndarray,
          stays: tuple[np.ndarray, np.ndarray, np.ndarray]) -> pd.DataFrame:
    """The candidates' rows from their loads and, per candidate, the queues that stay with
    today's owner (`stays`: how many, how many of them with known duplicates, and the
    sum of those). What moves is every queue with an owner today but those."""
    g = cands["g"].to_numpy(np.int64)
    at = _group_rows(groups, g)
    n = cands["clients"].to_numpy(np.int64)
    strategy = cands["strategy"].to_numpy(object)
    vn = cands["virtual_nodes"].to_numpy(float)
    dup, known = _dup(positions)
    owned = positions["owner"].to_numpy(np.int64) != -2
    queue_g = positions["g"].to_numpy(np.int64)
    groups_n = int(queue_g.max()) + 1

    def in_group(weights: np.ndarray) -> np.ndarray:
        return np.bincount(queue_g, weights, minlength=groups_n)[g]

    # offsets differences are whole numbers: their float sums are exact in any order
    moved_n = (in_group(owned) - stays[0]).astype(np.int64)
    dup_known = (in_group(owned & known) - stays[1]).astype(np.int64)
    dup_sum = in_group(np.where(owned, dup, 0.0)) - stays[2]
    dups = np.where(dup_known > 0, dup_sum, np.nan)
    return pd.DataFrame({
        "g": g, "candidate": _labels(n, strategy, vn), "clients": n, "strategy": strategy,
        "virtual_nodes": vn, "split_by_topic": False,
        "max_queues": mx, "min_queues": mn, "idle_clients": idle,
        "skew": mx - _ceil_div(groups["Q"].to_numpy()[at], n),
        "queues_moved": moved_n, "estimated_duplicates": dups, "is_current": False,
        "order": cands["order"].to_numpy(np.int64),
        "C_today": groups["C"].to_numpy()[at],
        "own_today": groups["own"].to_numpy()[at],
        UNCLAIMED: 0,  # the closed forms' strategies give every queue to a client
    })


def _labels(n: np.ndarray, strategy: np.ndarray, vn: np.ndarray) -> np.ndarray:
    """`16 clients, AVG`, `8 clients, CONSISTENT_HASH (40 virtual nodes)`: each distinct
    (clients, strategy, virtual nodes) formatted once (a bucket has a few thousand of
    them and hundreds of thousands of candidates)."""
    if len(n) == 0:
        return np.empty(0, object)
    s_code, s_names = pd.factorize(pd.Series(strategy, dtype=object))
    v_code, v_values = pd.factorize(pd.Series(vn, dtype=float))  # NaN: code -1
    key = ((np.asarray(n, np.int64) * (len(s_names) + 1) + s_code) * (len(v_values) + 1)
           + v_code + 1)
    codes, unique = pd.factorize(key)  # a hash pass: no sort of every candidate's key
    text = []
    for k in unique.tolist():
        rest, v = divmod(k, len(v_values) + 1)
        clients, s_at = divmod(rest, len(s_names) + 1)
        name = s_names[s_at]
        text.append(f"{counted(clients, 'client')}, {name}" + (
            f" ({int(v_values[v - 1])} virtual nodes)" if name == "CONSISTENT_HASH" and v else ""))
    return np.array(text, dtype=object)[codes]


NULLABLE_COUNTS = ("virtual_nodes", "estimated_duplicates")


def typed_arrow(rows: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """`typed(rows)` as an Arrow table of `schema` (the what_if table's), built column by
    column from numpy: no typed pandas copy, no nullable pandas arrays."""
    arrays = []
    for field in schema:
        if field.name in NULLABLE_COUNTS:
            value = pd.to_numeric(rows[field.name], errors="coerce").to_numpy(float)
            missing = np.isnan(value)
            whole = np.round(np.where(missing, 0.0, value)).astype(field.type.to_pandas_dtype())
            arrays.append(pa.array(whole, type=field.type, mask=missing))
        elif pa.types.is_integer(field.type) or pa.types.is_boolean(field.type):
            arrays.append(pa.array(rows[field.name].to_numpy().astype(
                field.type.to_pandas_dtype()), type=field.type))
        else:
            arrays.append(pa.array(rows[field.name].to_numpy(object), type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def typed(rows: pd.DataFrame) -> pd.DataFrame:
    """`what_if_bucket`'s rows in the table's types: counts int32, virtual_nodes and
    estimated_duplicates nullable integers, flags bool."""
    rows = rows.copy()
    for col in ("clients", "max_queues", "min_queues", "idle_clients", "skew",
                "queues_moved"):
        rows[col] = rows[col].astype("int32")
    for col, dtype in zip(NULLABLE_COUNTS, ("Int32", "Int64"), strict=True):
        rows[col] = pd.array(pd.to_numeric(rows[col], errors="coerce").round(), dtype=dtype)
    for col in ("split_by_topic", "is_current", "recommended"):
        rows[col] = rows[col].astype(bool)
    return rows


def best_change(rows: pd.DataFrame) -> str:
    """The what-if line of one group's rows (`rebalance_udfs.what_if_lines`; for tests)."""
    table = pa.Table.from_pandas(rows[[*GROUP_KEYS, "candidate", "clients", "strategy",
                                       "max_queues", "queues_moved", "split_by_topic",
                                       "is_current", "recommended"]], preserve_index=False)
    unclaimed = (pa.array(rows[UNCLAIMED].to_numpy(np.int64)) if UNCLAIMED in rows.columns
                 else None)
    no_option = (pa.array(rows[TODAY_NO_OPTION].to_numpy(bool))
                 if TODAY_NO_OPTION in rows.columns else None)
    lines = what_if_lines(table, unclaimed, no_option).column(LINE).to_pylist()
    return lines[0] if lines else "no simulated change lowers the max load below today's"
