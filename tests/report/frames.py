"""Small output tables for the report tests: pandas frames shaped like the audit's, and
the same written as Delta tables with delta-rs (no Spark)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pyarrow as pa

RUN = "run-1"
NASTY = '<script>alert("x")</script>&'  # a group name is user data
T1 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
T2 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def runs(snapshots=(("s1", T1), ("s2", T2)), cluster="c1", run_id=RUN) -> pd.DataFrame:
    return pd.DataFrame([{
        "snapshot_id": s, "cluster": cluster, "captured_at": t, "run_id": run_id,
        "started_at": t, "finished_at": t, "tables": ["group_balance"],
        "rows": [("group_balance", 1)], "engine": "offline", "status": "COMPLETE",
    } for s, t in snapshots])


def balance_row(snapshot: str, group: str, topic: str | None, *, skew=0, max_q=2,
                findings=(), contended=0, unconsumed=0, idle=0, captured_at=T2,
                run_id=RUN) -> dict:
    return {
        "snapshot_id": snapshot, "cluster": "c1", "captured_at": captured_at,
        "consumer_group": group, "topic": topic, "clients": 4, "subscribing_clients": 4,
        "queues": 8, "min_queues": 0, "max_queues": max_q, "mean_queues": 2.0,
        "ideal_max": 2, "idle_clients": idle, "unconsumed_queues": unconsumed,
        "contended_queues": contended, "pooled_max": None if topic else 2,
        "skew": None if topic else skew, "findings": list(findings),
        "recommendation": "add clients" if findings else None, "run_id": run_id,
    }


def group_balance() -> pd.DataFrame:
    return pd.DataFrame([
        balance_row("s2", "g-ok", None),
        balance_row("s2", "g-skew", None, skew=3, max_q=5, findings=["MULTI_TOPIC_SKEW"]),
        balance_row("s2", "g-skew", "t1", max_q=3),
        balance_row("s2", NASTY, None, contended=1, findings=["CONTENDED_QUEUES"]),
        balance_row("s2", "g-idle", None, idle=2, findings=["IDLE_CLIENTS"]),
        # an older snapshot: not shown by default
        balance_row("s1", "g-old", None, skew=9, findings=["MULTI_TOPIC_SKEW"],
                    captured_at=T1),
        # a killed run's row: never shown
        balance_row("s2", "g-ghost", None, skew=9, findings=["X"], run_id="dead"),
    ])


def consumer_load() -> pd.DataFrame:
    rows = []
    for group in ("g-skew", NASTY, "g-idle"):
        for i, (a, b, lag) in enumerate([(3, 2, 10.0), (1, 0, None), (0, 0, 5.0)]):
            rows.append({"snapshot_id": "s2", "cluster": "c1", "captured_at": T2,
                         "consumer_group": group, "client_id": f"{group}-client-{i}",
                         "queues": a + b,
                         "queues_by_topic": [("t1", a), ("<t2>", b)] if a + b else [],
                         "lag": lag, "idle": a + b == 0, "run_id": RUN})
    return pd.DataFrame(rows)


def churn() -> pd.DataFrame:
    return pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "captured_at": T2, "consumer_group": g,
         "previous_snapshot_id": "s1", "queues_moved": n, "run_id": RUN}
        for g, n in (("g-skew", 4), ("g-idle", 2))])


def drift() -> pd.DataFrame:
    return pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "consumer_group": "g-skew", "topic": "t1",
         "queue_id": q, "kind": k, "run_id": RUN}
        for q, k in ((0, "NOT_HELD"), (1, "HELD_TWICE"), (2, "NOT_HELD"))])


def drift_counts() -> pd.DataFrame:
    """`drift()` as the page gets it: drifting queues per snapshot, group and kind."""
    return (drift().groupby(["snapshot_id", "cluster", "consumer_group", "kind"]).size()
            .rename("queues").reset_index())


def rejects() -> pd.DataFrame:
    """Two rows of s2 (one of a run that died), one of s1, one whole-input row."""
    return pd.DataFrame([
        {"snapshot_id": s, "cluster": "c1", "source_table": t, "row_json": "{}",
         "reason": r, "run_id": run}
        for s, t, r, run in (("s2", "members", "strategy is not one of <AVG, ...>", RUN),
                             ("s2", "members", "strategy is not one of <AVG, ...>", RUN),
                             ("s2", "queues", "queue_id is negative", "dead"),
                             ("s1", "queues", "queue_id is negative", RUN),
                             (None, "queues", "snapshot_id is null", RUN))])


def what_if() -> pd.DataFrame:
    base = {"snapshot_id": "s2", "cluster": "c1", "captured_at": T2,
            "consumer_group": "g-skew", "virtual_nodes": None, "split_by_topic": False,
            "min_queues": 1, "idle_clients": 0, "estimated_duplicates": None,
            "run_id": RUN}
    return pd.DataFrame([
        {**base, "candidate": "current", "clients": 4, "strategy": "AVG", "max_queues": 5,
         "skew": 3, "queues_moved": 0, "is_current": True, "recommended": False},
        {**base, "candidate": "clients=8", "clients": 8, "strategy": "AVG", "max_queues": 1,
         "skew": 0, "queues_moved": 6, "is_current": False, "recommended": True},
        {**base, "candidate": "<img src=x onerror=alert(1)>", "clients": 4,
         "strategy": "CONSISTENT_HASH", "max_queues": 3, "skew": 1, "queues_moved": 5,
         "is_current": False, "recommended": False},
    ])


MAP = pa.map_(pa.string(), pa.int32())
TS = pa.timestamp("us", tz="UTC")


MAPS = {"queues_by_topic": MAP, "rows": pa.map_(pa.string(), pa.int64())}


def counted(runs_rows: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """`runs_rows` recording, as the audit does, each listed table's rows per run."""
    keys = ["snapshot_id", "cluster", "run_id"]
    rows = []
    for run in runs_rows.itertuples(index=False):
        rows.append([(name, int((tables[name][keys] == (run.snapshot_id, run.cluster,
                                                        run.run_id)).all(axis=1).sum()))
                     for name in run.tables if name in tables])
    return runs_rows.assign(rows=rows)


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """Arrow table with the audit's map columns typed as maps (pandas cannot say so)."""
    columns = {c: pa.array(frame[c].tolist(), MAPS[c]) if c in MAPS
               else pa.Array.from_pandas(frame[c]) for c in frame.columns}
    return pa.table(columns)


