"""The offline Delta engine: for laptops and machines without Delta's jars.

delta-rs owns the transaction log; Spark reads and writes the parquet data itself, in
parallel. Read = the current file list and partition values from the log, then
`spark.read.parquet` over those files, the values read off the folders where they spell
the log's (else joined on each row's file); a small table read whole to the driver
(`runs`) is read through Arrow instead, without a Spark job. Write = Spark writes parquet
into a staging folder inside the table; then, under the table's commit lock, the writer
checks that no commit since the run's first look touched the partitions it replaces,
moves its files into place and commits adds + removes in one delta-rs transaction.
Nothing passes through the driver.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from storage import delta_log, locks
from storage.arrow_rows import column_values, spark_rows
from storage.base import (
    PARTITION_COLUMN,
    ConflictError,
    TableError,
    TableState,
    WriteResult,
    filter_snapshots,
    unreadable_file,
)
from storage.paths import is_local, spark_path, without_file_scheme
from vocabulary.errors import first_line

log = logging.getLogger(__name__)

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
STAGING_DIR = "_staging"


def local_path(path: str) -> str:
    """The filesystem path of a table location (the offline engine works on local paths)."""
    if not is_local(path):
        raise TableError(
            f"{path}: the offline engine reads and writes local paths only; use the native "
            "engine (Delta jars on the classpath) for remote storage"
        )
    return os.path.abspath(without_file_scheme(path))


class LogFileRows(NamedTuple):
    """A local Delta table's rows by its log's file statistics: `total` of the current
    version, `largest` of one data file (0 for none), a bound on the rows one task reads
    from the table, since Spark does not split a Parquet row group."""

    total: int
    largest: int


def log_file_rows(path: str, snapshots: list[str] | None = None) -> LogFileRows | None:
    """`LogFileRows` of the table's current version (no scan, no Spark; one read of the
    log for both figures): of `snapshots` when given and the table is partitioned by
    snapshot_id. None when it is not a local Delta table or a file has no statistics."""
    records = _file_records(path, snapshots)
    if records is None:
        return None
    return LogFileRows(int(pc.sum(records).as_py() or 0), int(pc.max(records).as_py() or 0))


def log_row_count(path: str, snapshots: list[str] | None = None) -> int | None:
    """`log_file_rows`' total alone."""
    rows = log_file_rows(path, snapshots)
    return None if rows is None else rows.total


def _file_records(path: str, snapshots: list[str] | None) -> pa.ChunkedArray | None:
    """The log's `numRecords` of each data file of the current version (of `snapshots`),
    None when it is not a local Delta table or a file has no statistics."""
    from deltalake import DeltaTable

    try:
        adds = delta_log.add_actions(DeltaTable(local_path(path)))
    except Exception:  # not a (local) Delta table: the run itself says what is wrong
        return None
    if snapshots is not None and f"partition.{PARTITION_COLUMN}" in adds.column_names:
        adds = _of_snapshots(adds, snapshots)
    if "num_records" not in adds.column_names or adds.column("num_records").null_count:
        return None
    return adds.column("num_records")


def _of_snapshots(adds: pa.Table, snapshots: list) -> pa.Table:
    """The add actions of a table partitioned by snapshot_id that hold `snapshots` (None
    among them: the null partition's)."""
    values = adds.column(f"partition.{PARTITION_COLUMN}")
    return adds.filter(pc.is_in(values, pa.array(snapshots, pa.string())))


