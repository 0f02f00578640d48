"""A Delta table's data files as a pyarrow dataset, for the page.

Built from the log's add actions: one Parquet fragment per file, its partition values the
log's. delta-rs' own `to_pyarrow_dataset` reads the files through a Python filesystem of
its own and grew with the table's files: on an output of 4,700 snapshot partitions a
table, the page took 34.4 s and peaked at 1.38 GB with it, 7.1 s and 352 MB with this
(and its small batches joined, `data._joined`); on the 1M benchmark's output, which has
few files, 244 MB against 237 MB, and 10M's 260 MB against 254-265 MB. Files are memory-
mapped (a Delta data file is never rewritten in place), not pre-buffered: pre-buffered
reads on the local filesystem cost the 1M page 27 MB.

delta-rs refuses every table whose protocol lists deletion vectors, even one with none
written. The native engine writes such tables on a platform that turns deletion vectors
on for every new table, and writes no vector into them: its re-runs replace whole
snapshot_id partitions, which removes files and deletes no row inside one. A table like
that is its file list; one with vectors written holds rows its files still have, and is
refused. A protocol delta-rs cannot read otherwise is refused with delta-rs' own error.
"""

from __future__ import annotations

import functools
import operator
import os
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pa_fs

from storage.delta_log import VectorCount, add_actions, deletion_vector_count


class RowsDeletedByVectors(Exception):
    """The table's data files hold rows its deletion vectors delete."""

    def __init__(self, count: VectorCount) -> None:
        super().__init__(f"{count.rows:,} row(s) deleted through deletion vectors in "
                         f"{count.files:,} data file(s)")


def files_dataset(table: object, root: str) -> ds.FileSystemDataset:
    """The rows of the delta-rs `table` stored at the local folder `root`."""
    from deltalake.table import MAX_SUPPORTED_READER_VERSION, SUPPORTED_READER_FEATURES

    protocol = table.protocol()  # type: ignore[attr-defined]
    features = set(protocol.reader_features or [])
    if (protocol.min_reader_version > MAX_SUPPORTED_READER_VERSION
            or "columnMapping" in features
            or not features - {"deletionVectors"} <= SUPPORTED_READER_FEATURES):
        return table.to_pyarrow_dataset()  # type: ignore[attr-defined]  # raises its refusal
    if "deletionVectors" in features:
        count = deletion_vector_count(table)
        if count.files:
            raise RowsDeletedByVectors(count)
    return _dataset_of_files(table, root)


def _dataset_of_files(table: object, root: str) -> ds.FileSystemDataset:
    """What `to_pyarrow_dataset` builds: one Parquet fragment per add action, whose
    partition expression holds the log's partition values, over the table's schema."""
    schema = pa.schema(table.schema().to_arrow())  # type: ignore[attr-defined]
    partition_columns = list(table.metadata().partition_columns)  # type: ignore[attr-defined]
    adds = add_actions(table)
    file_format = ds.ParquetFileFormat(
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=False))
    filesystem = pa_fs.LocalFileSystem(use_mmap=True)
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
