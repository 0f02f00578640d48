"""report.html from a ReportData: one self-contained page (plotly.js inlined once, no
network needed to open it). Every value from the tables passes through `esc`."""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from reports.html import charts
from reports.html.data import DRIFT_KEYS, REJECT_NAMES, ReportData
from reports.html.run_warnings import FOLDER, RunWarnings
from reports.html.select import (
    DEFAULT_TOP,
    Example,
    FindingsOverview,
    findings_overview,
    groups_needing_attention,
    latest_per_group,
    skew_counts,
    what_if_shown,
    whole_group_rows,
)
from vocabulary.columns import GROUP_KEYS
from vocabulary.contracts import EXACT_DUPLICATE
from vocabulary.findings import FINDING_MEANINGS, FINDINGS
from vocabulary.severity import SEVERITY_WEIGHTS
from vocabulary.words import EMPTY_TOPICS


def esc(value: object) -> str:
    """Escaped for HTML text and attribute values."""
    return html.escape("" if value is None else str(value), quote=True)


# the verdict next to the candidate's name, whose words already say its virtual nodes
# and whether it splits by topic (the what_if table has both as columns): so the table
# fits a laptop's window, and on a narrower one what scrolls away is detail, not the verdict
WHAT_IF_COLUMNS = ["candidate", "recommended", "is_current", "clients", "strategy",
                   "max_queues", "min_queues", "idle_clients", "skew", "queues_moved",
                   "estimated_duplicates"]
WHAT_IF_ROWS = 15
TOPIC_COLUMNS = ["topic", "subscribing_clients", "queues", "min_queues", "max_queues",
                 "ideal_max", "idle_clients", "unconsumed_queues", "contended_queues",
                 "findings"]
CHURN_COLUMNS = ["snapshots", "captured_at", "clients", "queues_moved", "paused_queues",
                 "estimated_duplicates", "triggers"]
RUN_COLUMNS = ["snapshot_id", "cluster", "captured_at", "run_id", "finished_at", "engine"]
WARNINGS_SHOWN = 50  # a run over many snapshots may warn about each: the rest are counted
FILE_NAME_PART = 100  # of a group's name in its page's file name (255 bytes at most)

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
 max-width:1320px;padding:16px 24px;color:#1d1d1f;background:#fafafa}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:0 0 6px;overflow-wrap:anywhere}
section.group{background:#fff;border:1px solid #e2e2e2;border-radius:6px;padding:12px 16px;
 margin:14px 0}
.wide{overflow-x:auto;max-width:100%}table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}th{background:#f0f0f0}
td.t,th.t{text-align:left}tr.current td{background:#eef4ff}tr.recommended td{background:#e8f7e8;
 font-weight:600}.finding{display:inline-block;background:#fde8e8;color:#9b1c1c;
 border-radius:3px;padding:1px 6px;margin:0 4px 2px 0;font-size:12px}
.muted{color:#666;font-size:12px}.rec{background:#fffbe6;border-left:3px solid #e0b400;
 padding:6px 10px;margin:6px 0;font-size:13px}nav a{margin-right:10px;font-size:13px}
.overview{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,480px),1fr));gap:16px}
td.meaning{min-width:280px;max-width:480px}.nw{white-space:nowrap}.name{white-space:nowrap;
 display:inline-block;max-width:24em;overflow:hidden;text-overflow:ellipsis;vertical-align:bottom}
