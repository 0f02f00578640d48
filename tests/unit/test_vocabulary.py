"""The shared schemas: the Arrow twin the UDF bodies return, and the column lists the
pure kernels produce, agree with the Spark schemas the glue declares."""

from __future__ import annotations

import pyarrow as pa

from rebalance_udfs.what_if import COLUMNS as WHAT_IF_KERNEL_COLUMNS
from vocabulary.columns import DRIFT_COLUMNS
from vocabulary.schemas import (
    ASSIGNED_ARROW_SCHEMA,
    ASSIGNED_SCHEMA,
    DRIFT_SCHEMA,
    WHAT_IF_SCHEMA,
)


def test_assigned_arrow_schema_is_the_spark_schema_field_by_field() -> None:
    s, i, n, d, b = pa.string(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()
    expected = pa.schema([
        pa.field("snapshot_id", s, False), pa.field("cluster", s, False),
        pa.field("consumer_group", s, False), pa.field("topic", s, False),
        pa.field("broker_name", s, True), pa.field("queue_id", i, False),
        pa.field("broker_room", s, True), pa.field("max_offset", n, True),
        pa.field("in_rate", d, True), pa.field("committed_offset", n, True),
        pa.field("consumed_offset", n, True), pa.field("client_id", s, True),
        pa.field("strategy", s, True), pa.field("status", s, False),
        pa.field("queue_first", b, False),
    ])
    assert ASSIGNED_ARROW_SCHEMA.equals(expected, check_metadata=True)
    assert ASSIGNED_ARROW_SCHEMA.names == ASSIGNED_SCHEMA.fieldNames()
    assert [f.nullable for f in ASSIGNED_ARROW_SCHEMA] == [
        f.nullable for f in ASSIGNED_SCHEMA.fields]


def test_kernel_column_lists_match_the_udf_schemas() -> None:
    assert WHAT_IF_SCHEMA.fieldNames() == WHAT_IF_KERNEL_COLUMNS
    assert DRIFT_SCHEMA.fieldNames() == DRIFT_COLUMNS


def test_a_count_of_one_reads_in_the_singular() -> None:
    from vocabulary.words import counted

    assert [counted(1, "client"), counted(16, "client"), counted(0, "queue"),
            counted(1, "queue moves", "queues move")] == [
        "1 client", "16 clients", "0 queues", "1 queue moves"]


def test_a_cut_list_counts_what_it_leaves_out() -> None:
    from vocabulary.words import listed

    assert [listed(["a", "b"], 2), listed(["a", "b"], 5), listed([], 3),
            listed(["a", "b"], 4, "; ")] == ["a, b", "a, b and 3 more", " and 3 more",
                                              "a; b and 2 more"]


def test_an_errors_first_line_is_what_a_message_quotes() -> None:
    """Storage and the page quote a reader's error by its first line: no JVM stack, no
    page-long line, the error's type when it says nothing."""
    from vocabulary.errors import first_line

    assert first_line(OSError("  no such file: x\n\tat org.apache.Foo(Foo.java:1)")) \
        == "no such file: x"
    assert first_line(ValueError("   ")) == "ValueError"
    assert first_line(RuntimeError("y" * 2000)) == "y" * 500
