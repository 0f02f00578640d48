"""strategy_comparison's figures for a bucket of consumer groups: the pure functions
behind the comparison's UDF (`rebalance_udfs.spark.comparison`), which calls them once
per candidate strategy in one call per bucket.

Per candidate, every CLUSTERING member of the bucket's groups is switched to it
(`switched`), the bucket is allocated again by the kernels the audit runs, and consecutive
snapshots of each group are compared with rebalance_churn's definition of a move
(`rebalance_udfs.churn_link`, `rebalance_udfs.churn`; `candidate_figures`). A bucket holds
every snapshot of its groups (buckets are by cluster and group), so each pair's two sides
meet in the call.

Before, each candidate was a Spark assignment of its own (a shuffle and a kernel stage
each) and the moves two Spark aggregations over every candidate's rows: at 1M queue rows
the comparison took 45 s, three times the assign-and-report pass.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.churn import churn_totals
from rebalance_udfs.churn_link import CLIENT_ROW_COLUMNS, churn_inputs
from rebalance_udfs.churn_link import ROW_COLUMNS as CHURN_ROW_COLUMNS
from rebalance_udfs.exact import column_values, first_of, take
from rebalance_udfs.key_codes import key_codes, row_of
from vocabulary.columns import CLAIM_STATUSES, CLUSTERING, GROUP_KEYS

# one row per (snapshot with a predecessor in the run, cluster, group, candidate)
FIGURES_SCHEMA = pa.schema([
    ("snapshot_id", pa.string()), ("cluster", pa.string()), ("consumer_group", pa.string()),
    ("strategy", pa.string()), ("queues", pa.int32()), ("moves", pa.int32()),
    ("estimated_duplicates", pa.int64()), ("duplicates_known_moves", pa.int32()),
    ("max_client_queues", pa.int32()),
])

# strategy_comparison's rows as a bucket's call makes them: the table's columns but
# captured_at, which Spark adds from the snapshots' times (the candidate and the members'
# strategies never null, as the table has always declared them)
ROWS_SCHEMA = pa.schema([
    ("snapshot_id", pa.string()), ("cluster", pa.string()),
    ("previous_snapshot_id", pa.string()), ("consumer_group", pa.string()),
    pa.field("strategy", pa.string(), nullable=False),
    pa.field("actual_strategy", pa.list_(pa.field("element", pa.string(), nullable=False)),
             nullable=False),
    ("queues", pa.int32()), ("moves", pa.int32()), ("estimated_duplicates", pa.int64()),
    ("duplicates_known_moves", pa.int32()), ("max_client_queues", pa.int32()),
])
# the counts a candidate that gave a group no queue on either side has: zero (its
# duplicate estimate is unknown)
_ZEROED = ("queues", "moves", "duplicates_known_moves", "max_client_queues")

_NO_CLIENTS = pa.table({
    **{k: pa.array([], pa.string()) for k in [*GROUP_KEYS, "client_id"]},
    "topics": pa.array([], pa.list_(pa.string())),
    "strategies": pa.array([], pa.list_(pa.string())),
}).select(CLIENT_ROW_COLUMNS)


def switched(members: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """`members` as if every CLUSTERING member (message_model null counts as one) ran
    `strategy`, its `rooms` and `config_queues` cleared (`virtual_nodes` kept: a
    CONSISTENT_HASH candidate uses the member's own count); BROADCASTING members keep
    theirs, they claim every queue anyway."""
    out = members.copy()
    member = out["message_model"].fillna(CLUSTERING).eq(CLUSTERING).to_numpy()
    out["strategy"] = np.where(member, strategy, out["strategy"].to_numpy(object))
    for name in ("rooms", "config_queues"):
        if name in out.columns:
            out[name] = pd.Series(np.where(member, None, out[name].to_numpy(object)),
                                  index=out.index, dtype=object)
    return out


def candidate_figures(rows: pa.Table, pairs: pa.Table, strategy: str) -> pa.Table:
    """FIGURES_SCHEMA rows of one candidate: per compared group that has assignment rows
    on either side of its pair, the churn totals of its rows and its heaviest client (the
    caller adds the groups without any).

    `rows`: the candidate's assignment rows of a bucket's groups in every snapshot of the
    run (`rebalance_udfs.churn_link.ROW_COLUMNS`, client_id and status); `pairs`: the
    run's snapshots with a predecessor in the run (`rebalance_udfs.churn_link.PAIR_KEYS`)."""
    totals = churn_totals(*churn_inputs(rows.select(CHURN_ROW_COLUMNS), _NO_CLIENTS, None,
                                        None, pairs))
    heaviest = _heaviest(rows, totals)
    n = totals.num_rows
    return pa.table({
        **{k: totals.column(k) for k in GROUP_KEYS},
        "strategy": pa.array([strategy] * n, pa.string()),
        "queues": totals.column("queues_after"),
        "moves": totals.column("queues_moved"),
        "estimated_duplicates": totals.column("estimated_duplicates"),
        "duplicates_known_moves": totals.column("duplicates_known_moves"),
        "max_client_queues": heaviest,
    }, schema=FIGURES_SCHEMA)


def _heaviest(rows: pa.Table, totals: pa.Table) -> pa.Array:
    """Per row of `totals` (GROUP_KEYS of a later snapshot), the most queues one client
    claims (status OK, CONTENDED or SHARED) in that snapshot; 0 when nobody claims any."""
    client = rows.column("client_id")
    claim = pc.fill_null(pc.and_(pc.is_valid(client),
                                 pc.is_in(rows.column("status"), pa.array(CLAIM_STATUSES))),
                         False).to_numpy(zero_copy_only=False)
    claims = rows.filter(pa.array(claim))
    # both tables' group keys coded together (`key_codes` reads chunked columns as they are)
    keys = pa.concat_tables([claims.select(GROUP_KEYS), totals.select(GROUP_KEYS)],
                           promote_options="permissive")
    group, n_groups = key_codes(*keys.columns)
    claim_group, total_group = group[:claims.num_rows], group[claims.num_rows:]
    client_code, n_clients = key_codes(claim_group, claims.column("client_id"))
    per_client = np.bincount(client_code, minlength=n_clients)
    group_of_client = np.zeros(n_clients, np.int64)
    group_of_client[client_code] = claim_group
    most = np.zeros(n_groups, np.int64)
    np.maximum.at(most, group_of_client, per_client)
    return pa.array(most[total_group], pa.int32())


def comparison_rows(figures: pa.Table, members: pa.Table, pairs: pa.Table,
                    strategies: tuple[str, ...]) -> pa.Table:
    """ROWS_SCHEMA rows of a bucket: one per group with member rows in a snapshot of
    `pairs` and per candidate in `strategies`, with the candidate's `figures`
    (FIGURES_SCHEMA; zero counts and no duplicate estimate where it gave the group no
    queue on either side), the snapshot's predecessor and what the group's members really
    run (`actual_strategy`: distinct, sorted, nulls left out).

    `members`: the bucket's member rows (GROUP_KEYS, strategy); `pairs`: PAIR_KEYS of the
    run's snapshots with a predecessor in the run."""
    snapshot, cluster = column_values(members, "snapshot_id"), column_values(members, "cluster")
    pair = row_of([column_values(pairs, "snapshot_id"), column_values(pairs, "cluster")],
                  [snapshot, cluster])
    compared = members.filter(pa.array(pair >= 0))
    pair = pair[pair >= 0]
    group, n_groups = key_codes(*(compared.column(k) for k in GROUP_KEYS))
    first = first_of(group, n_groups)
    k = len(strategies)
    of_row = np.repeat(first, k)  # a member row of each output row's group
    candidate = np.tile(np.array(strategies, dtype=object), n_groups)
    keys = [column_values(compared, c)[of_row] for c in GROUP_KEYS]
    at = row_of([column_values(figures, c) for c in [*GROUP_KEYS, "strategy"]], [*keys, candidate])
    found = pa.array(np.maximum(at, 0), pa.int64(), mask=at < 0)  # null: not found
    columns = {c: take(compared.column(c), of_row) for c in GROUP_KEYS}
    columns["previous_snapshot_id"] = take(pairs.column("previous_snapshot_id"),
                                           pair[of_row])
    columns["strategy"] = pa.array(candidate, pa.string())
    columns["actual_strategy"] = take(_actual_strategies(compared, group, n_groups),
                                      np.repeat(np.arange(n_groups), k))
    for name in ROWS_SCHEMA.names:
        if name in FIGURES_SCHEMA.names and name not in columns:
            value = figures.column(name).take(found)
            columns[name] = pc.fill_null(value, 0) if name in _ZEROED else value
    return pa.table([columns[f.name] for f in ROWS_SCHEMA], schema=ROWS_SCHEMA)


def _actual_strategies(members: pa.Table, group: np.ndarray, n_groups: int) -> pa.ListArray:
    """Per group code, the distinct strategies of its member rows, sorted by code point
    (as Spark sorts strings), nulls left out."""
    strategy = column_values(members, "strategy")
    named = np.flatnonzero(pd.notna(strategy))
    names, rank = np.unique(strategy[named].astype(str), return_inverse=True)
    combination, _ = key_codes(group[named], rank)
    distinct = np.unique(combination, return_index=True)[1]
    group_of, rank_of = group[named][distinct], rank[distinct]
    order = np.lexsort((rank_of, group_of))
    offsets = np.zeros(n_groups + 1, np.int32)
    np.cumsum(np.bincount(group_of, minlength=n_groups), out=offsets[1:])
    strategies = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                          pa.array(names[rank_of[order]], pa.string()))
    return strategies.cast(ROWS_SCHEMA.field("actual_strategy").type)
