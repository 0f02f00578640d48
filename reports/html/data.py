"""What the report shows, read from a run's Delta outputs with delta-rs (no Spark, no JVM:
`report` takes seconds).

Only rows of complete runs count: for each snapshot the `runs` row (status COMPLETE)
names the run whose rows every table holds; rows of any other run_id (a run that died
part-way) are left out, as docs/SPEC.md's dashboard query does.

Tables are scanned file by file and batch by batch with their filters (one batch read
ahead; each file through a dataset fragment of its own, see `_scan_file`), so what the
driver holds grows with what the page shows, not with the tables or their files: every
group is read only as the few figures the overview needs, reduced per batch (the groups
worth detailing to the `top` worst so far, the skew histogram to one count per skew
value, the churn timeline to one sum per snapshot, drift to one count per snapshot,
group and kind), whole rows only for the groups the page details.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import functools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from reports.html.delta_files import RowsDeletedByVectors, files_dataset
from reports.html.run_warnings import RunWarnings, load_about
from reports.html.run_warnings import load as load_warnings
from reports.html.select import (
    DEFAULT_TOP,
    Findings,
    FindingsOverview,
    groups_needing_attention,
    has_findings,
    in_capture_order,
    most_severe,
    not_after,
    severity,
    skew_counts,
)
from storage.delta_log import partition_values_held
from vocabulary.errors import NoOutputError, first_line
from vocabulary.severity import SEVERITY_WEIGHTS

RUNS = "runs"
COMPLETE = "COMPLETE"
TABLES = ("consumer_load", "group_balance", "rebalance_churn", "drift", "what_if")
CHECKED = (*TABLES, "rejects")  # the tables the page reads and checks against `runs`
# the churn timeline's columns, summed per snapshot while they are read
CHURN_COLUMNS = ("snapshot_id", "cluster", "captured_at", "run_id", "queues_moved")
# the churn history the page reads: each cluster's latest CHURN_WINDOW complete snapshots
# (the timeline), or those up to a detailed group's card (its latest rebalances). A
# scheduled audit adds a snapshot every few minutes: read whole, the history made the
# page's time grow with the output's age (75-120 s at 4,800 snapshot partitions, the
# audit's own page included) and the timeline a solid band
CHURN_WINDOW = 500
CHURN_TIMELINE_KEYS = ["cluster", "snapshot_id", "captured_at"]
# a detailed group's own rebalances: its latest GROUP_CHURN_ROWS churn rows, without the
# per-queue `moves` (the table keeps them); the client lists arrive as their lengths
GROUP_CHURN_COLUMNS = ("snapshot_id", "cluster", "captured_at", "consumer_group", "run_id",
                       "previous_snapshot_id", "clients_before", "clients_after",
                       "clients_joined", "clients_left", "queues_moved", "paused_queues",
                       "estimated_duplicates", "duplicates_known_moves", "triggers")
GROUP_CHURN_ROWS = 5
# the shown snapshots' largest rebalances, named on the page whatever their groups' findings
TOP_REBALANCES = 10
# what choosing the detailed groups and the skew histogram need of each group's whole-group
# row (topic null); `findings` arrives as its length
BALANCE_INDEX_COLUMNS = ("snapshot_id", "cluster", "captured_at", "consumer_group", "run_id",
                         "findings", *SEVERITY_WEIGHTS)
RUN_KEYS = ["snapshot_id", "cluster", "run_id"]
BATCH_ROW = "_batch_row"  # balance_index: a row's place in the batch it was read in
# the drift section's rows: drifting queues counted per group and kind in each shown
# snapshot. Per snapshot, not summed over them: a queue drifting in three shown snapshots
# is one queue three times (the rejects section keeps its snapshots apart too)
DRIFT_KEYS = ["snapshot_id", "cluster", "consumer_group", "kind"]
# the rejects section's rows: input rows the run could not use, counted per input and reason
REJECT_KEYS = ["snapshot_id", "cluster", "source_table", "reason"]
# what a rejected row belonged to, read off its row_json (Spark's to_json: compact, keys
# quoted, strings JSON-escaped): its consumer group, else its topic (a queues row)
_JSON_STRING = r'"(?P<name>(?:[^"\\]|\\.)*)"'
GROUP_IN_ROW = '"consumer_group":' + _JSON_STRING
TOPIC_IN_ROW = '"topic":' + _JSON_STRING
REJECT_NAMES = 3  # named per input and reason; the rest are counted as "more"
# the columns the page cannot do without: what it keys, joins and groups on, and the
# figures a group's severity weighs (one left out would rank the groups otherwise, with no
# word). Others may be missing (an output of an older audit lacks the newer ones) and are
# left out.
REQUIRED_COLUMNS = {
    RUNS: ("snapshot_id", "cluster", "captured_at", "run_id", "status"),
    "group_balance": ("snapshot_id", "cluster", "captured_at", "consumer_group", "topic",
                      *SEVERITY_WEIGHTS),
    "consumer_load": ("snapshot_id", "cluster", "consumer_group", "client_id"),
    "rebalance_churn": ("snapshot_id", "cluster", "captured_at", "consumer_group"),
    "rejects": ("snapshot_id", "cluster", "source_table", "reason"),
    "what_if": ("snapshot_id", "cluster", "consumer_group"),
    "drift": ("snapshot_id", "cluster", "consumer_group", "kind"),
}


@dataclass
class ReportData:
    """The frames one report is built from; any of them may be empty."""

    output: str
    runs: pd.DataFrame  # the complete runs rows of the shown snapshots
    group_balance: pd.DataFrame  # shown snapshots (load(): the detailed groups only)
    consumer_load: pd.DataFrame  # shown snapshots
    churn: pd.DataFrame  # queues_moved per complete snapshot: the timeline is history
    # drifting queues per DRIFT_KEYS (`queues`); None: the run had no observed input
    drift: pd.DataFrame | None = None
    what_if: pd.DataFrame | None = None  # None: no what_if table in the output
    # rejected input rows of the shown snapshots per REJECT_KEYS (`rows`); None: no table
    rejects: pd.DataFrame | None = None
    # with --group: the shown runs' rejects rows of other groups and topics, left out
    rejects_elsewhere: int = 0
    groups: list[str] = field(default_factory=list)  # --group filter, empty = all
    # how many shown groups have each skew, each group at its latest shown snapshot (skew
    # value → groups); None: counted from group_balance
    skew_counts: pd.Series | None = None
    # what the shown runs warned about (`run_warnings`); empty: none recorded
    warnings: RunWarnings = field(default_factory=RunWarnings)
    # groups per finding over every shown group; None: counted from group_balance
    findings: FindingsOverview | None = None
    # the detailed groups' latest rebalances (`group_churn`); None: no churn table
    group_churn: pd.DataFrame | None = None
    # the shown snapshots' largest rebalances (`top_rebalances`); None: no churn table
    top_rebalances: pd.DataFrame | None = None
    # snapshots the tables hold rows of that no complete run names (`unfinished_snapshots`)
    unfinished: list[str] = field(default_factory=list)
    # the timeline's window when a cluster has more complete snapshots (`churn_timeline`)
    churn_window: int | None = None
    # (cluster, newer complete snapshots, the latest) of each shown cluster whose shown
    # snapshot is not its latest (`newer_snapshots`)
    newer: list[tuple[str | None, int, str]] = field(default_factory=list)


def table_path(output: str, name: str) -> str:
    return os.path.join(output, name)


def has_table(output: str, name: str) -> bool:
    """A Delta table with at least one commit (delta-rs would raise otherwise)."""
    log = os.path.join(output, name, "_delta_log")
    return os.path.isdir(log) and any(f.endswith(".json") or f.endswith(".parquet")
                                      for f in os.listdir(log))


@contextlib.contextmanager
def _reading(output: str, name: str) -> Iterator[None]:
    """A table that cannot be read (a damaged log, a data file its log names gone, a Delta
    feature delta-rs cannot read) stops the page with the table named, not a traceback."""
    from deltalake.exceptions import DeltaError, DeltaProtocolError

    from vocabulary.errors import TableError

    try:
        yield
    except DeltaProtocolError as exc:
        raise TableError(f"{table_path(output, name)}: the '{name}' table uses a Delta "
                         f"feature the page's reader (delta-rs) cannot read "
                         f"({first_line(exc)}): query the tables with Spark") from exc
    except RowsDeletedByVectors as exc:
        path = table_path(output, name)
        raise TableError(f"{path}: the '{name}' table has {exc}, which the page's reader "
                         "(delta-rs' datasets) cannot apply: rewrite those files on Spark "
                         f"(`REORG TABLE delta.`{path}` APPLY (PURGE)`), or query the "
                         "table with Spark") from exc
    except (DeltaError, OSError, pa.ArrowException) as exc:
        detail = first_line(exc)
        raise TableError(f"{table_path(output, name)}: the '{name}' table cannot be read "
                         f"({detail}); the output is damaged or was copied in part: audit "
                         "the snapshots again, or copy the output root whole") from exc


# the tables opened during one read of the page (`_each_log_once`), by path; None outside
_OPENED: contextvars.ContextVar[dict[str, object] | None] = contextvars.ContextVar(
    "opened_tables", default=None)


@contextlib.contextmanager
def _each_log_once() -> Iterator[None]:
    """Within one read of the page each table's log is read once, and every read of a
    table sees the version its columns and rows were checked in. The page reads a table
    up to five times (its columns, its row counts, then its rows), and each opening of a
    log replays every commit since its last checkpoint (delta-rs writes one every 100):
    on the 1M benchmark's output with 98 commits a table, the page took 2.96 s opening
    each log per read, 2.49 s opening each once (medians of 5); as fast as before on an
    output of one commit a table."""
    token = _OPENED.set({})
    try:
        yield
    finally:
        _OPENED.reset(token)


def _open(output: str, name: str):  # -> deltalake.DeltaTable
    from deltalake import DeltaTable

    path = table_path(output, name)
    opened = _OPENED.get()
    if opened is not None and path in opened:
        return opened[path]
    with _reading(output, name):
        table = DeltaTable(path)
    if opened is not None:
        opened[path] = table
    return table


def _dataset(output: str, name: str) -> ds.FileSystemDataset:
    """The table's rows as a pyarrow dataset (`files_dataset`, from its log's add
    actions), made once per read of the page (`_each_log_once`) like its log: the page
    scans a table up to four times. Its fragments are never scanned (`_own_fragment`),
    so keeping it holds no file's metadata."""
    path = table_path(output, name)
    opened = _OPENED.get()
    key = f"{path}#dataset"
    if opened is not None and key in opened:
        return opened[key]  # type: ignore[return-value]
    dataset = files_dataset(_open(output, name), path)
    if opened is not None:
        opened[key] = dataset
    return dataset