class OfflineStore:
    """Delta tables through delta-rs (log) and Spark (parquet)."""

    engine = "offline"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        # read_rows' last result per table, keyed by what it read (`_rows_key`)
        self._rows_read: dict[str, tuple[tuple, list[Row]]] = {}

    # ------------------------------------------------------------------ state
    def exists(self, path: str) -> bool:
        """Whether a Delta table (a log with at least one commit) is at `path`."""
        return delta_log.has_commit(local_path(path))

    def state(self, path: str) -> TableState:
        root = local_path(path)
        versions = delta_log.commit_versions(root)
        if versions:
            return TableState(path, versions[-1])
        if delta_log.has_commit(root):  # checkpoint only: ask delta-rs
            return TableState(path, self._open(path, path).version())
        return TableState(path, None)

    def columns(self, path: str, name: str) -> list[str]:
        """An existing table's column names, from its log (no Spark job)."""
        return [f.name for f in self._open(path, name).schema().fields]

    def check(self, path: str, name: str, started: float) -> list[str]:
        """Preflight for an output table: recover a log that holds no commit, sweep debris
        older than `started`, refuse what cannot be read. Returns what was cleaned."""
        root = Path(local_path(path))
        if root.exists() and not root.is_dir():
            raise TableError(f"{name} table at {path} is a file, not a folder: move it away "
                             "or point --output elsewhere")
        if not root.exists():
            return []
        cleaned = self.sweep(path, started)
        if delta_log.has_commit(root):
            _refuse_unsupported_features(self._open(path, name), name, path)
        return cleaned

    def sweep(self, path: str, before: float) -> list[str]:
        """Remove what killed writers left: staging folders whose writer is gone, data files
        no commit ever referenced, and a `_delta_log` without any commit. Only things older
        than `before` (a run start), and never a file any commit added."""
        root = Path(local_path(path))
        removed: list[str] = []
        try:
            with locks.exclusive(locks.commit_lock(root), wait_seconds=120):
                removed += _sweep_staging(root, before)
                if not delta_log.has_commit(root):
                    log_folder = delta_log.log_dir(root)
                    if log_folder.is_dir():
                        shutil.rmtree(log_folder)
                        removed.append(str(log_folder))
                referenced = delta_log.referenced_files(root)
                for file in _data_files(root):
                    rel = str(file.relative_to(root))
                    if rel not in referenced and file.stat().st_mtime < before:
                        file.unlink()
                        removed.append(str(file))
        except locks.LockTimeout as exc:
            raise TableError(f"table at {path}: another writer holds its commit lock ({exc})") \
                from exc
        except OSError as exc:
            raise TableError(f"table at {path} could not be cleaned: {exc}") from exc
        for item in removed:
            log.info("removed debris of a killed run: %s", item)
        return removed

    def changes_after(self, path: str, version: int | None,
                      partitions: list) -> list[delta_log.Commit]:
        """Commits after `version` that touched `partitions`, whoever made them (a run
        given the same --run-id is another writer too)."""
        wanted = set(partitions)
        return [c for c in delta_log.commits_after(local_path(path), version, PARTITION_COLUMN)
                if c.partitions & wanted]

    def row_estimate(self, path: str, snapshots: list[str] | None = None) -> int | None:
        """Rows of the table's current version (of `snapshots`, when given), from its
        log's file statistics (no scan); None when a file has none."""
        return log_row_count(path, snapshots)

    # ------------------------------------------------------------------- read
    def _open(self, path: str, name: str):
        from deltalake import DeltaTable

        try:
            return DeltaTable(local_path(path))
        except Exception as exc:
            raise TableError(f"{name} table at {path} could not be opened as Delta: "
                             f"{first_line(exc)}") from exc

    def snapshots_in(self, path: str, name: str) -> set[str]:
        """The snapshot_id values the table's current data files hold, from its log's add
        actions (no Spark job, no data file read)."""
        return delta_log.partition_values_held(self._open(path, name), PARTITION_COLUMN)

    def _readable(self, path: str, name: str) -> tuple[Any, StructType]:
        """The delta-rs table at `path` and its Spark schema, refused when it is not a
        Delta table or uses a feature this engine cannot read."""
        if not self.exists(path):
            if not Path(local_path(path)).exists():
                raise TableError(f"{name} table at {path} does not exist (check the path)")
            raise TableError(f"{name} table at {path} is not a Delta table "
                             "(no _delta_log folder with a commit)")
        table = self._open(path, name)
        _refuse_unsupported_features(table, name, path)
        return table, from_arrow_schema(pa.schema(table.schema().to_arrow()))

    def read(self, path: str, name: str, snapshots: list[str] | None = None) -> DataFrame:
        """The table's current rows; `name` is used in error messages (e.g. 'queues').
        With `snapshots`, only those snapshot_id values (pruned by partition)."""
        location = local_path(path)
        table, schema = self._readable(path, name)
        partition_cols = list(table.metadata().partition_columns)
        data_schema = StructType([f for f in schema.fields if f.name not in partition_cols])
        adds = delta_log.add_actions(table)
        pruned = snapshots is not None and PARTITION_COLUMN in partition_cols
        chosen = _of_snapshots(adds, snapshots) if pruned else adds
        actions = chosen.to_pandas()
        if actions.empty:
            return self.spark.createDataFrame([], schema)
        files = actions["path"].map(unquote)  # the log's paths are URL-quoted
        local_files = [os.path.join(location, f) for f in files]
        uris = [spark_path(f) for f in local_files]
        reader = self.spark.read.schema(data_schema)
        # quoted: a column whose name holds a dot (an extra one, which the audit ignores)
        # read as a struct's field, and the read failed
        columns = [F.col(f"`{c.replace('`', '``')}`") for c in schema.fieldNames()]
        if not partition_cols:
            return filter_snapshots(reader.parquet(*uris).select(*columns), snapshots)
        if _values_in_folders(files, actions, partition_cols, schema):
            # the partition values are Spark's own partition discovery's, read off the folders
            data = (self.spark.read.schema(schema).option("basePath", spark_path(location))
                    .parquet(*uris).select(*columns))
            return data if pruned else filter_snapshots(data, snapshots)
        # the log's values as Python's (Arrow's to_pylist): pandas made a timestamp a
        # pd.Timestamp and an integer column holding a null floats, which Spark refused
        values = [chosen.column(f"partition.{c}").to_pylist() for c in partition_cols]
        files = [(hadoop_uri(file), *[v[i] for v in values])
                 for i, file in enumerate(local_files)]
        part_schema = StructType(
            [StructField("__file", StringType(), False), *(schema[c] for c in partition_cols)]
        )
        file_frame = self.spark.createDataFrame(files, part_schema)
        data = reader.parquet(*uris).withColumn("__file", F.col("_metadata.file_path"))
        joined = data.join(F.broadcast(file_frame), "__file", "inner").select(*columns)
        return joined if pruned else filter_snapshots(joined, snapshots)

    def read_rows(self, path: str, name: str, columns: list[str]) -> list[Row]:
        """A small table's `columns`, every row collected: read through Arrow here, no
        Spark job, the values those of `read(...).collect()` (`storage.arrow_rows`). For
        a table with a file per snapshot (`runs`, a row per snapshot and cluster, read
        several times a run): at 4,700 snapshots Spark listed and read its files in two
        jobs of 4,656 and 146 tasks, 18 s a read, against about 1 s here.

        The same table at the same version (its log's metadata id and version: a Delta
        version never changes) is answered from the last read: a run reads `runs` five
        times before it lands, each about 1.8 s at 4,700 files, and each read still
        opens the log, so a commit in between is read afresh."""
        location = local_path(path)
        table, schema = self._readable(path, name)
        missing = [c for c in columns if c not in schema.fieldNames()]
        if missing:
            raise TableError(f"{name} table at {path} has no column {', '.join(missing)}")
        key = (table.metadata().id, table.version(), tuple(columns))
        held = self._rows_read.get(location)
        if held is not None and held[0] == key:
            return list(held[1])
        rows = self._read_rows(table, location, path, name, columns, schema)
        self._rows_read[location] = (key, rows)
        return list(rows)

    def _read_rows(self, table: Any, location: str, path: str, name: str,
                   columns: list[str], schema: StructType) -> list[Row]:
        wanted = StructType([schema[c] for c in columns])
        partition_cols = set(table.metadata().partition_columns)
        adds = delta_log.add_actions(table)
        values: dict[str, list] = {c: [] for c in columns}
        for i, file in enumerate(adds.column("path").to_pylist()):
            local = os.path.join(location, unquote(file))
            try:
                parquet = pq.ParquetFile(local)
                data = parquet.read(columns=[c for c in columns if c not in partition_cols
                                             and c in parquet.schema_arrow.names])
            except (OSError, pa.ArrowException) as exc:  # gone, cut, not Parquet
                said = first_line(exc)
                raise unreadable_file(name, path, said if local in said
                                      else f"{local}: {said}") from exc
            for c in columns:
                if c in partition_cols:
                    values[c] += [adds.column(f"partition.{c}")[i].as_py()] * data.num_rows
                elif c in data.column_names:
                    values[c] += column_values(data, c)
                else:  # a file written before the column was added: null, as Spark reads it
                    values[c] += [None] * data.num_rows
        return spark_rows(values, wanted)

    # ------------------------------------------------------------------ write
    def write(
        self, df: DataFrame | None, path: str, name: str, partition_by: list[str],
        replace: list | None = None, since: TableState | None = None,
        run_id: str | None = None, rows_per_file: int | None = None,
    ) -> WriteResult:
        """Write `df` (None: no new rows). With `replace` (snapshot_id values, None for
        the null partition) the rows of those partitions are replaced in one commit, and
        the write fails with ConflictError if another commit touched them after `since`
        (default: the table as it is now); without it the rows are appended. A task
        starts a new file after `rows_per_file` rows when given."""
        root = Path(local_path(path))
        if df is None and not self.exists(path):
            return WriteResult(name, self.engine, 0, None)  # nothing to remove
        arrow_schema = (to_arrow_schema(df.schema, timezone="UTC") if df is not None else None)
        if self.exists(path):
            table = self._open(path, name)
            _refuse_unsupported_features(table, name, path)
            if df is not None:
                _check_same_schema(table, arrow_schema, name, path)
        staging_name = uuid.uuid4().hex
        staging = root / STAGING_DIR / staging_name
        staging_lock = root / STAGING_DIR / f"{staging_name}.lock"
        try:
            with locks.exclusive(staging_lock):
                if df is not None:
                    writer = (df.write.mode("append").partitionBy(*partition_by)
                              .option("compression", "snappy"))
                    if rows_per_file:
                        writer = writer.option("maxRecordsPerFile", rows_per_file)
                    writer.parquet(spark_path(str(staging)))
                with locks.exclusive(locks.commit_lock(root)):
                    return self._commit(staging, root, path, name, partition_by, arrow_schema,
                                        replace, since, run_id)
        except locks.LockTimeout as exc:
            raise TableError(f"{name} table at {path}: {exc}; another writer is committing "
                             "to it") from exc
        except OSError as exc:
            raise TableError(f"writing the {name} table at {path} failed: {exc}") from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            with contextlib.suppress(OSError):
                staging_lock.unlink()
            _remove_if_empty(root / STAGING_DIR)

    def _commit(self, staging: Path, root: Path, path: str, name: str,
                partition_by: list[str], arrow_schema: pa.Schema | None,
                replace: list | None, since: TableState | None,
                run_id: str | None) -> WriteResult:
        """Under the commit lock: conflict check, move files into place, one commit."""
        from deltalake import Schema as DeltaSchema
        from deltalake.transaction import CommitProperties, create_table_with_add_actions

        if not delta_log.has_commit(root) and delta_log.log_dir(root).is_dir():
            shutil.rmtree(delta_log.log_dir(root))  # debris of a killed first commit
        current = self.state(path).version
        if replace is not None:
            baseline = since.version if since is not None else current
            conflicts = self.changes_after(path, baseline, replace)
            if conflicts:
                raise ConflictError.of_commits(name, path, replace, conflicts, run_id)
        adds = _move_into_table(staging, root, partition_by) if staging.is_dir() else []
        properties = CommitProperties(max_commit_retries=0,
                                      custom_metadata={delta_log.RUN_ID_KEY: run_id or ""})
        try:
            _refuse_null_partitions(adds, arrow_schema, name, path)
            if current is None:
                if arrow_schema is None:
                    return WriteResult(name, self.engine, 0, None)  # nothing to remove
                create_table_with_add_actions(
                    str(root), DeltaSchema.from_arrow(arrow_schema), adds, mode="error",
                    partition_by=partition_by or None, name=name,
                    commit_properties=properties,
                )
            else:
                table = self._open(path, name)
                removes = _removes(table, replace) if replace is not None else []
                if not adds and not removes:
                    return WriteResult(name, self.engine, 0, current)
                schema = (DeltaSchema.from_arrow(arrow_schema) if arrow_schema is not None
                          else table.schema())
                table.create_write_transaction(
                    [*adds, *removes], mode="append", schema=schema,
                    partition_by=partition_by or None, commit_properties=properties,
                )
        except Exception as exc:
            landed = _committed_after(root, current)
            if landed is not None:  # its files are the table's: only what followed failed
                raise TableError(f"the {name} table at {path} was committed (version "
                                 f"{landed}), then its writer failed: {first_line(exc)}; "
                                 "audit the snapshots again") from exc
            for add in adds:  # never committed: nobody may see them
                with contextlib.suppress(OSError):
                    (root / add.path).unlink()
            if isinstance(exc, TableError):
                raise
            raise TableError(f"committing the {name} table at {path} failed: "
                             f"{first_line(exc)}") from exc
        return WriteResult(name, self.engine, len(adds), self.state(path).version)


