"""Why a consumer group named with `report --group` is not in the shown snapshots: the
on-call engineer typed it, so the answer should say where it went — audited in another
snapshot, its rows rejected, or a name close to one that is there. Read only when a named
group is missing (the page's error path), from the tables the page reads anyway.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from reports.html.data import (
    GROUP_IN_ROW,
    RUN_KEYS,
    has_table,
    json_escaped,
    of_complete_runs,
    scan,
)
from reports.html.select import in_capture_order

CLOSE_NAMES = 3  # suggested per unknown name
NEIGHBOURS = 2000  # names compared on each side of an unknown one, among many


def shown_snapshots(runs: pd.DataFrame) -> str:
    """The shown snapshots (`runs`: the complete runs rows the page shows) as the message
    names them: their ids when every shown cluster shows each of them, else each id with
    its clusters. Clusters at different latest snapshots show a pair each: "s1, s2" would
    say that c1 lacks a group it holds in s1, a snapshot of c1 that is not shown."""
    pairs = runs[["snapshot_id", "cluster"]].drop_duplicates()
    clusters = pairs.groupby("snapshot_id")["cluster"].agg(sorted)
    if len(clusters) < 2 or clusters.map(len).eq(pairs["cluster"].nunique()).all():
        return ", ".join(clusters.index)
    return ", ".join(f"{snapshot} ({', '.join(names)})" for snapshot, names in clusters.items())


def why_missing(output: str, unknown: Sequence[str], runs: pd.DataFrame,
                all_runs: pd.DataFrame) -> list[str]:
    """One sentence per name in `unknown`: where the group is, or what became of it.
    `runs`: the complete runs rows the page shows, (snapshot, cluster) pairs: a snapshot
    id shown for one cluster may be another cluster's unshown one."""
    elsewhere = _snapshots_of(output, unknown, runs, all_runs)
    rejected = _rejected_rows(output, unknown, runs)
    names = None
    said = []
    for group in unknown:
        found = []
        if group in rejected:
            found.append(rejected[group])
        if group in elsewhere:
            snapshots = elsewhere[group]
            found.append(f"audited in snapshot(s) {_listed(snapshots)} (show the latest "
                         f"with --snapshot {snapshots[-1]})")
        if found:
            said.append(f"{group}: {'; '.join(found)}")
        else:
            if names is None:
                names = _group_names(output, runs)
            close = _close_names(names, group)
            said.append(f"{group}: no audited snapshot holds it" + (
                f"; close names in the shown snapshot(s): {', '.join(close)}"
                if close else ""))
    return said


def _close_names(names: list[str], group: str) -> list[str]:
    """Up to CLOSE_NAMES of `names` like `group`: those equal but for case first (an
    upper-case typo of a mixed-case name is nearest of all, yet scores low in difflib and
    sorts far from it), then difflib's closest among its neighbours."""
    folded = group.casefold()
    same = [n for n in names if n.casefold() == folded]
    near = _near(names, group)
    # a name the typed text begins (GID_app_001: GID_app_0010 ... and GID_app_0001, one
    # digit short), nearest in length, before difflib's picks among equals
    starts = sorted((n for n in near if n.casefold().startswith(folded)),
                    key=lambda n: (len(n), n))
    close = difflib.get_close_matches(group, near, n=CLOSE_NAMES, cutoff=0.6)
    return list(dict.fromkeys([*same, *starts, *close]))[:CLOSE_NAMES]


def _near(names: list[str], group: str) -> list[str]:
    """The sorted `names` worth comparing with `group`: all of a few thousand, else its
    neighbours in sort order (difflib takes about 30 s over a million names; a typo past
    the first characters keeps a name among its neighbours)."""
    if len(names) <= 2 * NEIGHBOURS:
        return names
    at = bisect.bisect_left(names, group)
    return names[max(0, at - NEIGHBOURS):at + NEIGHBOURS]


def _listed(values: Sequence[str], most: int = 5) -> str:
    """The latest `most` of `values` (oldest first), and how many earlier ones there are."""
    earlier = f" (and {len(values) - most} earlier)" if len(values) > most else ""
    return ", ".join(values[-most:]) + earlier


def _snapshots_of(output: str, groups: Sequence[str], runs: pd.DataFrame,
                  all_runs: pd.DataFrame) -> dict[str, list[str]]:
    """Per group, the complete snapshots not shown that hold it, oldest first (capture
    time): by (snapshot, cluster) pair, so a cluster's older snapshot counts though
    another cluster is shown at that id."""
    shown = set(zip(runs["snapshot_id"], runs["cluster"], strict=True))
    other_runs = all_runs[[pair not in shown for pair in zip(
        all_runs["snapshot_id"], all_runs["cluster"], strict=True)]]
    if other_runs.empty or not has_table(output, "group_balance"):
        return {}
    others = sorted(set(other_runs["snapshot_id"]))
    frames = [of_complete_runs(batch.to_pandas(), other_runs) for batch in scan(
        output, "group_balance", others, groups, [*RUN_KEYS, "consumer_group"])]
    found = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if found.empty:
        return {}
    order = pd.Index(_capture_order(all_runs))
    result = {}
    for group, rows in found.groupby("consumer_group"):
        snapshots = sorted(set(rows["snapshot_id"]), key=order.get_loc)
        result[group] = snapshots
    return result


def _capture_order(all_runs: pd.DataFrame) -> list[str]:
    """Every complete snapshot, oldest first (by capture time, then id), once."""
    ordered = in_capture_order(all_runs)
    return list(dict.fromkeys(ordered["snapshot_id"]))


def _rejected_rows(output: str, groups: Sequence[str], runs: pd.DataFrame) -> dict[str, str]:
    """Per group whose input rows the shown runs rejected: how many, from which input,
    and why."""
    if not has_table(output, "rejects"):
        return {}
    escaped = {json_escaped(g): g for g in groups}
    wanted = pa.array(list(escaped), pa.string())
    frames = []
    columns = list(dict.fromkeys([*RUN_KEYS, "source_table", "reason", "row_json"]))
    for batch in scan(output, "rejects", sorted(set(runs["snapshot_id"])), None, columns):
        if "row_json" not in batch.schema.names or not batch.num_rows:
            continue
        names = pc.struct_field(pc.extract_regex(batch["row_json"], GROUP_IN_ROW), [0])
        keep = pc.fill_null(pc.is_in(names, wanted), False)
        if not pc.any(keep).as_py():
            continue
        rows = pa.table({c: batch[c] for c in columns if c != "row_json"}).filter(keep)
        frames.append(rows.to_pandas().assign(group=names.filter(keep).to_pylist()))
    found = of_complete_runs(pd.concat(frames, ignore_index=True), runs) if frames \
        else pd.DataFrame()
    said = {}
    if found.empty:
        return said
    for name, rows in found.groupby("group"):
        parts = [f"{len(r):,} {table} row(s) rejected there ({reason})"
                 for (table, reason), r in rows.groupby(["source_table", "reason"])]
        said[escaped[name]] = ", ".join(parts)
    return said


def _group_names(output: str, runs: pd.DataFrame) -> list[str]:
    """The consumer groups of the shown runs (names only)."""
    if not has_table(output, "group_balance"):
        return []
    names: set[str] = set()
    for batch in scan(output, "group_balance", sorted(set(runs["snapshot_id"])), None,
                      [*RUN_KEYS, "consumer_group"]):
        names.update(of_complete_runs(batch.to_pandas(), runs)["consumer_group"])
    return sorted(names)