def _columns(output: str, name: str) -> list[str]:
    with _reading(output, name):
        return list(_open(output, name).schema().to_arrow().names)


def _check_columns(output: str, names: Iterable[str]) -> None:
    """A table lacking a column the page keys on (REQUIRED_COLUMNS) is refused, naming
    it, before anything is read: not a KeyError halfway through the page."""
    from vocabulary.errors import TableError

    for name in names:
        if not has_table(output, name):
            continue
        missing = [c for c in REQUIRED_COLUMNS[name] if c not in _columns(output, name)]
        if missing:
            raise TableError(f"{table_path(output, name)}: the '{name}' table has no column "
                             f"{', '.join(missing)}, which the page cannot do without: it "
                             "was not written by an audit, or was changed since; audit the "
                             "snapshots again into this output root")


def _one_of(column: str, values: Iterable[str]) -> ds.Expression:
    """`column` holds one of the `values` (strings), as a dataset filter: typed, since
    pyarrow cannot bind an empty list's null type to a string column."""
    return ds.field(column).isin(pa.array(list(values), pa.string()))


def scan(output: str, name: str, snapshots: Sequence[str] | None = None,
         groups: Sequence[str] | None = None, columns: Sequence[str] | None = None,
         where: ds.Expression | None = None) -> Iterator[pa.RecordBatch]:
    """One table's rows batch by batch, limited to `snapshots` (files of other snapshot
    partitions are skipped), to the consumer groups named in `groups`, to the rows `where`
    holds and to `columns` when given (a table written before a column was added lacks it:
    the column is left out)."""
    with _reading(output, name):
        dataset = _dataset(output, name)
    if columns is not None:
        columns = [c for c in columns if c in dataset.schema.names]
    conditions = [] if where is None else [where]
    if groups is not None:
        conditions.append(_one_of("consumer_group", groups))
    if snapshots is not None:
        conditions.append(_one_of("snapshot_id", snapshots))
    condition = None
    for c in conditions:
        condition = c if condition is None else condition & c
    try:
        with _reading(output, name):
            for fragment in dataset.get_fragments(filter=condition):
                yield from _scan_file(dataset, fragment, columns, condition)
    finally:  # also when a reader stops early (`reject_names_of`)
        del dataset
        _trim_heap()


def _scan_file(dataset: ds.FileSystemDataset, fragment: ds.ParquetFileFragment,
               columns: Sequence[str] | None,
               condition: ds.Expression | None) -> Iterator[pa.RecordBatch]:
    """One file's batches, read through a fragment of its own (`_own_fragment`)."""
    own = _own_fragment(dataset, fragment)
    if condition is not None and _has_view_columns(own.physical_schema):
        yield from _scan_views(dataset, own, columns, condition)
        return
    scanner = ds.Scanner.from_fragment(own, schema=dataset.schema, columns=columns,
                                       filter=condition, batch_readahead=1)
    yield from scanner.to_batches()


def _has_view_columns(schema: pa.Schema) -> bool:
    """The file stores a column as a view type (delta-rs' `update()` and `merge()` write
    `string_view`), where the table's schema says `string`."""
    return any(pa.types.is_string_view(f.type) or pa.types.is_binary_view(f.type)
               for f in schema)


