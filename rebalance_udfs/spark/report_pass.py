"""The assign-and-report pass in Spark: one cogrouped Arrow call per bucket of groups
allocates the bucket's queues and computes every per-group report from the result
(`rebalance_udfs.report_pass`), so a group's rows are shuffled and converted once.

Buckets are by (cluster, consumer_group): every snapshot of a group is in one call, so
churn compares it with its predecessor there; the predecessor's rows from the output
tables (`History`) ride along, marked PRIOR, with the queue rows and the member rows.

A Spark query returns rows of one schema, and the pass returns several tables. The
assignment rows, its bulk, are the query's rows (PACKED_SCHEMA: the assignment columns
and `_table` ASSIGNMENTS); each other table comes out as one Arrow IPC stream per bucket
in a row of its own (`_table` its code, `_blob` the stream), which `unpack` turns back
into rows. Padding every row with the other tables' columns, as one struct per table
would, costs more than the tables themselves (a what-if row would carry about 300 bytes
of null consumer_load and group_balance columns). A last stream per bucket holds every
table's rows per (snapshot, cluster) (`pass_counts`): the `runs` table records them, and
no table has to be materialized to be counted. It also counts the groups the run warns
about and names the first few of them (`NAMED_KINDS`): with offsets, those whose lag
stays unknown (LAG_UNKNOWN); and the Kafka groups whose clients would assign by rack
(RACK_AWARE, `rebalance_udfs.racks`); and the groups that subscribe a topic with no
readable queue (EMPTY_TOPICS), each named with those topics; and the groups with offsets
rows and no member reading a queue (MEMBERLESS). The offsets rows no queue row took
(UNMATCHED_OFFSETS) are one more stream, which the run writes to `rejects`.

Members on a Kafka sticky assignor are chained snapshot after snapshot in the same call
(`_chained`, `rebalance_udfs.spark.sticky.chain_claims`): the bucket already holds every
snapshot of their groups and the predecessor's rows. With `--compare-strategies` the call
also computes the strategy comparison's rows of its groups (COMPARISON, one more side
table; `rebalance_udfs.spark.comparison`). `report` runs the same reports over
assignment rows computed elsewhere, bucketed alike, and returns them packed alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from rebalance_udfs.allocate import MEMBER_COLUMNS as KERNEL_MEMBER_COLUMNS
from rebalance_udfs.allocate import QUEUE_COLUMNS, allocate_bucket, decided_kernel
from rebalance_udfs.batch import batch_layout
from rebalance_udfs.churn_link import CLIENT_ROW_COLUMNS, PAIR_KEYS
from rebalance_udfs.churn_link import ROW_COLUMNS as PRIOR_ROW_COLUMNS
from rebalance_udfs.claim_facts import lag_of
from rebalance_udfs.comparison import ROWS_SCHEMA as COMPARISON_ROWS
from rebalance_udfs.exact import take
from rebalance_udfs.racks import rack_aware_groups
from rebalance_udfs.report_pass import MEMBER_COLUMNS as REPORT_MEMBER_COLUMNS
from rebalance_udfs.report_pass import OBSERVED, TABLES, report_bucket
from rebalance_udfs.spark.arrow import (
    GROUP_NOT_AUDITED,
    OFFSET_ROW,
    ROW,
    UNMATCHED_SCHEMA,
    claimed_rows,
    gather_assigned,
    kernel_claims,
    kernel_keys,
    split_offsets,
    subscribed_rows,
)
from rebalance_udfs.spark.assign import kernel_member_frame, queue_rows
from rebalance_udfs.spark.buckets import BUCKET, BUCKET_KEYS, bucketed
from rebalance_udfs.spark.churn import History, no_history, split_prior, with_prior
from rebalance_udfs.spark.comparison import Plan, bucket_comparison
from rebalance_udfs.spark.members import variant
from rebalance_udfs.spark.rates import exact_rate
from rebalance_udfs.spark.sticky import chain_claims
from rebalance_udfs.sticky_chain import chained_members
from vocabulary.columns import MODE_COLUMNS, OK, STICKY_STRATEGIES
from vocabulary.schemas import (
    ASSIGNED_ARROW_SCHEMA,
    ASSIGNED_SCHEMA,
    BALANCE_FIGURES_WITH_LINE,
    CHURN_TOTALS_SCHEMA,
    LOAD_FIGURES,
    WHAT_IF_SCHEMA,
)
from vocabulary.words import NAMED, listed

TABLE, BLOB = "_table", "_blob"
ASSIGNMENTS = 0
COMPARISON, COUNTS = "strategy_comparison", "counts"
# the offsets rows no queue row took (`rebalance_udfs.spark.arrow.split_offsets`): rows of
# `rejects`, not a table of their own
UNMATCHED_OFFSETS = "unmatched_offsets"
# groups counted beside the tables, and the first NAMED of them by name per (snapshot,
# cluster), one counts row each: when the pass has offsets, the groups with queues and no
# known lag; always, the Kafka groups whose clients would assign by rack, and the groups
# that subscribe a topic with no readable queue (their named rows' `detail`: the topics),
# and the groups whose offsets rows no queue took because no member of theirs reads one
LAG_UNKNOWN, LAG_NAMED = "lag_unknown_groups", "lag_unknown_named"
RACK_AWARE, RACK_NAMED = "rack_aware_groups", "rack_aware_named"
EMPTY_TOPICS, EMPTY_NAMED = "empty_topic_groups", "empty_topic_named"
MEMBERLESS, MEMBERLESS_NAMED = "memberless_groups", "memberless_named"
NAMED_KINDS = {LAG_NAMED: LAG_UNKNOWN, RACK_NAMED: RACK_AWARE, EMPTY_NAMED: EMPTY_TOPICS,
               MEMBERLESS_NAMED: MEMBERLESS}
# the topics a named group's `detail` lists; the others are counted
TOPICS_NAMED = 3
CODES = {name: code for code, name in enumerate([*TABLES, COMPARISON, COUNTS,
                                                 UNMATCHED_OFFSETS], start=1)}
COUNTS_SCHEMA = T.StructType([T.StructField("table", T.StringType(), False),
                              T.StructField("snapshot_id", T.StringType()),
                              T.StructField("cluster", T.StringType()),
                              T.StructField("rows", T.LongType(), False),
                              T.StructField("consumer_group", T.StringType()),
                              T.StructField("detail", T.StringType())])
SPARK_SCHEMAS = dict(zip([*TABLES, COMPARISON, COUNTS, UNMATCHED_OFFSETS],
                         (LOAD_FIGURES, BALANCE_FIGURES_WITH_LINE, WHAT_IF_SCHEMA,
                          CHURN_TOTALS_SCHEMA, from_arrow_schema(COMPARISON_ROWS),
                          COUNTS_SCHEMA, from_arrow_schema(UNMATCHED_SCHEMA)), strict=True))
PACKED_SCHEMA = T.StructType([*ASSIGNED_SCHEMA.fields,
                              T.StructField(TABLE, T.ByteType(), False),
                              T.StructField(BLOB, T.BinaryType(), True)])
_PACKED_ARROW = pa.schema([*ASSIGNED_ARROW_SCHEMA, pa.field(TABLE, pa.int8(), False),
                           pa.field(BLOB, pa.binary())])
# the rows' in_rate as an exact decimal (`rebalance_udfs.spark.rates`), made in Spark
RATE = "_rate"
# the side tables' streams, zstd-compressed: a 1M benchmark bucket's 18.6 MB of streams
# become 3.4 MB for about 20 ms of compression; every scan of the side rows (the counts,
# and each table as it is written) and the pass's own output read that many bytes less
_COMPRESSED = pa.ipc.IpcWriteOptions(compression="zstd")

Key = tuple[str | None, str | None]  # (snapshot_id, cluster)
Counts = dict[Key, int]


@dataclass(frozen=True)
class NamedGroups:
    """The groups of a snapshot and cluster the run warns about (with queues and no known
    lag; assigned by rack by their clients; subscribing a topic with no readable queue):
    how many, and the first `NAMED` by name, each as the warning shows it (the group, and
    its `detail` in brackets where it has one: `G (T9)`)."""

    groups: int
    first: list[str]


# ------------------------------------------------------------------------ packing tables
def pack(assigned: pa.Table, tables: dict[str, pa.Table], lag_expected: bool = False,
         racked: pa.Table | None = None) -> pa.Table:
    """Assignment rows (ASSIGNED_ARROW_SCHEMA) and the other tables of a bucket as
    PACKED_SCHEMA rows: a table with rows becomes one row holding its IPC stream (its
    assignment columns hold placeholders where they are declared not null), and a last
    one holds the rows of each (COUNTS), with, when `lag_expected` (the pass has
    offsets), its groups whose lag is unknown (LAG_UNKNOWN, `lag_unknown`) and the first
    of them (LAG_NAMED, `first_named`), its `racked` groups (RACK_AWARE,
    `rebalance_udfs.racks.rack_aware_groups`) and the first of them (RACK_NAMED), and its
    groups subscribing a topic with no readable queue (EMPTY_TOPICS, `empty_topics`) and
    the first of them with those topics (EMPTY_NAMED), and the groups of its
    UNMATCHED_OFFSETS rows that no member reads (MEMBERLESS, `memberless`) and the first
    of them (MEMBERLESS_NAMED)."""
    counted = {"assignments": assigned, **tables}
    named = {}
    if lag_expected and "group_balance" in tables:
        counted[LAG_UNKNOWN] = lag_unknown(tables["group_balance"])
        named[LAG_NAMED] = first_named(counted[LAG_UNKNOWN])
    if "group_balance" in tables:
        empty = empty_topics(tables["group_balance"])
        if empty.num_rows:
            counted[EMPTY_TOPICS] = empty
            named[EMPTY_NAMED] = first_named(empty)
    if racked is not None and racked.num_rows:
        counted[RACK_AWARE] = racked
        named[RACK_NAMED] = first_named(racked)
    unmatched = tables.get(UNMATCHED_OFFSETS)
    if unmatched is not None and unmatched.num_rows:
        gone = memberless(unmatched)
        if gone.num_rows:
            counted[MEMBERLESS] = gone
            named[MEMBERLESS_NAMED] = first_named(gone)
    tables = {**tables, COUNTS: _counts(counted, named)}
    codes, blobs = [], []
    for name, table in tables.items():
        if table.num_rows:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema, options=_COMPRESSED) as writer:
                writer.write_table(table)
            codes.append(CODES[name])
            blobs.append(sink.getvalue().to_pybytes())
    rows = assigned.append_column(
        pa.field(TABLE, pa.int8(), False), pa.array([ASSIGNMENTS] * assigned.num_rows, pa.int8())
    ).append_column(pa.field(BLOB, pa.binary()), pa.nulls(assigned.num_rows, pa.binary()))
    if not codes:
        return rows.cast(_PACKED_ARROW)
    filler = {f.name: pa.array([_placeholder(f.type)] * len(codes), f.type)
              if not f.nullable else pa.nulls(len(codes), f.type)
              for f in ASSIGNED_ARROW_SCHEMA}
    side = pa.table({**filler, TABLE: pa.array(codes, pa.int8()),
                     BLOB: pa.array(blobs, pa.binary())})
    return pa.concat_tables([rows.cast(_PACKED_ARROW), side.cast(_PACKED_ARROW)])


def lag_unknown(balance: pa.Table) -> pa.Table:
    """The whole-group rows of group_balance of groups with queues whose lag is unknown:
    none of their queues has both a committed offset and a max offset (`lag_total` is
    null only then)."""
    return balance.filter(pc.and_(pc.and_(pc.is_null(balance.column("topic")),
                                          pc.greater(balance.column("queues"), 0)),
                                  pc.is_null(balance.column("lag_total"))))


def empty_topics(balance: pa.Table) -> pa.Table:
    """The groups of group_balance's whole-group rows that subscribe a topic with no
    readable queue (`_empty_topics`: the topic rows with 0 queues, which the
    recommendation names; no finding code says so), with `detail`: the first
    TOPICS_NAMED of those topics, sorted, and how many more."""
    whole = balance.filter(pc.is_null(balance.column("topic")))
    whole = whole.filter(pc.fill_null(pc.greater(pc.list_value_length(
        whole.column("_empty_topics")), 0), False))
    topics = whole.column("_empty_topics").to_pylist()
    return pa.table({"snapshot_id": whole.column("snapshot_id"),
                     "cluster": whole.column("cluster"),
                     "consumer_group": whole.column("consumer_group"),
                     "detail": pa.array([listed(t[:TOPICS_NAMED], len(t)) for t in topics],
                                        pa.string())})


def memberless(unmatched: pa.Table) -> pa.Table:
    """The groups, once per snapshot and cluster, of the offsets rows no queue took
    because the group has no queue to audit (UNMATCHED_SCHEMA rows of reason
    GROUP_NOT_AUDITED): every member of theirs gone, or none subscribing a topic the
    queues table has. A bucket holds all of a group's rows, so counting them per bucket
    counts each once."""
    left = unmatched.filter(pc.and_(pc.equal(unmatched.column("reason"), GROUP_NOT_AUDITED),
                                    pc.is_valid(unmatched.column("consumer_group"))))
    return left.select(["snapshot_id", "cluster", "consumer_group"]).group_by(
        ["snapshot_id", "cluster", "consumer_group"], use_threads=False).aggregate([])


def first_named(groups: pa.Table, n: int = NAMED) -> pa.Table:
    """The first `n` consumer groups by name per (snapshot_id, cluster) of `groups` (rows
    with those columns, a group once per snapshot and cluster), with their `detail` (null
    where `groups` has none)."""
    if "detail" not in groups.column_names:
        groups = groups.append_column("detail", pa.nulls(groups.num_rows, pa.string()))
    lists = groups.select(["snapshot_id", "cluster", "consumer_group", "detail"]).sort_by(
        [(c, "ascending") for c in ("snapshot_id", "cluster", "consumer_group")]
    ).group_by(["snapshot_id", "cluster"], use_threads=False).aggregate(
        [("consumer_group", "list"), ("detail", "list")])
    first = pc.list_slice(lists.column("consumer_group_list"), 0, n)
    owner = pc.list_parent_indices(first)
    return pa.table({"snapshot_id": pc.take(lists.column("snapshot_id"), owner),
                     "cluster": pc.take(lists.column("cluster"), owner),
                     "consumer_group": pc.list_flatten(first),
                     "detail": pc.list_flatten(pc.list_slice(lists.column("detail_list"),
                                                             0, n))})


def _counts(tables: dict[str, pa.Table], named: dict[str, pa.Table] | None = None
            ) -> pa.Table:
    """Rows per (table, snapshot_id, cluster) of `tables`, and a row (rows 1) per group of
    each `named` table (`first_named`), under its name (LAG_NAMED, RACK_NAMED,
    EMPTY_NAMED), with its `detail`."""
    parts = []
    for name, table in tables.items():
        if table.num_rows:
            n = table.group_by(["snapshot_id", "cluster"], use_threads=False).aggregate(
                [([], "count_all")])
            parts.append(pa.table({"table": pa.array([name] * n.num_rows, pa.string()),
                                   "snapshot_id": n.column("snapshot_id"),
                                   "cluster": n.column("cluster"),
                                   "rows": n.column("count_all"),
                                   "consumer_group": pa.nulls(n.num_rows, pa.string()),
                                   "detail": pa.nulls(n.num_rows, pa.string())}))
    for kind, groups in (named or {}).items():
        if groups.num_rows:
            parts.append(pa.table({"table": pa.array([kind] * groups.num_rows, pa.string()),
                                   "snapshot_id": groups.column("snapshot_id"),
                                   "cluster": groups.column("cluster"),
                                   "rows": pa.array([1] * groups.num_rows, pa.int64()),
                                   "consumer_group": groups.column("consumer_group"),
                                   "detail": groups.column("detail")}))
    schema = pa.schema([pa.field("table", pa.string(), False), ("snapshot_id", pa.string()),
                        ("cluster", pa.string()), pa.field("rows", pa.int64(), False),
                        ("consumer_group", pa.string()), ("detail", pa.string())])
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts).cast(schema)


def _placeholder(type_: pa.DataType):
    if pa.types.is_string(type_):
        return ""
    if pa.types.is_boolean(type_):
        return False
    return 0


def assignment_rows(packed: DataFrame) -> DataFrame:
    """The assignment rows of a packed frame (ASSIGNED_SCHEMA)."""
    return packed.where(F.col(TABLE) == ASSIGNMENTS).select(*ASSIGNED_SCHEMA.fieldNames())


def side_rows(packed: DataFrame) -> DataFrame:
    """The rows of a packed frame that hold side tables (a few per bucket): what
    `unpack` and `pass_counts` read, kept apart from the assignment rows so that reading
    a table does not scan them."""
    return packed.where(F.col(TABLE) != ASSIGNMENTS).select(TABLE, BLOB)


def unpack(packed: DataFrame, name: str, tasks: int | None = None) -> DataFrame:
    """The rows of table `name` (one of `rebalance_udfs.report_pass.TABLES`, or
    COMPARISON) of a packed frame or its `side_rows`, in its Spark schema
    (`SPARK_SCHEMAS`), decoded in `tasks` tasks when given (at most the frame's
    partitions).

    The streams are gathered into those tasks before they are decoded: every partition
    that decodes its own pays a round trip through a Python worker (about 50 ms of a
    core, measured with nearly empty streams) and writes files of its own, so one per
    bucket of the pass (10M: 73) cost several seconds a table."""
    blobs = packed.where(F.col(TABLE) == CODES[name]).select(BLOB)
    if tasks is not None:
        blobs = blobs.coalesce(max(1, tasks))
    return blobs.mapInArrow(_read_streams, SPARK_SCHEMAS[name])


def pass_counts(packed: DataFrame
                ) -> tuple[dict[str, Counts], dict[str, dict[Key, NamedGroups]]]:
    """Rows per (snapshot_id, cluster) of every table of a packed frame, assignments
    included, and the groups of each of NAMED_KINDS (LAG_UNKNOWN: only when the pass had
    offsets; RACK_AWARE; EMPTY_TOPICS; MEMBERLESS): a few rows per bucket to the
    driver."""
    kinds = list(NAMED_KINDS.values())
    out: dict[str, Counts] = {name: {} for name in ("assignments", *TABLES, COMPARISON,
                                                    UNMATCHED_OFFSETS, *kinds)}
    named: dict[str, dict[Key, list[tuple[str, str | None]]]] = {kind: {} for kind in kinds}
    cores = packed.sparkSession.sparkContext.defaultParallelism
    totals = unpack(packed, COUNTS, cores).groupBy(
        "table", "snapshot_id", "cluster", "consumer_group", "detail").agg(
        F.sum("rows").alias("rows"))
    for r in totals.collect():
        if r.table in NAMED_KINDS:
            named[NAMED_KINDS[r.table]].setdefault((r.snapshot_id, r.cluster), []).append(
                (r.consumer_group, r.detail))
        else:
            out[r.table][(r.snapshot_id, r.cluster)] = int(r.rows)

    def shown(groups: list[tuple[str, str | None]]) -> list[str]:
        return [g if d is None else f"{g} ({d})"
                for g, d in sorted(groups, key=lambda x: x[0])[:NAMED]]

    return out, {kind: {key: NamedGroups(n, shown(named[kind].get(key, [])))
                        for key, n in out.pop(kind).items()} for kind in kinds}


def _read_streams(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for blob in batch.column(0):
            yield from pa.ipc.open_stream(blob.as_buffer())


# --------------------------------------------------------------------------- the UDFs
def _report_rows(assigned: pa.Table, rate: pa.Array | pa.ChunkedArray) -> pa.Table:
    """The assignment rows with what the reports read besides: lag and the exact rate."""
    return (assigned.append_column("lag", lag_of(assigned.column("max_offset"),
                                                 assigned.column("committed_offset")))
            .append_column("rate", rate))


Body = Callable[[pa.Table, pa.Table], pa.Table]
# a bucket's queue rows (offsets attached), its member rows as the kernels take them and
# the predecessor's rows (or None) in; its assignment rows and their reports' rows
# (`_report_rows`) out
Assign = Callable[[pa.Table, pd.DataFrame, pa.Table | None], tuple[pa.Table, pa.Table]]
# what the predecessor's rows carry when sticky groups are chained from them
CHAINED_PRIOR_COLUMNS = [*PRIOR_ROW_COLUMNS, "strategy"]


def _reported(what_if: str, history: History | None, assign: Assign,
              prior_columns: list[str] = PRIOR_ROW_COLUMNS,
              comparison: Plan | None = None) -> Body:
    """A UDF body: `assign` gives the bucket's assignment rows and their reports' rows;
    the reports are computed (the strategy comparison's rows too, with a `comparison`
    plan) and all packed."""
    pairs = history.pairs.select(PAIR_KEYS) if history is not None else None
    prior_load = history is not None and history.consumer_load is not None

    def body(queues: pa.Table, members: pa.Table) -> pa.Table:
        queues, prior_rows = split_prior(queues, prior_columns)
        members, prior_clients = split_prior(members, CLIENT_ROW_COLUMNS)
        has_offsets = OFFSET_ROW in queues.column_names
        queues, unmatched = split_offsets(queues)
        frame = kernel_member_frame(members)
        racked = rack_aware_groups(queues, members)
        assigned, rows = assign(queues, frame, prior_rows)
        if prior_rows is not None:
            prior_rows = prior_rows.select(PRIOR_ROW_COLUMNS)
        tables = report_bucket(rows, members, what_if, pairs, prior_rows,
                               prior_clients if prior_load else None)
        if comparison is not None:
            tables[COMPARISON] = bucket_comparison(queues, frame, members, comparison)
        tables[UNMATCHED_OFFSETS] = unmatched
        return pack(assigned, tables, lag_expected=has_offsets, racked=racked)
    return body


def _allocate(queues: pa.Table, members: pd.DataFrame, _prior_rows: pa.Table | None = None
              ) -> tuple[pa.Table, pa.Table]:
    """The batch kernels on one bucket's queue rows."""
    return _rows(queues, kernel_claims(queues, QUEUE_COLUMNS, members, allocate_bucket))