# ---------------------------------------------------------------------- helpers
def _committed_after(root: Path, version: int | None) -> int | None:
    """The newest commit after `version` (None: the table had none), if one landed: a
    writer that raised after writing its commit (delta-rs reloads the table after it)
    must not delete the files that commit adds."""
    versions = delta_log.commit_versions(root)
    newest = versions[-1] if versions else None
    return newest if newest is not None and (version is None or newest > version) else None


def _refuse_null_partitions(adds: list, arrow_schema: pa.Schema | None, name: str,
                            path: str) -> None:
    """A null partition value of a column that is not nullable (Spark writes an empty
    string as the null partition too) is refused before the commit: committed, it left a
    table no reader opens, its earlier snapshots with it."""
    if arrow_schema is None:
        return
    for add in adds:
        for column, value in add.partition_values.items():
            field = arrow_schema.field(column) if column in arrow_schema.names else None
            if value is None and field is not None and not field.nullable:
                raise TableError(f"the {name} table at {path}: rows with an empty or null "
                                 f"{column}, which is its partition column and cannot be "
                                 "null; nothing was committed")


def _removes(table, partitions: list) -> list:
    """A remove action for every file of the given snapshot_id partitions (None = null)."""
    from deltalake.transaction import RemoveAction

    files = delta_log.add_actions(table).to_pandas()
    column = f"partition.{PARTITION_COLUMN}"
    if files.empty or column not in files:
        return []
    wanted = {p for p in partitions if p is not None}
    keep_null = any(p is None for p in partitions)
    mask = files[column].isin(wanted) | (files[column].isna() & keep_null)
    now = int(time.time() * 1000)
    return [
        RemoveAction(path=unquote(p), data_change=True, deletion_timestamp=now, size=int(s),
                     partition_values={PARTITION_COLUMN: _python_value(v)})
        for p, s, v in zip(files.loc[mask, "path"], files.loc[mask, "size_bytes"],
                           files.loc[mask, column], strict=True)
    ]