def write_outputs(root: str, *, with_drift: bool = True, with_what_if: bool = True) -> str:
    """The frames above as Delta tables under `root`, partitioned by snapshot_id."""
    from deltalake import write_deltalake

    tables = {"group_balance": group_balance(),
              "consumer_load": consumer_load(), "rebalance_churn": churn(),
              "rejects": rejects()}
    if with_drift:
        tables["drift"] = drift()
    if with_what_if:
        tables["what_if"] = what_if()
    tables["runs"] = counted(runs(), tables)
    for name, frame in tables.items():
        write_deltalake(f"{root}/{name}", to_arrow(frame), partition_by=["snapshot_id"])
    return root


def add_second_cluster(root: str, group: str = "g-c2") -> str:
    """A cluster c2 added to `write_outputs`' root whose only, so newest, snapshot is s1,
    holding `group` (with a finding): the page shows c2 at s1 beside c1 at s2, and c1's
    rows of s1 not at all."""
    from deltalake import write_deltalake

    c2_runs = runs(snapshots=(("s1", T1),), cluster="c2")
    c2_group = pd.DataFrame([{**balance_row("s1", group, None, skew=4, max_q=6,
                                            findings=["MULTI_TOPIC_SKEW"], captured_at=T1),
                              "cluster": "c2"}])
    write_deltalake(f"{root}/runs", to_arrow(c2_runs), mode="append")
    write_deltalake(f"{root}/group_balance", to_arrow(c2_group), mode="append")
    return root
