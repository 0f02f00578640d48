"""The assign-and-report pass in Spark: one cogrouped Arrow call per bucket of groups
allocates the bucket's queues and computes every per-group report from the result
(`rebalance_udfs.report_pass`), so a group's rows are shuffled and converted once.

A Spark query returns rows of one schema, and the pass returns four tables. The
assignment rows, its bulk, are the query's rows (PACKED_SCHEMA: the assignment columns
and `_table` ASSIGNMENTS); each other table comes out as one Arrow IPC stream per bucket
in a row of its own (`_table` its code, `_blob` the stream), which `unpack` turns back
into rows. Padding every row with the other tables' columns, as one struct per table
would, costs more than the tables themselves (a what-if row would carry about 300 bytes
of null consumer_load and group_balance columns).

Groups with a sticky assignor get their assignment rows from another kernel
(`rebalance_udfs.spark.sticky`): `report` runs the same reports over such rows, bucketed
by group, and returns them packed alike.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from rebalance_udfs.allocate import MEMBER_COLUMNS as KERNEL_MEMBER_COLUMNS
from rebalance_udfs.allocate import QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.claim_facts import lag_of
from rebalance_udfs.exact import take
from rebalance_udfs.report_pass import MEMBER_COLUMNS as REPORT_MEMBER_COLUMNS
from rebalance_udfs.report_pass import OBSERVED, TABLES, report_bucket
from rebalance_udfs.spark.arrow import (
    attach_offsets,
    claimed_rows,
    gather_assigned,
    kernel_claims,
)
from rebalance_udfs.spark.assign import queue_rows
from rebalance_udfs.spark.buckets import BUCKET, bucketed
from rebalance_udfs.spark.members import variant
from rebalance_udfs.spark.rates import exact_rate
from vocabulary.columns import GROUP_KEYS, MODE_COLUMNS
from vocabulary.schemas import (
    ASSIGNED_ARROW_SCHEMA,
    ASSIGNED_SCHEMA,
    BALANCE_FIGURES_WITH_LINE,
    LOAD_FIGURES,
    WHAT_IF_SCHEMA,
)

TABLE, BLOB = "_table", "_blob"
ASSIGNMENTS = 0
CODES = {name: code for code, name in enumerate(TABLES, start=1)}
SPARK_SCHEMAS = dict(zip(TABLES, (LOAD_FIGURES, BALANCE_FIGURES_WITH_LINE, WHAT_IF_SCHEMA),
                         strict=True))
PACKED_SCHEMA = T.StructType([*ASSIGNED_SCHEMA.fields,
                              T.StructField(TABLE, T.ByteType(), False),
                              T.StructField(BLOB, T.BinaryType(), True)])
_PACKED_ARROW = pa.schema([*ASSIGNED_ARROW_SCHEMA, pa.field(TABLE, pa.int8(), False),
                           pa.field(BLOB, pa.binary())])
# the rows' in_rate as an exact decimal (`rebalance_udfs.spark.rates`), made in Spark
RATE = "_rate"


# ------------------------------------------------------------------------ packing tables
def pack(assigned: pa.Table, tables: dict[str, pa.Table]) -> pa.Table:
    """Assignment rows (ASSIGNED_ARROW_SCHEMA) and the other tables of a bucket as
    PACKED_SCHEMA rows: a table with rows becomes one row holding its IPC stream (its
    assignment columns hold placeholders where they are declared not null)."""
    codes, blobs = [], []
    for name, table in tables.items():
        if table.num_rows:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
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


def _placeholder(type_: pa.DataType):
    if pa.types.is_string(type_):
        return ""
    if pa.types.is_boolean(type_):
        return False
    return 0


def assignment_rows(packed: DataFrame) -> DataFrame:
    """The assignment rows of a packed frame (ASSIGNED_SCHEMA)."""
    return packed.where(F.col(TABLE) == ASSIGNMENTS).select(*ASSIGNED_SCHEMA.fieldNames())


def unpack(packed: DataFrame, name: str) -> DataFrame:
    """The rows of table `name` (one of `rebalance_udfs.report_pass.TABLES`) of a packed
    frame, in its Spark schema (`SPARK_SCHEMAS`)."""
    return (packed.where(F.col(TABLE) == CODES[name]).select(BLOB)
            .mapInArrow(_read_streams, SPARK_SCHEMAS[name]))


def _read_streams(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for blob in batch.column(0):
            yield from pa.ipc.open_stream(blob.as_buffer())


# --------------------------------------------------------------------------- the UDFs
def _kernel_members(members: pa.Table):
    modes = [c for c in MODE_COLUMNS if c in members.column_names]
    return members.select([*KERNEL_MEMBER_COLUMNS, *modes]).to_pandas()


def _report_rows(assigned: pa.Table, rate: pa.Array | pa.ChunkedArray) -> pa.Table:
    """The assignment rows with what the reports read besides: lag and the exact rate."""
    return (assigned.append_column("lag", lag_of(assigned.column("max_offset"),
                                                 assigned.column("committed_offset")))
            .append_column("rate", rate))


def assign_and_report_body(what_if: str):
    """The UDF body of `assign_and_report`: one bucket's queue rows (with their offsets
    rows, `attach_offsets`) and member rows in, its packed tables out."""
    def body(queues: pa.Table, members: pa.Table) -> pa.Table:
        queues = attach_offsets(queues.drop_columns([BUCKET]))
        members = members.drop_columns([BUCKET])
        claims = kernel_claims(queues, QUEUE_COLUMNS, _kernel_members(members),
                               allocate_bucket)
        assigned = gather_assigned(queues, claims)
        rate = take(queues.column(RATE), claimed_rows(claims))
        return pack(assigned, report_bucket(_report_rows(assigned, rate), members, what_if))
    return body


def report_body(what_if: str):
    """The UDF body of `report`: one bucket's assignment rows (with RATE) and member rows
    in, the same rows and the bucket's reports packed out."""
    def body(rows: pa.Table, members: pa.Table) -> pa.Table:
        assigned = rows.select(ASSIGNED_ARROW_SCHEMA.names).cast(ASSIGNED_ARROW_SCHEMA)
        members = members.drop_columns([BUCKET])
        return pack(assigned, report_bucket(_report_rows(assigned, rows.column(RATE)),
                                            members, what_if))
    return body


