"""Which groups the report shows, and in what order (the pandas twin of the run summary's
choice in reports/attention.py `worst_groups`; both weigh by `vocabulary.severity`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from vocabulary.severity import SEVERITY_WEIGHTS

DEFAULT_TOP = 25


def whole_group_rows(balance: pd.DataFrame) -> pd.DataFrame:
    """group_balance rows with a null topic: one per group per snapshot."""
    if balance.empty or "topic" not in balance.columns:
        return balance
    return balance[balance["topic"].isna()]


def severity(rows: pd.DataFrame) -> pd.Series:
    """The weighted sum of SEVERITY_WEIGHTS (missing or null figures count 0)."""
    total = pd.Series(0.0, index=rows.index)
    for column, weight in SEVERITY_WEIGHTS.items():
        if column in rows.columns:
            total += pd.to_numeric(rows[column], errors="coerce").fillna(0) * weight
    return total


def has_findings(rows: pd.DataFrame) -> pd.Series:
    """Rows with at least one finding (`findings`: the list, or how many there are)."""
    if "findings" not in rows.columns:
        return pd.Series(False, index=rows.index)
    if pd.api.types.is_numeric_dtype(rows["findings"]):
        return rows["findings"].fillna(0) > 0
    return rows["findings"].map(lambda f: f is not None and len(f) > 0)


def in_capture_order(rows: pd.DataFrame, *first: str) -> pd.DataFrame:
    """`rows` sorted by the columns `first`, then oldest snapshot first: by capture time (a
    snapshot without one before any with one), then by snapshot id. Every "latest snapshot"
    of the page is the last in this order, as in the console's (`reports.attention`)."""
    return rows.sort_values([*first, "captured_at", "snapshot_id"], na_position="first")


def not_after(at: pd.Series, ids: pd.Series, until_at: pd.Series,
              until_ids: pd.Series) -> pd.Series:
    """Whether each snapshot (capture time `at`, id `ids`) comes no later than its
    (`until_at`, `until_ids`) in `in_capture_order`'s order. Spelled out, not compared as
    times: a missing capture time (NaT) compares False to everything, so a plain `<`
    would drop every untimed snapshot instead of ordering it first."""
    timed, until_timed = at.notna(), until_at.notna()
    before = (~timed & until_timed) | (timed & until_timed & (at < until_at))
    same_time = (~timed & ~until_timed) | (timed & until_timed & (at == until_at))
    return before | (same_time & (ids <= until_ids))


def latest_per_group(rows: pd.DataFrame) -> pd.DataFrame:
    """Each (cluster, group) at its latest shown snapshot."""
    if rows.empty:
        return rows
    ordered = in_capture_order(rows)
    return ordered.groupby(["cluster", "consumer_group"], dropna=False).tail(1)


def groups_needing_attention(balance: pd.DataFrame, top: int = DEFAULT_TOP,
                             everything: bool = False) -> pd.DataFrame:
    """Whole-group rows with findings, worst first, at most `top`; with `everything`
    (the groups asked for by --group) all rows, findings or not, however many."""
    rows = latest_per_group(whole_group_rows(balance))
    if rows.empty:
        return rows
    if not everything:
        rows = rows[has_findings(rows)]
    return most_severe(rows.assign(severity=severity(rows)), None if everything else top)


def most_severe(rows: pd.DataFrame, top: int | None) -> pd.DataFrame:
    """The `top` rows (None: all) by `severity` (worst first), then snapshot, cluster
    and group."""
    rows = rows.sort_values(["severity", "snapshot_id", "cluster", "consumer_group"],
                            ascending=[False, True, True, True], kind="stable")
    return (rows if top is None else rows.head(top)).reset_index(drop=True)


def skew_counts(skews: pd.Series) -> pd.Series:
    """How many groups have each skew (skew value → groups; nulls left out)."""
    values = pd.to_numeric(skews, errors="coerce").dropna().astype("int64")
    return values.value_counts().sort_index()


