"""The one place that knows how Delta tables are read and written.

Two engines behind one interface (`storage.offline.OfflineStore`,
`storage.native.NativeStore`):

* ``native``: delta-spark (``format("delta")``), when Delta's classes are on the JVM
  classpath (Databricks, EMR, any cluster started with the Delta package).
* ``offline``: for laptops and machines where the Delta jars cannot be downloaded:
  delta-rs owns the transaction log, Spark moves the parquet data.

``auto`` picks native when the classes are present, offline otherwise. Both replace
partitions only when no other writer touched them since the run first looked
(`TableState`), so concurrent runs cannot duplicate rows.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from storage.base import ENGINES, ConflictError, TableError, TableState, WriteResult
from storage.native import NativeStore
from storage.offline import OfflineStore, local_path

__all__ = ["ENGINES", "ConflictError", "DeltaStore", "NativeStore", "OfflineStore", "Store",
           "TableError", "TableState", "WriteResult", "local_path", "resolve_engine"]

DELTA_DATA_SOURCE = "org.apache.spark.sql.delta.sources.DeltaDataSource"
Store = OfflineStore | NativeStore


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
    resolved = ("native" if available else "offline") if requested == "auto" else requested
    master = spark.sparkContext.master
    if resolved == "offline" and not shares_the_drivers_disk(master):
        raise TableError(
            f"storage engine 'offline' writes this machine's disk, and master {master} runs "
            "tasks on other machines: the files they write would never reach the tables "
            "here. Put delta-spark's jars on the cluster (engine 'native'; "
            "./spark-submit.sh --with-delta-package fetches them where Maven is reachable) "
            "or run on a local master (local[*], local-cluster[...])."
        )
    return resolved


def shares_the_drivers_disk(master: str) -> bool:
    """Whether every task of `master` writes the driver's own disk, as the offline engine
    needs (its commit moves the files the tasks wrote): `local[...]` runs them in the
    driver, `local-cluster[...]` in executors on this machine."""
    return master.startswith("local")


def DeltaStore(spark: SparkSession, engine: str = "auto") -> Store:
    """The store for `engine` (auto | native | offline) in this session."""
    resolved = resolve_engine(spark, engine)
    return NativeStore(spark) if resolved == "native" else OfflineStore(spark)
