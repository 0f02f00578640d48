"""Spark's warnings about what the job does on purpose, kept off the operator's console.

A run prints one line per step (`jobs.progress`), and Spark's driver log (at WARN)
interleaves with them. A few of its warnings only report a choice the job made and ask
nothing of an operator: the demo printed 27 of them between its progress lines, and every
run ended with one per checkpoint it released (the demo 11, a 1M audit 10). Those
loggers are set to ERROR through log4j2's `Configurator`, the logging Spark ships with;
under another backend nothing changes and the run goes on.

On a local master a failed task fails its job (no retries), and the run's own error then
reports it whole: the message an input mistake maps to (`jobs.audit.beyond_its_type`),
or the worker's traceback of anything else. Spark first logs the same failure three
times (the executor, the task set, the block manager), each with the worker's
traceback, ahead of that message: those loggers are quieted there too
(`quiet_task_failures`). On a cluster, where failed tasks are retried, they stay.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

log = logging.getLogger("rebalance_audit")

QUIET_LOGGERS = (
    # a query's plan text cut at spark.sql.maxPlanStringLength, which the session bounds on
    # purpose (`jobs.session.REQUIRED_CONF`): one warning per long query
    "org.apache.spark.sql.catalyst.util.StringUtils",
    # a plan's field list cut at spark.sql.debug.maxToStringFields (the pass's wide rows)
    "org.apache.spark.util.SparkStringUtils",
    # a read whose path it cannot list ("Assume no metadata directory", a data file the
    # log names gone), with the Java stack trace, ahead of the run's own message naming
    # the table and the file (`jobs.audit`: exit 2)
    "org.apache.spark.sql.execution.streaming.sinks.FileStreamSink",  # Spark 4
    "org.apache.spark.sql.execution.streaming.FileStreamSink",  # Spark 3
)
# a task's failure as the executor, the task set and the block manager log it, and the
# level each is set to on a local master without retries
TASK_FAILURE_LOGGERS = {"org.apache.spark.executor.Executor": "OFF",
                        "org.apache.spark.scheduler.TaskSetManager": "OFF",
                        "org.apache.spark.storage.BlockManager": "ERROR"}
# local, local[N], local[*]: one attempt per task (local[N,F] retries F - 1 times)
_NO_RETRIES = re.compile(r"local(\[[^,\]]*\])?")
# where an RDD warns, as its local checkpoint is released, that it cannot be recomputed:
# the run releases its checkpoints once it no longer reads them (`jobs.persist`)
RDD_LOGGERS = "org.apache.spark.rdd"


def quiet_known_warnings(spark: SparkSession) -> None:
    """Set the QUIET_LOGGERS to ERROR for the session's JVM."""
    for name in QUIET_LOGGERS:
        _set_level(spark, name)


def quiet_task_failures(spark: SparkSession) -> None:
    """On a local master without task retries, the TASK_FAILURE_LOGGERS to their levels:
    the run's own error reports a failed task whole."""
    if _NO_RETRIES.fullmatch(spark.sparkContext.master or ""):
        for name, level in TASK_FAILURE_LOGGERS.items():
            _set_level(spark, name, level)


def silence_all(spark: SparkSession) -> None:
    """Every JVM logger off, the configured ones too (`SparkContext.setLogLevel` sets the
    root's level only): for a process that ends with its run (`jobs.interrupt`)."""
    try:
        jvm = spark.sparkContext._jvm
        jvm.org.apache.logging.log4j.core.config.Configurator.setAllLevels(
            "", jvm.org.apache.logging.log4j.Level.OFF)
    except Exception as exc:  # another logging backend: its log goes on
        log.debug("JVM loggers left as they are: %s", exc)


@contextmanager
def quieted(spark: SparkSession, name: str) -> Iterator[None]:
    """JVM logger `name` at ERROR inside the block, as it was configured after it."""
    undo = _set_level(spark, name)
    try:
        yield
    finally:
        undo()


def _set_level(spark: SparkSession, name: str, level: str = "ERROR") -> Callable[[], None]:
    """Set logger `name` to `level`; returns what puts its configuration back (its own
    level, or none of its own)."""
    try:
        jvm = spark.sparkContext._jvm
        context = jvm.org.apache.logging.log4j.core.LoggerContext.getContext(False)
        config = context.getConfiguration()
        own = config.getLoggerConfig(name)
        had_own = own.getName() == name
        before = own.getExplicitLevel() if had_own else None
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            name, jvm.org.apache.logging.log4j.Level.getLevel(level))
    except Exception as exc:  # another logging backend: its warnings stay
        log.debug("JVM logger %s left as it is: %s", name, exc)
        return lambda: None

    def undo() -> None:
        try:
            if had_own:
                config.getLoggerConfig(name).setLevel(before)
            else:
                config.removeLogger(name)
            context.updateLoggers()
        except Exception as exc:  # putting a log level back must never fail the run
            log.debug("JVM logger %s not restored: %s", name, exc)
    return undo
