"""A Delta table's data files as a pyarrow dataset, for the page.

delta-rs' `to_pyarrow_dataset` refuses every table whose protocol lists deletion vectors,
even one with none written. The native engine writes such tables on a platform that
turns deletion vectors on for every new table, and writes no vector into them: its
re-runs replace whole snapshot_id partitions, which removes files and deletes no row
inside one. A table like that is its file list, read here from the log's add actions;
one with vectors written holds rows its files still have, and is refused.
"""

from __future__ import annotations

import functools
import operator
import os
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pa_fs

from storage.delta_log import VectorCount, deletion_vector_count


class RowsDeletedByVectors(Exception):
    """The table's data files hold rows its deletion vectors delete."""

    def __init__(self, count: VectorCount) -> None:
        super().__init__(f"{count.rows:,} row(s) deleted through deletion vectors in "
                         f"{count.files:,} data file(s)")


def files_dataset(table: object, root: str) -> ds.FileSystemDataset:
    """The rows of the delta-rs `table` stored at the local folder `root`."""
    from deltalake.table import SUPPORTED_READER_FEATURES

    features = set(table.protocol().reader_features or [])  # type: ignore[attr-defined]
    others = features - {"deletionVectors"}
    if "deletionVectors" not in features or not others <= SUPPORTED_READER_FEATURES:
        return table.to_pyarrow_dataset()  # type: ignore[attr-defined]
    count = deletion_vector_count(table)
    if count.files:
        raise RowsDeletedByVectors(count)
    return _dataset_of_files(table, root)


def _dataset_of_files(table: object, root: str) -> ds.FileSystemDataset:
    """What `to_pyarrow_dataset` builds: one Parquet fragment per add action, whose
    partition expression holds the log's partition values, over the table's schema."""
    schema = pa.schema(table.schema().to_arrow())  # type: ignore[attr-defined]
    partition_columns = list(table.metadata().partition_columns)  # type: ignore[attr-defined]
    adds = pa.table(table.get_add_actions(flatten=True))  # type: ignore[attr-defined]
    file_format = ds.ParquetFileFormat(
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=True))
    filesystem = pa_fs.LocalFileSystem()
    if adds.num_rows == 0:  # an emptied table's actions may lack the partition columns
        return ds.FileSystemDataset([], schema, file_format, filesystem)
    values = {c: adds.column(f"partition.{c}").to_pylist() for c in partition_columns}
    fragments = []
    for i, path in enumerate(adds.column("path").to_pylist()):
        where = [ds.field(c).is_null() if values[c][i] is None
                 else ds.field(c) == pa.scalar(values[c][i], schema.field(c).type)
                 for c in partition_columns]
        fragments.append(file_format.make_fragment(
            os.path.join(root, unquote(path)), filesystem=filesystem,
            partition_expression=functools.reduce(operator.and_, where) if where
            else ds.scalar(True)))
    return ds.FileSystemDataset(fragments, schema, file_format, filesystem)
