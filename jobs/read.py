"""Read: the input tables as Delta, conformed to their contracts and validated.

Reading is lazy; validation (`jobs.validate`) splits every table into usable rows and
`rejects`, persisting through the run's `Persisted` so one pass serves both. The row
counts for the progress line and for sizing the run come from the tables' Delta logs
(file statistics), not from a Spark job.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.persist import Persist, Persisted
from jobs.validate import (
    conform,
    unread_lookalikes,
    validate_members,
    validate_observed,
    validate_offsets,
    validate_queues,
)
from storage import locks
from storage.delta import Store
from storage.offline import local_path
from storage.paths import is_local
from vocabulary.contracts import STRATEGY_PARAM_KEYS
from vocabulary.errors import TableError

if TYPE_CHECKING:
    from jobs.config import AuditConfig

log = logging.getLogger("rebalance_audit")


# a member row's (consumer_group, topic) hashed, null for other tables' rows: the scope
# estimates the subscriptions from it (`jobs.scope`)
SUBSCRIPTION = "subscription"
# a member row's strategy_params keys no strategy reads (a misspelt `virtual_node`: the
# strategy ran with its default), empty for the others: `jobs.scope` says which
UNREAD_PARAMS = "unread_params"


@dataclass
class Inputs:
    queues: DataFrame
    members: DataFrame
    offsets: DataFrame | None
    rejects: DataFrame
    # (table, snapshot_id, cluster, SUBSCRIPTION) of every row read from the input tables,
    # usable or not, straight from the files (`jobs.scope` subtracts the rejects)
    read_keys: DataFrame
    observed: DataFrame | None = None
    # (table, column, contract column) of the columns read past that look like the
    # contract's (`jobs.validate.unread_lookalikes`): a warning each
    lookalikes: tuple[tuple[str, str, str], ...] = ()

    def limited_to(self, snapshots: list[str],
                   left_out: list[tuple[str, str | None]] = ()) -> Inputs:
        """The usable rows of these snapshots, but those of the (snapshot, cluster)s left
        out (rejects stay whole: they are all written)."""
        def keep(df: DataFrame) -> DataFrame:
            wanted = F.col("snapshot_id").isin(snapshots)
            for snapshot, cluster in left_out:
                wanted = wanted & ~((F.col("snapshot_id") == snapshot)
                                    & F.col("cluster").eqNullSafe(F.lit(cluster)))
            return df.where(wanted)

        def maybe(df: DataFrame | None) -> DataFrame | None:
            return keep(df) if df is not None else None

        return Inputs(keep(self.queues), keep(self.members), maybe(self.offsets), self.rejects,
                      self.read_keys, maybe(self.observed), self.lookalikes)


@dataclass(frozen=True)
class InputPaths:
    queues: str
    members: str
    offsets: str | None = None
    observed: str | None = None

    @classmethod
    def of(cls, config: AuditConfig) -> InputPaths:
        """The input tables a configuration names (the demo's are written by the run)."""
        return cls(config.queues, config.members, config.offsets, config.observed)

    def named(self) -> dict[str, str]:
        return {name: path for name, path in vars(self).items() if path}


def input_rows(store: Store, paths: InputPaths,
               snapshots: tuple[str, ...] = ()) -> dict[str, int | None]:
    """Rows per input table from its Delta log (None when the log has no statistics): of
    `snapshots` when given, which is what the run reads."""
    wanted = list(snapshots) if snapshots else None
    return {name: store.row_estimate(path, wanted) for name, path in paths.named().items()}


def read_inputs(store: Store, paths: InputPaths, snapshots: tuple[str, ...] = (),
                persist: Persist | None = None) -> Inputs:
    """Read, conform and validate the inputs; limit them to `snapshots` when given.

    The rejects are materialized here, by one scan of the validated rows once the key
    aggregates have stored them (the scope, the `runs` counts and the write read them),
    in as many partitions as Spark has cores: they are a union of every input's (the sum
    of their partitions, 128 at 10M), and each partition writes its own files."""
    persist = persist or Persisted()
    lookalikes: list[tuple[str, str, str]] = []

    def load(path: str, name: str) -> DataFrame:
        # the store prunes the files by partition from the log: where the offline engine
        # joins each row's snapshot_id from its file (folders that do not spell the log's
        # values), the filter below alone reads every snapshot's files (one snapshot of 40,
        # 90k of 3.6M rows, when every table joined: the read step 2.4-2.7 s, 4.1-4.6 with
        # the filter alone, on a warm session). The filter stays for a column the contract
        # accepts in another case (`conform`), which the store leaves whole.
        raw = store.read(path, name, list(snapshots) if snapshots else None)
        lookalikes.extend((name, column, near)
                          for column, near in unread_lookalikes(raw.columns, name))
        df = conform(raw, name)
        return df.where(F.col("snapshot_id").isin(list(snapshots))) if snapshots else df

    def keys(df: DataFrame, name: str) -> DataFrame:
        subscription = (F.when(F.col("topic").isNotNull(),
                               F.xxhash64("consumer_group", "topic")) if name == "members"
                        else F.lit(None).cast("long"))
        unread = (F.filter(F.map_keys("strategy_params"),
                           lambda key: ~key.isin(*STRATEGY_PARAM_KEYS))
                  if name == "members" else F.lit(None).cast("array<string>"))
        return df.select(F.lit(name).alias("table"), "snapshot_id", "cluster",
                         subscription.alias(SUBSCRIPTION), unread.alias(UNREAD_PARAMS))

    with between_captures(paths):  # every table at one point, no capture half-way
        loaded = {name: load(path, name) for name, path in paths.named().items()}
    queues, members = loaded["queues"], loaded["members"]
    q_good, q_bad = validate_queues(queues, persist)
    m_good, m_bad = validate_members(members, persist)
    rejects = q_bad.unionByName(m_bad)
    read_keys = keys(queues, "queues").unionByName(keys(members, "members"))
    o_good = None
    if "offsets" in loaded:
        offsets = loaded["offsets"]
        o_good, o_bad = validate_offsets(offsets, persist)
        rejects = rejects.unionByName(o_bad)
        read_keys = read_keys.unionByName(keys(offsets, "offsets"))
    seen = None
    if "observed" in loaded:
        observed = loaded["observed"]
        seen, s_bad = validate_observed(observed, persist)
        rejects = rejects.unionByName(s_bad)
        read_keys = read_keys.unionByName(keys(observed, "observed"))
    cores = rejects.sparkSession.sparkContext.defaultParallelism
    return Inputs(q_good, m_good, o_good, persist(rejects.coalesce(max(1, cores))), read_keys,
                  seen, tuple(lookalikes))


# how long a run waits for a capture writing into its inputs' folder (a capture of one
# snapshot takes seconds; its own wait for another capture is as long)
CAPTURE_WAIT_SECONDS = 300.0


@contextmanager
def between_captures(paths: InputPaths) -> Iterator[None]:
    """Hold the capture lock of each local folder holding an input table, shared.

    A capture rewrites a snapshot table by table under its folder's lock (earlier rows
    out of every table, then the new ones in): a run that resolved its queues before a
    capture and its members during it would audit half of one capture. The stores fix a
    table's contents when it is read (the offline engine its files, the native one its
    version), so holding the lock while every input is read is enough. A folder without
    the lock file has never been written by a capture: nothing is created there."""
    with ExitStack() as held:
        for lock in _capture_locks(paths):
            waiting = partial(log.info, "a capture is writing %s: waiting for it to end",
                              lock.parent)
            try:
                held.enter_context(locks.shared_if_present(lock, CAPTURE_WAIT_SECONDS,
                                                           on_wait=waiting))
            except locks.LockTimeout as exc:
                raise TableError(f"{exc}: a capture has been writing the inputs under "
                                 f"{lock.parent} for that long; nothing was read or written, "
                                 "run again once it ends") from exc
            except OSError as exc:  # a lock file this user may not open
                log.warning("warning: %s: %s; the inputs under %s are read without "
                            "waiting for a capture there", lock, exc.strerror or exc,
                            lock.parent)
        yield


def _capture_locks(paths: InputPaths) -> list[Path]:
    """The capture lock files beside the inputs on local paths (captures write local
    folders), in one order so that readers never take them in two."""
    files = {Path(local_path(path)).parent / locks.CAPTURE_LOCK
             for path in paths.named().values() if is_local(path)}
    return sorted(files)
