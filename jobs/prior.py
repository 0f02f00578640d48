"""The snapshots already in the output that come just before one of a run's (the one
before its first, and any between two of its own): what churn and the sticky assignors
compare against, read from the output instead of recomputed."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.held import Held, HeldRun, Key, held_of, previous_keys, unfinished_before
from jobs.scope import Note
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
    # (snapshot_id, run_id) of every complete snapshot when these rows were read: a
    # previous snapshot found later that is none of them landed meanwhile (`landed_since`)
    complete: frozenset[tuple[str, str | None]] = frozenset()
    # the complete snapshots (`runs`) these rows were chosen from
    held: Held = field(default_factory=dict)

    def landed_since(self, keys: list[tuple[str, str | None]]) -> list[str]:
        """The snapshots of `keys` (`prior_keys` now) that were not complete when this
        was read, or were complete from another run: an earlier snapshot published, or
        audited again, since. One that is gone (a run of it has retracted its `runs`
        rows and is writing it, or died doing so) is no such snapshot, nor is an older
        one it uncovers: this run's churn, read from its complete rows, stands, and the
        run of it names this run's snapshots when it lands (`jobs.held`), or its next run
        does."""
        return sorted({s for s, run in keys if (s, run) not in self.complete})


def _held(store: Store, output: str) -> Held:
    """The complete snapshots of the output: named by `runs`. An output written before
    `runs` existed falls back to the snapshots of consumer_load."""
    runs = complete_runs(store, output)
    if runs is not None:
        return held_of(runs)
    if store.exists(f"{output}/consumer_load") and store.exists(f"{output}/assignments"):
        rows = (store.read(f"{output}/consumer_load", "consumer_load")
                .select("snapshot_id", "cluster", "captured_at", "run_id").distinct()
                .collect())
        return {(r.snapshot_id, r.cluster): HeldRun(r.captured_at, {}, r.run_id)
                for r in rows}
    return {}


def prior_keys(store: Store, output: str, captured: dict[Key, datetime | None],
               current: list[str]) -> list[tuple[str, str | None]]:
    """The complete snapshots in the output just before one of this run's (`captured`: its
    snapshots and clusters, with their capture times): [(snapshot_id, run_id)], sorted
    (`jobs.held.previous_keys`)."""
    return previous_keys(_held(store, output), captured, current)


def unfinished_predecessors(store: Store, output: str, held: Held,
                            captured: dict[Key, datetime | None]) -> list[Note]:
    """`jobs.held.unfinished_before` of the snapshots assignments holds rows of that
    `held` (the complete ones) does not name: a look at its log (no data read), and only
    when there are such snapshots, one read of their partitions' keys and capture times.
    Assignments is the table a run writes first."""
    path = f"{output}/assignments"
    if not captured or not store.exists(path):
        return []
    gone = (store.snapshots_in(path, "assignments") - {s for s, _ in held}
            - {s for s, _ in captured})
    if not gone:
        return []
    rows = (store.read(path, "assignments", snapshots=sorted(gone))
            .groupBy("snapshot_id", "cluster").agg(F.min("captured_at").alias("captured_at"))
            .collect())
    return unfinished_before({(r.snapshot_id, r.cluster): r.captured_at for r in rows},
                             held, captured)


def read_prior(store: Store, output: str, captured: dict[Key, datetime | None],
               current: list[str]) -> Prior:
    """The previous complete snapshots' assignment and load rows (each of the run `runs`
    names for it)."""
    held = _held(store, output)
    keys = previous_keys(held, captured, current)
    complete = frozenset((s, run.run_id) for (s, _), run in held.items())
    if not keys:
        return Prior([], complete=complete, held=held)
    ids = sorted({s for s, _ in keys})
    named = reduce(operator.or_, [(F.col("snapshot_id") == s) & F.col("run_id").eqNullSafe(r)
                                  for s, r in keys])

    def rows(name: str) -> DataFrame:
        return store.read(f"{output}/{name}", name, snapshots=ids).where(named)

    return Prior(ids, rows("assignments"), rows("consumer_load"), complete, held)
