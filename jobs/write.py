"""Publishing a run's tables as one unit.

Protocol (every step conflict-checked against the table versions the run saw when it
started, `baselines`):

1. retract: remove the `runs` rows of the snapshots this run replaces, so that while it
   writes, and if it dies part-way, readers see those snapshots as incomplete;
2. replace each output table's partitions of those snapshots, one commit per table;
3. verify that no other writer touched any of those partitions after this run's commit;
4. commit the `runs` rows, then verify 3 again: another run's table commits take no lock,
   and one landing between 3 and 4 (this run stalled there) takes the `runs` rows back
   out (ConflictError). From then on every table holds, for each of these snapshots, the
   rows of exactly this run, and `runs` names it.

The last check of what the run computed against (`still_current`), the `runs` commit and
the caller's look at what others published meanwhile (`landed`) are one turn under the
output root's publish lock (local roots): of two runs landing at once, one sees the
other's `runs` rows. Without it, a run could check before the other's commit and commit
after the other's look, and neither would know (a later snapshot's churn against the
snapshot before an earlier one published meanwhile, with no warning).

A run that dies anywhere before 4 leaves no `runs` row for its snapshots; the next run of
them replaces every table again. A run that finds another writer's commit in its way
stops with ConflictError (exit 2) having published nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from jobs.progress import progress_line
from jobs.scope import Scope
from jobs.sizing import partitions_for
from storage import locks
from storage.base import ConflictError, TableError, TableState, WriteResult
from storage.delta import Store
from storage.paths import is_local, without_file_scheme
from vocabulary.contracts import COMPLETE, NOT_AUDITED, RUNS, RUNS_SCHEMA
from vocabulary.partitions import snapshot_id_fits

PARTITION_BY = ["snapshot_id"]
# written in as many tasks as their rows need (`_sized`), not as many as the frame they
# come from has: the assignments (one partition per bucket of the pass) and the rejects
# (a union of every input's partitions and, on a re-run, the kept rows'). The pass's other
# tables are decoded in as many tasks as their rows need (`jobs.report`).
SIZED = ("assignments", "rejects")
# the most rows a file of a table report.html reads holds: the page reads a file at a
# time, and its peak follows the files' size. About 0.3 MB a file, as when each bucket
# of the pass wrote its own (10M benchmark output, the page in a process with Spark up:
# 245 MB so, 243-244 MB with these caps, 264-287 MB with 50,000 rows a file for every
# table, 283 MB uncapped); whatever the run's size
PAGE_FILE_ROWS = {"group_balance": 5_000, "rebalance_churn": 5_000, "drift": 5_000,
                  "consumer_load": 20_000, "what_if": 50_000}

# how long a run waits for another's turn under the publish lock (a check, one small
# commit and one read: seconds)
PUBLISH_WAIT_SECONDS = 300.0

Counts = dict[tuple[str | None, str | None], int]
Hook = Callable[[str], None]

log = logging.getLogger("rebalance_audit")


@dataclass
class Publication:
    """What one run writes: its tables (stamped with run_id), rejects apart."""

    run_id: str
    started_at: datetime
    scope: Scope
    tables: dict[str, DataFrame]  # every output table but rejects, audited snapshots only
    rejects: DataFrame  # this run's rejects, every snapshot it read
    counts: dict[str, Counts]  # rows per (snapshot, cluster) of every table, rejects too
    # captured_at of every (snapshot, cluster) it writes a runs row of, not audited too
    times: dict[tuple[str | None, str | None], datetime | None]


def count_rows(df: DataFrame) -> Counts:
    """Rows per (snapshot_id, cluster): what `runs.rows` records (a few rows to the driver)."""
    return {(r.snapshot_id, r.cluster): r["count"]
            for r in df.groupBy("snapshot_id", "cluster").count().collect()}


# what a run reads of `runs`: a few small columns of a row per snapshot and cluster
RUN_COLUMNS = ["snapshot_id", "cluster", "captured_at", "rows", "run_id", "status"]


def complete_runs(store: Store, output: str) -> list[Row] | None:
    """The `runs` rows of complete runs (`RUN_COLUMNS`), collected, or None when the
    output has no runs table. A run reads them six times (what the output holds, the
    previous snapshots, three times as it publishes, once more when it has landed):
    through `Store.read_rows`, whose offline read costs no Spark job."""
    path = f"{output}/{RUNS}"
    if not store.exists(path):
        return None
    return [r for r in store.read_rows(path, RUNS, RUN_COLUMNS) if r.status == COMPLETE]


def kept_complete_runs(store: Store, output: str, snapshots: list[str]) -> dict[str, str]:
    """snapshot -> run_id of the complete run the output holds for it (when one does)."""
    runs = complete_runs(store, output)
    if runs is None or not snapshots:
        return {}
    wanted = {s for s in snapshots if s is not None}  # a null: as Spark's isin, none
    return {r.snapshot_id: r.run_id for r in runs if r.snapshot_id in wanted}


def publish(spark: SparkSession, store: Store, output: str, pub: Publication,
            baselines: dict[str, TableState], hook: Hook,
            still_current: Callable[[], None] = lambda: None,
            describe: Callable[[str | None], None] = lambda _name: None,
            landed: Callable[[], None] = lambda: None) -> list[WriteResult]:
    """Run the protocol above; `still_current` raises if what the run computed against
    (the previous snapshot) changed meanwhile; `landed` is called once `runs` names this
    run, still under the publish lock. One progress line per table written.

    `baselines` moves to each of this run's own commits as it makes them (`_own`): a run
    that computes again when `still_current` raises in its publish turn publishes again
    over its first attempt's rows, and only another writer's commits are conflicts."""
    scope, run_id = pub.scope, pub.run_id
    kept = kept_complete_runs(store, output, scope.not_audited)
    fresh = [s for s in scope.not_audited if s not in kept]  # nothing complete to keep
    runs_path = f"{output}/{RUNS}"

    retract = store.write(None, runs_path, RUNS, PARTITION_BY, replace=scope.audited + fresh,
                          since=baselines[RUNS], run_id=run_id)
    _own(baselines, RUNS, retract, runs_path)
    hook("retracted")

    writes: list[tuple[WriteResult, list]] = []
    rejects, reject_partitions = _rejects_to_write(store, output, pub, kept, fresh)
    for name, df, partitions in (*((n, df, scope.audited) for n, df in pub.tables.items()),
                                 ("rejects", rejects, reject_partitions)):
        describe(f"audit: write {name}")
        started = time.perf_counter()
        rows = sum(pub.counts.get(name, {}).values())
        if name in SIZED:
            df = _sized(df, rows)
        result = store.write(df, f"{output}/{name}", name, PARTITION_BY, replace=partitions,
                             since=baselines[name], run_id=run_id,
                             rows_per_file=PAGE_FILE_ROWS.get(name))
        _own(baselines, name, result, f"{output}/{name}")
        writes.append((result, partitions))
        progress_line(f"write {name}", time.perf_counter() - started,
                      f"{rows:,} rows, version {result.version}")
        hook(f"committed:{name}")

    if (overtaken := _overwritten(store, output, writes, run_id)) is not None:
        raise overtaken
    with publish_turn(output):
        still_current()
        hook("verified")
        rows = _runs_rows(pub, fresh, [n for n in pub.tables] + ["rejects"], store.engine)
        since = TableState(runs_path, retract.version)
        final = store.write(spark.createDataFrame(rows, RUNS_SCHEMA), runs_path, RUNS,
                            PARTITION_BY, replace=scope.audited + fresh, since=since,
                            run_id=run_id)
        # another run's table commits need no lock: one may have landed after the check
        # above and before this commit (this run stalled between them: stopped, paused,
        # waiting for the lock), and `runs` would name this run beside its rows. Looked
        # at again now that `runs` names it; found, the rows go again: nothing published
        if (overtaken := _overwritten(store, output, writes, run_id)) is not None:
            with suppress(ConflictError):  # another run took them back already
                store.write(None, runs_path, RUNS, PARTITION_BY,
                            replace=scope.audited + fresh,
                            since=TableState(runs_path, final.version), run_id=run_id)
            raise overtaken
        hook("published")
        landed()
    return [r for r, _ in writes] + [final]


def _overwritten(store: Store, output: str, writes: list[tuple[WriteResult, list]],
                 run_id: str) -> ConflictError | None:
    """The conflict of another writer's commit to a partition this run wrote, after its
    own commit, or None. A run writes each table once, so every later commit is another
    writer's, whatever run id it carries (two runs may be given the same --run-id;
    telling them apart by it let one publish the other's rows)."""
    for result, partitions in writes:
        path = f"{output}/{result.table}"
        others = store.changes_after(path, result.version, partitions)
        if others:
            return ConflictError.of_commits(result.table, path, partitions, others, run_id)
    return None


