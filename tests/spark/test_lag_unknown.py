"""A run with offsets says, per snapshot and cluster, how many groups with queues got no
known lag (offsets saved for some groups only) and names the first five, without a pass
of its own: the assign-and-report pass counts them, bucket by bucket."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs

pytestmark = pytest.mark.spark


def _inputs() -> dict[str, pd.DataFrame]:
    """s1: G has offsets, H0..H6 none, E subscribes a topic without readable queues (no lag to
    know); s2: offsets has no rows of it at all."""
    at = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")
    queues = pd.DataFrame([
        {"snapshot_id": s, "cluster": "c", "captured_at": at + pd.Timedelta(minutes=i),
         "topic": t, "broker_name": "b", "queue_id": q, "max_offset": 100,
         "readable": t != "closed"}
        for i, s in enumerate(("s1", "s2")) for t, n in (("T", 2), ("U", 2), ("closed", 1))
        for q in range(n)])
    members = pd.DataFrame([
        {"snapshot_id": s, "cluster": "c", "consumer_group": g, "client_id": c, "topic": t,
         "strategy": "AVG"}
        for s in ("s1", "s2")
        for g, t in (("G", "T"), *((f"H{i}", "U") for i in range(7)), ("E", "closed"))
        for c in ("a", "b")])
    offsets = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "consumer_group": "G", "topic": "T",
         "broker_name": "b", "queue_id": q, "committed_offset": 90} for q in range(2)])
    return {"queues": queues, "members": members, "offsets": offsets}


def test_groups_without_a_known_lag_are_counted_per_snapshot(spark, tmp_path) -> None:
    paths = write_inputs(spark, Path(tmp_path) / "in", **_inputs())

    def audit(out: str, offsets: str | None) -> list[str]:
        return run(AuditConfig(queues=paths["queues"], members=paths["members"],
                               offsets=offsets, output=str(tmp_path / out),
                               engine="offline", what_if="off", buckets=3), spark=spark).warnings

    warnings = audit("with", paths["offsets"])
    lag = [w for w in warnings if "lag is unknown" in w]
    assert len(lag) == 1 and lag[0].startswith(
        "snapshot s1 (cluster c): lag is unknown for 7 group(s) with queues "
        "(H0, H1, H2, H3, H4 and 2 more):")
    # s2 has its own note, which says the same of every group of it
    assert any(w.startswith("snapshot s2 (cluster c): offsets has no rows for it")
               for w in warnings)
    # without --offsets an unknown lag is what the run was asked for: no word
    assert not [w for w in audit("without", None) if "lag is unknown" in w]