def _data_files(root: Path) -> list[Path]:
    """Parquet files of the table, outside its log and staging folders."""
    out = []
    for file in root.rglob("*.parquet"):
        top = file.relative_to(root).parts[0]
        if top not in (delta_log.LOG_DIR, STAGING_DIR):
            out.append(file)
    return out


def _sweep_staging(root: Path, before: float) -> list[str]:
    folder = root / STAGING_DIR
    if not folder.is_dir():
        return []
    removed = []
    for entry in folder.iterdir():
        if entry.suffix == ".lock" or entry.stat().st_mtime >= before:
            continue
        lock = folder / f"{entry.name}.lock"
        if locks.is_free(lock):
            shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink()
            with contextlib.suppress(OSError):
                lock.unlink()
            removed.append(str(entry))
    for lock in folder.glob("*.lock"):  # locks of folders already gone
        if not (folder / lock.stem).exists() and locks.is_free(lock):
            with contextlib.suppress(OSError):
                lock.unlink()
    _remove_if_empty(folder)
    return removed


def _refuse_unsupported_features(table: object, name: str, path: str) -> None:
    """The offline engine reads the file list and commits adds and removes by path; what
    changes their meaning is refused: column mapping (the files' column names are not the
    table's), and data files carrying deletion vectors (the list names rows that were
    deleted, and a remove by path alone leaves such a file in place for Delta's readers).
    A table that only allows deletion vectors, with none written (the default for new
    tables on some Spark platforms), is read and written exactly and is accepted."""
    protocol = table.protocol()  # type: ignore[attr-defined]
    features = set(protocol.reader_features or []) | set(protocol.writer_features or [])
    config = table.metadata().configuration or {}  # type: ignore[attr-defined]
    vectors = _deletion_vectors(table) if "deletionVectors" in features else None
    problems = [vectors] if vectors else []
    if "columnMapping" in features or config.get("delta.columnMapping.mode", "none") != "none":
        problems.append("column mapping")
    if problems:
        purge = (f" (there, `REORG TABLE delta.`{path}` APPLY (PURGE)` rewrites the files a "
                 "deletion vector marks)") if vectors else ""
        raise TableError(
            f"{name} table at {path} uses {' and '.join(problems)}, which the offline engine "
            "cannot honour (rows or column names would come back wrong). Run with "
            f"--engine native on a Spark that has Delta's jars{purge}."
        )


