"""The report's charts as plotly figures, each rendered to a <div> without plotly's JS
(the page inlines that once: `plotly_js`).

Every user string (client ids, topics, cluster names) is HTML-escaped before it reaches
plotly: plotly renders a small HTML subset (<b>, <a href>, <br>) in labels and decodes
entities back to characters, so escaped text shows as written and never as markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from reports.html.select import in_capture_order

CONFIG = {"displaylogo": False, "responsive": True,
          "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
MARGIN = {"l": 60, "r": 60, "t": 50, "b": 80}
SKEW_AXIS_MIN = 5  # the skew histogram's x axis reaches at least this skew
LOG_AXIS_SPREAD = 100  # its counts go on a log axis when the largest is this many × the least


def esc(value: object) -> str:
    """Escaped for plotly text (which decodes &amp; &lt; &gt; but not &quot;: quotes stay,
    they are safe inside plotly's JSON)."""
    return html.escape("" if value is None else str(value), quote=False)


def plotly_js() -> str:
    """plotly.js itself, to inline once per page (the file must open without network)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def to_div(fig: go.Figure, div_id: str) -> str:
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, config=CONFIG,
                       div_id=div_id, validate=False)


def topic_counts(value: object) -> dict[str, int]:
    """queues_by_topic as a dict, however Arrow handed the map over (dict, or a list of
    (key, value) pairs / {key, value} structs)."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return {}
    if isinstance(value, dict):
        items: Iterable = value.items()
    else:
        items = ((p["key"], p["value"]) if isinstance(p, dict) else (p[0], p[1])
                 for p in value)
    return {str(k): int(v or 0) for k, v in items}


# the most clients a group's chart draws, and topics it stacks apart: past them bars and
# legend entries could not be read (2,000 clients: a label for one bar in 25; 500 topics:
# a legend that squeezed the plot to a strip). The caller says what is left out
CHART_CLIENTS = 100
CHART_TOPICS = 20
OTHER_TOPICS = "other topics"


def chart_clients(load: pd.DataFrame) -> pd.DataFrame:
    """The clients `client_load_figure` draws: all of up to CHART_CLIENTS, else the
    CHART_CLIENTS with the most queues (then lag, then id), in client id order."""
    if len(load) <= CHART_CLIENTS:
        return load
    lag = (pd.to_numeric(load["lag"], errors="coerce").fillna(-1) if "lag" in load.columns
           else pd.Series(0, index=load.index))
    queues = pd.to_numeric(load.get("queues", pd.Series(0, index=load.index)),
                           errors="coerce").fillna(0)
    ranked = load.assign(_q=queues, _lag=lag).sort_values(
        ["_q", "_lag", "client_id"], ascending=[False, False, True], kind="stable")
    return ranked.head(CHART_CLIENTS).drop(columns=["_q", "_lag"])


# the largest axis top drawn with a tick per whole number
SMALL_COUNT_AXIS = 5


def count_axis(title: str, top: float, **more: object) -> dict:
    """A y axis of whole things (queues, messages) from 0: integer ticks, one apart while
    the top is small (auto ticks drew 0.2 … 0.8 queues, and ".3~s" lag 200m … 800m,
    milli-messages read as millions), thousands separated; SI prefixes (k, M, G) past a
    million, where digits stop fitting."""
    axis: dict = {"title": title, "rangemode": "tozero", **more}
    if top <= SMALL_COUNT_AXIS:
        return {**axis, "tickmode": "linear", "tick0": 0, "dtick": 1, "tickformat": ",d"}
    return {**axis, "tickmode": "auto", "nticks": 6,
            "tickformat": ",d" if top < 1e6 else ".3~s"}


def client_load_figure(load: pd.DataFrame, title: str) -> go.Figure:
    """Queues per client stacked by topic; lag per client on a second axis when known.
    At most CHART_CLIENTS clients (`chart_clients`) and CHART_TOPICS topics apart (the
    ones with the most queues; the rest stacked as one)."""
    load = chart_clients(load).sort_values("client_id", kind="stable")
    clients = [esc(c) for c in load["client_id"]]
    per_client = [topic_counts(v) for v in load.get("queues_by_topic", [None] * len(load))]
    totals: dict[str, int] = {}
    for counts in per_client:
        for t, n in counts.items():
            totals[t] = totals.get(t, 0) + n
    topics = sorted(totals)
    if len(topics) > CHART_TOPICS:
        kept = set(sorted(topics, key=lambda t: (-totals[t], t))[:CHART_TOPICS - 1])
        rest = len(topics) - len(kept)
        per_client = [{**{t: n for t, n in c.items() if t in kept},
                       f"{OTHER_TOPICS} ({rest})": sum(n for t, n in c.items()
                                                       if t not in kept)}
                      for c in per_client]
        topics = [*sorted(kept), f"{OTHER_TOPICS} ({rest})"]
    fig = go.Figure()
    for topic in topics:
        fig.add_trace(go.Bar(x=clients, y=[c.get(topic, 0) for c in per_client],
                             name=esc(topic), yaxis="y"))
    lag = pd.to_numeric(load["lag"], errors="coerce") if "lag" in load.columns else None
    has_lag = lag is not None and lag.notna().any()
    if has_lag:
        fig.add_trace(go.Scatter(x=clients, y=lag.tolist(), name="lag (messages)",
                                 mode="markers", yaxis="y2",
                                 marker={"symbol": "diamond", "size": 9, "color": "#222"}))
    fig.update_layout(
        title={"text": title, "font": {"size": 14}}, barmode="stack", height=360,
        # the legend sits at the figure's foot (container coordinates), below the client
        # ids: a fixed offset under the plot met them once their labels turned on their
        # side, as long ids do, and above the plot it met the title on narrow windows
        margin=MARGIN, legend={"orientation": "h", "x": 1, "xanchor": "right",
                               "y": 0, "yanchor": "bottom", "yref": "container"},
        xaxis={"title": "client", "type": "category", "automargin": True},
        yaxis=count_axis("queues", max((sum(c.values()) for c in per_client), default=0)),
    )
    if has_lag:
        top = float(lag.max()) * 1.1 or 1.0
        fig.update_layout(yaxis2=count_axis("lag (messages)", top, overlaying="y",
                                            side="right", range=[0, top], showgrid=False))
    return fig


def skew_histogram(counts: pd.Series) -> go.Figure:
    """How many groups sit how far above their pooled balance, each group once (at its
    latest shown snapshot): one bar per skew value (`select.skew_counts`, counted while the
    table was read: the page carries one number per skew value, not one per group)."""
    counts = counts.sort_index()
    # beside thousands of balanced groups the few skewed ones (the ones to look at) are bars
    # too low to see: each bar carries its count, and counts that far apart go on a log
    # axis, where a bar of 1 group still stands beside one of 10,000
    log = not counts.empty and counts.max() > LOG_AXIS_SPREAD * max(1, counts.min())
    # a skew below 0 is a group whose busiest client holds less than the pooled max: some
    # of its queues nobody consumes
    low_skew = 0 if counts.empty else min(0, int(counts.index.min()))
    top_skew = 0 if counts.empty else int(counts.index.max())
    many_bars = top_skew - low_skew > 20
    fig = go.Figure(go.Bar(x=counts.index.tolist(), y=counts.tolist(),
                           marker={"color": "#4c78a8"}, width=0.9,
                           text=[f"{n:,}" for n in counts.tolist()], textposition="outside",
                           cliponaxis=False,
                           # upright over the narrow bars of a wide skew range, never shrunk
                           # to a bar's width (the counts of dozens of bars were specks)
                           textangle=-90 if many_bars else 0, constraintext="none",
                           textfont={"size": 10},
                           hovertemplate="skew %{x}: %{y:,} group(s)<extra></extra>"))
    fig.update_layout(
        title={"text": f"{int(counts.sum()):,} group(s) by skew", "font": {"size": 14},
               "subtitle": {"text": "each at its latest shown snapshot", "font": {"size": 11}}},
        height=320, margin=MARGIN,
        # skew 0 to 5 at least: a few groups, all balanced, are one bar at 0, not a block
        # filling the axis
        xaxis={"title": "skew: max queues per client minus the pooled max",
               "dtick": None if many_bars else 1,
               "range": [low_skew - 0.5, max(top_skew, SKEW_AXIS_MIN) + 0.5]},
        # counts of groups: whole numbers (a single group drew a tick at 0.5); a log axis
        # ticks each power of ten, with room above the tallest bar for its count
        yaxis=({"title": "groups (log scale)", "type": "log", "dtick": 1, "tickformat": ",d",
                "range": [-0.2, math.log10(counts.max()) + 0.9]}
               if log else count_axis("groups", 0 if counts.empty else counts.max())),
    )
    return fig


def churn_timeline(churn: pd.DataFrame, window: int | None = None) -> go.Figure:
    """Queues moved per snapshot, one line per cluster, in capture order; `window`: how
    many latest snapshots of each cluster the data holds where a cluster has more,
    said in the title."""
    fig = go.Figure()
    title, top = "Queues moved per snapshot, per cluster", 0.0
    if not churn.empty:
        moved = (churn.assign(queues_moved=pd.to_numeric(churn["queues_moved"],
                                                         errors="coerce").fillna(0))
                 .groupby(["cluster", "snapshot_id", "captured_at"], dropna=False)
                 ["queues_moved"].sum().reset_index()
                 .pipe(in_capture_order, "cluster"))
        top = float(moved["queues_moved"].max())
        # on a time axis, one capture time alone spans a millisecond (ticks 08:59:59.999 to
        # 09:00:00.001): the snapshots' names say more until there are two times
        by_time = (moved["captured_at"].notna().all()
                   and moved["captured_at"].nunique() > 1)
        for cluster, rows in moved.groupby("cluster", dropna=False, sort=True):
            snapshots = [esc(s) for s in rows["snapshot_id"]]
            fig.add_trace(go.Scatter(
                x=rows["captured_at"].tolist() if by_time else snapshots,
                y=rows["queues_moved"].tolist(), mode="lines+markers", name=esc(cluster),
                customdata=snapshots,
                hovertemplate="snapshot %{customdata}<br>%{y} queue(s) moved"
                              "<extra>%{fullData.name}</extra>"))
        fig.update_layout(xaxis={"title": "captured at" if by_time else "snapshot",
                                 "type": "date" if by_time else "category"})
        if window is not None:
            title += f" (each cluster's latest {window:,} snapshots)"
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=320, margin=MARGIN, xaxis={"automargin": True},
        yaxis=count_axis("queues moved", top),
        showlegend=True,  # the cluster's name, also when there is one cluster
    )
    return fig