def _rows(queues: pa.Table, claims: pd.DataFrame) -> tuple[pa.Table, pa.Table]:
    """The assignment rows of a kernel's `claims` on `queues` (offsets attached), and
    their reports' rows."""
    assigned = gather_assigned(queues, claims)
    return assigned, _report_rows(assigned, take(queues.column(RATE), claimed_rows(claims)))


def _chained(order: pa.Table) -> Assign:
    """The kernels of a pass where some groups run the Kafka sticky assignors: the sticky
    chain (`rebalance_udfs.spark.sticky.chain_claims`, from `order` and the predecessor's
    rows) decides the sticky members' claims, over the units they subscribe and among
    themselves, and the batch kernels run every other member's strategy over all the
    members, as for any group whose members run different strategies; both enter one
    batch (`decided_kernel`), so a queue is counted once and a queue claimed by a sticky
    member and by another is CONTENDED. A bucket without sticky members is
    `_allocate`'s."""
    def assign(queues: pa.Table, frame: pd.DataFrame, prior_rows: pa.Table | None
               ) -> tuple[pa.Table, pa.Table]:
        sticky = frame["strategy"].isin(STICKY_STRATEGIES).to_numpy(bool)
        if not sticky.any():
            return _allocate(queues, frame)
        mine = chained_members(frame)
        part = np.flatnonzero(subscribed_rows(queues, mine))
        chained = chain_claims(queues.take(pa.array(part)), mine, prior_rows, order)
        chained = chained[chained["client_id"].notna() & (chained["status"] == OK)]
        keys = kernel_keys(queues, QUEUE_COLUMNS)
        layout = batch_layout(keys, frame)
        position = np.empty(len(keys), np.int64)
        position[layout.queues[ROW].to_numpy(np.int64)] = np.arange(len(keys))
        decided = decided_kernel(position[part[claimed_rows(chained)]],
                                 chained["client_id"].to_numpy(object))
        return _rows(queues, allocate_bucket(keys, frame, layout,
                                             dict.fromkeys(STICKY_STRATEGIES, decided)))
    return assign


