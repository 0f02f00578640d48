"""The snapshot before a run's first one, already in the output: what churn and the
sticky assignors compare against, read from the output instead of recomputed."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.write import complete_runs
from storage.delta import Store


@dataclass
class Prior:
    """Rows of the snapshot that precedes this run's first one, per cluster, already in the
    output: what churn and the sticky assignors compare against (no history recomputed)."""

    snapshots: list[str]
    assignments: DataFrame | None = None
    consumer_load: DataFrame | None = None


def prior_keys(store: Store, output: str, times: DataFrame, current: list[str]) -> list:
    """Per cluster, the latest complete snapshot in the output before this run's earliest
    one (by captured_at, then snapshot_id): [(snapshot_id, run_id)], sorted.

    Complete = named by `runs`. An output written before `runs` existed falls back to the
    snapshots of consumer_load."""
    runs = complete_runs(store, output)
    if runs is not None:
        seen = runs.select("snapshot_id", "cluster", "captured_at", "run_id")
    elif store.exists(f"{output}/consumer_load") and store.exists(f"{output}/assignments"):
        seen = (store.read(f"{output}/consumer_load", "consumer_load")
                .select("snapshot_id", "cluster", "captured_at", "run_id").distinct())
    else:
        return []
    key = F.struct(F.col("captured_at"), F.col("snapshot_id"))
    first = times.groupBy("cluster").agg(F.min(key).alias("_first"))
    previous = (seen.where(~F.col("snapshot_id").isin(current))
                .join(first, "cluster").where(key < F.col("_first"))
                .groupBy("cluster")
                .agg(F.max(F.struct("captured_at", "snapshot_id", "run_id")).alias("_prev"))
                .select("_prev.snapshot_id", "_prev.run_id").collect())
    return sorted({(r.snapshot_id, r.run_id) for r in previous})


def read_prior(store: Store, output: str, times: DataFrame, current: list[str]) -> Prior:
    """The previous complete snapshot's assignment and load rows (of the run `runs` names)."""
    keys = prior_keys(store, output, times, current)
    if not keys:
        return Prior([])
    ids = sorted({s for s, _ in keys})
    runs = sorted({r for _, r in keys})

    def rows(name: str) -> DataFrame:
        return (store.read(f"{output}/{name}", name, snapshots=ids)
                .where(F.col("run_id").isin(runs)))

    return Prior(ids, rows("assignments"), rows("consumer_load"))
