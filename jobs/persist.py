"""Frames a run reads more than once are materialized once by the run and released together.

Spark recomputes an unmaterialized frame for every action that reads it; the audit reads its
validated inputs, assignment rows and shared aggregates several times each. They are *local
checkpoints*, not `persist()`: a persisted frame keeps its whole lineage, so every later plan
nests the plans of everything before it (up to 32 MB of plan text per query at 1M rows),
and Spark plans, matches against its cache and renders those trees again for every query.
A checkpoint starts the next plan from its rows (`Scan ExistingRDD`). Measured at 1M rows on
2 cores (`spark-submit.sh audit`, nothing else changed): 180 s → 143 s wall, the same
output rows (rate sums aside: their last bits followed the row order, see
rebalance_udfs.spark.rates).

A checkpoint is computed when taken (`eager`): call it inside the step whose time it is.
A lazy one is computed by the first action that reads it, which stores its rows as it
scans them: validation's key aggregate materializes the input rows in its own scan.
Each run owns its own `Persisted`, so two runs in one session never release each other's
frames.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from jobs.interrupt import process_ending
from jobs.jvm_logs import RDD_LOGGERS, quieted


class Persist(Protocol):
    """What validation and the reports take: materialize a frame for the rest of the run
    (`eager=False`: by the first action that reads it, in that action's own scan)."""

    def __call__(self, df: DataFrame, eager: bool = True) -> DataFrame: ...

log = logging.getLogger("rebalance_audit")


class Persisted:
    """The frames one run materialized, released together: serialized rows on the
    executors' local disk (the operating system's page cache keeps them in memory where it
    can), not in the JVM heap. In memory they took the heap from the tasks: at 10M
    assignment rows on a 4g local driver a Parquet write failed for want of execution
    memory once the report pass's side rows were held beside its packed rows, and the
    collector's threads spent 74 CPU-s in the last 10M run that held them in memory,
    27 with them on disk."""

    def __init__(self) -> None:
        self._frames: list[DataFrame] = []

    def __call__(self, df: DataFrame, eager: bool = True) -> DataFrame:
        if any(df is frame for frame in self._frames):  # already materialized by this run
            return df
        with _static_plan_if_partitioned(df):
            df = df.localCheckpoint(eager=eager, storageLevel=StorageLevel.DISK_ONLY)
        self._frames.append(df)
        return df

    def release(self) -> None:
        """Free every frame's blocks. Spark warns, once per local checkpoint released,
        that its rows cannot be recomputed: the run no longer reads them, so that warning
        is kept off the console."""
        if process_ending():  # Ctrl-C on the command line: the JVM goes with it
            self._frames.clear()
        if not self._frames:
            return
        with quieted(self._frames[0].sparkSession, RDD_LOGGERS):
            while self._frames:
                _drop_blocks(self._frames.pop())


@contextmanager
def _static_plan_if_partitioned(df: DataFrame) -> Iterator[None]:
    """A frame hash-partitioned by its own plan is checkpointed without adaptive execution:
    only then does the checkpoint keep its partitioning (an adaptive plan's partitioning is
    not known when the checkpoint records it), so the queries that read it need no shuffle
    of their own. Other frames keep adaptive execution. (Today that frame is the report
    pass's output, bucketed by group, and no query reads it by bucket any more: whether
    adaptive execution would plan the pass better is not measured.)"""
    spark = df.sparkSession
    try:
        partitioning = df._jdf.queryExecution().sparkPlan().outputPartitioning().toString()
    except Exception as exc:  # planning details are not a public API: keep the default
        log.debug("partitioning not known: %s", exc)
        partitioning = ""
    if not partitioning.startswith("hashpartitioning"):
        yield
        return
    key = "spark.sql.adaptive.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, "false")
    try:
        yield
    finally:
        spark.conf.set(key, before)


def _drop_blocks(df: DataFrame) -> None:
    """Free a checkpoint's blocks now (else they stay until the JVM collects the frame).
    The checkpointed rows are the RDD under the frame's `LogicalRDD` plan; PySpark has no
    public handle on it."""
    try:
        df._jdf.queryExecution().logical().rdd().unpersist(False)
    except Exception as exc:  # a release must never fail the run
        log.debug("checkpoint not released: %s", exc)
