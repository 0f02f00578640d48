"""What the output already holds that this run changes without replacing: warnings.

A run replaces whole snapshots and compares its first snapshot with the one before it in
the output. What it does not redo must still be said: the clusters of a snapshot its
inputs lack (replacing the snapshot removes their rows); the rows earlier runs wrote in a
table this run writes empty, an option being off (drift without `--observed`, what_if
with `--what-if off`, the strategy comparison without `--compare-strategies`, or with it
of the first snapshot of each cluster, which has none before it in the run), and the
lags it writes null without `--offsets`; and the snapshot already in the output right
after one it adds (a backfill): that one's churn, and the sticky assignors' previous
assignment, still come from the snapshot before the backfilled one; and the snapshot
right after one it audits again from changed inputs, whose churn still comes from the
replaced rows. One small read of `runs` (a row per complete snapshot and cluster, with
its rows per table) answers all but the lags, which take a read of the snapshots'
partitions of consumer_load, and only in a run without `--offsets`, and the changed rows,
which take a read of the replaced snapshots' partitions, only when a later snapshot
follows one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from itertools import pairwise
from typing import NamedTuple

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from jobs.scope import Note, Scope
from jobs.write import complete_runs
from rebalance_udfs.churn_link import CLIENT_ROW_COLUMNS
from rebalance_udfs.churn_link import ROW_COLUMNS as PRIOR_ROW_COLUMNS
from storage.delta import Store
from vocabulary.words import listed

Key = tuple[str, str | None]  # (snapshot_id, cluster)


class HeldRun(NamedTuple):
    """What `runs` says of a complete (snapshot, cluster)."""

    captured_at: datetime | None
    rows: dict[str, int]  # rows it wrote per table
    run_id: str | None = None


Held = dict[Key, HeldRun]


# the tables a run writes without rows of its snapshots when an option is off: the
# option, and what their rows are
OPTIONAL_TABLES = {
    "drift": ("--observed", "drifting queue(s)"),
    "what_if": ("--what-if findings or all", "what-if row(s)"),
    "strategy_comparison": ("--compare-strategies", "strategy comparison row(s)"),
}


def held_runs(store: Store, output: str) -> Held:
    runs = complete_runs(store, output)
    return {} if runs is None else held_of(runs)


def held_of(runs: list[Row]) -> Held:
    """The complete `runs` rows (`jobs.write.complete_runs`): one small row per snapshot
    and cluster."""
    return {(r.snapshot_id, r.cluster): HeldRun(r.captured_at, dict(r.rows or {}), r.run_id)
            for r in runs}


def clusters_left_out(held: Held, scope: Scope) -> list[Note]:
    """A note for each cluster an earlier complete run of an audited snapshot covered and
    this run does not audit: replacing the snapshot removes its rows (a snapshot id shared
    by clusters audited one run each, or a capture that died between its queues and its
    members), which must not pass in silence."""
    notes = []
    for snapshot, cluster in sorted(held, key=_by_name):
        if snapshot not in scope.audited or cluster in scope.audited_clusters(snapshot):
            continue
        lacks = ("do not hold the cluster" if cluster not in scope.clusters.get(snapshot, [])
                 else "lack its usable queues or members rows")
        notes.append(Note(None, snapshot, cluster, (
            f"the output holds a complete run of this snapshot and cluster, and this run's "
            f"inputs {lacks}: replacing the snapshot removes its rows. Audit every cluster "
            "of a snapshot in one run, or give each cluster's captures snapshot ids of "
            "their own")))
    return notes


def replaced_by_none(held: Held, scope: Scope, off: list[str]) -> list[Note]:
    """A note per table of `off` (OPTIONAL_TABLES this run writes empty) in which the
    output's complete runs of the audited snapshots wrote rows: they are replaced by
    none (a scheduled run whose flag went missing), which must not pass in silence."""
    notes = []
    for table in off:
        option, what = OPTIONAL_TABLES[table]
        lost = {key: run.rows[table] for key, run in held.items()
                if run.rows.get(table) and key[0] in scope.audited}
        if lost:
            notes.append(_lost(table, lost, f"wrote {{n}} {what}", option,
                               f"its {table} table has none of them"))
    return notes


def comparison_without_predecessor(held: Held, run: dict[Key, datetime | None]) -> list[Note]:
    """With `--compare-strategies`: the note for the first snapshot of each cluster this
    run audits, when the output's complete run of it wrote strategy_comparison rows. The
    comparison pairs the run's own consecutive snapshots, so that one has none: a re-run
    of one snapshot replaced its rows by none, the flag given, and said nothing. And the
    note for such a first snapshot that the output holds a snapshot before (whose run
    wrote no comparison rows of it)."""
    first: dict[str | None, tuple] = {}
    for (snapshot, cluster), at in run.items():
        order = _order(snapshot, at)
        if cluster not in first or order < first[cluster]:
            first[cluster] = order
    lost = {(order[2], cluster): n for cluster, order in first.items()
            if (n := held.get((order[2], cluster), HeldRun(None, {})).rows.get(
                "strategy_comparison"))}
    notes = []
    if lost:
        keys = sorted(lost, key=_by_name)
        named = listed([_named(key) for key in keys[:5]], len(keys))
        notes.append(Note(None, None, None, (
            f"strategy_comparison: the output's complete runs of {named} wrote "
            f"{sum(lost.values())} strategy comparison row(s); this run compares its own "
            "consecutive snapshots only, and audits none before them, so its "
            "strategy_comparison table has none of them (audit each with the snapshot before "
            "it, in one run, to keep them)")))
    # a first snapshot the output holds one before: a run per capture (the schedule the
    # README suggests) wrote no comparison row at all, and said nothing
    follows = sorted(((order[2], cluster) for cluster, order in first.items()
                      if (order[2], cluster) not in lost and any(
                          c == cluster and (s, c) not in run and _order(s, h.captured_at) < order
                          for (s, c), h in held.items())), key=_by_name)
    if follows:
        named = listed([_named(key) for key in follows[:5]], len(follows))
        notes.append(Note(None, None, None, (
            f"strategy_comparison: {named} follow(s) a snapshot already in the output, which "
            "this run does not audit; the comparison pairs a run's own consecutive snapshots "
            "only, so this run writes no strategy comparison row for them (audit each with "
            "the snapshot before it, in one run, to have them)")))
    return notes


def lag_known(store: Store, output: str, held: Held, scope: Scope) -> dict[Key, int]:
    """Per audited (snapshot, cluster) the output holds a complete run of, the
    consumer_load rows of that run with a known lag: what a run without `--offsets`
    turns to null. One read of those snapshots' partitions of consumer_load."""
    runs = {key: run.run_id for key, run in held.items() if key[0] in scope.audited}
    path = f"{output}/consumer_load"
    if not runs or not store.exists(path):
        return {}
    rows = (store.read(path, "consumer_load", snapshots=sorted({s for s, _ in runs}))
            .where(F.col("lag").isNotNull() & F.col("run_id").isin(sorted(set(runs.values()))))
            .groupBy("snapshot_id", "cluster", "run_id").count().collect())
    return {(r.snapshot_id, r.cluster): r["count"] for r in rows
            if runs.get((r.snapshot_id, r.cluster)) == r.run_id}