def _given(rows: pa.Table, _members: pd.DataFrame, _prior_rows: pa.Table | None = None
           ) -> tuple[pa.Table, pa.Table]:
    """Assignment rows computed elsewhere (with RATE), as they are."""
    assigned = rows.select(ASSIGNED_ARROW_SCHEMA.names).cast(ASSIGNED_ARROW_SCHEMA)
    return assigned, _report_rows(assigned, rows.column(RATE))


def report_members(members: DataFrame) -> DataFrame:
    """What the pass reads of the member rows: the kernels', the reports' and, when
    present, the allocation modes and OBSERVED."""
    optional = [c for c in (*MODE_COLUMNS, OBSERVED) if c in members.columns]
    wanted = list(dict.fromkeys([*KERNEL_MEMBER_COLUMNS, *REPORT_MEMBER_COLUMNS, *optional]))
    return members.withColumn("variant", variant(members.columns)).select(*wanted)


def _packed(queue_side: DataFrame, members: DataFrame, buckets: int, body: Body,
            history: History | None, prior_columns: list[str] = PRIOR_ROW_COLUMNS
            ) -> DataFrame:
    prior = history or no_history()
    queue_side = with_prior(queue_side, prior.assignments, prior_columns)
    member_side = with_prior(report_members(members), prior.consumer_load,
                             CLIENT_ROW_COLUMNS)
    return (bucketed(queue_side, buckets, BUCKET_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(member_side, buckets, BUCKET_KEYS).groupBy(BUCKET))
            .applyInArrow(body, PACKED_SCHEMA))


