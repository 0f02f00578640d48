"""The snapshot_id values a table's log says its current files hold
(`storage.delta_log.partition_values_held`), which both the audit (a snapshot right after
an unfinished one) and the page (unfinished snapshots) read without a data file."""

from __future__ import annotations

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from storage.delta_log import partition_values_held


def _rows(snapshots: list[str | None]) -> pa.Table:
    return pa.table({"snapshot_id": pa.array(snapshots, pa.string()),
                     "n": pa.array(range(len(snapshots)), pa.int64())})


def test_the_current_files_values_without_the_null_partition(tmp_path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, _rows(["s1", "s2", None, "s2"]), partition_by=["snapshot_id"])
    assert partition_values_held(DeltaTable(path), "snapshot_id") == {"s1", "s2"}
    # a snapshot replaced by none is no longer held
    write_deltalake(path, _rows(["s3"]), partition_by=["snapshot_id"], mode="overwrite",
                    predicate="snapshot_id = 's1' OR snapshot_id = 's3'")
    assert partition_values_held(DeltaTable(path), "snapshot_id") == {"s2", "s3"}


def test_a_table_not_partitioned_by_the_column_holds_none(tmp_path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, _rows(["s1"]))
    assert partition_values_held(DeltaTable(path), "snapshot_id") == set()
