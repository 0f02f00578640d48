"""Frames the run reads more than once are persisted here and released together at the end.

Spark recomputes an unpersisted frame for every action that reads it; the audit reads its
validated inputs, assignment rows and shared aggregates several times each.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame

_PERSISTED: list[DataFrame] = []


def cache(df: DataFrame) -> DataFrame:
    """Persist `df` (memory, spilling to disk) until `release` is called."""
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    _PERSISTED.append(df)
    return df


def release() -> None:
    """Unpersist everything `cache` persisted (call when the run no longer needs it)."""
    while _PERSISTED:
        _PERSISTED.pop().unpersist()
