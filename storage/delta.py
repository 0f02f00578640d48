"""The one module that knows how Delta tables are read and written.

Two engines behind one interface:

* ``native``: delta-spark (``format("delta")``), when Delta's classes are on the JVM
  classpath (Databricks, EMR, any cluster started with the Delta package).
* ``offline``: for laptops and machines where the Delta jars cannot be downloaded.
  delta-rs owns the transaction log; Spark reads and writes the parquet data itself, in
  parallel. Read = the current file list and partition values from the log, then
  ``spark.read.parquet`` over those files. Write = Spark writes parquet into a staging
  folder inside the table, the files move into place, then one delta-rs commit adds them
  and removes the files of the partitions they replace. Nothing passes through the driver.

``auto`` picks native when the classes are present, offline otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

ENGINES = ("auto", "native", "offline")
DELTA_DATA_SOURCE = "org.apache.spark.sql.delta.sources.DeltaDataSource"
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
STAGING_DIR = "_staging"


class TableError(Exception):
    """A table cannot be read or written; the message names the table and what to do."""


@dataclass(frozen=True)
class WriteResult:
    table: str
    engine: str
    files: int
    version: int | None


def delta_classes_available(spark: SparkSession) -> bool:
    """True when delta-spark's data source is on the driver's classpath."""
    try:
        spark._jvm.java.lang.Class.forName(DELTA_DATA_SOURCE)  # type: ignore[union-attr]
        return True
    except Exception:
        return False


def resolve_engine(spark: SparkSession, requested: str) -> str:
    """Map ``auto`` to the engine this session can run; refuse ``native`` without the jars."""
    if requested not in ENGINES:
        raise TableError(f"storage engine must be one of {', '.join(ENGINES)}, not {requested!r}")
    available = delta_classes_available(spark)
    if requested == "native" and not available:
        raise TableError(
            "storage engine 'native' needs Delta's jars on the Spark classpath, and they are "
            "not there. Start with ./spark-submit.sh --with-delta-package (needs a reachable "
            "Maven repository), put delta-spark's jars on the cluster, or use engine 'offline'."
        )
    if requested == "auto":
        return "native" if available else "offline"
    return requested


def local_path(path: str) -> str:
    """The filesystem path of a table location (the offline engine works on local paths)."""
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif path.startswith("file:"):
        path = path[len("file:"):]
    elif "://" in path:
        raise TableError(
            f"{path}: the offline engine reads and writes local paths only; use the native "
            "engine (Delta jars on the classpath) for remote storage"
        )
    return os.path.abspath(path)


class DeltaStore:
    """Reads and writes Delta tables with the engine chosen for this session."""

    def __init__(self, spark: SparkSession, engine: str = "auto") -> None:
        self.spark = spark
        self.engine = resolve_engine(spark, engine)

    # ------------------------------------------------------------------ read
    def exists(self, path: str) -> bool:
        """Whether a Delta table is at `path`."""
        if self.engine == "native":
            from delta.tables import DeltaTable

            return bool(DeltaTable.isDeltaTable(self.spark, path))
        return Path(local_path(path), "_delta_log").is_dir()

    def read(self, path: str, name: str, snapshots: list[str] | None = None) -> DataFrame:
        """The table's current rows; `name` is used in error messages (e.g. 'queues').
        With `snapshots`, only those snapshot_id values (pruned by partition when the table
        is partitioned by snapshot_id)."""
        if self.engine == "native":
            df = self._read_native(path, name)
            return df.where(F.col("snapshot_id").isin(snapshots)) if snapshots is not None else df
        return self._read_offline(path, name, snapshots)

    def _read_native(self, path: str, name: str) -> DataFrame:
        try:
            return self.spark.read.format("delta").load(path)
        except Exception as exc:  # py4j / analysis errors: say which table
            raise TableError(f"{name} table at {path} could not be read as Delta: "
                             f"{_first_line(exc)}") from exc

    def _read_offline(self, path: str, name: str, snapshots: list[str] | None) -> DataFrame:
        from deltalake import DeltaTable

        location = local_path(path)
        if not Path(location, "_delta_log").is_dir():
            raise TableError(f"{name} table at {path} is not a Delta table (no _delta_log folder)")
        try:
            table = DeltaTable(location)
        except Exception as exc:
            raise TableError(f"{name} table at {path} could not be opened: "
                             f"{_first_line(exc)}") from exc
        _refuse_unsupported_features(table, name, path)
        schema = from_arrow_schema(pa.schema(table.schema().to_arrow()))
        partition_cols = list(table.metadata().partition_columns)
        data_schema = StructType([f for f in schema.fields if f.name not in partition_cols])
        actions = pa.table(table.get_add_actions(flatten=True)).to_pandas()
        pruned = snapshots is not None and "snapshot_id" in partition_cols
        if pruned:
            actions = actions[actions["partition.snapshot_id"].isin(snapshots)]
        if actions.empty:
            return self.spark.createDataFrame([], schema)
        uris = _on_disk_paths(actions["path"], location)
        reader = self.spark.read.schema(data_schema)
        if not partition_cols:
            df = reader.parquet(*uris).select(*schema.fieldNames())
            return df.where(F.col("snapshot_id").isin(snapshots)) if snapshots is not None else df
        files = [
            (hadoop_uri(uri), *[actions[f"partition.{c}"].iloc[i] for c in partition_cols])
            for i, uri in enumerate(uris)
        ]
        part_schema = StructType(
            [StructField("__file", StringType(), False), *(schema[c] for c in partition_cols)]
        )
        file_frame = self.spark.createDataFrame(
            [(f[0], *[_python_value(v) for v in f[1:]]) for f in files], part_schema
        )
        data = reader.parquet(*uris).withColumn("__file", F.col("_metadata.file_path"))
        joined = data.join(F.broadcast(file_frame), "__file", "inner").select(*schema.fieldNames())
        if snapshots is not None and not pruned:
            joined = joined.where(F.col("snapshot_id").isin(snapshots))
        return joined

    # ----------------------------------------------------------------- write
    def write(
        self, df: DataFrame, path: str, name: str, partition_by: list[str],
        replace: dict[str, list[str]] | None = None,
    ) -> WriteResult:
        """Write `df`; with `replace` ({column: values}) the rows of those partitions are
        replaced atomically (re-running a snapshot leaves no duplicates); else appended."""
        if self.engine == "native":
            return self._write_native(df, path, name, partition_by, replace)
        return self._write_offline(df, path, name, partition_by, replace)

    def _write_native(self, df: DataFrame, path: str, name: str, partition_by: list[str],
                      replace: dict[str, list[str]] | None) -> WriteResult:
        from delta.tables import DeltaTable

        exists = DeltaTable.isDeltaTable(self.spark, path)
        writer = df.write.format("delta").partitionBy(*partition_by)
        if exists and replace:
            writer = writer.mode("overwrite").option("replaceWhere", _predicate(replace))
        else:
            writer = writer.mode("append")
        try:
            writer.save(path)
        except Exception as exc:
            raise TableError(f"writing the {name} table at {path} failed: "
                             f"{_first_line(exc)}") from exc
        version = DeltaTable.forPath(self.spark, path).history(1).collect()[0]["version"]
        return WriteResult(name, "native", -1, int(version))

    def _write_offline(self, df: DataFrame, path: str, name: str, partition_by: list[str],
                       replace: dict[str, list[str]] | None) -> WriteResult:
        from deltalake import DeltaTable
        from deltalake import Schema as DeltaSchema
        from deltalake.transaction import create_table_with_add_actions

        location = local_path(path)
        exists = Path(location, "_delta_log").is_dir()
        arrow_schema = to_arrow_schema(df.schema, timezone="UTC")
        if exists:
            table = DeltaTable(location)
            _refuse_unsupported_features(table, name, path)
            _check_same_schema(table, arrow_schema, name, path)
        staging = Path(location, STAGING_DIR, uuid.uuid4().hex)
        try:
            (df.write.mode("append").partitionBy(*partition_by)
             .option("compression", "snappy").parquet(str(staging)))
            actions = _move_into_table(staging, Path(location), partition_by)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            _remove_if_empty(Path(location, STAGING_DIR))
        if not exists:
            create_table_with_add_actions(
                location, DeltaSchema.from_arrow(arrow_schema), actions, mode="error",
                partition_by=partition_by or None, name=name,
            )
        elif replace:
            table.create_write_transaction(
                actions, mode="overwrite", schema=DeltaSchema.from_arrow(arrow_schema),
                partition_by=partition_by or None,
                partition_filters=[(col, "in", [str(v) for v in values])
                                   for col, values in replace.items()],
            )
        else:
            table.create_write_transaction(actions, mode="append",
                                           schema=DeltaSchema.from_arrow(arrow_schema),
                                           partition_by=partition_by or None)
        return WriteResult(name, "offline", len(actions), DeltaTable(location).version())


# ---------------------------------------------------------------------- helpers
def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:500] if text else type(exc).__name__


def _predicate(replace: dict[str, list[str]]) -> str:
    def lit(v: str) -> str:
        return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"

    return " AND ".join(f"`{col}` IN ({', '.join(lit(v) for v in values)})"
                        for col, values in replace.items())


def _refuse_unsupported_features(table: object, name: str, path: str) -> None:
    """The offline engine reads the file list; features that change its meaning are refused."""
    protocol = table.protocol()  # type: ignore[attr-defined]
    features = set(protocol.reader_features or []) | set(protocol.writer_features or [])
    config = table.metadata().configuration or {}  # type: ignore[attr-defined]
    problems = []
    if "deletionVectors" in features and config.get("delta.enableDeletionVectors") != "false":
        problems.append("deletion vectors")
    if "columnMapping" in features or config.get("delta.columnMapping.mode", "none") != "none":
        problems.append("column mapping")
    if problems:
        raise TableError(
            f"{name} table at {path} uses {' and '.join(problems)}, which the offline engine "
            "cannot honour (rows or column names would come back wrong). Run with "
            "--engine native on a Spark that has Delta's jars."
        )


def _check_same_schema(table: object, arrow_schema: pa.Schema, name: str, path: str) -> None:
    existing = pa.schema(table.schema().to_arrow())  # type: ignore[attr-defined]
    have = {f.name: str(f.type) for f in existing}
    want = {f.name: str(f.type) for f in arrow_schema}
    if set(have) != set(want):
        raise TableError(
            f"{name} table at {path} has columns {sorted(have)}, this run writes "
            f"{sorted(want)}: point --output at a new folder or migrate the table"
        )


def _on_disk_paths(log_paths, location: str) -> list[str]:
    """Absolute on-disk path of every add action (the log stores them URL-encoded)."""
    return [os.path.join(location, unquote(p)) for p in log_paths]


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


def _python_value(value: object) -> object:
    try:
        import pandas as pd

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