def _scan_views(dataset: ds.FileSystemDataset, own: ds.ParquetFileFragment,
                columns: Sequence[str] | None,
                condition: ds.Expression) -> Iterator[pa.RecordBatch]:
    """A file with view-typed columns, filtered once cast to the table's types. pyarrow
    compares a filter on a string column with the file's row-group statistics in the
    file's type and has no kernel for string against string_view, so such a file cannot
    take the filter in its scan."""
    scanner = ds.Scanner.from_fragment(own, schema=dataset.schema, batch_readahead=1)
    for batch in scanner.to_batches():
        kept = pa.Table.from_batches([batch]).filter(condition)
        if columns is not None:
            kept = kept.select(list(columns))
        yield from kept.to_batches()


def _own_fragment(dataset: ds.FileSystemDataset,
                  fragment: ds.ParquetFileFragment) -> ds.ParquetFileFragment:
    """A fragment of the same file that is dropped once read. A dataset's fragment keeps
    its file's Parquet metadata (about 64 KB a file in memory) for as long as the dataset
    lives: one scanner over a 100M-row run's group_balance (723 files in the shown
    snapshot) peaked about 40 MB higher than this, for 75 rows."""
    return dataset.format.make_fragment(fragment.path, fragment.filesystem,
                                        partition_expression=fragment.partition_expression)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to hand back this way
        return None


def _trim_heap() -> None:
    """Hand the memory a scan freed back to the system (glibc's malloc_trim; Arrow reads
    with the system allocator here). Without it, what one table's scan freed stays in
    the process and the next scan's peak adds to it: the page of the 10M benchmark's
    output peaked at about 50 MB more (measured per table read)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def read_table(output: str, name: str, snapshots: Sequence[str] | None = None,
               groups: Sequence[str] | None = None,
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """One table as pandas (see `scan` for the arguments)."""
    batches = list(scan(output, name, snapshots, groups, columns))
    if not batches:
        with _reading(output, name):
            schema = _dataset(output, name).schema
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns if c in schema.names])
        return schema.empty_table().to_pandas()
    return pa.Table.from_batches(batches).to_pandas()


def reduce_table(output: str, name: str,
                 reduce: Callable[[pa.RecordBatch], pd.DataFrame],
                 snapshots: Sequence[str] | None = None,
                 groups: Sequence[str] | None = None,
                 columns: Sequence[str] | None = None,
                 where: ds.Expression | None = None) -> pd.DataFrame:
    """`reduce` applied to each batch of a scan (small ones joined, `_joined`), the
    results concatenated: the table is never whole in memory."""
    batches = _joined(scan(output, name, snapshots, groups, columns, where))
    parts = [p for p in map(reduce, batches) if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# rows of the small batches `reduce_table` joins into one: half of a scanner's own batch
# (131,072 rows), so a joined batch is never larger than one a big file gives
JOINED_ROWS = 65_536


def _joined(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The non-empty `batches`, consecutive ones joined up to JOINED_ROWS rows (one that
    holds more passes alone): a reduce's pandas work costs per call, and a table of a
    file per snapshot gives a batch per file. On an output of 4,700 snapshot partitions
    a table, the churn timeline and the groups' churn reduced 1,135 batches each, 21 s
    of the page's 34 (profiled)."""
    pending: list[pa.RecordBatch] = []
    rows = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        if pending and rows + batch.num_rows > JOINED_ROWS:
            yield _one(pending)
            pending, rows = [], 0
        pending.append(batch)
        rows += batch.num_rows
    if pending:
        yield _one(pending)


