"""The native Delta engine: delta-spark (`format("delta")`), for Spark sessions that have
Delta's jars on the classpath (Databricks, EMR, a cluster started with the package).

Replacing partitions is a `replaceWhere` overwrite, whose own conflict detection refuses a
concurrent commit to the same partitions during the write. The run-level check (did
another run touch these partitions since this run first looked?) reads the commit files
after the run's baseline version through Spark, so it works on any Hadoop filesystem.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from storage.base import (
    PARTITION_COLUMN,
    ConflictError,
    TableError,
    TableState,
    WriteResult,
    filter_snapshots,
    snapshot_of_file,
)
from storage.delta_log import Commit
from vocabulary.errors import first_line

# delta-spark's exceptions for a lost optimistic-concurrency race
_CONFLICTS = ("ConcurrentAppendException", "ConcurrentDeleteReadException",
              "ConcurrentDeleteDeleteException", "ConcurrentWriteException",
              "MetadataChangedException", "ProtocolChangedException",
              "ConcurrentTransactionException", "DELTA_CONCURRENT")


def predicate(partitions: list) -> str:
    """SQL predicate selecting the given snapshot_id partitions (None = the null one)."""
    def lit(v: str) -> str:
        return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"

    values = [p for p in partitions if p is not None]
    parts = [f"`{PARTITION_COLUMN}` IN ({', '.join(lit(v) for v in values)})"] if values else []
    if any(p is None for p in partitions):
        parts.append(f"`{PARTITION_COLUMN}` IS NULL")
    return " OR ".join(parts) or "false"


BYTES_PER_ROW = 10


class NativeStore:
    """Delta tables through delta-spark."""

    engine = "native"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def exists(self, path: str) -> bool:
        from delta.tables import DeltaTable

        return bool(DeltaTable.isDeltaTable(self.spark, path))

    def state(self, path: str) -> TableState:
        from delta.tables import DeltaTable

        if not self.exists(path):
            return TableState(path, None)
        version = DeltaTable.forPath(self.spark, path).history(1).collect()[0]["version"]
        return TableState(path, int(version))

    def columns(self, path: str, name: str) -> list[str]:
        """An existing table's column names (Delta resolves them from its log)."""
        return self.read(path, name).columns

    def check(self, path: str, name: str, started: float) -> list[str]:
        """Preflight: an existing table must read as Delta. Debris is Delta's own business
        here (uncommitted files are invisible and removed by VACUUM)."""
        if self.exists(path):
            self.read(path, name).schema  # noqa: B018 - resolves the table, raises if broken
        return []

    def sweep(self, path: str, before: float) -> list[str]:
        return []

    def changes_after(self, path: str, version: int | None, partitions: list) -> list[Commit]:
        """Commits after `version` that touched `partitions`, whoever made them (a run
        given the same --run-id is another writer too)."""
        current = self.state(path).version
        start = -1 if version is None else version
        if current is None or current <= start:
            return []
        files = [f"{path.rstrip('/')}/_delta_log/{v:020d}.json"
                 for v in range(start + 1, current + 1)]
        log = self.spark.read.json(files).withColumn("_file", F.col("_metadata.file_path"))
        columns = set(log.columns)
        values = []
        for kind in ("add", "remove"):
            if kind in columns:
                values.append(F.col(f"{kind}.partitionValues.{PARTITION_COLUMN}"))
        if not values:
            return []
        user = (F.col("commitInfo.userMetadata") if "commitInfo" in columns
                and "userMetadata" in log.schema["commitInfo"].dataType.names else F.lit(None))
        rows = (log.select("_file", F.coalesce(*values).alias("p"), user.alias("run_id"))
                .groupBy("_file").agg(F.collect_set("p").alias("ps"),
                                      F.max("run_id").alias("run_id")).collect())
        wanted = set(partitions)
        out = []
        for row in rows:
            touched = frozenset(row.ps) | ({None} if None in wanted else frozenset())
            if touched & wanted:
                version = int(row._file.rsplit("/", 1)[-1].split(".")[0])
                out.append(Commit(version, touched, row.run_id))
        return out

    def row_estimate(self, path: str, snapshots: list[str] | None = None) -> int | None:
        """Delta's table detail knows bytes, not rows: rows estimated at BYTES_PER_ROW
        (measured on the input tables: 8 to 12 bytes per row of compressed parquet), of the
        whole table (it has no size per partition), whatever `snapshots`."""
        try:
            detail = self.spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()
        except Exception:
            return None
        size = detail["sizeInBytes"] if detail is not None else None
        return None if size is None else int(size) // BYTES_PER_ROW

    def snapshots_in(self, path: str, name: str) -> set[str]:
        """The snapshot_id values the table's current data files hold, from their folders
        as Delta's log lists them (no data file read)."""
        files = self.read(path, name).inputFiles()
        return {s for s in map(snapshot_of_file, files) if s is not None}

    def read(self, path: str, name: str, snapshots: list[str] | None = None) -> DataFrame:
        """The table's rows as of its version now: without `versionAsOf` Delta resolves
        the latest version again each time the plan runs, so a run's scans of one input
        (its validated rows, its key aggregate, a recomputed cache) could see two
        versions of it."""
        try:
            version = self.state(path).version
            reader = self.spark.read.format("delta")
            if version is not None:
                reader = reader.option("versionAsOf", version)
            df = reader.load(path)
        except Exception as exc:  # py4j / analysis errors: say which table
            raise TableError(f"{name} table at {path} could not be read as Delta: "
                             f"{first_line(exc)}") from exc
        return filter_snapshots(df, snapshots)

    def read_rows(self, path: str, name: str, columns: list[str]) -> list[Row]:
        """A small table's `columns`, every row collected (as `OfflineStore.read_rows`)."""
        return self.read(path, name).select(*columns).collect()

    def write(
        self, df: DataFrame | None, path: str, name: str, partition_by: list[str],
        replace: list | None = None, since: TableState | None = None,
        run_id: str | None = None, rows_per_file: int | None = None,
    ) -> WriteResult:
        """As OfflineStore.write, through delta-spark's transactions."""
        from delta.tables import DeltaTable

        if replace is not None and since is not None:
            conflicts = self.changes_after(path, since.version, replace)
            if conflicts:
                raise ConflictError.of_commits(name, path, replace, conflicts, run_id)
        try:
            if df is None:
                if replace is not None and self.exists(path):
                    DeltaTable.forPath(self.spark, path).delete(predicate(replace))
            else:
                writer = (df.write.format("delta").partitionBy(*partition_by)
                          .option("userMetadata", run_id or ""))
                if rows_per_file:
                    writer = writer.option("maxRecordsPerFile", rows_per_file)
                if replace is not None:
                    writer = writer.mode("overwrite").option("replaceWhere", predicate(replace))
                else:
                    writer = writer.mode("append")
                writer.save(path)
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            if any(marker in text for marker in _CONFLICTS):
                raise ConflictError(name, path, replace or [], []) from exc
            raise TableError(f"writing the {name} table at {path} failed: "
                             f"{first_line(exc)}") from exc
        return WriteResult(name, self.engine, -1, self.state(path).version)