def lag_replaced_by_none(known: dict[Key, int]) -> list[Note]:
    """The note for a run without `--offsets` over snapshots whose complete runs knew
    lags (`lag_known`): every lag column of theirs becomes null, a scheduled run whose
    `--offsets` went missing, which must not pass in silence."""
    known = {key: n for key, n in known.items() if n}
    if not known:
        return []
    return [_lost("lag", known, "knew the lag of {n} client(s) (consumer_load)",
                  "--offsets", "its lag columns (assignments, consumer_load, group_balance) "
                  "are null for them")]


def _lost(label: str, lost: dict[Key, int], had: str, option: str, now: str) -> Note:
    """One note for what the output's complete runs of `lost`'s snapshots had (`had`,
    with {n} their total) and this run, lacking `option`, replaces by none (`now`)."""
    keys = sorted(lost, key=_by_name)
    named = listed([_named(key) for key in keys[:5]], len(keys))
    return Note(None, None, None, (
        f"{label}: the output's complete runs of {named} "
        f"{had.format(n=sum(lost.values()))}; this run has no {option}, so {now} "
        f"(pass {option} to keep them)"))


def _named(key: Key) -> str:
    snapshot, cluster = key
    return f"snapshot {snapshot}" + (f" (cluster {cluster})" if cluster is not None else "")


