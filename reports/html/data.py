"""What the report shows, read from a run's Delta outputs with delta-rs (no Spark, no JVM:
`report` takes seconds).

Only rows of complete runs count: for each snapshot the `runs` row (status COMPLETE)
names the run whose rows every table holds; rows of any other run_id (a run that died
part-way) are left out, as docs/SPEC.md's dashboard query does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from reports.html.select import DEFAULT_TOP, groups_needing_attention, whole_group_rows
from vocabulary.errors import NoOutputError
from vocabulary.severity import SEVERITY_WEIGHTS

RUNS = "runs"
COMPLETE = "COMPLETE"
TABLES = ("consumer_load", "group_balance", "rebalance_churn", "drift", "what_if")
# the churn timeline's columns (the history is read whole, its move lists are not needed)
CHURN_COLUMNS = ("snapshot_id", "cluster", "captured_at", "consumer_group", "run_id",
                 "queues_moved")
# what choosing the detailed groups and the skew histogram need of every group_balance row
BALANCE_INDEX_COLUMNS = ("snapshot_id", "cluster", "captured_at", "consumer_group", "topic",
                         "run_id", "findings", *SEVERITY_WEIGHTS)


@dataclass
class ReportData:
    """The frames one report is built from; any of them may be empty."""

    output: str
    runs: pd.DataFrame  # the complete runs rows of the shown snapshots
    group_balance: pd.DataFrame  # shown snapshots (load(): the detailed groups only)
    consumer_load: pd.DataFrame  # shown snapshots
    churn: pd.DataFrame  # every complete snapshot: the timeline is history
    drift: pd.DataFrame | None = None  # None: the run had no observed input
    what_if: pd.DataFrame | None = None  # None: no what_if table in the output
    groups: list[str] = field(default_factory=list)  # --group filter, empty = all
    # the whole-group skew of every shown group; None: taken from group_balance
    skews: pd.Series | None = None


def table_path(output: str, name: str) -> str:
    return os.path.join(output, name)


def has_table(output: str, name: str) -> bool:
    """A Delta table with at least one commit (delta-rs would raise otherwise)."""
    log = os.path.join(output, name, "_delta_log")
    return os.path.isdir(log) and any(f.endswith(".json") or f.endswith(".parquet")
                                      for f in os.listdir(log))


def read_table(output: str, name: str, snapshots: Sequence[str] | None = None,
               groups: Sequence[str] | None = None,
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """One table as pandas, limited to `snapshots` by partition pruning when given, to
    the consumer groups named in `groups` (filtered while reading: the rows of other groups
    never reach pandas) and to `columns` when given."""
    from deltalake import DeltaTable

    table = DeltaTable(table_path(output, name))
    if columns is not None:  # a table written before a column was added lacks it
        names = {f.name for f in table.schema().fields}
        columns = [c for c in columns if c in names]
    filters = []
    if groups is not None:
        filters.append(("consumer_group", "in", list(groups) or [""]))
    pruned = "snapshot_id" in table.metadata().partition_columns and snapshots
    if pruned:
        filters.append(("snapshot_id", "in", list(snapshots)))
    frame = table.to_pandas(filters=filters or None,
                            columns=list(columns) if columns is not None else None)
    if snapshots is not None and not pruned:
        frame = frame[frame["snapshot_id"].isin(list(snapshots))]
    return frame


def complete_runs(output: str) -> pd.DataFrame:
    """The COMPLETE `runs` rows; NoOutputError when the output has none."""
    if not has_table(output, RUNS):
        raise NoOutputError(f"{output}: no output tables here (no '{RUNS}' Delta table); "
                            "point --output at the output root of an audit run")
    runs = read_table(output, RUNS)
    runs = runs[runs["status"] == COMPLETE]
    if runs.empty:
        raise NoOutputError(f"{output}: the '{RUNS}' table names no complete run")
    return runs


def latest_per_cluster(runs: pd.DataFrame) -> list[str]:
    """The newest complete snapshot of each cluster (by captured_at, then snapshot_id)."""
    ordered = runs.sort_values(["captured_at", "snapshot_id"], na_position="first")
    return sorted(set(ordered.groupby("cluster", dropna=False).tail(1)["snapshot_id"]))


def of_complete_runs(frame: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Rows written by the run `runs` names for their (snapshot, cluster)."""
    if frame.empty or "run_id" not in frame.columns:
        return frame
    keys = runs[["snapshot_id", "cluster", "run_id"]].drop_duplicates()
    return frame.merge(keys, on=["snapshot_id", "cluster", "run_id"], how="inner")


def load(output: str, snapshots: Sequence[str] | None = None,
         groups: Sequence[str] | None = None, top: int = DEFAULT_TOP) -> ReportData:
    """Read what the report needs. Default snapshots: the latest per cluster in `runs`.

    Every group is read only in the columns the overview and the choice of groups need
    (group_balance's severity figures, churn's timeline); whole rows of group_balance,
    consumer_load and what_if only for the groups the page details (the `top` needing
    attention, or `groups`)."""
    output = output.rstrip("/") or "/"
    all_runs = complete_runs(output)
    if snapshots:
        unknown = sorted(set(snapshots) - set(all_runs["snapshot_id"]))
        if unknown:
            raise NoOutputError(f"{output}: no complete run of snapshot(s) "
                                f"{', '.join(unknown)}")
        shown = sorted(set(snapshots))
    else:
        shown = latest_per_cluster(all_runs)
    runs = all_runs[all_runs["snapshot_id"].isin(shown)]

    def rows(name: str, only: Sequence[str] | None = shown,
             of_groups: Sequence[str] | None = None,
             columns: Sequence[str] | None = None) -> pd.DataFrame | None:
        if not has_table(output, name):
            return None
        wanted = of_groups if of_groups is not None else (groups or None)
        frame = of_complete_runs(read_table(output, name, only, wanted, columns), all_runs)
        return frame.reset_index(drop=True)

    empty = pd.DataFrame()
    index = _or(rows("group_balance", columns=BALANCE_INDEX_COLUMNS), empty)
    detailed = sorted(set(groups_needing_attention(index, top, everything=bool(groups))
                          .get("consumer_group", pd.Series(dtype=object))))
    whole = whole_group_rows(index)
    return ReportData(
        output=output, runs=runs.reset_index(drop=True),
        group_balance=_or(rows("group_balance", of_groups=detailed), empty),
        skews=whole["skew"].reset_index(drop=True) if "skew" in whole.columns else None,
        consumer_load=_or(rows("consumer_load", of_groups=detailed), empty),
        churn=_or(rows("rebalance_churn", None, columns=CHURN_COLUMNS), empty),
        drift=rows("drift"), what_if=rows("what_if", of_groups=detailed),
        groups=list(groups or []),
    )


def _or(frame: pd.DataFrame | None, default: pd.DataFrame) -> pd.DataFrame:
    return default if frame is None else frame
