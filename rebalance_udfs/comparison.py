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
from rebalance_udfs.key_codes import key_codes
from vocabulary.columns import CLAIM_STATUSES, CLUSTERING, GROUP_KEYS

# one row per (snapshot with a predecessor in the run, cluster, group, candidate)
FIGURES_SCHEMA = pa.schema([
    ("snapshot_id", pa.string()), ("cluster", pa.string()), ("consumer_group", pa.string()),
    ("strategy", pa.string()), ("queues", pa.int32()), ("moves", pa.int32()),
    ("estimated_duplicates", pa.int64()), ("duplicates_known_moves", pa.int32()),
    ("max_client_queues", pa.int32()),
])

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