def published_meanwhile(now: Held, before: Held, run: dict[Key, datetime | None]) -> list[Note]:
    """Notes for the snapshots another run published while this one ran (in `now`, read
    once this run landed, not in `before`, read when it began) that follow one this run
    adds: that run compared them with the snapshot before, not seeing this run's yet
    (were it the other way, this run would have computed its own churn again)."""
    others = {key: run_ for key, run_ in now.items() if key not in before and key not in run}
    if not others:
        return []
    return [Note(n.table, n.snapshot_id, n.cluster,
                 f"another run published it while this one ran; {n.reason}")
            for n in outdated_followers({**before, **others}, run)
            if (n.snapshot_id, n.cluster) in others]


def outdated_followers(held: Held, run: dict[Key, datetime | None],
                       compared: dict[Key, str | None] | None = None) -> list[Note]:
    """A note for each snapshot already in the output whose previous snapshot (by
    captured_at, then snapshot_id, per cluster) this run changes by adding one before
    it, or whose churn rows name another snapshot than the one before it that this run
    audits again; the run itself does not touch it. `compared`: the previous snapshot
    each one's churn rows name (`churn_previous`), where `held` alone would name
    another."""
    notes = []
    compared = compared or {}
    for snapshot, cluster, was, now in _followers(held, run):
        actual = compared.get((snapshot, cluster), was)
        if was == now:
            if actual != now:
                notes.append(Note(None, snapshot, cluster,
                                  _still_behind(snapshot, now, actual)))
            continue
        if actual == now and (now is None or (now, cluster) not in run):
            continue  # its churn already compares with its new previous, which stays
        if actual == now:
            # `runs` no longer names it: a run of it died after retracting its row
            reason = (f"already in the output, its churn compares with snapshot {now} as "
                      "an earlier run of it wrote it, a run that did not complete: this "
                      "run replaces those rows, so that churn (and the sticky assignors' "
                      "start) may not match them until it is audited again (--snapshot "
                      f"{snapshot})")
        else:
            reason = (f"already in the output, it now follows {_why_now(now, was, cluster, run)}: "
                      f"its churn compares with {_compared(actual)} until it is audited "
                      f"again (--snapshot {snapshot})")
        notes.append(Note(None, snapshot, cluster, reason))
    return notes


def _still_behind(snapshot: str, now: str | None, actual: str | None) -> str:
    """The note for a snapshot already in the output that follows `now`, which this run
    audits again, but whose churn compares with another (`actual`): it was audited before
    `now` was added before it (a backfill), and no run of it since."""
    return (f"already in the output, it follows snapshot {now}, which this run audits "
            f"again, but its churn compares with {_compared(actual)}: it was audited "
            f"before {now} was added before it, and stays so until it is audited again "
            f"(--snapshot {snapshot})")


def _why_now(now: str | None, was: str | None, cluster: str | None,
             run: dict[Key, datetime | None]) -> str:
    """Why a held snapshot's previous one is `now`, no longer `was`: this run audits `now`
    before it (a backfill), audits `was` at another capture time, moving it away, or
    audits `was`'s snapshot without this cluster, removing it."""
    if now is not None and (now, cluster) in run:
        return f"snapshot {now}, which this run audits before it"
    before = f"snapshot {now}" if now is not None else "no earlier snapshot"
    if was is not None and (was, cluster) not in run:  # audited without this cluster
        return (f"{before}, as this run removes snapshot {was}'s rows of this cluster (its "
                "inputs lack them)")
    return f"{before}, as this run audits snapshot {was} at another capture time"