def assign_and_report(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                      buckets: int, what_if: str, history: History | None = None,
                      chain: pa.Table | None = None, comparison: Plan | None = None,
                      broadcast_subscriptions: bool = False) -> DataFrame:
    """PACKED_SCHEMA rows of every group of `members`: its assignment rows and its reports
    (`report_bucket`; churn when `history` is given), one call per bucket of groups.

    Without `chain` no member runs a sticky assignor and the batch kernels
    (`allocate_bucket`) assign every queue. With it (`chain_order` of the run's snapshots,
    collected), the sticky members' queues are chained snapshot after snapshot in the same
    call (`_chained`), from the predecessor's rows riding along for churn, which then carry
    their strategy too: a sticky group's rows are shuffled once, like any other's. With a
    `comparison` plan the call computes the strategy comparison's rows (COMPARISON) of its
    groups from the same rows (`rebalance_udfs.spark.comparison.bucket_comparison`).
    `broadcast_subscriptions`: see `rebalance_udfs.spark.assign.queue_rows`."""
    rows = queue_rows(queues, members, offsets, exact_rate(F.col("in_rate")).alias(RATE),
                      broadcast_subscriptions=broadcast_subscriptions)
    if chain is None:
        return _packed(rows, members, buckets,
                       _reported(what_if, history, _allocate, comparison=comparison), history)
    return _packed(rows, members, buckets,
                   _reported(what_if, history, _chained(chain), CHAINED_PRIOR_COLUMNS,
                             comparison),
                   history, CHAINED_PRIOR_COLUMNS)


def report(assigned: DataFrame, members: DataFrame, buckets: int, what_if: str,
           history: History | None = None) -> DataFrame:
    """PACKED_SCHEMA rows of assignment rows computed elsewhere (ASSIGNED_SCHEMA): the rows
    themselves and their groups' reports (`report_bucket`)."""
    rows = assigned.select(*ASSIGNED_SCHEMA.fieldNames(),
                           exact_rate(F.col("in_rate")).alias(RATE))
    return _packed(rows, members, buckets, _reported(what_if, history, _given), history)