def _deletion_vectors(table: object) -> str | None:
    """What the table's current deletion vectors amount to, for the refusal (None when no
    data file carries one). They are decided by the files, not by the
    `delta.enableDeletionVectors` property: turning it off keeps the vectors written."""
    try:
        count = delta_log.deletion_vector_count(table)
    except Exception as exc:  # a vector file gone or damaged
        return f"deletion vectors that cannot be read ({first_line(exc)})"
    if count.files == 0:
        return None
    return f"deletion vectors ({count.rows:,} row(s) deleted in {count.files:,} data file(s))"


def _check_same_schema(table: object, arrow_schema: pa.Schema, name: str, path: str) -> None:
    existing = pa.schema(table.schema().to_arrow())  # type: ignore[attr-defined]
    have = {f.name for f in existing}
    want = {f.name for f in arrow_schema}
    if have != want:
        raise TableError(
            f"{name} table at {path} has columns {sorted(have)}, this run writes "
            f"{sorted(want)}: point --output at a new folder or migrate the table"
        )


_URI_PATH_LEGAL = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "_-!.~'()*" ",;:$&+=" "/@"
)


def hadoop_uri(path: str) -> str:
    """`new org.apache.hadoop.fs.Path(path).toUri().toString()` for a local absolute path,
    which is how Spark reports `_metadata.file_path`: ASCII characters that are not legal
    in a URI path are percent-encoded ('%' included), other characters stay as they are."""
    encoded = "".join(
        ch if ord(ch) > 127 or ch in _URI_PATH_LEGAL
        else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        for ch in path
    )
    return "file:" + encoded


