"""A data file's snapshot_id from its folder (`storage.base.snapshot_of_file`), as the
native engine reads the snapshots a table holds from Delta's file list."""

from __future__ import annotations

from storage.base import snapshot_of_file


def test_the_snapshot_is_the_escaped_folder_value() -> None:
    assert snapshot_of_file("file:/out/assignments/snapshot_id=s1/part-0.parquet") == "s1"
    # Spark escapes what a path cannot hold (Hive's escapePathName): a colon, a slash
    assert snapshot_of_file(
        "s3a://b/out/assignments/snapshot_id=2026-11-01T08%3A00%3A00/part-0.parquet"
    ) == "2026-11-01T08:00:00"
    assert snapshot_of_file("/o/t/snapshot_id=a%2Fb/part-0.parquet") == "a/b"


def test_the_null_partition_and_files_in_no_such_folder_have_none() -> None:
    assert snapshot_of_file("/o/rejects/snapshot_id=__HIVE_DEFAULT_PARTITION__/p.parquet") is None
    assert snapshot_of_file("/o/runs/part-0.parquet") is None
    # only a folder names it, never the file
    assert snapshot_of_file("/o/t/snapshot_id=x.parquet") is None
