"""The rows rebalance_churn compares, linked in the report pass: each assignment row and
client row of a compared pair of snapshots, keyed by the later snapshot of the pair.

The report pass holds every snapshot of its groups (its buckets are by cluster and
group), and the rows of the snapshot before the run's first one come along from the
output tables, so each pair's two sides meet in one call. `churn_inputs` gives what
`rebalance_udfs.churn.churn_totals` reads. The definitions are rebalance_churn's
(`reports.rebalance_churn`; its Spark linking is kept as the tests' oracle):

* `pairs`: each run snapshot with a predecessor (`rebalance_udfs.spark.snapshot_order`);
  a run's row is on the AFTER side of its own snapshot's pair and on the BEFORE side of
  the pair whose predecessor it is; a prior row only on the BEFORE side of a pair whose
  predecessor is not in the run;
* a queue's claimants are its clustering claims (status OK, CONTENDED or SHARED); the
  duplicate estimate of a BEFORE claim is consumed - committed, at least 0, where both
  are known; a SHARED claim is marked (`churn.SHARED_CLAIM`);
* a client's topics and strategies are compared as one string each (null: unknown, as
  for the clients of a predecessor known only by its assignment rows).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.churn import (
    AFTER,
    BEFORE,
    CLIENT_COLUMNS,
    DUPLICATES,
    EAGER,
    QUEUE_COLUMNS,
    SHARED_CLAIM,
    SIDE,
    STRATEGIES,
    TOPICS,
)
from rebalance_udfs.exact import single_chunk
from vocabulary.columns import CLAIM_STATUSES, EAGER_ASSIGNORS, GROUP_KEYS, SHARED

# the pairs the pass is told of: per cluster, a run snapshot and its predecessor
PAIR_KEYS = ["cluster", "snapshot_id", "previous_snapshot_id", "previous_in_run"]
# what churn reads of an assignment row, and of a client row (consumer_load's)
ROW_COLUMNS = [*GROUP_KEYS, "topic", "broker_name", "queue_id", "client_id", "status",
               "committed_offset", "consumed_offset"]
CLIENT_ROW_COLUMNS = [*GROUP_KEYS, "client_id", "topics", "strategies"]
_SOURCE, _FROM_RUN, _LATER = "_source", "_from_run", "_later"


def churn_inputs(rows: pa.Table, clients: pa.Table, prior_rows: pa.Table | None,
                 prior_clients: pa.Table | None, pairs: pa.Table
                 ) -> tuple[pa.Table, pa.Table]:
    """(QUEUE_COLUMNS, CLIENT_COLUMNS) rows of every compared pair.

    `rows` / `clients`: this run's assignment rows (ROW_COLUMNS) and consumer_load rows
    (CLIENT_ROW_COLUMNS); `prior_rows` / `prior_clients`: the predecessor's from the
    output (None when there is none; without `prior_clients` the claimants of
    `prior_rows` stand in, their topics and strategies unknown); `pairs`: PAIR_KEYS."""
    if prior_rows is not None and prior_clients is None:
        prior_clients = _claimants(prior_rows)
    links = _links(pairs)
    queues = _linked(rows.select(ROW_COLUMNS), _select(prior_rows, ROW_COLUMNS), links)
    side = queues.column(SIDE)
    client = queues.column("client_id")
    claim = pc.and_(pc.is_valid(client),
                    pc.is_in(queues.column("status"), pa.array(CLAIM_STATUSES)))
    claim = pc.fill_null(claim, False)
    before = pc.and_(pc.equal(side, BEFORE), claim)
    queues = pa.table({
        **{k: queues.column(k) for k in GROUP_KEYS}, SIDE: side,
        **{k: queues.column(k) for k in ("topic", "broker_name", "queue_id")},
        "client_id": pc.if_else(claim, client, pa.scalar(None, pa.string())),
        DUPLICATES: _duplicates(queues, before),
        SHARED_CLAIM: pc.fill_null(pc.and_(claim, pc.equal(queues.column("status"), SHARED)),
                                   False),
    })
    clients = _linked(_client_keys(clients), _client_keys(prior_clients), links)
    return queues.select(QUEUE_COLUMNS), clients.select(CLIENT_COLUMNS)


def _select(table: pa.Table | None, columns: list[str]) -> pa.Table | None:
    return None if table is None else table.select(columns)


def _client_keys(clients: pa.Table | None) -> pa.Table | None:
    """Client rows with their topics and strategies as comparable strings, and whether
    the client runs an eager Kafka assignor."""
    if clients is None:
        return None
    return pa.table({**{k: clients.column(k) for k in (*GROUP_KEYS, "client_id")},
                     TOPICS: _comparable(clients.column("topics")),
                     STRATEGIES: _comparable(clients.column("strategies")),
                     EAGER: _runs_any(clients.column("strategies"), EAGER_ASSIGNORS)})


def _links(pairs: pa.Table) -> pa.Table:
    """Per pair: its own snapshot (a run row, AFTER) and its predecessor (BEFORE; a run
    row when the predecessor is in the run, else a prior row), keyed by the source."""
    later = single_chunk(pairs.column("snapshot_id"))
    n = pairs.num_rows
    return pa.table({
        "cluster": pa.concat_arrays([single_chunk(pairs.column("cluster"))] * 2),
        _SOURCE: pa.concat_arrays([later, single_chunk(pairs.column("previous_snapshot_id"))]),
        _FROM_RUN: pa.concat_arrays([pa.array(np.ones(n, np.int8)),
                                     single_chunk(pc.cast(pairs.column("previous_in_run"),
                                                          pa.int8()))]),
        _LATER: pa.concat_arrays([later] * 2),
        SIDE: pa.array(np.r_[np.full(n, AFTER, np.int8), np.full(n, BEFORE, np.int8)]),
    })


def _linked(run: pa.Table, prior: pa.Table | None, links: pa.Table) -> pa.Table:
    """The rows of `run` and `prior` of every link, with snapshot_id the pair's later one
    and SIDE (a row may belong to two pairs: after its own, before the next)."""
    tables = [run.append_column(_FROM_RUN, pa.array(np.ones(run.num_rows, np.int8)))]
    if prior is not None:
        tables.append(prior.append_column(_FROM_RUN,
                                          pa.array(np.zeros(prior.num_rows, np.int8))))
    rows = pa.concat_tables(tables, promote_options="permissive").rename_columns(
        [_SOURCE if c == "snapshot_id" else c for c in tables[0].column_names])
    out = rows.join(links, [_SOURCE, "cluster", _FROM_RUN], join_type="inner",
                    use_threads=False)
    return out.rename_columns(["snapshot_id" if c == _LATER else c for c in out.column_names])


def _duplicates(rows: pa.Table, before: pa.ChunkedArray) -> pa.Array:
    """consumed - committed, at least 0, on BEFORE claims where both are known."""
    consumed, committed = rows.column("consumed_offset"), rows.column("committed_offset")
    known = _bools(pc.and_(before, pc.and_(pc.is_valid(consumed), pc.is_valid(committed))))
    a = np.asarray(pc.fill_null(consumed, 0).to_numpy(zero_copy_only=False), np.int64)
    b = np.asarray(pc.fill_null(committed, 0).to_numpy(zero_copy_only=False), np.int64)
    with np.errstate(over="ignore"):
        diff = a - b
    if (known & (((a ^ b) & (a ^ diff)) < 0)).any():
        raise OverflowError("consumed_offset - committed_offset is beyond a long")
    return pa.array(np.where(known, np.maximum(diff, 0), 0), pa.int64(), mask=~known)


def _claimants(rows: pa.Table) -> pa.Table:
    """The predecessor's clients when only its assignment rows are known: every client id
    on them, topics and strategies unknown."""
    named = rows.filter(pc.is_valid(rows.column("client_id")))
    ids = named.group_by([*GROUP_KEYS, "client_id"], use_threads=False).aggregate([])
    strings = pa.list_(pa.string())
    return ids.append_column("topics", pa.nulls(ids.num_rows, strings)).append_column(
        "strategies", pa.nulls(ids.num_rows, strings))


def _runs_any(lists: pa.ChunkedArray, names: tuple[str, ...]) -> pa.Array:
    """Per list whether it holds one of `names` (false for a null list)."""
    lists = single_chunk(lists)
    hit = _bools(pc.is_in(pc.list_flatten(lists), pa.array(names)))
    out = np.zeros(len(lists), bool)
    out[np.asarray(pc.list_parent_indices(lists).to_numpy(zero_copy_only=False))[hit]] = True
    return pa.array(out)


def _comparable(lists: pa.ChunkedArray) -> pa.Array:
    """One string per list, equal only for equal lists (each element prefixed with its
    length, so no character of a name can fake a separator); null for a null list."""
    lists = single_chunk(lists)
    values = lists.values
    tagged = pc.binary_join_element_wise(pc.cast(pc.utf8_length(values), pa.string()),
                                         values, ":")
    rebuilt = pa.ListArray.from_arrays(lists.offsets, tagged, mask=pc.is_null(lists))
    return pc.binary_join(rebuilt, ",")


def _bools(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), bool)