def report_members(members: DataFrame) -> DataFrame:
    """What the pass reads of the member rows: the kernels', the reports' and, when
    present, the allocation modes and OBSERVED."""
    optional = [c for c in (*MODE_COLUMNS, OBSERVED) if c in members.columns]
    wanted = list(dict.fromkeys([*KERNEL_MEMBER_COLUMNS, *REPORT_MEMBER_COLUMNS, *optional]))
    return members.withColumn("variant", variant()).select(*wanted)


def report(assigned: DataFrame, members: DataFrame, buckets: int, what_if: str
           ) -> DataFrame:
    """PACKED_SCHEMA rows of assignment rows computed elsewhere (ASSIGNED_SCHEMA, e.g. the
    sticky kernel's): the rows themselves and their groups' reports (`report_bucket`)."""
    rows = assigned.select(*ASSIGNED_SCHEMA.fieldNames(),
                           exact_rate(F.col("in_rate")).alias(RATE))
    return (bucketed(rows, buckets, GROUP_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(report_members(members), buckets, GROUP_KEYS).groupBy(BUCKET))
            .applyInArrow(report_body(what_if), PACKED_SCHEMA))



def assign_and_report(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                      buckets: int, what_if: str) -> DataFrame:
    """PACKED_SCHEMA rows of every group of `members` (none with a sticky assignor): its
    assignment rows (`allocate_bucket`) and its reports (`report_bucket`), one call per
    bucket of groups."""
    rows = queue_rows(queues, members, offsets, exact_rate(F.col("in_rate")).alias(RATE))
    return (bucketed(rows, buckets, GROUP_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(report_members(members), buckets, GROUP_KEYS).groupBy(BUCKET))
            .applyInArrow(assign_and_report_body(what_if), PACKED_SCHEMA))
