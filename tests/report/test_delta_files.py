"""The page's dataset of a Delta table's files (`reports.html.delta_files`), built from
the log's add actions: the same rows as delta-rs' own dataset under every filter the
page scans with, and delta-rs' refusal of what it cannot read."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from deltalake import DeltaTable, TableFeatures, write_deltalake
from deltalake.exceptions import DeltaProtocolError

from reports.html.delta_files import RowsDeletedByVectors, files_dataset
from tests.support.deletion_vectors import allow_deletion_vectors, delete_rows


@pytest.fixture
def table(tmp_path) -> tuple[DeltaTable, str]:
    path = str(tmp_path / "t")
    files = [("s1", ["a", "b"]), ("s1", ["m", "n"]), ("é x", ["a", "c"]), (None, [None, "z"]),
             ("2026-11-28T15:00:00Z", ["q"])]
    for snapshot, groups in files:  # a file per append
        write_deltalake(path, pa.table({"snapshot_id": pa.array([snapshot] * len(groups),
                                                                pa.string()),
                                        "consumer_group": pa.array(groups, pa.string()),
                                        "n": list(range(len(groups)))}),
                        partition_by=["snapshot_id"], mode="append")
    return DeltaTable(path), path


def _rows(dataset: ds.Dataset, condition: ds.Expression | None) -> list[tuple]:
    got = dataset.to_table(filter=condition).to_pylist()
    return sorted((r["snapshot_id"] or "", r["consumer_group"] or "", r["n"]) for r in got)


@pytest.mark.parametrize("condition", [
    None,
    ds.field("consumer_group").isin(["a"]),
    ds.field("consumer_group").is_null(),
    ds.field("snapshot_id").isin(["s1", "é x"]),
    ds.field("snapshot_id").is_null(),
    ds.field("snapshot_id").isin(["2026-11-28T15:00:00Z"]) & (ds.field("n") >= 0),
])
def test_the_rows_are_delta_rs_own_under_every_filter(table, condition) -> None:
    delta, path = table
    assert _rows(files_dataset(delta, path), condition) == _rows(delta.to_pyarrow_dataset(),
                                                                 condition)


def test_files_are_skipped_by_their_partition(table) -> None:
    delta, path = table
    dataset = files_dataset(delta, path)
    assert len(list(dataset.get_fragments(filter=ds.field("snapshot_id").isin(["s1"])))) == 2
    assert len(list(dataset.get_fragments(filter=ds.field("snapshot_id").is_null()))) == 1


def test_a_protocol_delta_rs_cannot_read_is_refused_with_its_error(table) -> None:
    delta, path = table
    delta.alter.add_feature(TableFeatures.ColumnMapping, allow_protocol_versions_increase=True)
    with pytest.raises(DeltaProtocolError, match="columnMapping"):
        files_dataset(DeltaTable(path), path)


def test_deletion_vectors_allowed_are_read_written_are_refused(table) -> None:
    delta, path = table
    allow_deletion_vectors(path)
    assert _rows(files_dataset(DeltaTable(path), path), None) == _rows(
        files_dataset(delta, path), None)
    delete_rows(path, 0, [0])
    with pytest.raises(RowsDeletedByVectors, match="1 row"):
        files_dataset(DeltaTable(path), path)
