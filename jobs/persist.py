"""Frames a run reads more than once are persisted by the run and released together.

Spark recomputes an unpersisted frame for every action that reads it; the audit reads its
validated inputs, assignment rows and shared aggregates several times each. Each run owns
its own `Persisted`, so two runs in one session never release each other's frames.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark import StorageLevel
from pyspark.sql import DataFrame

# what validation and the reports take: persist a frame for the rest of the run
Persist = Callable[[DataFrame], DataFrame]


class Persisted:
    """The frames one run persisted (memory, spilling to disk), released together."""

    def __init__(self) -> None:
        self._frames: list[DataFrame] = []

    def __call__(self, df: DataFrame) -> DataFrame:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        self._frames.append(df)
        return df

    def release(self) -> None:
        while self._frames:
            self._frames.pop().unpersist()