# a `%XX` escape in a folder name, and a '%' that starts none
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_LONE_PERCENT = r"%(?![0-9A-Fa-f]{2})"
_PLAIN_COLUMN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _values_in_folders(files: pd.Series, actions: pd.DataFrame, partition_cols: list[str],
                       schema: StructType) -> bool:
    """Whether Spark's partition discovery reads every file's partition values off its
    folders (`files`: the add `actions`' paths, unquoted) exactly as the log gives them:
    string columns, each file right under `<column>=<value>/` folders in the table's
    column order, and each folder's value, read as Spark reads it (`%XX` is the character
    of code XX, Hive's default name is null, an empty one an error), the log's. Spark's
    own writes and delta-rs' (`%3A` for ':', `%20` for ' ') pass; a value delta-rs writes
    as UTF-8 bytes (`é` as `%C3%A9`, which Spark would read as two characters) or a file
    outside its partition's folders does not. For those, each row's values come from a
    broadcast join on its file's path, which costs every scan task (10M input rows on 2
    cores: 5.8–6.4 s against 3.5–3.7 s) and holds a 64 MB hash page for a few dozen paths
    in the JVM while the frame lives."""
    if not all(isinstance(schema[c].dataType, StringType) and _PLAIN_COLUMN.fullmatch(c)
               for c in partition_cols):
        return False
    parts = files.str.split("/")
    if not (parts.str.len() == len(partition_cols) + 1).all():
        return False
    for depth, column in enumerate(partition_cols):
        folder = parts.str[depth].str.partition("=")
        raw = folder[2]
        if not (folder[0] == column).all() or not (folder[1] == "=").all() \
                or (raw == "").any() or raw.str.contains(_LONE_PERCENT).any():
            return False
        read = raw.str.replace(_ESCAPE, lambda m: chr(int(m.group(1), 16)), regex=True)
        read = read.where(raw != HIVE_NULL, None)
        logged = actions[f"partition.{column}"]
        if not ((read == logged) | (read.isna() & logged.isna())).all():
            return False
    return True


def _python_value(value: object) -> object:
    try:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return None
    except (TypeError, ValueError):
        pass
    return value.item() if hasattr(value, "item") else value


def _move_into_table(staging: Path, table_root: Path, partition_by: list[str]) -> list:
    """Move Spark's parquet files from staging into the table; one AddAction per file."""
    from deltalake.transaction import AddAction

    actions = []
    for file in sorted(staging.rglob("*.parquet")):
        rel = file.relative_to(staging)
        values: dict[str, str | None] = {}
        for part in rel.parts[:-1]:
            col, _, raw = part.partition("=")
            value = unquote(raw)
            values[col] = None if value == HIVE_NULL else value
        missing = [c for c in partition_by if c not in values]
        if missing:
            raise TableError(f"staged file {rel} has no partition value for {missing}")
        target = table_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(file, target)
        stat = target.stat()
        rows = pq.read_metadata(target).num_rows
        actions.append(AddAction(
            path=str(rel), size=stat.st_size, partition_values=values,
            modification_time=int(stat.st_mtime * 1000), data_change=True,
            stats=json.dumps({"numRecords": rows}),
        ))
    return actions


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()