def _compared(previous: str | None) -> str:
    """What the follower's churn rows compare with, and the sticky assignors started from."""
    if previous is None:
        return "no earlier snapshot (and its sticky assignors with no previous assignment)"
    return (f"snapshot {previous} (and its sticky assignors started from {previous}'s "
            "assignment)")


def churn_previous(store: Store, output: str, held: Held,
                   run: dict[Key, datetime | None]) -> dict[Key, str | None]:
    """Of the snapshots already in the output whose previous snapshot this run changes or
    audits again, the previous snapshot their complete run's churn rows name. `held` (the
    complete `runs` rows) names another when a run of that previous snapshot was killed
    after it retracted its `runs` row, or when the follower was audited before a backfill
    put that one before it: the follower still compares with what it was audited
    against. A follower whose complete run wrote no churn row and some group_balance rows
    compared with none (None). One small read of those snapshots' churn partitions, only
    in a run that adds a snapshot before one already in the output (a backfill, a
    snapshot audited again after a killed run) or audits again one that a later snapshot
    follows; the scheduled run pays nothing."""
    keys = {(s, c): held[(s, c)].run_id for s, c, was, now in _followers(held, run)
            if was != now or (now is not None and (now, c) in run)}
    path = f"{output}/rebalance_churn"
    if not keys or not store.exists(path):
        return {}
    rows = (store.read(path, "rebalance_churn", snapshots=sorted({s for s, _ in keys}))
            .where(F.col("run_id").isin(sorted({r for r in keys.values() if r})))
            .select("snapshot_id", "cluster", "run_id", "previous_snapshot_id")
            .distinct().collect())
    found = {(r.snapshot_id, r.cluster): r.previous_snapshot_id for r in rows
             if keys.get((r.snapshot_id, r.cluster)) == r.run_id}
    none = {key: None for key in keys if key not in found
            and not held[key].rows.get("rebalance_churn") and held[key].rows.get("group_balance")}
    return {**none, **found}


def followers_of_replaced(held: Held, run: dict[Key, datetime | None],
                          compared: dict[Key, str | None] | None = None) -> dict[Key, Key]:
    """Per (snapshot, cluster) this run replaces (the output holds a complete run of it)
    and that stays the previous of the next one already in the output, which this run
    leaves alone: that next one. Its churn compares with the rows this run replaces
    (`replaced_rows_changed` says whether they differ), unless its churn rows name
    another previous snapshot (`compared`, `churn_previous`), which `outdated_followers`
    says instead."""
    return {(now, cluster): (snapshot, cluster)
            for snapshot, cluster, was, now in _followers(held, run)
            if was == now and now is not None and (now, cluster) in run
            and (now, cluster) in held
            and (compared or {}).get((snapshot, cluster), now) == now}


def _followers(held: Held, run: dict[Key, datetime | None]
               ) -> Iterator[tuple[str, str | None, str | None, str | None]]:
    """(snapshot, cluster, previous before this run, previous after it) of every snapshot
    already in the output that this run does not audit. A cluster of a snapshot this run
    audits without it is gone after the run (`clusters_left_out`): the next one follows
    the one before it."""
    before: dict[str | None, list[tuple]] = defaultdict(list)
    after: dict[str | None, list[tuple]] = defaultdict(list)
    audited = {snapshot for snapshot, _ in run}
    for (snapshot, cluster), held_run in held.items():
        before[cluster].append(_order(snapshot, held_run.captured_at))
        if snapshot not in audited:
            after[cluster].append(_order(snapshot, held_run.captured_at))
    for (snapshot, cluster), at in run.items():
        after[cluster].append(_order(snapshot, at))
    for cluster in sorted(after, key=lambda c: (c is not None, c or "")):
        held_order, new_order = sorted(before[cluster]), sorted(set(after[cluster]))
        for i, key in enumerate(new_order):
            snapshot = key[2]
            if (snapshot, cluster) in run:
                continue
            # the previous snapshot: the one before it in each order (a year of hourly
            # snapshots is 8,760 a cluster: sorted once, not scanned once per snapshot)
            j = bisect_left(held_order, key)
            was = held_order[j - 1][2] if j else None
            now = new_order[i - 1][2] if i else None
            yield snapshot, cluster, was, now