# worst groups named per finding in the findings overview
EXAMPLES_PER_FINDING = 3


class Findings(NamedTuple):
    """Rows' findings, one entry per (row, finding): `row` the row's place, `code` the
    finding's place in `names` (a table repeats a dozen codes over many rows)."""

    row: np.ndarray
    code: np.ndarray
    names: np.ndarray

    @staticmethod
    def of(listed: pa.Array) -> Findings:
        """From a list<string> column (a row's place: its position in the column), without
        a Python object per row: codes are dictionary-encoded."""
        flat, parents = pc.list_flatten(listed), pc.list_parent_indices(listed)
        valid = pc.is_valid(flat)
        encoded = pc.dictionary_encode(pc.filter(flat, valid))
        return Findings(pc.filter(parents, valid).to_numpy().astype(np.int64),
                        encoded.indices.to_numpy().astype(np.int64),
                        np.asarray(encoded.dictionary.to_pylist(), dtype=object))


class Example(NamedTuple):
    """One of a finding's worst groups."""

    finding: str
    severity: float
    snapshot_id: str
    cluster: str
    consumer_group: str

    def worst_first(self) -> tuple:
        """The sort key of `most_severe`'s order: severity down, then the group's names."""
        return (-self.severity, self.snapshot_id, self.cluster, self.consumer_group)


@dataclass
class FindingsOverview:
    """How many shown groups have each finding, per cluster, and the worst of them: the
    groups below the page's `--top` are in no card, so without it a finding that only
    they have would not be seen. Each group counts once, at its latest shown snapshot.
    Tallied batch by batch (`add`): what it holds is a count per cluster and finding and
    EXAMPLES_PER_FINDING groups per finding, however many groups there are."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (cluster, finding)
    groups: dict[str, int] = field(default_factory=dict)  # shown groups per cluster
    examples: list[Example] = field(default_factory=list)  # per finding, worst first
    with_findings: int = 0  # shown groups with any finding: the cards stop at `--top`

    def add(self, rows: pd.DataFrame, findings: Findings, ranked: pd.DataFrame) -> None:
        """Tally whole-group rows of groups not yet counted, and their `findings`;
        `ranked`: the rows with findings, with `severity` and `_row` (the place in
        `rows`), in `most_severe`'s order, so the worst groups are picked without
        sorting names again."""
        if rows.empty:
            return
        cluster_at, clusters = pd.factorize(rows["cluster"].to_numpy(), use_na_sentinel=False)
        for cluster, n in zip(clusters, np.bincount(cluster_at), strict=True):
            self.groups[cluster] = self.groups.get(cluster, 0) + int(n)
        if not len(findings.row):
            return
        at, code_at, found = findings
        self.with_findings += len(np.unique(at))
        tally = np.bincount(cluster_at[at] * len(found) + code_at,
                            minlength=len(clusters) * len(found))
        for i in np.flatnonzero(tally):
            key = (clusters[i // len(found)], found[i % len(found)])
            self.counts[key] = self.counts.get(key, 0) + int(tally[i])
        rank = np.full(len(rows), len(ranked), dtype=np.int64)
        rank[ranked["_row"].to_numpy().astype(np.int64)] = np.arange(len(ranked))
        order = np.lexsort((rank[at], code_at))  # by finding, worst group first
        first = np.r_[True, code_at[order][1:] != code_at[order][:-1]]
        starts = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
        picked = order[np.arange(len(order)) - starts < EXAMPLES_PER_FINDING]
        fields = [ranked[c].to_numpy()[rank[at[picked]]]
                  for c in ("severity", "snapshot_id", "cluster", "consumer_group")]
        new = [Example(found[code_at[i]], *values)
               for i, *values in zip(picked, *fields, strict=True)]
        self.examples = _worst_per_finding([*self.examples, *new])

    def total(self) -> int:
        return sum(self.groups.values())


def _worst_per_finding(examples: list[Example]) -> list[Example]:
    """EXAMPLES_PER_FINDING per finding, in `most_severe`'s order."""
    kept: list[Example] = []
    taken: dict[str, int] = {}
    for e in sorted(examples, key=lambda e: (e.finding, *e.worst_first())):
        if taken.get(e.finding, 0) < EXAMPLES_PER_FINDING:
            kept.append(e)
            taken[e.finding] = taken.get(e.finding, 0) + 1
    return kept


