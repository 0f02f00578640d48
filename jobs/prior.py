"""The snapshots already in the output that come just before one of a run's (the one
before its first, and any between two of its own): what churn and the sticky assignors
compare against, read from the output instead of recomputed."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from datetime import datetime
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.held import HeldRun, Key, held_of, previous_keys
from jobs.write import complete_runs
from storage.delta import Store


@dataclass
class Prior:
    """Rows of the snapshots already in the output that precede one of this run's (per
    cluster: the one before its first, and any between two of its own): what churn and
    the sticky assignors compare against (no history recomputed)."""

    snapshots: list[str]
    assignments: DataFrame | None = None
    consumer_load: DataFrame | None = None


def prior_keys(store: Store, output: str, captured: dict[Key, datetime | None],
               current: list[str]) -> list[tuple[str, str | None]]:
    """The complete snapshots in the output just before one of this run's (`captured`: its
    snapshots and clusters, with their capture times): [(snapshot_id, run_id)], sorted
    (`jobs.held.previous_keys`).

    Complete = named by `runs`. An output written before `runs` existed falls back to the
    snapshots of consumer_load."""
    runs = complete_runs(store, output)
    if runs is not None:
        held = held_of(runs)
    elif store.exists(f"{output}/consumer_load") and store.exists(f"{output}/assignments"):
        rows = (store.read(f"{output}/consumer_load", "consumer_load")
                .select("snapshot_id", "cluster", "captured_at", "run_id").distinct()
                .collect())
        held = {(r.snapshot_id, r.cluster): HeldRun(r.captured_at, {}, r.run_id) for r in rows}
    else:
        return []
    return previous_keys(held, captured, current)


def read_prior(store: Store, output: str, captured: dict[Key, datetime | None],
               current: list[str]) -> Prior:
    """The previous complete snapshots' assignment and load rows (each of the run `runs`
    names for it)."""
    keys = prior_keys(store, output, captured, current)
    if not keys:
        return Prior([])
    ids = sorted({s for s, _ in keys})
    named = reduce(operator.or_, [(F.col("snapshot_id") == s) & F.col("run_id").eqNullSafe(r)
                                  for s, r in keys])

    def rows(name: str) -> DataFrame:
        return store.read(f"{output}/{name}", name, snapshots=ids).where(named)

    return Prior(ids, rows("assignments"), rows("consumer_load"))