# what a follower's churn read of its previous snapshot: the columns whose change makes
# it stale (sticky assignors also ran from the assignment's strategy)
_PREVIOUS_READ = {"assignments": [*PRIOR_ROW_COLUMNS, "strategy"],
                  "consumer_load": CLIENT_ROW_COLUMNS}


def replaced_rows_changed(store: Store, output: str, held: Held, followers: dict[Key, Key],
                          tables: dict[str, DataFrame]) -> list[Note]:
    """A note per follower (`followers_of_replaced`) whose previous snapshot this run
    computed other rows for than the output's complete run of it holds: its churn, and
    its sticky assignors' start, come from the rows being replaced. A fingerprint of what
    churn reads (`_PREVIOUS_READ`) per (snapshot, cluster) on each side, one job per
    table and side over those snapshots only, read before the run writes (a run that
    replaces no snapshot with a follower, the scheduled one, pays nothing)."""
    if not followers:
        return []
    snapshots = sorted({s for s, _ in followers})
    runs = {key: held[key].run_id for key in followers}
    changed: set[Key] = set()
    for name, columns in _PREVIOUS_READ.items():
        path = f"{output}/{name}"
        old = store.read(path, name, snapshots=snapshots) if store.exists(path) else None
        new = _fingerprints(tables[name].where(F.col("snapshot_id").isin(snapshots)), columns)
        was = {} if old is None else _fingerprints(
            old.where(F.col("run_id").isin(sorted({r for r in runs.values() if r}))),
            columns, with_run=True)
        for key, run_id in runs.items():
            if was.get((*key, run_id)) != new.get(key):
                changed.add(key)
    return [Note(None, follower[0], follower[1], (
        f"already in the output, its churn compares with snapshot {key[0]}, whose rows "
        "this run replaces with different ones (its inputs changed): that churn, and the "
        "sticky assignors' start, stay those of the replaced rows until it is audited "
        f"again (--snapshot {follower[0]})"))
        for key, follower in sorted(followers.items(), key=lambda kv: _by_name(kv[1]))
        if key in changed]


def _fingerprints(rows: DataFrame, columns: list[str], with_run: bool = False) -> dict:
    """(rows, sum of each row's 64-bit hash) per (snapshot_id, cluster[, run_id]) of
    `rows`: equal for the same rows in any order. A null is hashed beside a flag of its
    own, so that (x, null) and (null, x) differ."""
    keys = ["snapshot_id", "cluster", *(["run_id"] if with_run else [])]
    row_hash = F.xxhash64(*(part for c in columns
                            for part in (F.col(c), F.col(c).isNull())))
    found = rows.groupBy(*keys).agg(F.count(F.lit(1)).alias("n"),
                                    F.sum(row_hash.cast("decimal(38,0)")).alias("h")).collect()
    return {tuple(r[k] for k in keys): (r["n"], r["h"]) for r in found}


