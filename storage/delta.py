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
    if requested == "auto":
        return "native" if available else "offline"
    return requested


def DeltaStore(spark: SparkSession, engine: str = "auto") -> Store:
    """The store for `engine` (auto | native | offline) in this session."""
    resolved = resolve_engine(spark, engine)
    return NativeStore(spark) if resolved == "native" else OfflineStore(spark)