"""


def fmt(value: object) -> str:
    """A table cell: escaped, numbers trimmed and grouped by thousands (a count is a float
    where its column holds a null, an int elsewhere: both read alike), times to the second
    (`finished_at` showed microseconds and `+00:00`, `captured_at` neither), missing as a
    dash."""
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return esc(", ".join(str(v) for v in items)) if len(items) else "—"
    if value is pd.NaT:
        return "—"
    if isinstance(value, datetime):  # pd.Timestamp too: to the second, in UTC as the header
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
        return esc(value.strftime("%Y-%m-%d %H:%M:%S"))
    try:
        if pd.isna(value):
            return "—"
    except (TypeError, ValueError):
        pass
    return esc(value)


def html_table(frame: pd.DataFrame, columns: Sequence[str],
               row_class: Callable[[pd.Series], str] | None = None) -> str:
    """An escaped <table> of `columns` (those the frame has); text columns left-aligned.
    Wrapped in a box that scrolls sideways, so a wide table (the what-if's on a narrow
    window) stays inside its group's card instead of widening the whole page."""
    cols = [c for c in columns if c in frame.columns]
    numeric = {c for c in cols if pd.api.types.is_numeric_dtype(frame[c])
               and not pd.api.types.is_bool_dtype(frame[c])}

    def cls(c: str) -> str:
        return "" if c in numeric else ' class="t"'

    head = "".join(f"<th{cls(c)}>{esc(c)}</th>" for c in cols)
    body = []
    for _, row in frame.iterrows():
        klass = row_class(row) if row_class else ""
        cells = "".join(f"<td{cls(c)}>{fmt(row[c])}</td>" for c in cols)
        body.append(f'<tr class="{esc(klass)}">{cells}</tr>' if klass else f"<tr>{cells}</tr>")
    return (f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _of(frame: pd.DataFrame | None, key: pd.Series) -> pd.DataFrame:
    """Rows of `frame` for one group's (snapshot, cluster, group)."""
    if frame is None or frame.empty:
        return pd.DataFrame()
    mask = pd.Series(True, index=frame.index)
    for k in GROUP_KEYS:
        mask &= frame[k] == key[k]
    return frame[mask]


UNFINISHED_NAMED = 5  # snapshots named by the unfinished-runs note; the rest counted
TOPIC_ROWS = 50  # a group's per-topic rows listed (500 made a page of one group)


def header(data: ReportData, generated: datetime) -> str:
    runs = _runs_of_groups(data).sort_values(["cluster", "captured_at", "snapshot_id"])
    scope = (f"; groups: {esc(', '.join(data.groups))}" if data.groups else "")
    return (f"<h1>rebalance-audit report</h1>"
            f'<p class="muted">output {esc(data.output)} · generated '
            f"{esc(generated.strftime('%Y-%m-%d %H:%M:%S UTC'))} · "
            f"{runs['snapshot_id'].nunique()} snapshot(s) of "
            f"{runs['cluster'].nunique(dropna=False)} cluster(s), run(s) "
            f"{esc(', '.join(sorted(set(runs['run_id']))))}{scope}</p>"
            + html_table(runs, RUN_COLUMNS))


def _runs_of_groups(data: ReportData) -> pd.DataFrame:
    """The runs the header lists: on a page of named groups (`--group`), those of the
    snapshots and clusters the groups are in. It listed every shown cluster's, so a
    group of one cluster read as "1 snapshot(s) of 2 cluster(s)", the other cluster's
    run beside it."""
    balance = data.group_balance
    if not data.groups or balance.empty:
        return data.runs
    keys = balance[["snapshot_id", "cluster"]].drop_duplicates()
    return data.runs.merge(keys, on=["snapshot_id", "cluster"], how="inner")


def drift_section(drift: pd.DataFrame | None) -> str:
    """Drifting queues per group and kind in each shown snapshot (`data.drift_counts`),
    when the run had an observed input: a row per (snapshot, group), worst first, never
    one group's snapshots summed (its queues would count once per snapshot)."""
    if drift is None or drift.empty:
        return ""
    counts = (drift.groupby(DRIFT_KEYS, dropna=False)["queues"].sum()
              .unstack("kind", fill_value=0))
    counts.insert(0, "drifting_queues", counts.sum(axis=1))
    # stable: rows drifting as much stay in snapshot, cluster and group order
    counts = counts.sort_values("drifting_queues", ascending=False,
                                kind="stable").reset_index()
    return ('<h2 id="drift">Drift: observed holders vs the recomputed assignment</h2>'
            '<p class="muted">drifting queues per group in each shown snapshot, by kind</p>'
            + html_table(counts, list(counts.columns)))


# why a row with a lower max load can stand unrecommended (`rebalance_udfs.what_if._ranked`)
WHAT_IF_RULE = ('<p class="muted">recommended: the best candidate the group can run as it is, '
                "with no more clients than today and a strategy its allocator has "
                "(RocketMQ's, Kafka's, or the broker's AVG / AVG_BY_CIRCLE): fewest queues "
                "left unconsumed, then lowest max load, then fewest clients, then fewest "
                "moves. The rows with more clients "
                "show what adding them would buy; the other strategies are the "
                "comparison.</p>")


def _what_if(data: ReportData, key: pd.Series) -> str:
    if data.what_if is None or data.what_if.empty:  # no table, or --what-if off
        return ""
    rows = _of(data.what_if, key)
    if rows.empty:
        return '<p class="muted">No what-if candidates for this group.</p>'
    more = len(rows) - WHAT_IF_ROWS

    def klass(row: pd.Series) -> str:
        if bool(row.get("recommended") is True):
            return "recommended"
        return "current" if bool(row.get("is_current") is True) else ""

    table = html_table(what_if_shown(rows, WHAT_IF_ROWS), WHAT_IF_COLUMNS, klass)
    tail = f'<p class="muted">{more} more candidate(s) in the what_if table.</p>' \
        if more > 0 else ""
    return f"<h4>What if</h4>{WHAT_IF_RULE}{table}{tail}"


def rebalances_by_group(churn: pd.DataFrame | None) -> dict[tuple, list[dict]] | None:
    """`data.group_churn` as each (cluster, group)'s rows, newest first; None: no table."""
    if churn is None:
        return None
    if churn.empty:
        return {}
    ordered = churn.sort_values(["captured_at", "snapshot_id"], ascending=False, kind="stable")
    by_group: dict[tuple, list[dict]] = {}
    for record in ordered.to_dict("records"):
        by_group.setdefault((record["cluster"], record["consumer_group"]), []).append(record)
    return by_group


def _rebalances(records: list[dict]) -> str:
    """A group's latest rebalances up to its card's snapshot, newest first."""
    title = "<h4>Rebalances</h4>"
    if not records:
        return (f'{title}<p class="muted">None recorded up to this snapshot: a group\'s first '
                "audited snapshot has nothing to compare with.</p>")
    shown = pd.DataFrame([_rebalance_cells(r) for r in records])
    latest = ("the latest, against the snapshot before it" if len(records) == 1 else
              f"the latest {len(records)}, each against the snapshot before it")
    return (f'{title}<p class="muted">{latest}; clients: before → after (+joined −left); '
            "the rebalance_churn table names them and every moved queue</p>"
            + html_table(shown, CHURN_COLUMNS))


def rebalances_section(top: pd.DataFrame | None) -> str:
    """The shown snapshots' largest rebalances by name (`data.top_rebalances`): the churn
    timeline sums them, and a group without findings has no card to show its own."""
    if top is None or top.empty:
        return ""
    shown = pd.DataFrame([{"cluster": _raw(r.get("cluster")),
                           "consumer_group": r.get("consumer_group"), **_rebalance_cells(r)}
                          for r in top.to_dict("records")])
    return ('<h2 id="rebalances">Largest rebalances of the shown snapshots</h2>'
            f'<p class="muted">the {len(top)} that moved the most queues, every group\'s, '
            "against the snapshot before each; clients: before → after (+joined −left); "
            "the rebalance_churn table names every moved queue</p>"
            + html_table(shown, ["cluster", "consumer_group", "snapshots", "clients",
                                 "queues_moved", "paused_queues", "estimated_duplicates",
                                 "triggers"]))


def _rebalance_cells(row: dict) -> dict:
    """One rebalance_churn row as the page shows it (CHURN_COLUMNS), on a card or in the
    largest rebalances."""
    return {"snapshots": f"{_raw(row.get('previous_snapshot_id'))} → "
                         f"{_raw(row['snapshot_id'])}",
            "captured_at": row.get("captured_at"), "clients": _clients_change(row),
            "queues_moved": row.get("queues_moved"), "paused_queues": row.get("paused_queues"),
            "estimated_duplicates": _duplicates(row), "triggers": row.get("triggers")}


def _raw(value: object) -> str:
    """A value as text for a cell `html_table` escapes: a dash when missing."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    return f"{int(value):,}" if isinstance(value, (int, float, np.number)) else str(value)


def _duplicates(row: dict) -> str:
    """The estimate, saying how many moves it covers when it does not cover them all (an
    old owner's consumed offset unknown: its share is not guessed)."""
    estimate, known, moved = (row.get(c) for c in ("estimated_duplicates",
                                                   "duplicates_known_moves", "queues_moved"))
    text = _raw(estimate)
    if text != "—" and pd.notna(known) and pd.notna(moved) and known < moved:
        text += f" ({int(known):,} of {int(moved):,} moves known)"
    return text


def _clients_change(row: dict) -> str:
    """"before → after (+joined −left)"; a figure an older table lacks is a dash."""
    change = f"{_raw(row.get('clients_before'))} → {_raw(row.get('clients_after'))}"
    joined, left = (int(row[c]) if pd.notna(row.get(c)) else 0
                    for c in ("clients_joined", "clients_left"))
    return change + (f" (+{joined} −{left})" if joined or left else "")


def group_section(data: ReportData, row: pd.Series, index: int,
                  rebalances: dict[tuple, list[dict]] | None = None) -> str:
    """One group: figures, findings, recommendation, per-topic rows, chart, rebalances
    (`rebalances_by_group`; None: no churn table), what-if."""
    title = (f"{esc(row['cluster'])} / {esc(row['consumer_group'])} "
             f"@ {esc(row['snapshot_id'])}")
    parts = [f'<section class="group" id="g{index}"><h3>{index}. {title}</h3>']
    # name then figure, as group_balance names its columns ("1 queues, 1 max queues" read
    # as broken English)
    figures = " · ".join(f"{c.replace('_', ' ')} {fmt(row.get(c))}"
                         for c in ("clients", "queues", "max_queues", "pooled_max", "skew",
                                   "idle_clients", "unconsumed_queues", "contended_queues")
                         if c in row.index)
    parts.append(f'<p class="muted">{figures} · severity {fmt(float(row["severity"]))}</p>')
    findings = row.get("findings")
    if findings is not None and len(findings):
        parts.append("<div>" + "".join(f'<span class="finding">{esc(f)}</span>'
                                       for f in findings) + "</div>")
    if row.get("recommendation") is not None and not pd.isna(row.get("recommendation")):
        parts.append(f'<div class="rec">{esc(row["recommendation"])}</div>')
    topics = _of(data.group_balance, row)
    topics = topics[topics["topic"].notna()] if not topics.empty else topics
    if not topics.empty:
        parts.append(_topic_rows(topics))
    load = _of(data.consumer_load, row)
    if not load.empty:
        fig = charts.client_load_figure(load, "Queues per client by topic"
                                        + (" and lag" if "lag" in load.columns
                                           and load["lag"].notna().any() else ""))
        parts.append(charts.to_div(fig, f"load-{index}"))
        if len(load) > charts.CHART_CLIENTS:
            parts.append(f'<p class="muted">The chart draws the {charts.CHART_CLIENTS} '
                         f"clients with the most queues of {len(load):,}; the consumer_load "
                         "table has every client.</p>")
    if rebalances is not None:
        parts.append(_rebalances(rebalances.get((row["cluster"], row["consumer_group"]), [])))
    parts.append(_what_if(data, row))
    parts.append("</section>")
    return "".join(parts)


def _topic_rows(topics: pd.DataFrame) -> str:
    """A group's per-topic rows: all of up to TOPIC_ROWS, else the TOPIC_ROWS with the
    most queues per client (then findings, then name), and how many are left out."""
    if len(topics) <= TOPIC_ROWS:
        return html_table(topics.sort_values("topic"), TOPIC_COLUMNS)
    found = topics["findings"].map(lambda f: 0 if f is None else len(f)) \
        if "findings" in topics.columns else pd.Series(0, index=topics.index)
    most = pd.to_numeric(topics["max_queues"], errors="coerce").fillna(0)
    shown = (topics.assign(_max=most, _found=found)
             .sort_values(["_max", "_found", "topic"], ascending=[False, False, True],
                          kind="stable").head(TOPIC_ROWS).drop(columns=["_max", "_found"]))
    return (html_table(shown.sort_values("topic"), TOPIC_COLUMNS)
            + f'<p class="muted">{len(topics) - TOPIC_ROWS:,} more topic(s) of {len(topics):,} '
            f"not listed: these are the {TOPIC_ROWS} with the most queues per client; "
            "group_balance has a row for each.</p>")


def overview(data: ReportData) -> str:
    """Side by side: how skew spreads over the shown groups (its counts filled by
    `render`), and churn over time."""
    counts = data.skew_counts if data.skew_counts is not None else pd.Series(dtype="int64")
    left = (charts.to_div(charts.skew_histogram(counts), "skew-chart")
            if not counts.empty else "<p>No group has a skew figure.</p>")
    right = (charts.to_div(charts.churn_timeline(data.churn, data.churn_window),
                           "churn-chart")
             if not data.churn.empty and "queues_moved" in data.churn.columns
             # two complete snapshots may have none: one audited before the snapshot
             # that precedes it compares with nothing until it is audited again (probe X)
             else "<p>No churn rows: churn compares a snapshot with the one before it in "
                  "the output when the snapshot is audited, so a cluster needs two, and one "
                  "audited before its predecessor has none until it is audited again (the "
                  "predecessor's run names it in its warnings).</p>")
    return (f'<div class="overview"><div><h2 id="skew">Distribution of skew</h2>{left}</div>'
            f'<div><h2 id="churn">Churn timeline</h2>{right}</div></div>')


def findings_section(overview: FindingsOverview, worst: pd.DataFrame,
                     output: str | None = None) -> str:
    """Every shown group counted per finding, by cluster, with its worst groups (linked to
    their card when the page details them; else how to render one, for the output root
    `output`) and what the code means: the cards below stop at `--top`, this table does
    not."""
    total = overview.total()
    if not overview.counts:  # the groups section below says no group has findings
        return ""
    title = '<h2 id="findings">Findings across the shown groups</h2>'
    cards = {tuple(r): i for i, r in enumerate(
        worst[["snapshot_id", "cluster", "consumer_group"]].itertuples(index=False), start=1)}
    several_clusters = len(overview.groups) > 1
    # named groups without a card: those of findings no card shows (a finding whose groups
    # weigh little in the severity, BROKER_UNSUPPORTED_STRATEGY say), and the others
    of_uncarded_findings: list[Example] = []
    left_out: list[Example] = []

    def card_of(e: Example) -> int | None:
        return cards.get((e.snapshot_id, e.cluster, e.consumer_group))

    def example(e: Example) -> str:
        name = esc(e.consumer_group) + (f" ({esc(e.cluster)})" if several_clusters else "")
        card = card_of(e)
        if card:  # the whole name on hover: a long one is cut short with an ellipsis
            return f'<a class="name" title="{name}" href="#g{card}">{name}</a>'
        return f'<span class="name" title="{name}">{name}</span>'

    rows = []
    for code in _by_worst_group(overview.examples):
        by_cluster = sorted(((n, c) for (c, f), n in overview.counts.items() if f == code),
                            key=lambda nc: (-nc[0], str(nc[1])))
        groups = sum(n for n, _ in by_cluster)
        named = [e for e in overview.examples if e.finding == code]
        missing = [e for e in named if not card_of(e)]
        (left_out if len(missing) < len(named) else of_uncarded_findings).extend(missing)
        more = f" and {groups - len(named):,} more" if groups > len(named) else ""
        cells = [f'<td class="t"><span class="finding">{esc(code)}</span></td>',
                 f"<td>{groups:,}</td>", f"<td>{_share(groups, total)}</td>"]
        if several_clusters:
            cells.append('<td class="t">' + ", ".join(
                f'<span class="nw"><span class="name" title="{esc(c)}">{esc(c)}</span> '
                f'{n:,}</span>' for n, c in by_cluster) + "</td>")
        cells += [f'<td class="t">{", ".join(map(example, named))}{more}</td>',
                  f'<td class="t meaning">{esc(FINDING_MEANINGS.get(code, ""))}</td>']
        rows.append(f"<tr>{''.join(cells)}</tr>")
    head = ["finding", "groups", "of shown"] + (["by cluster"] if several_clusters else []) \
        + ["worst groups", "what it means"]
    numeric = ("groups", "of shown")
    head_cells = "".join(f"<th>{esc(h)}</th>" if h in numeric else f'<th class="t">{esc(h)}</th>'
                         for h in head)
    return (f'{title}<p class="muted">{total:,} group(s) shown, each at its latest shown '
            "snapshot; a group may have several findings. Ordered by each finding's worst "
            "group, as the cards below.</p>"
            f'<div class="wide"><table><thead><tr>{head_cells}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
            + _without_card(next(iter(of_uncarded_findings + left_out), None), len(worst),
                            output))


def _without_card(e: Example | None, cards: int, output: str | None) -> str:
    """How to see a named group that has no card (it ranks below the page's `--top`), with
    the command that renders `e`'s; nothing when every named group has a card (`e` None)."""
    if e is None:
        return ""
    command = _card_command(e, output or "ROOT")
    return (f'<p class="muted">A group named without a link ranks below the {cards:,} '
            "with a card (<code>report --top N</code> shows more); "
            f"<code>{esc(command)}</code> renders a page with its card.</p>")


def _card_command(e: Example, output: str) -> str:
    """The command, as README spells it, that renders `e`'s card into a page of its own
    beside report.html: without `--html` it would write OUTPUT/report.html, replacing
    the run's page (this one, often) with a page of that one group. Values shell-quoted."""
    page = os.path.join(output, f"report-{_in_file_name(e.consumer_group)}.html")
    return shlex.join(["./spark-submit.sh", "report", "--output", output, "--snapshot",
                       e.snapshot_id, "--group", e.consumer_group, "--html", page])


def _in_file_name(name: str) -> str:
    """`name` as part of a file name: a group name may hold `/` or spaces, and be longer
    than a file name may be; the name on the command line is the group's own. A name that
    had to change ends in a digest of itself: `a/b` and `a b` became one file name, and
    one group's page replaced the other's."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
    if safe == name and len(name) <= FILE_NAME_PART:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[:FILE_NAME_PART - len(digest) - 1]}-{digest}"


def _by_worst_group(examples: list[Example]) -> list[str]:
    """The findings ordered as the cards: by their worst group's severity, snapshot,
    cluster and name, then in the contract's order (one group's several findings)."""
    order = {code: i for i, code in enumerate(FINDINGS)}
    worst: dict[str, Example] = {}
    for e in examples:  # each finding's examples come worst first
        worst.setdefault(e.finding, e)
    return sorted(worst, key=lambda code: (*worst[code].worst_first(),
                                           order.get(code, len(order)), code))


def _share(part: int, total: int) -> str:
    """A percentage that never reads 0% for a group that is there."""
    return "&lt;1%" if part > 0 and part * 200 < total else f"{part / total:.0%}"


def _no_findings(rejects: pd.DataFrame | None, warnings: RunWarnings | None = None) -> str:
    """What an empty list of groups needing attention means: every shown group balanced,
    unless members or queues rows were rejected: their groups were audited without them
    (or not at all, when every members row of one was), so "balanced" would hide them.
    An exact duplicate's first copy was audited: not counted. Nor when the shown runs
    warned of groups that subscribe a topic with no readable queue (`EMPTY_TOPICS`): no
    finding names them, and nothing of those topics is assigned."""
    empty = warnings is not None and any(
        EMPTY_TOPICS in text for texts in warnings.by_run.values() for text in texts)
    topics = (f'groups the <a href="#warnings">warnings</a> name {EMPTY_TOPICS}, so '
              "nothing of those topics is assigned")
    balanced = (f"No group has findings, but {topics}." if empty
                else "No group has findings: every shown group is balanced.")
    if rejects is None or rejects.empty:
        return balanced
    lost = rejects[rejects["reason"] != EXACT_DUPLICATE]
    members, queues = (int(lost.loc[lost["source_table"] == t, "rows"].sum())
                       for t in ("members", "queues"))
    if not members and not queues:
        return balanced
    rows = " and ".join(f"{n:,} {t} row(s)" for n, t in ((members, "members"),
                                                         (queues, "queues")) if n)
    named = "groups and topics" if queues else "groups"
    return (f"No group has findings in what was audited, but {rows} were rejected: the "
            f'{named} <a href="#rejects">named below</a> were audited without them, or not '
            f"at all{'; and ' + topics if empty else ''}.")


def rejects_section(rejects: pd.DataFrame | None, elsewhere: int = 0) -> str:
    """Input rows the shown runs could not use, per input and reason (`data.reject_counts`):
    a group whose rows were rejected is missing from the figures above, or partly so. On
    a --group page, those of the named groups (`data.group_reject_counts`): `elsewhere`
    rows of other groups and topics are said to be in the table, not shown."""
    others = (f'<p class="muted">{elsewhere:,} rejected row(s) of other groups and topics '
              "are not on this page of the named groups; the <code>rejects</code> table "
              "holds them</p>") if elsewhere else ""
    if rejects is None or rejects.empty:
        return ('<h2 id="rejects">Rejected input rows</h2>' + others) if others else ""
    rows = rejects.sort_values(["rows", "snapshot_id", "source_table"],
                               ascending=[False, True, True])
    if "names" in rows.columns:
        rows = rows.assign(**{"groups or topics": rows["names"].map(_reject_names)})
    return ('<h2 id="rejects">Rejected input rows</h2><p class="muted">rows of the inputs '
            "the audit could not use, and inputs a snapshot was missing from: they are in "
            "none of the figures of this page, and the groups named lost them (the "
            "<code>rejects</code> table holds each row as read)</p>" + others
            + html_table(rows, ["snapshot_id", "cluster", "source_table", "reason", "rows",
                                "groups or topics"]))


def _reject_names(names: object) -> str | None:
    """The first REJECT_NAMES names, JSON escapes decoded, "and more" past them."""
    if not isinstance(names, (list, tuple, np.ndarray)) or not len(names):
        return None
    decoded = []
    for name in list(names)[:REJECT_NAMES]:
        try:
            text = json.loads(f'"{name}"')
            text.encode("utf-8")  # a lone surrogate escape (\ud800) decodes to no text
        except ValueError:  # not a JSON string body, or no UTF-8 text: as written
            text = str(name)
        decoded.append(text)
    return ", ".join(decoded) + (" and more" if len(names) > REJECT_NAMES else "")


def _lag_unknown(load: pd.DataFrame) -> bool:
    """Whether no client of the detailed groups has a known lag: a run without offsets
    (or one whose offsets match no queue). The page would show only dashes for it."""
    return (not load.empty and "lag" in load.columns
            and pd.to_numeric(load["lag"], errors="coerce").isna().all())


def unfinished_section(snapshots: list[str]) -> str:
    """The snapshots the output holds rows of without a complete run (`data.
    unfinished_snapshots`): not shown, so the page may show an older snapshot of their
    cluster as its latest; said, with the command that repairs them."""
    if not snapshots:
        return ""
    shown = ", ".join(snapshots[:UNFINISHED_NAMED])
    more = (f" and {len(snapshots) - UNFINISHED_NAMED:,} more"
            if len(snapshots) > UNFINISHED_NAMED else "")
    repair = " ".join(f"--snapshot {shlex.quote(s)}" for s in snapshots[:UNFINISHED_NAMED])
    return (f'<div class="rec"><p>Snapshot(s) {esc(shown)}{more}: the output holds rows of a '
            "run of them that did not complete (killed, or still writing), and no complete "
            "run: not shown here, so a cluster's latest snapshot on this page may be older "
            f"than what was captured. An audit of them repairs the tables "
            f"(<code>audit ... {esc(repair)}</code>).</p></div>")


def newer_section(newer: list[tuple[str | None, int, str]], output: str) -> str:
    """The shown clusters that have complete snapshots newer than the shown one
    (`data.newer_snapshots`): a page of older snapshots (an audit's backfill, `--snapshot`)
    would read as each cluster's state now."""
    if not newer:
        return ""
    said = "; ".join(f"cluster {esc(c if c is not None else '(none)')}: {n:,}, the latest "
                     f"{esc(latest)}" for c, n, latest in newer)
    latest = shlex.join(["./spark-submit.sh", "report", "--output", output])
    return (f'<div class="rec"><p>Newer complete snapshots than the one shown: {said}. '
            "This page shows the snapshot(s) its run audited or <code>--snapshot</code> "
            f"named; <code>{esc(latest)}</code> shows each cluster's latest.</p></div>")


def warnings_section(warnings: RunWarnings) -> str:
    """What the shown runs warned about, as they printed it: what their tables lack or
    replaced by nothing (an input missing a snapshot, groups whose lag stays unknown, rows
    a left-out option removed, a later snapshot to audit again). Each text names its run
    when the page shows several; runs that kept no record, or one that cannot be read,
    are named below."""
    total = warnings.count()
    not_known = ""
    if warnings.unrecorded:
        not_known = (f'<p class="muted">No record of the warnings of run(s) '
                     f"{esc(', '.join(warnings.unrecorded))}: audited before runs kept "
                     "them, or stopped between publishing and recording them; their "
                     "log has them.</p>")
    if warnings.unreadable:
        not_known += (f'<p class="muted">The record of the warnings of run(s) '
                      f"{esc(', '.join(warnings.unreadable))} cannot be read (its file "
                      f"in {FOLDER}/ under the output root is damaged or cut); their log "
                      "has them.</p>")
    if not total:
        return not_known
    several = sum(1 for texts in warnings.by_run.values() if texts) > 1
    items, more = _warning_items(warnings.by_run, several, "the run's log")
    return (f'<h2 id="warnings">Warnings of the shown run(s) ({total})</h2>'
            f'<div class="rec"><ul>{items}</ul></div><p class="muted">{more}each run '
            "printed them too</p>" + not_known)


def _warning_items(by_run: dict[str, list[str]], named: bool, logs: str) -> tuple[str, str]:
    """The first WARNINGS_SHOWN warnings of `by_run` as escaped list items (each prefixed
    with its run when `named`), and what says where the rest are (`logs`), or ""."""
    texts = [f"run {run_id}: {text}" if named else text
             for run_id, run_texts in by_run.items() for text in run_texts]
    items = "".join(f"<li>{esc(text)}</li>" for text in texts[:WARNINGS_SHOWN])
    more = (f"{len(texts) - WARNINGS_SHOWN} more in {logs} "
            f"and in {FOLDER}/ under the output root; "
            if len(texts) > WARNINGS_SHOWN else "")
    return items, more


def warnings_about_section(warnings: RunWarnings) -> str:
    """What runs that landed after a shown snapshot's own run said about it: a backfill
    names the snapshot right after the one it adds, whose churn (and the sticky
    assignors' start) compare with the wrong snapshot until it is audited again. The
    page of that snapshot must say so, not only the backfill's log."""
    total = warnings.count_about()
    if not total:
        return ""
    items, more = _warning_items(warnings.about_shown, True, "those runs' logs")
    return (f'<h2 id="warnings-about">Warnings later runs gave about the shown snapshot(s) '
            f'({total})</h2><div class="rec"><ul>{items}</ul></div><p class="muted">{more}'
            "these runs audited other snapshots after the shown ones were audited; what "
            "they say holds until the shown snapshot is audited again</p>")


def _with_counts(data: ReportData) -> ReportData:
    """`data` with its skew counts and findings overview counted from its group_balance
    rows where `load()` did not count them over every shown group (a ReportData built by
    hand): each group once, at its latest snapshot."""
    if data.skew_counts is not None and data.findings is not None:
        return data
    latest = latest_per_group(whole_group_rows(data.group_balance))
    counts = (data.skew_counts if data.skew_counts is not None
              else skew_counts(latest["skew"]) if "skew" in latest.columns and not latest.empty
              else pd.Series(dtype="int64"))
    findings = data.findings if data.findings is not None else findings_overview(latest)
    return replace(data, skew_counts=counts, findings=findings)


def render(data: ReportData, top: int = DEFAULT_TOP,
           generated: datetime | None = None) -> str:
    """The whole page as a string."""
    generated = generated or datetime.now(UTC)
    data = _with_counts(data)
    worst = groups_needing_attention(data.group_balance, top, everything=bool(data.groups))
    weights = " + ".join(f"{w} × {c.replace('_', ' ')}" for c, w in SEVERITY_WEIGHTS.items())
    findings = data.findings
    body = [header(data, generated)]
    body.append('<nav>' + ('<a href="#warnings">warnings</a>' if data.warnings.count()
                           else "")
                + ('<a href="#warnings-about">later runs\' warnings</a>'
                   if data.warnings.count_about() else "")
                + '<a href="#skew">skew</a><a href="#churn">churn</a>'
                + ('<a href="#rebalances">largest rebalances</a>'
                   if data.top_rebalances is not None and not data.top_rebalances.empty
                   else "")
                + ('<a href="#findings">findings</a>' if findings.counts else "")
                + ('<a href="#drift">drift</a>' if data.drift is not None
                   and not data.drift.empty else "")
                + ('<a href="#attention">groups asked for</a>' if data.groups
                   else '<a href="#attention">groups needing attention</a>')
                + ('<a href="#rejects">rejected input rows</a>' if data.rejects is not None
                   and not data.rejects.empty else "") + "</nav>")
    body.append(warnings_section(data.warnings))
    body.append(warnings_about_section(data.warnings))
    body.append(unfinished_section(data.unfinished))
    body.append(newer_section(data.newer, data.output))
    body.append(overview(data))
    body.append(rebalances_section(data.top_rebalances))
    body.append(findings_section(findings, worst, data.output))
    body.append(drift_section(data.drift))
    # --group: the groups asked for, whatever their findings
    shown_as = "Groups asked for" if data.groups else "Groups needing attention"
    body.append(f'<h2 id="attention">{shown_as} ({len(worst)}), worst '
                f'first</h2><p class="muted">severity = {esc(weights)}</p>')
    if not worst.empty and _lag_unknown(data.consumer_load):
        body.append('<p class="muted">No lag is known for the groups below, so they have '
                    "no lag figures and their duplicate estimates are dashes: those need "
                    "committed offsets (<code>audit --offsets</code>, which <code>capture"
                    "</code> writes) and queues' max offsets.</p>")
    left_out = 0 if data.groups else findings.with_findings - len(worst)
    if left_out > 0:  # the cards stop at --top: said, not left to be noticed
        body.append(f'<p class="muted">{left_out:,} more group(s) with findings have no '
                    f"card: the page shows the {len(worst):,} worst (<code>report --top N"
                    "</code> shows more); the findings table above counts them all.</p>")
    if worst.empty:
        body.append(f"<p>{_no_findings(data.rejects, data.warnings)}</p>")
    rebalances = rebalances_by_group(data.group_churn)
    for i, (_, row) in enumerate(worst.iterrows(), start=1):
        body.append(group_section(data, row, i, rebalances))
    body.append(rejects_section(data.rejects, data.rejects_elsewhere))
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<title>rebalance-audit report</title>"
            f"<style>{STYLE}</style>"
            f'<script type="text/javascript">{charts.plotly_js()}</script>'
            f"</head><body>{''.join(body)}</body></html>")