def unfinished_before(unfinished: dict[Key, datetime | None], held: Held,
                      run: dict[Key, datetime | None]) -> list[Note]:
    """A note per (snapshot, cluster) of this run (`run`, with capture times) that comes
    right after one the output holds rows of without a complete run (`unfinished`: a run
    of it retracted its `runs` rows and was killed, or is writing it now), in its
    cluster's churn order over this run's snapshots, the complete ones (`held`) and
    those. Churn compares with complete snapshots only: that one compares with the
    complete snapshot before (or none), which the run's progress line alone would not
    tell apart from an output without the unfinished one."""
    orders = _churn_orders(run, {s for s, _ in run}, {
        "held": {key: (r.captured_at, r.run_id) for key, r in held.items()},
        "unfinished": {key: (at, None) for key, at in unfinished.items()}})
    notes = []
    for cluster, entries in sorted(orders.items(), key=lambda e: (e[0] is not None, e[0] or "")):
        for i, entry in enumerate(entries):
            if entry.kind != "run" or i == 0 or entries[i - 1].kind != "unfinished":
                continue
            snapshot, gone = entry.snapshot, entries[i - 1].snapshot
            before = next((e.snapshot for e in reversed(entries[:i - 1])
                           if e.kind != "unfinished"), None)
            compared = (f"snapshot {before}" if before is not None
                        else "no earlier snapshot (it gets no churn rows)")
            notes.append(Note(None, snapshot, cluster, (
                f"the output holds rows of snapshot {gone}, captured before it, that no "
                f"complete run names (a run of {gone} was killed, or is writing it now): "
                f"its churn, and the sticky assignors' previous assignment, compare with "
                f"{compared}, not with {gone}. If that run lands, it names this snapshot "
                f"for another audit; if it was killed, audit {gone} again (--snapshot "
                f"{gone}), then this one (--snapshot {snapshot})")))
    return notes


def previous_keys(held: Held, captured: dict[Key, datetime | None],
                  current: list[str]) -> list[tuple[str, str | None]]:
    """The snapshots `held` (complete in the output) that come just before one of this
    run's in its cluster's churn order, over this run's snapshots (`captured`, with their
    capture times) and the held ones: [(snapshot_id, run_id)], sorted. That is the one
    before the run's first per cluster, and any between two of the run's (a run of s1 and
    s3 with s2 in the output compares s3 with s2, as a run of all three does, not with
    s1). Snapshots of `current` (this run's) are not held ones, whatever their old
    capture time."""
    orders = _churn_orders(captured, set(current), {
        "held": {key: (r.captured_at, r.run_id) for key, r in held.items()}})
    return sorted({(one.snapshot, one.run_id) for entries in orders.values()
                   for one, following in pairwise(entries)
                   if following.kind == "run" and one.kind != "run"})


class _Placed(NamedTuple):
    """A snapshot in its cluster's churn order."""

    order: tuple  # `_order`'s
    snapshot: str
    kind: str  # "run" (this run's), or which of the output's it is
    run_id: str | None = None


def _churn_orders(run: dict[Key, datetime | None], current: set[str],
                  output: dict[str, dict[Key, tuple[datetime | None, str | None]]]
                  ) -> dict[str | None, list[_Placed]]:
    """Per cluster of `run` (this run's snapshots and clusters, with capture times): its
    snapshots and the output's of that cluster (`output`: per kind, each one's capture
    time and run id) in churn order (`_order`). The output's snapshots of `current` (this
    run's) are left out, whatever their old capture time: this run replaces them."""
    ordered: dict[str | None, list[_Placed]] = defaultdict(list)
    for (snapshot, cluster), at in run.items():
        ordered[cluster].append(_Placed(_order(snapshot, at), snapshot, "run"))
    for kind, entries in output.items():
        for (snapshot, cluster), (at, run_id) in entries.items():
            if snapshot not in current and cluster in ordered:
                ordered[cluster].append(_Placed(_order(snapshot, at), snapshot, kind, run_id))
    for entries in ordered.values():
        entries.sort()
    return dict(ordered)


def _order(snapshot: str, at: datetime | None) -> tuple:
    """Churn's order: captured_at (unknown first), then snapshot_id."""
    return (at is not None, at or datetime.min, snapshot)


def _by_name(key: Key) -> tuple:
    return key[0], key[1] is not None, key[1] or ""
