"""The short human summary printed at the end of a run: the worst groups and why, where
the tables are, and how long each stage took."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from vocabulary.words import EMPTY_TOPICS, counted, listed

if TYPE_CHECKING:
    from reports.attention import FindingCounts


# the step lines' words for the stages whose timing keys (the fault hooks' points, the
# benchmarks' columns) read otherwise: `size` is the step line `read` (row counts from the
# logs), `read` the step line `validate` (the one pass over the rows), `write` `published`
_STAGE_WORDS = {"size": "read", "read": "validate", "demo_inputs": "demo inputs",
                "write": "write and publish", "report_html": "report.html"}


def print_summary(result, out: TextIO | None = None) -> None:
    import sys

    out = out or sys.stdout
    w = out.write
    w("\n")
    w(f"rebalance-audit run {result.run_id} ({result.engine} Delta engine)\n")
    w(f"  snapshots: {', '.join(result.snapshots) or '(none)'}\n")
    w("  rows: " + ", ".join(f"{k} {v:,}" for k, v in result.rows.items()) + "\n")
    w("  time: " + ", ".join(f"{_STAGE_WORDS.get(k, k)} {v:.1f}s"
                             for k, v in result.timings.items()) + "\n")
    if result.cleaned:
        w(f"  removed {len(result.cleaned)} leftover(s) of killed runs (uncommitted files)\n")
    if result.warnings:
        w(f"\n{len(result.warnings)} warning(s) about the inputs and the output:\n")
        for text in result.warnings:
            w(f"  - {text}\n")
    if result.not_audited:
        w(f"\nNot audited (earlier output of them is kept): {', '.join(result.not_audited)}\n")
    if not result.snapshots:
        w("\nNo snapshot was audited: no assignment, load or balance rows were written.\n")
    elif result.worst_groups:
        _finding_counts(result.finding_counts, len(result.worst_groups), w)
        w("\nGroups that need attention (worst first):\n")
        for g in result.worst_groups:
            load = (f"max {g['max_queues']} / pooled {g['pooled_max']} queues per client"
                    if g.get("max_queues") is not None else "no queues")
            w(f"  {_group(g)} @ {g['snapshot_id']}: "
              f"{', '.join(g['findings'])}\n")
            w(f"    {counted(g['clients'], 'client')}, {counted(g['queues'], 'queue')}, {load}, "
              f"{g['idle_clients']} idle, {g['unconsumed_queues']} unconsumed, "
              f"{g['contended_queues']} contended\n")
            line = g.get("what_if_line")
            rec = g["recommendation"]
            if line:  # the recommendation quotes it too: print it once, on its own line
                rec = rec.replace(f" What-if: {line}.", "")
            w(f"    -> {rec}\n")
            if line:
                w(f"    what-if: {line}\n")
    elif (result.members_short.total or result.members_gone.total
          or result.queues_short.total):
        w("\nNo group has findings in what was audited, but not every group was audited "
          f"whole (below){_empty_topics(result.finding_counts, ', and ')}.\n")
    elif empty := _empty_topics(result.finding_counts, ", but "):
        w(f"\nNo group has findings{empty}.\n")
    else:
        w("\nNo group has findings: every audited group is balanced.\n")
    _members_left_out(result, w)
    if result.churn:
        w("\nRebalances with the most queue moves:\n")
        for c in result.churn:
            dup = ("unknown" if c["estimated_duplicates"] is None
                   else f"~{int(c['estimated_duplicates']):,}")
            # Kafka's eager protocol pauses every partition, moved or not
            paused = c["paused_queues"]
            moved = (f"{c['queues_moved']} queue(s) moved and paused"
                     if paused == c["queues_moved"]
                     else f"{c['queues_moved']} queue(s) moved, {paused} paused")
            w(f"  {_group(c)} {c['previous_snapshot_id']} -> "
              f"{c['snapshot_id']}: {moved}, "
              f"{dup} duplicate message(s); {', '.join(c['triggers']) or 'no visible trigger'}"
              "\n")
    if result.report:
        w(f"\nReport (open in a browser, no network needed): {result.report}\n")
    w("\nDelta tables:\n")
    width = max(map(len, result.tables), default=0)
    for name, path in result.tables.items():
        w(f"  {name:<{width}} {path}\n")
    if result.rows.get("rejects"):
        w(f"\n{result.rows['rejects']:,} input row(s) could not be used: see the rejects "
          "table (source_table, row_json, reason).\n")


def _empty_topics(counts: FindingCounts | None, joiner: str) -> str:
    """`joiner` and the groups (at their latest snapshot) that subscribe a topic with no
    readable queue, which no finding names ("" when none): a group whose other topics
    are even has no finding, and was called balanced."""
    n = counts.empty_topics if counts is not None else 0
    if not n:
        return ""
    return (f"{joiner}{n:,} group(s) {EMPTY_TOPICS}, so "
            "nothing of those topics is assigned (see the warnings)")


def _members_left_out(result, w: Callable[[str], object]) -> None:
    """The groups whose members rows were rejected: audited without them (the figures
    leave those clients out, findings or none) or, with none left, not at all; and those
    whose topics' queues rows were (the figures leave those queues out)."""
    for shown, heading, words in (
            (result.members_short, "audited without some of their members rows, which were "
             "rejected: the figures leave those clients out",
             lambda g: g["rejected"].replace(" of this group", "", 1)),
            (result.members_gone, "with every members row rejected, so not audited at "
             "these snapshots",
             lambda g: f"{g['rows']} members row(s) rejected"),
            (result.queues_short, "whose topics lost queues rows, which were rejected: the "
             "figures leave those queues out",
             lambda g: g["rejected"])):
        if not shown.total:
            continue
        first = f" (the first {len(shown.first)})" if shown.total > len(shown.first) else ""
        w(f"\n{counted(shown.total, 'group')} {heading}{first}:\n")
        for g in shown.first:
            w(f"  {_group(g)} @ {_snapshots(g)}: {words(g)}\n")


def _group(row: dict) -> str:
    """cluster/group, a cluster without a name as '(none)', as the page names it (rows of
    a null cluster are rejected, and their groups listed here)."""
    cluster = row.get("cluster")
    return f"{'(none)' if cluster is None else cluster}/{row['consumer_group']}"


def _snapshots(group: dict) -> str:
    """The snapshot of a group's row, or the first three of its snapshots and how many
    more."""
    if "snapshot_id" in group:
        return str(group["snapshot_id"])
    snapshots = group["snapshots"]
    return listed(snapshots[:3], len(snapshots))


def _finding_counts(counts: FindingCounts | None, shown: int,
                    w: Callable[[str], object]) -> None:
    """Groups per finding, so that findings the ten worst groups leave out are seen."""
    if counts is None or not counts.by_code:
        return
    more = f"; the {shown} worst below" if counts.with_any > shown else ""
    w(f"\nFindings: {counts.with_any:,} of {counts.groups:,} group(s) have at least one, "
      f"each group at its latest snapshot{more}\n")
    width = max(len(code) for code in counts.by_code)
    for code, n in counts.ordered():
        w(f"  {code:<{width}} {n:>{len(f'{counts.with_any:,}')},} group(s)\n")