def _one(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


def complete_runs(output: str) -> pd.DataFrame:
    """The COMPLETE `runs` rows; NoOutputError when the output has none."""
    if not has_table(output, RUNS):
        written = [name for name in REQUIRED_COLUMNS if name != RUNS
                   and has_table(output, name)]
        if written:  # the first run into the root died before its `runs` commit
            raise NoOutputError(
                f"{output}: an audit output without its '{RUNS}' table ({', '.join(written)} "
                "written): the first run into it ended before publishing any snapshot "
                "(killed, or failed); run the audit again, and its snapshots are shown")
        raise NoOutputError(f"{output}: no output tables here (no '{RUNS}' Delta table); "
                            "point --output at the output root of an audit run")
    _check_columns(output, [RUNS])
    runs = read_table(output, RUNS)
    runs = runs[runs["status"] == COMPLETE]
    if runs.empty:
        raise NoOutputError(f"{output}: the '{RUNS}' table names no complete run (an audit "
                            "writing into it now retracts the runs of the snapshots it "
                            "replaces until it ends; one that died part-way leaves them "
                            "out until the next run of them)")
    return runs


def latest_per_cluster(runs: pd.DataFrame) -> pd.DataFrame:
    """The complete runs rows of each cluster's newest snapshot (by captured_at, then
    snapshot_id). Pairs, not ids: when one cluster's newest snapshot is an older one of
    another cluster, that other cluster's rows of it are not shown."""
    newest = (in_capture_order(runs).groupby("cluster", dropna=False).tail(1)
              [["snapshot_id", "cluster"]])
    return runs.merge(newest, on=["snapshot_id", "cluster"], how="inner")


SNAPSHOTS_NAMED = 5  # an unknown --snapshot is answered with the newest complete ones


def _newest_snapshots(runs: pd.DataFrame) -> str:
    """The newest SNAPSHOTS_NAMED snapshot ids of complete runs, newest first, and how many
    more: what an operator who mistyped an id picks from. Per cluster when there are
    several: one cluster's frequent captures would fill the list, and a mistyped id of
    another would get no example of its own."""
    def listed(rows: pd.DataFrame) -> str:
        ids = list(dict.fromkeys(reversed(in_capture_order(rows)["snapshot_id"].tolist())))
        more = len(ids) - SNAPSHOTS_NAMED
        return ", ".join(ids[:SNAPSHOTS_NAMED]) + (f" and {more} older" if more > 0 else "")

    clusters = runs.groupby("cluster", dropna=False, sort=True)
    if clusters.ngroups <= 1:
        return f"the complete ones, newest first: {listed(runs)}"
    return "the complete ones, newest first: " + "; ".join(
        f"cluster {'(none)' if pd.isna(cluster) else cluster}: {listed(rows)}"
        for cluster, rows in clusters)


def of_complete_runs(frame: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Rows written by the run `runs` names for their (snapshot, cluster). A table of an
    older audit has no run_id: its rows are kept to the (snapshot, cluster) pairs of
    `runs`, so another cluster's rows of a shown snapshot id stay out there too."""
    keys = [k for k in RUN_KEYS if k in frame.columns]
    if frame.empty or not keys:
        return frame
    return frame.merge(runs[keys].drop_duplicates(), on=keys, how="inner")


# how many times the page reads the tables again when runs were published meanwhile
READ_ATTEMPTS = 3


def load(output: str, snapshots: Sequence[str] | None = None,
         groups: Sequence[str] | None = None, top: int = DEFAULT_TOP) -> ReportData:
    """Read what the report needs. Default snapshots: the latest per cluster in `runs`.

    Every group is read only in the columns the overview and the choice of groups need
    (group_balance's severity figures, churn's timeline); whole rows of group_balance,
    consumer_load and what_if only for the groups the page details (the `top` needing
    attention, or `groups`).

    The tables are read one after the other, each at the version first opened
    (`_each_log_once`) and keeping the rows of the runs `runs` named when the page
    began. A run publishing meanwhile replaces its snapshots' rows under another run id,
    which the page would leave out as if the snapshot had no groups; every publication
    commits to `runs` (its rows out first, in last), so the page reads everything again
    when `runs` changed while it read."""
    from vocabulary.errors import TableError

    output = output.rstrip("/") or "/"
    for _ in range(READ_ATTEMPTS):
        before = None
        try:
            with _each_log_once():  # the version checked is the one the page reads
                before = _version(output, RUNS)
                data = _load_once(output, snapshots, groups, top)
        except TableError:  # rows replaced under the page look like rows gone
            if _version(output, RUNS) == before:
                raise
            continue
        if _version(output, RUNS) == before:
            return data
    raise NoOutputError(f"{output}: runs were published while the page read the tables, "
                        f"{READ_ATTEMPTS} times in a row: render it again once they are done")


def _version(output: str, name: str) -> int | None:
    """The table's version now (outside `_each_log_once`), or as the page reads it."""
    return _open(output, name).version() if has_table(output, name) else None


def _load_once(output: str, snapshots: Sequence[str] | None, groups: Sequence[str] | None,
               top: int) -> ReportData:
    all_runs = complete_runs(output)
    if snapshots:
        unknown = sorted(set(snapshots) - set(all_runs["snapshot_id"]))
        if unknown:
            raise NoOutputError(f"{output}: no complete run of snapshot(s) "
                                f"{', '.join(unknown)}; {_newest_snapshots(all_runs)}")
        shown = sorted(set(snapshots))
        runs = all_runs[all_runs["snapshot_id"].isin(shown)]
    else:
        runs = latest_per_cluster(all_runs)
        shown = sorted(set(runs["snapshot_id"]))

    _check_tables_present(output, runs)
    _check_columns(output, CHECKED)
    _check_rows_written(output, runs, shown)

    def rows(name: str, of_groups: Sequence[str] | None = None) -> pd.DataFrame | None:
        if not has_table(output, name):
            return None
        wanted = of_groups if of_groups is not None else (groups or None)
        frame = of_complete_runs(read_table(output, name, shown, wanted), runs)
        return frame.reset_index(drop=True)

    empty = pd.DataFrame()
    # `runs`, not `all_runs`: the shown (snapshot, cluster) pairs' rows only
    index = balance_index(output, shown, groups or None, runs, top,
                          everything=bool(groups))
    detailed = sorted(set(index.worst.get("consumer_group", pd.Series(dtype=object))))
    unknown = sorted(set(groups or []) - set(detailed))
    if unknown:  # a typo among several names fails like an unknown --snapshot
        from reports.html.missing_groups import shown_snapshots, why_missing

        raise NoOutputError(f"{output}: no consumer group {', '.join(unknown)} "
                            f"in snapshot(s) {shown_snapshots(runs)}. "
                            + "; ".join(why_missing(output, unknown, runs, all_runs)))
    balance = _or(rows("group_balance", of_groups=detailed), empty)
    rejects, elsewhere = (group_reject_counts(output, shown, runs, groups, _topics(balance))
                          if groups else (reject_counts(output, shown, runs), 0))
    return ReportData(
        output=output, runs=runs.reset_index(drop=True),
        group_balance=balance,
        skew_counts=index.skew_counts,
        findings=index.findings,
        consumer_load=_or(rows("consumer_load", of_groups=detailed), empty),
        churn=churn_timeline(output, all_runs, groups or None),
        group_churn=group_churn(output, all_runs, index.worst),
        top_rebalances=top_rebalances(output, shown, groups or None, runs),
        drift=drift_counts(output, shown, groups or None, runs),
        what_if=rows("what_if", of_groups=detailed),
        groups=list(groups or []),
        rejects=rejects, rejects_elsewhere=elsewhere,
        warnings=replace(load_warnings(output, runs["run_id"]),
                         about_shown=load_about(output, later_runs(all_runs, runs))),
        unfinished=unfinished_snapshots(output, all_runs),
        churn_window=churn_window(all_runs),
        newer=newer_snapshots(all_runs, runs),
    )


def later_runs(all_runs: pd.DataFrame, shown: pd.DataFrame
               ) -> dict[str, set[tuple[str | None, str | None]]]:
    """Per complete run that landed after a shown (snapshot, cluster)'s own run, those
    shown pairs: what it may have warned about them (a backfill names the snapshot right
    after the one it adds) still holds, since they were not audited again after it
    (`run_warnings.load_about`). The shown runs, whose every warning the page lists
    already, and a run or pair without its finished_at are left out."""
    ended = (all_runs[~all_runs["run_id"].isin(shown["run_id"])]
             .dropna(subset=["run_id", "finished_at"])
             .groupby("run_id")["finished_at"].max())
    wanted: dict[str, set[tuple[str | None, str | None]]] = {}
    for row in shown.dropna(subset=["finished_at"]).itertuples(index=False):
        cluster = None if pd.isna(row.cluster) else row.cluster
        for run_id in ended.index[ended > row.finished_at]:
            wanted.setdefault(run_id, set()).add((row.snapshot_id, cluster))
    return wanted


def newer_snapshots(all_runs: pd.DataFrame, shown: pd.DataFrame
                    ) -> list[tuple[str | None, int, str]]:
    """Per shown cluster whose complete snapshots go on past the shown one (a page of an
    audit of older snapshots, a backfill; `--snapshot`): how many come after it, and the
    latest. The page would otherwise read as the cluster's state now."""
    keys = ["snapshot_id", "cluster", "captured_at"]
    ordered = in_capture_order(all_runs[keys].drop_duplicates()).reset_index(drop=True)
    out = []
    for cluster, rows in ordered.groupby("cluster", dropna=False, sort=True):
        mine = shown[shown["cluster"].isna() if pd.isna(cluster)
                     else shown["cluster"] == cluster]
        if mine.empty:
            continue
        last = rows.index[rows["snapshot_id"].isin(mine["snapshot_id"])].max()
        after = rows.loc[rows.index > last]
        if len(after):
            out.append((None if pd.isna(cluster) else cluster, len(after),
                        after["snapshot_id"].iloc[-1]))
    return out


def unfinished_snapshots(output: str, all_runs: pd.DataFrame) -> list[str]:
    """The snapshots whose rows the assignments or group_balance table holds and no
    complete run names (`all_runs`): a run retracts its snapshots' `runs` rows first and
    commits them last, so a run killed in between (or writing now) leaves them so. The
    page shows each cluster's latest complete snapshot: without a word it would show an
    older one as the newest. From the logs' partition values: no data file is read."""
    held: set[str] = set()
    for name in ("assignments", "group_balance"):
        if not has_table(output, name):
            continue
        with _reading(output, name):
            held |= partition_values_held(_open(output, name), "snapshot_id")
    return sorted(held - set(all_runs["snapshot_id"]))


def _check_tables_present(output: str, runs: pd.DataFrame) -> None:
    """The tables the page reads that the shown runs wrote (`runs.tables`) must be here: a
    missing group_balance would read as "every group is balanced", a missing
    rebalance_churn as "a cluster needs two audited snapshots". An output copied in part
    is refused, naming what is missing."""
    if "tables" not in runs.columns:  # outputs from before `runs` listed them
        return
    written = {name for listed in runs["tables"] if listed is not None for name in listed}
    missing = sorted(n for n in written & set(CHECKED) if not has_table(output, n))
    if missing:
        from vocabulary.errors import TableError

        raise TableError(f"{output}: the shown snapshots' runs wrote the table(s) "
                         f"{', '.join(missing)}, which are not here (no Delta log): the "
                         "output was copied in part or damaged; copy the output root whole, "
                         "or audit the snapshots again")


MISCOUNTS_NAMED = 3  # a table whose rows differ from runs.rows: the first (snapshot, cluster)s


def _check_rows_written(output: str, runs: pd.DataFrame, shown: Sequence[str]) -> None:
    """Each table the page reads must hold the rows the shown runs wrote, as many as
    `runs.rows` records per (snapshot, cluster): a group_balance emptied or cut by hand
    (a DELETE, a restore of part of its files) would read as "balanced", a copied batch
    would count groups twice. The Parquet footers count first (`_footers_agree`); only
    when they cannot say are the RUN_KEYS columns read."""
    if not {"tables", "rows"} <= set(runs.columns):  # outputs from before runs counted
        return
    for name in CHECKED:
        expected = _rows_recorded(runs, name)
        if expected.empty or not has_table(output, name):
            continue
        if not set(RUN_KEYS) <= set(_columns(output, name)):  # from before run_id
            continue
        if _footers_agree(output, name, shown, expected):
            continue
        found = reduce_table(output, name, _count_per_run, shown, columns=RUN_KEYS)
        if found.empty:
            found = pd.DataFrame({**{k: pd.Series(dtype=object) for k in RUN_KEYS},
                                  "found": pd.Series(dtype="int64")})
        found = found.groupby(RUN_KEYS, dropna=False, as_index=False)["found"].sum()
        both = expected.merge(found, on=RUN_KEYS, how="left")
        both["found"] = both["found"].fillna(0).astype("int64")
        wrong = both[both["found"] != both["written"]]
        if not wrong.empty:
            _raise_miscounted(output, name, wrong)


def _footers_agree(output: str, name: str, shown: Sequence[str],
                   expected: pd.DataFrame) -> bool:
    """Whether the Parquet footers alone show the rows `expected` records, per (snapshot,
    run): each row group's row count and its run_id statistics (one value), no data read.
    A run's files hold its clusters mixed, so the footers cannot count per cluster: when
    they disagree, or do not say, the caller counts the rows themselves (exact). On the
    10M benchmark's output that scan took 0.8-1.4 s of the page's ~3.4; the footers of
    the six tables, 0.15-0.19 s."""
    recorded = expected.groupby(["snapshot_id", "run_id"], dropna=False)["written"].sum()
    with _reading(output, name):
        dataset = _dataset(output, name)
        try:
            found = _footers_count(dataset, shown)
        finally:
            del dataset
            _trim_heap()
    return found == {tuple(k): int(v) for k, v in recorded.items() if v}


def _footers_count(dataset: ds.FileSystemDataset,
                   shown: Sequence[str]) -> dict[tuple, int] | None:
    """(snapshot_id, run_id) → rows of the shown snapshots' files; None when a file's
    footer does not say."""
    wanted = _one_of("snapshot_id", shown)
    found: dict[tuple, int] = {}
    for fragment in dataset.get_fragments(filter=wanted):
        counted = _footer_counts(dataset, fragment)
        if counted is None:
            return None
        for key, rows in counted.items():
            found[key] = found.get(key, 0) + rows
    return found


def _footer_counts(dataset: ds.FileSystemDataset,
                   fragment: ds.ParquetFileFragment) -> dict[tuple, int] | None:
    """(snapshot_id, run_id) → rows of one file from its footer; None when a row group
    holds more than one run (or its statistics do not say)."""
    snapshot = ds.get_partition_keys(fragment.partition_expression).get("snapshot_id")
    metadata = _own_fragment(dataset, fragment).metadata
    names = metadata.schema.names
    if snapshot is None or "run_id" not in names:
        return None
    column = names.index("run_id")
    counts: dict[tuple, int] = {}
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        stats = group.column(column).statistics
        if group.num_rows == 0:
            continue
        if stats is None or not stats.has_min_max or stats.null_count != 0 \
                or stats.min != stats.max:
            return None
        key = (snapshot, stats.min)
        counts[key] = counts.get(key, 0) + group.num_rows
    return counts


def _rows_recorded(runs: pd.DataFrame, name: str) -> pd.DataFrame:
    """RUN_KEYS and `written`: the rows each shown run recorded writing to `name`."""
    records = []
    for keys, listed, counted in zip(runs[RUN_KEYS].itertuples(index=False),
                                     runs["tables"], runs["rows"], strict=True):
        if listed is None or counted is None or name not in list(listed):
            continue
        written = dict(counted).get(name)
        if written is not None:
            records.append((*keys, int(written)))
    return pd.DataFrame(records, columns=[*RUN_KEYS, "written"])


def _count_per_run(batch: pa.RecordBatch) -> pd.DataFrame:
    counted = pa.table(batch).group_by(RUN_KEYS, use_threads=False).aggregate([([], "count_all")])
    return counted.to_pandas().rename(columns={"count_all": "found"})


def _raise_miscounted(output: str, name: str, wrong: pd.DataFrame) -> None:
    from vocabulary.errors import TableError

    said = [f"snapshot {r.snapshot_id} cluster {r.cluster}: {r.found} rows of run "
            f"{r.run_id}, which wrote {r.written}"
            for r in wrong.head(MISCOUNTS_NAMED).itertuples()]
    more = len(wrong) - MISCOUNTS_NAMED
    raise TableError(f"{table_path(output, name)}: the '{name}' table does not hold the rows "
                     f"the shown runs wrote ({'; '.join(said)}"
                     f"{f'; and {more} more' if more > 0 else ''}): rows were deleted, "
                     "restored in part or added after the run; audit the snapshot(s) again, "
                     "or restore the output root whole")


def reject_counts(output: str, snapshots: Sequence[str],
                  all_runs: pd.DataFrame) -> pd.DataFrame | None:
    """The shown snapshots' rejects of their complete runs per REJECT_KEYS (`rows`): input
    rows the run could not use, and a row per input a snapshot was missing from; `names`:
    REJECT_NAMES + 1 of the consumer groups (or topics, as "topic T") the rows belonged to,
    so the page can name the groups a reason took rows from and say whether there are
    more (`reject_names_of`). None when the output has no rejects table."""
    counts = _counted(output, "rejects", REJECT_KEYS, "rows", snapshots, None, all_runs)
    if counts is None:
        return None
    names = reject_names_of(output, snapshots, all_runs, counts)
    return counts.assign(names=[names.get(_reject_key(k), []) for k in
                                counts[REJECT_KEYS].itertuples(index=False)])


def group_reject_counts(output: str, snapshots: Sequence[str], all_runs: pd.DataFrame,
                        groups: Sequence[str], topics: Iterable[str]
                        ) -> tuple[pd.DataFrame | None, int]:
    """`reject_counts` for a page of the `groups` named with --group: the rows naming one
    of them, the queues rows of the `topics` they subscribe, and the rows naming neither
    a group nor a topic (a capture's raw line, an input a snapshot was missing from: they
    may be theirs); and how many rows of other groups and topics were left out. Every
    row_json of the shown runs is read: a few groups' page, not the whole output's."""
    if not has_table(output, "rejects"):
        return None, 0
    theirs = {json_escaped(g) for g in groups} | {f"topic {json_escaped(t)}" for t in topics}
    columns = list(dict.fromkeys([*RUN_KEYS, *REJECT_KEYS, "row_json"]))
    frames, elsewhere = [], 0
    for batch in scan(output, "rejects", snapshots, None, columns):
        if not batch.num_rows:
            continue
        names = (reject_names(batch["row_json"]) if "row_json" in batch.schema.names
                 else pa.nulls(batch.num_rows, pa.string()))
        keys = {c: batch[c] for c in batch.schema.names if c != "row_json"}
        rows = of_complete_runs(pa.table({**keys, "_name": names}).to_pandas(), all_runs)
        if rows.empty:
            continue
        mine = rows["_name"].isna() | rows["_name"].isin(theirs)
        elsewhere += int((~mine).sum())
        frames.append(rows[mine])
    found = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=[*REJECT_KEYS, "_name"])
    counts = found.groupby(REJECT_KEYS, dropna=False, sort=False).agg(
        rows=("_name", "size"), names=("_name", lambda n: list(n.dropna().unique())
                                       [:REJECT_NAMES + 1])).reset_index()
    return counts.astype({"rows": "int64"}), elsewhere


def json_escaped(name: str) -> str:
    """A name as row_json holds it: JSON-escaped as Spark's to_json writes it, non-ASCII
    kept."""
    return json.dumps(name, ensure_ascii=False)[1:-1]


def _topics(balance: pd.DataFrame) -> list[str]:
    """The topics of the group_balance topic rows (the groups' subscriptions)."""
    if balance.empty or "topic" not in balance.columns:
        return []
    return sorted(set(balance["topic"].dropna()))


def _reject_key(values: Iterable[object]) -> tuple:
    """A REJECT_KEYS tuple with every missing value as None (pandas says NaN or None)."""
    return tuple(None if pd.isna(v) else v for v in values)


def reject_names_of(output: str, snapshots: Sequence[str], all_runs: pd.DataFrame,
                    counts: pd.DataFrame) -> dict[tuple, list[str]]:
    """REJECT_NAMES + 1 names per REJECT_KEYS of `counts`, in the order the table holds
    them (sorted within a batch), read off `row_json`; the scan stops once every key has
    them all: a million rows rejected for one reason from many groups are read a batch
    far, not whole (row_json is most of the table's bytes). A key with fewer names than
    that (one broken group) is read whole, to know there is no other."""
    wanted = REJECT_NAMES + 1
    columns = list(dict.fromkeys([*RUN_KEYS, *REJECT_KEYS, "row_json"]))
    with contextlib.closing(scan(output, "rejects", snapshots, None, columns)) as batches:
        found = _first_names(batches, all_runs, counts, wanted)
    return found


def _first_names(batches: Iterator[pa.RecordBatch], all_runs: pd.DataFrame,
                 counts: pd.DataFrame, wanted: int) -> dict[tuple, list[str]]:
    found: dict[tuple, list[str]] = {}
    for batch in batches:
        if "row_json" not in batch.schema.names or not batch.num_rows:
            continue
        names = reject_names(batch["row_json"])
        keys = [c for c in batch.schema.names if c != "row_json"]
        # each key's distinct names stay in Arrow; Python sees `wanted` of them per key
        per_key = (pa.table({**{c: batch[c] for c in keys}, "_name": names})
                   .filter(pc.is_valid(names)).group_by(keys, use_threads=False)
                   .aggregate([("_name", "distinct")]))
        firsts = []
        for listed in per_key.column("_name_distinct").chunks:
            for i in range(len(listed)):
                values = listed[i].values
                order = pc.array_sort_indices(values)[:wanted]
                firsts.append(values.take(order).to_pylist())
        rows = of_complete_runs(per_key.drop_columns(["_name_distinct"]).to_pandas()
                                .assign(_names=firsts), all_runs)
        for record in rows.to_dict("records"):
            held = found.setdefault(_reject_key(record[k] for k in REJECT_KEYS), [])
            held.extend(n for n in record["_names"] if n not in held)
            del held[wanted:]
        if len(found) == len(counts) and all(len(n) >= wanted for n in found.values()):
            break
    return found


def reject_names(row_json: pa.Array) -> pa.Array:
    """Each rejected row's consumer group, else "topic T", else null (a row with neither,
    or not JSON: a capture's raw line), as written in the JSON (escapes kept)."""
    group = pc.struct_field(pc.extract_regex(row_json, GROUP_IN_ROW), [0])
    without = pc.is_null(group)
    if not pc.any(without).as_py():  # members, offsets, observed rows: no topic needed
        return group
    topic = pc.struct_field(pc.extract_regex(row_json.filter(without), TOPIC_IN_ROW), [0])
    topics = pc.binary_join_element_wise("topic ", topic, "")
    return pc.replace_with_mask(group, without, topics)


def drift_counts(output: str, snapshots: Sequence[str], groups: Sequence[str] | None,
                 all_runs: pd.DataFrame) -> pd.DataFrame | None:
    """Drifting queues of complete runs per DRIFT_KEYS (`queues`), counted batch by batch:
    the table holds a row per drifting queue, and a capture taken while groups rebalance
    can make that every queue. None when the output has no drift table."""
    return _counted(output, "drift", DRIFT_KEYS, "queues", snapshots, groups, all_runs)


def _counted(output: str, name: str, keys: list[str], label: str, snapshots: Sequence[str],
             groups: Sequence[str] | None, all_runs: pd.DataFrame) -> pd.DataFrame | None:
    """Rows of `name` written by complete runs, counted per `keys` (column `label`) batch by
    batch (empty, with those columns, when there are none); None without the table."""
    if not has_table(output, name):
        return None

    def count(batch: pa.RecordBatch) -> pd.DataFrame:
        rows = of_complete_runs(batch.to_pandas(), all_runs)
        return rows.groupby(keys, dropna=False).size().rename(label).reset_index()

    counts = reduce_table(output, name, count, snapshots, groups,
                          list(dict.fromkeys([*RUN_KEYS, *keys])))
    if counts.empty:
        return pd.DataFrame({**{k: pd.Series(dtype=object) for k in keys},
                             label: pd.Series(dtype="int64")})
    return counts.groupby(keys, dropna=False)[label].sum().reset_index()


@dataclass
class BalanceIndex:
    """What the page needs of every shown group, reduced while group_balance is read."""

    worst: pd.DataFrame  # `groups_needing_attention` of the whole-group rows
    skew_counts: pd.Series  # groups per skew value at their latest shown snapshot (no nulls)
    # groups per finding, each group at its latest shown snapshot
    findings: FindingsOverview = field(default_factory=FindingsOverview)


def balance_index(output: str, snapshots: Sequence[str], groups: Sequence[str] | None,
                  runs: pd.DataFrame, top: int = DEFAULT_TOP,
                  everything: bool = False) -> BalanceIndex:
    """The whole-group rows (topic null) of group_balance of complete runs of `snapshots`,
    reduced as they are read: the `top` worst groups, or with `everything` each group
    `groups` names (`groups_needing_attention`, in
    `BALANCE_INDEX_COLUMNS`, `findings` as the number of findings), the skew counts and
    the groups per finding (`select.FindingsOverview`).

    Each group counts at its latest shown snapshot. The snapshots are read newest first,
    per cluster (`_recency_levels`), so a row is known to be its group's latest when it
    is read: a group already seen at a newer level is left out. What is held is the
    `top` rows, a count per skew value and, when a cluster shows several snapshots, a
    64-bit hash per group seen (8 bytes a group, not its rows)."""
    counts: dict[int, int] = {}
    worst = pd.DataFrame()
    findings = FindingsOverview()
    if not has_table(output, "group_balance"):
        return BalanceIndex(worst, pd.Series(counts, dtype="int64"), findings)
    levels = _recency_levels(runs[runs["snapshot_id"].isin(list(snapshots))])
    seen = np.empty(0, dtype=np.uint64)
    for level in levels:
        level_seen: list[np.ndarray] = []
        for batch in scan(output, "group_balance", sorted(set(level["snapshot_id"])),
                          groups, BALANCE_INDEX_COLUMNS, ds.field("topic").is_null()):
            frame, listed = _index_rows(batch, level)
            if len(levels) > 1:
                keys = pd.util.hash_pandas_object(frame[["cluster", "consumer_group"]],
                                                  index=False).to_numpy()
                level_seen.append(keys)
                frame = frame[~_among(keys, seen)]
            _count_skews(frame, counts)
            if frame.empty:
                continue
            frame = frame.reset_index(drop=True)
            # `_row`: a row's place in `frame`; null on the worst rows of earlier batches
            of_frame = Findings.of(listed.take(pa.array(frame[BATCH_ROW].to_numpy())))
            shown = (np.ones(len(frame), dtype=bool) if everything
                     else has_findings(frame).to_numpy())
            rows = frame[shown]
            rows = rows.assign(severity=severity(rows), _row=np.flatnonzero(shown))
            # one sort of the worst rows so far and the batch's: the new worst rows, and
            # the batch's own rows worst first (each finding's worst groups come from it)
            ranked = most_severe(pd.concat([worst, rows], ignore_index=True), None)
            findings.add(frame, of_frame, ranked[ranked["_row"].notna()])
            worst = (ranked if everything else ranked.head(top)).drop(columns="_row")
        seen = np.unique(np.concatenate([seen, *level_seen]))
    worst = worst.drop(columns=BATCH_ROW, errors="ignore")
    if not worst.empty:
        # the kept rows once more through the page's own choice: the same rows in the same
        # order, unless a level held a group twice (two complete runs' rows of one
        # snapshot), where it keeps one row per group as it always did
        worst = groups_needing_attention(worst.drop(columns="severity"), top, everything)
    return BalanceIndex(worst, pd.Series(counts, dtype="int64").sort_index(), findings)


def _among(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Which `keys` are in `sorted_keys` (a binary search each: the seen groups are sorted
    once per level, not once per batch as `np.isin` would)."""
    if not len(sorted_keys):
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


def _recency_levels(runs: pd.DataFrame) -> list[pd.DataFrame]:
    """The complete runs rows (`RUN_KEYS`) by recency within their cluster: the newest
    (snapshot, cluster) of every cluster first (by captured_at, then snapshot_id, as
    `select.latest_per_group` orders rows), then the one before it, and so on."""
    if runs.empty:
        return []
    pairs = (in_capture_order(runs[["snapshot_id", "cluster", "captured_at"]])
             .drop_duplicates(["snapshot_id", "cluster"], keep="last"))
    pairs = pairs.assign(_level=pairs.groupby("cluster", dropna=False).cumcount(
        ascending=False))
    keyed = runs[RUN_KEYS].drop_duplicates().merge(
        pairs[["snapshot_id", "cluster", "_level"]], on=["snapshot_id", "cluster"])
    return [rows[RUN_KEYS] for _, rows in keyed.groupby("_level", sort=True)]


def _index_rows(batch: pa.RecordBatch,
                level: pd.DataFrame) -> tuple[pd.DataFrame, pa.Array]:
    """A batch's rows of the level's complete runs, `findings` as how many and BATCH_ROW
    as the row's place in the batch; and the batch's findings lists as Arrow (a Python list per
    row would cost more than the rest of the row)."""
    listed = (batch["findings"] if "findings" in batch.schema.names
              else pa.nulls(batch.num_rows, pa.list_(pa.string())))
    if "findings" in batch.schema.names:
        at = batch.schema.get_field_index("findings")
        batch = batch.set_column(at, "findings",
                                 pc.fill_null(pc.list_value_length(listed), 0))
    frame = batch.to_pandas()
    frame[BATCH_ROW] = np.arange(len(frame))
    keys = [k for k in RUN_KEYS if k in frame.columns]  # run_id: not in early outputs
    return frame.merge(level[keys].drop_duplicates(), on=keys, how="inner"), listed


def _count_skews(frame: pd.DataFrame, counts: dict[int, int]) -> None:
    if "skew" not in frame.columns:
        return
    for value, n in skew_counts(frame["skew"]).items():
        counts[int(value)] = counts.get(int(value), 0) + int(n)


def recent_runs(runs: pd.DataFrame, until: pd.DataFrame | None = None) -> pd.DataFrame:
    """The `runs` rows of each cluster's latest CHURN_WINDOW snapshots in capture order;
    with `until` (cluster, captured_at, snapshot_id rows), of those up to each such
    snapshot of its cluster, together."""
    window = CHURN_WINDOW
    ordered = in_capture_order(runs)
    if until is None:
        return ordered.groupby("cluster", dropna=False).tail(window)
    parts = []
    ends = until[["cluster", "captured_at", "snapshot_id"]].drop_duplicates()
    for i in range(len(ends)):  # one per detailed group at most
        cluster = ends["cluster"].iloc[i]
        mine = ordered[ordered["cluster"].isna() if pd.isna(cluster)
                       else ordered["cluster"] == cluster]
        # the end's time as a column of its own type (a NaT alone would be tz-naive)
        at = pd.Series(ends["captured_at"].iloc[i], index=mine.index,
                       dtype=ends["captured_at"].dtype)
        upto = not_after(mine["captured_at"], mine["snapshot_id"], at,
                         pd.Series(ends["snapshot_id"].iloc[i], index=mine.index))
        parts.append(mine[upto].tail(window))
    return (pd.concat(parts).drop_duplicates(["snapshot_id", "cluster"]) if parts
            else ordered.iloc[:0])


def churn_window(runs: pd.DataFrame) -> int | None:
    """CHURN_WINDOW where a cluster has more complete snapshots (`runs`): the timeline
    leaves its older ones out, and says so."""
    most = runs.groupby("cluster", dropna=False)["snapshot_id"].nunique().max()
    return CHURN_WINDOW if most > CHURN_WINDOW else None


def churn_timeline(output: str, runs: pd.DataFrame,
                   groups: Sequence[str] | None = None) -> pd.DataFrame:
    """Queues moved per (cluster, snapshot, captured_at) of each cluster's latest
    CHURN_WINDOW complete snapshots, of the `groups` when the page shows only those (every
    group's moves were summed there): summed batch by batch as it is read, only those
    snapshots' partitions scanned."""
    if not has_table(output, "rebalance_churn"):
        return pd.DataFrame()
    runs = recent_runs(runs)

    def moved(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.assign(queues_moved=pd.to_numeric(frame["queues_moved"],
                                                        errors="coerce").fillna(0))
        return (frame.groupby(CHURN_TIMELINE_KEYS, dropna=False)["queues_moved"].sum()
                .reset_index())

    def reduce(batch: pa.RecordBatch) -> pd.DataFrame:
        frame = of_complete_runs(batch.to_pandas(), runs)
        if frame.empty or "queues_moved" not in frame.columns:
            return pd.DataFrame()
        return moved(frame)

    parts = reduce_table(output, "rebalance_churn", reduce, groups=groups,
                         snapshots=sorted(set(runs["snapshot_id"])), columns=CHURN_COLUMNS)
    return moved(parts) if not parts.empty else parts


def group_churn(output: str, runs: pd.DataFrame, cards: pd.DataFrame) -> pd.DataFrame | None:
    """Each detailed group's latest GROUP_CHURN_ROWS rebalance_churn rows of complete
    runs up to its card's snapshot (`cards`: the whole-group rows the page details), from
    its cluster's CHURN_WINDOW snapshots up to there, not only the shown ones: a group's
    history. Reduced per batch as read; `clients_joined` and `clients_left` as how many.
    None without the table."""
    if not has_table(output, "rebalance_churn"):
        return None
    if cards.empty:
        return pd.DataFrame()
    runs = recent_runs(runs, until=cards)
    until = cards[["cluster", "consumer_group", "captured_at", "snapshot_id"]].rename(
        columns={"captured_at": "_until_at", "snapshot_id": "_until_id"})

    def reduce(batch: pa.RecordBatch) -> pd.DataFrame:
        rows = of_complete_runs(_client_counts(batch).to_pandas(), runs).merge(
            until, on=["cluster", "consumer_group"])
        # in the order every "latest" of the page follows: untimed snapshots first
        earlier = not_after(rows["captured_at"], rows["snapshot_id"], rows["_until_at"],
                            rows["_until_id"])
        return _latest_churn(rows[earlier].drop(columns=["_until_at", "_until_id"]))

    groups = sorted(set(cards["consumer_group"]))
    return _latest_churn(reduce_table(output, "rebalance_churn", reduce, groups=groups,
                                      snapshots=sorted(set(runs["snapshot_id"])),
                                      columns=GROUP_CHURN_COLUMNS))


def top_rebalances(output: str, shown: Sequence[str], groups: Sequence[str] | None,
                   runs: pd.DataFrame) -> pd.DataFrame | None:
    """The shown snapshots' rebalances that moved queues, the TOP_REBALANCES that moved
    the most (then the most estimated duplicates; then by cluster and group), of every
    group, not only the detailed ones: a rebalance of a group without findings is named
    on the page too, as the console summary names it. Reduced per batch as read;
    `clients_joined` and `clients_left` as how many. None without the table."""
    if not has_table(output, "rebalance_churn"):
        return None

    def reduce(batch: pa.RecordBatch) -> pd.DataFrame:
        rows = of_complete_runs(_client_counts(batch).to_pandas(), runs)
        if rows.empty or "queues_moved" not in rows.columns:
            return pd.DataFrame()
        return _largest(rows[pd.to_numeric(rows["queues_moved"], errors="coerce") > 0])

    return _largest(reduce_table(output, "rebalance_churn", reduce, groups=groups,
                                 snapshots=shown, columns=GROUP_CHURN_COLUMNS))


def _largest(rows: pd.DataFrame) -> pd.DataFrame:
    if rows.empty:
        return rows
    def number(name: str) -> pd.Series:  # a column an older table lacks: unknown
        values = rows[name] if name in rows.columns else pd.Series(None, index=rows.index)
        return pd.to_numeric(values, errors="coerce")

    order = rows.assign(_moved=number("queues_moved"), _dup=number("estimated_duplicates"))
    order = order.sort_values(["_moved", "_dup", "cluster", "consumer_group", "snapshot_id"],
                              ascending=[False, False, True, True, True],
                              na_position="last", kind="stable")
    return order.drop(columns=["_moved", "_dup"]).head(TOP_REBALANCES).reset_index(drop=True)


def _client_counts(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A churn batch with `clients_joined` and `clients_left` as how many (a page shows
    counts; the table names them)."""
    for name in ("clients_joined", "clients_left"):
        if name in batch.schema.names:
            at = batch.schema.get_field_index(name)
            batch = batch.set_column(at, name, pc.list_value_length(batch[name]))
    return batch


def _latest_churn(rows: pd.DataFrame) -> pd.DataFrame:
    if rows.empty:
        return rows
    rows = in_capture_order(rows)
    return (rows.groupby(["cluster", "consumer_group"], dropna=False)
            .tail(GROUP_CHURN_ROWS).reset_index(drop=True))


def _or(frame: pd.DataFrame | None, default: pd.DataFrame) -> pd.DataFrame:
    return default if frame is None else frame
