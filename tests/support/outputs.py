"""Small multi-snapshot inputs and checks of the output guarantees (tests only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
from deltalake import DeltaTable

REPORT_TABLES = ("assignments", "consumer_load", "group_balance", "rebalance_churn")
T0 = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)


def queue_rows(snapshots: list[str], cluster: str = "c", queues: int = 4) -> pd.DataFrame:
    return pd.DataFrame([
        {"snapshot_id": s, "cluster": cluster, "captured_at": T0 + timedelta(minutes=5 * i),
         "topic": "T", "broker_name": "broker-a", "queue_id": q, "max_offset": 100}
        for i, s in enumerate(snapshots) for q in range(queues)
    ])


def member_rows(snapshots: list[str], cluster: str = "c", clients: int = 2) -> pd.DataFrame:
    return pd.DataFrame([
        {"snapshot_id": s, "cluster": cluster, "consumer_group": "G", "client_id": f"c{k}",
         "topic": "T", "strategy": "AVG", "client_addr": f"10.0.0.{k}:1"}
        for i, s in enumerate(snapshots) for k in range(1, clients + 1 + i % 2)
    ])


def observed_rows(snapshots: list[str], cluster: str = "c", queues: int = 4,
                  client: str = "c1") -> pd.DataFrame:
    """`client` observed holding every queue of `queue_rows` (group G of `member_rows`)."""
    return pd.DataFrame([
        {"snapshot_id": s, "cluster": cluster, "consumer_group": "G", "topic": "T",
         "broker_name": "broker-a", "queue_id": q, "client_id": client, "source": "test"}
        for s in snapshots for q in range(queues)
    ])


def table(out: Path, name: str) -> pd.DataFrame:
    path = out / name
    if not (path / "_delta_log").is_dir():
        return pd.DataFrame()
    return DeltaTable(str(path)).to_pandas()


def run_ids(out: Path, name: str, snapshot: str) -> set[str]:
    frame = table(out, name)
    if frame.empty:
        return set()
    return set(frame.loc[frame["snapshot_id"] == snapshot, "run_id"])


def complete_run(out: Path, snapshot: str) -> str | None:
    """The run `runs` names for `snapshot` (None when it has no row)."""
    runs = table(out, "runs")
    if runs.empty:
        return None
    rows = runs[(runs["snapshot_id"] == snapshot) & (runs["status"] == "COMPLETE")]
    assert rows["run_id"].nunique() <= 1, rows
    return rows["run_id"].iloc[0] if len(rows) else None


def assert_one_complete_run(out: Path, snapshot: str) -> str:
    """Every table holds the snapshot's rows of exactly the run `runs` names, as many rows
    as `runs` recorded; returns that run id."""
    run = complete_run(out, snapshot)
    assert run is not None, f"no complete run of {snapshot}"
    runs = table(out, "runs")
    recorded = runs[runs["snapshot_id"] == snapshot]
    for name in (*REPORT_TABLES, "rejects"):
        frame = table(out, name)
        rows = frame[frame["snapshot_id"] == snapshot] if not frame.empty else frame
        expected = sum(int(dict(r).get(name, 0)) for r in recorded["rows"])
        assert len(rows) == expected, (name, len(rows), expected)
        if len(rows):
            assert set(rows["run_id"]) == {run}, (name, set(rows["run_id"]), run)
    return run