def findings_overview(rows: pd.DataFrame) -> FindingsOverview:
    """The overview of whole-group rows, each group once (`latest_per_group`'s output),
    with `findings` as lists: all of them as one batch."""
    overview = FindingsOverview()
    if rows.empty:
        return overview
    rows = rows.reset_index(drop=True)
    rows = rows.assign(severity=severity(rows), _row=np.arange(len(rows)))
    listed = rows["findings"] if "findings" in rows.columns else [[]] * len(rows)
    findings = Findings.of(pa.array(
        [list(f) if isinstance(f, (list, tuple, np.ndarray)) else None for f in listed],
        pa.list_(pa.string())))
    overview.add(rows, findings, most_severe(rows[has_findings(rows)], None))
    return overview


def what_if_shown(rows: pd.DataFrame, limit: int) -> pd.DataFrame:
    """Of one group's what_if rows, the `limit` a card shows, in this order: today's, the
    recommended one, the split by topic and the other strategies at today's client count
    by max load, then of the other client counts the fewest clients that reach each max
    load (more clients for the same max load is no option), those nearest today's count,
    by client count; then the rest by skew, max load and moves. Ranked by skew alone, a
    group of 5 clients and 64 queues showed 32, 33, ..., 44 clients, all at max 2."""
    if rows.empty or not {"clients", "max_queues"} <= set(rows.columns):
        return rows.head(limit)
    rows = rows.reset_index(drop=True)  # the parts below are told apart by index

    def flag(column: str) -> pd.Series:
        return (rows[column].fillna(False).astype(bool) if column in rows.columns
                else pd.Series(False, index=rows.index))

    current, recommended, split = flag("is_current"), flag("recommended"), flag("split_by_topic")
    clients = pd.to_numeric(rows["clients"], errors="coerce")
    today = clients[current]
    top = rows[current | recommended].assign(_rank=(~current).astype(int)).sort_values(
        "_rank", kind="stable").drop(columns="_rank")
    rest = rows[~(current | recommended)]
    same = (split | (clients == today.iloc[0])) if len(today) else split
    skew, moves = ([c] if c in rows.columns else [] for c in ("skew", "queues_moved"))
    at_today = rest[same[rest.index]].sort_values(["max_queues", *skew, *moves], kind="stable")
    others = rest[~same[rest.index]]
    # the fewest clients per max load, kept where the max load falls as clients rise
    fewest = others.assign(_n=clients[others.index]).sort_values(
        ["max_queues", "_n", *moves], kind="stable").drop_duplicates("max_queues")
    fewest = fewest.sort_values(["_n", "max_queues"], kind="stable")
    frontier = fewest[fewest["max_queues"]
                      < fewest["max_queues"].cummin().shift(fill_value=np.inf)]
    room = max(0, limit - len(top) - len(at_today))
    if len(today) and room < len(frontier):
        # nearest first; of two as near, the one with more clients (the lower max load)
        near = frontier.assign(_far=(frontier["_n"] - today.iloc[0]).abs()).sort_values(
            ["_far", "max_queues"], kind="stable")
        frontier = near.head(room).drop(columns="_far").sort_values("_n", kind="stable")
    frontier = frontier.drop(columns="_n")
    left = others.drop(index=frontier.index).sort_values([*skew, "max_queues", *moves],
                                                         kind="stable")
    return pd.concat([top, at_today, frontier, left]).head(limit)