def _own(baselines: dict[str, TableState], name: str, result: WriteResult,
         path: str) -> None:
    """The table's baseline moved to this run's own commit (`result`): the write checked
    that no other commit touched its partitions between the old baseline and it."""
    if result.version is not None:
        baselines[name] = TableState(path, result.version)


@contextmanager
def publish_turn(output: str) -> Iterator[None]:
    """This run's turn under the output root's publish lock (see the protocol above). A
    remote root (native engine) has no file lock: there, two runs landing at once can
    still miss each other."""
    if not is_local(output):
        yield
        return
    lock = Path(without_file_scheme(output)) / locks.PUBLISH_LOCK
    waiting = partial(log.info, "another run is landing in %s: waiting for its turn to end",
                      lock.parent)
    with ExitStack() as turn:
        try:
            turn.enter_context(locks.exclusive(lock, PUBLISH_WAIT_SECONDS, on_wait=waiting))
        except locks.LockTimeout as exc:
            raise TableError(f"{exc}: another run has been landing in {lock.parent} for "
                             "that long; this run's snapshots are not published (no runs "
                             "rows), run it again") from exc
        yield


def _sized(df: DataFrame | None, rows: int) -> DataFrame | None:
    """The table in as many tasks as its rows need (`jobs.sizing`), not as many as the
    frame it is read from has; each task writes its own files (10M: the assignment rows
    of the pass's 73 buckets in 41 tasks)."""
    if df is None:
        return None
    return df.coalesce(partitions_for(rows, df.sparkSession.sparkContext.defaultParallelism))


