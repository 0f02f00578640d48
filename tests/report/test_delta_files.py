"""The page's dataset of a Delta table's files (`reports.html.delta_files`), built from
the log's add actions: the same rows as delta-rs' own dataset under every filter the
page scans with, skipping files by partition and by their groups' bounds."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from deltalake import DeltaTable, write_deltalake

from reports.html.delta_files import files_dataset

LONG = "GID_" + "x" * 40  # past the 32-character prefix Delta writers keep in stats


@pytest.fixture
def table(tmp_path) -> tuple[DeltaTable, str]:
    path = str(tmp_path / "t")
    files = [("s1", ["a", "b"]), ("s1", ["m", "n"]), ("s2", ["a", LONG]), ("s2", [None, "z"]),
             ("s3", [LONG + "y", "q"])]
    for snapshot, groups in files:  # a file per append
        write_deltalake(path, pa.table({"snapshot_id": [snapshot] * len(groups),
                                        "consumer_group": pa.array(groups, pa.string()),
                                        "n": list(range(len(groups)))}),
                        partition_by=["snapshot_id"], mode="append")
    return DeltaTable(path), path


def _rows(dataset: ds.Dataset, condition: ds.Expression) -> list[tuple]:
    got = dataset.to_table(filter=condition).to_pylist()
    return sorted((r["snapshot_id"], r["consumer_group"] or "", r["n"]) for r in got)


@pytest.mark.parametrize("condition", [
    ds.field("consumer_group").isin(["a"]),
    ds.field("consumer_group").isin([LONG]),
    ds.field("consumer_group").isin([LONG + "y", "n"]),
    ds.field("consumer_group").is_null(),
    ds.field("snapshot_id").isin(["s2"]) & ds.field("consumer_group").isin(["z"]),
    ds.field("n") >= 0,
])
def test_the_rows_are_delta_rs_own_under_every_filter(table, condition) -> None:
    delta, path = table
    assert _rows(files_dataset(delta, path), condition) == _rows(delta.to_pyarrow_dataset(),
                                                                 condition)


def test_files_are_skipped_by_partition_and_by_their_groups_bounds(table) -> None:
    delta, path = table
    dataset = files_dataset(delta, path)
    kept = list(dataset.get_fragments(filter=ds.field("consumer_group").isin(["m"])))
    assert len(kept) == 1 + 3  # the file of m; the three whose bounds are not kept
    assert len(list(dataset.get_fragments(filter=ds.field("snapshot_id").isin(["s1"])))) == 2
