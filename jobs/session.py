"""The SparkSession: the same code on a laptop (local[*]) and on a cluster.

`spark-submit` decides master and resources; when the job is started as plain Python
(tests, notebooks) we default to local[*]. Settings here are the ones the job needs
whatever the cluster: Arrow for pandas UDFs, the driver's interpreter for the workers.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

REQUIRED_CONF = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # Spark's own marker files are not part of a Delta table
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # Spark renders every query's plan into a string for its listeners (the SQL tab), even
    # with the UI off. Plans that nested persisted plans reached 23 MB of text each in the
    # demo and kept strings of them filled the driver heap; the run's checkpoints
    # (jobs/persist.py) keep plans short now, and this bound stays for the plans that are
    # still long. 100k characters keep the operators readable.
    "spark.sql.maxPlanStringLength": "100000",
}


def build_session(
    app_name: str = "rebalance-audit",
    master: str | None = None,
    conf: dict[str, str] | None = None,
    log_level: str = "WARN",
    console_progress: bool = False,
) -> SparkSession:
    """Get or create the session; `master` only applies when spark-submit did not set one.
    Spark's console progress bars stay off unless `console_progress` (the run prints one
    line per step instead, `jobs.progress`)."""
    # Without this the Python workers start the system python3, which lacks pandas/pyarrow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if not launched_by_spark_submit():
        builder = builder.master(master or "local[*]")
    progress = {"spark.ui.showConsoleProgress": str(console_progress).lower()}
    for key, value in {**REQUIRED_CONF, **progress, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    return spark


def launched_by_spark_submit() -> bool:
    """spark-submit starts the JVM first and hands its gateway port to Python; then the
    master and resources are spark-submit's and must not be overridden here."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