def _rejects_to_write(store: Store, output: str, pub: Publication, kept: dict[str, str],
                      fresh: list[str]) -> tuple[DataFrame, list]:
    """This run's rejects, plus the rows it must keep in the partitions it rewrites.

    Audited and never-completed snapshots: this run's rows only (a re-run never multiplies
    them). A snapshot this run could not audit but an earlier run completed: that run's
    rejects stay beside this run's (whose rows say what was missing). Rows without a
    snapshot_id (or one no partition holds): replaced for every cluster this run read (only a
    run over whole inputs writes them); other clusters' rows stay."""
    scope = pub.scope
    partitions: list = [*scope.audited, *fresh, *kept]
    if scope.reads_null_snapshot:
        partitions.append(None)
    keep_snapshots = [*kept, None] if scope.reads_null_snapshot else list(kept)
    rejects = pub.rejects
    path = f"{output}/rejects"
    if keep_snapshots and store.exists(path):
        old = store.read(path, "rejects", snapshots=keep_snapshots)
        keep = F.lit(False)
        for snapshot, run in kept.items():
            keep = keep | ((F.col("snapshot_id") == snapshot) & (F.col("run_id") == run))
        if scope.reads_null_snapshot:
            # the null partition holds the rows without a snapshot_id and those whose id
            # no partition can hold (`validate`), of any snapshot: a run over the whole
            # inputs rejects again every such row of each cluster it read
            ours = F.lit(False)
            for c in scope.read_clusters:
                ours = ours | F.col("cluster").eqNullSafe(F.lit(c))
            keep = keep | (F.col("snapshot_id").isNull() & ~ours)
        rejects = rejects.unionByName(old.where(keep).select(*rejects.columns))
    return rejects, partitions


def _runs_rows(pub: Publication, fresh: list[str], tables: list[str], engine: str) -> list:
    finished = datetime.now(UTC)
    rows = []
    scope = pub.scope
    for snapshot, status, written, clusters in (
        *((s, COMPLETE, tables, scope.audited_clusters(s)) for s in scope.audited),
        # an id no partition folder holds is in the rejects only (`validate`)
        *((s, NOT_AUDITED, ["rejects"], scope.clusters.get(s, [None])) for s in fresh
          if snapshot_id_fits(s)),
    ):
        for cluster in clusters:
            counts = {t: int(pub.counts.get(t, {}).get((snapshot, cluster), 0)) for t in written}
            rows.append((snapshot, cluster, pub.times.get((snapshot, cluster)), pub.run_id,
                         pub.started_at, finished, written, counts, engine, status))
    return rows
