"""Read: the input tables as Delta, conformed to their contracts and validated.

Reading is lazy; validation (`jobs.validate`) splits every table into usable rows and
`rejects`, persisting through the run's `Persisted` so one pass serves both. The row
counts for the progress line and for sizing the run come from the tables' Delta logs
(file statistics), not from a Spark job.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.persist import Persist, Persisted
from jobs.validate import (
    conform,
    validate_members,
    validate_observed,
    validate_offsets,
    validate_queues,
)
from storage.delta import Store


@dataclass
class Inputs:
    queues: DataFrame
    members: DataFrame
    offsets: DataFrame | None
    rejects: DataFrame
    observed: DataFrame | None = None

    def limited_to(self, snapshots: list[str]) -> Inputs:
        """The usable rows of these snapshots (rejects stay whole: they are all written)."""
        def keep(df: DataFrame) -> DataFrame:
            return df.where(F.col("snapshot_id").isin(snapshots))

        def maybe(df: DataFrame | None) -> DataFrame | None:
            return keep(df) if df is not None else None

        return Inputs(keep(self.queues), keep(self.members), maybe(self.offsets), self.rejects,
                      maybe(self.observed))


@dataclass(frozen=True)
class InputPaths:
    queues: str
    members: str
    offsets: str | None = None
    observed: str | None = None

    def named(self) -> dict[str, str]:
        return {name: path for name, path in vars(self).items() if path}


def input_rows(store: Store, paths: InputPaths) -> dict[str, int | None]:
    """Rows per input table from its Delta log (None when the log has no statistics)."""
    return {name: store.row_estimate(path) for name, path in paths.named().items()}


def read_inputs(store: Store, paths: InputPaths, snapshots: tuple[str, ...] = (),
                persist: Persist | None = None) -> Inputs:
    """Read, conform and validate the inputs; limit them to `snapshots` when given."""
    persist = persist or Persisted()

    def load(path: str, name: str) -> DataFrame:
        df = conform(store.read(path, name), name)
        return df.where(F.col("snapshot_id").isin(list(snapshots))) if snapshots else df

    q_good, q_bad = validate_queues(load(paths.queues, "queues"), persist)
    m_good, m_bad = validate_members(load(paths.members, "members"), persist)
    rejects = q_bad.unionByName(m_bad)
    o_good = None
    if paths.offsets:
        o_good, o_bad = validate_offsets(load(paths.offsets, "offsets"), persist)
        rejects = rejects.unionByName(o_bad)
    seen = None
    if paths.observed:
        seen, s_bad = validate_observed(load(paths.observed, "observed"), persist)
        rejects = rejects.unionByName(s_bad)
    return Inputs(q_good, m_good, o_good, rejects, seen)
