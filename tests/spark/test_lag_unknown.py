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


def test_a_commit_past_the_max_is_no_lag_and_spreads_need_a_subscribers_lag(
        spark, tmp_path) -> None:
    """G: a, b, c on T (3 queues, max 50); queue 0's commit is 60, past the max (a
    capture reading the max before a caught-up consumer committed): its lag was -10, the
    group's total 20 and client a's share '150% of the group's total'. K: c0 subscribes
    nothing (null topic), c1 subscribes X, whose one queue is c0's share and unconsumed,
    lag 6 known: the topic row's lag spread read 0/0/0 though no subscribing client's lag
    is known (its whole-group row, and the contract, say null)."""
    from tests.support.outputs import table

    queues = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "topic": "T", "broker_name": "b",
          "queue_id": q, "max_offset": 50, "in_rate": None, "readable": True}
         for q in range(3)]
        + [{"snapshot_id": "s1", "cluster": "c", "topic": "X", "broker_name": "b",
            "queue_id": 0, "max_offset": 10, "in_rate": 2.0, "readable": True}])
    members = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G", "client_id": c,
          "topic": "T", "strategy": "AVG"} for c in ("a", "b", "c")]
        + [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "K", "client_id": c,
            "topic": t, "strategy": "AVG"} for c, t in (("c0", None), ("c1", "X"))])
    offsets = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G", "topic": "T",
          "broker_name": "b", "queue_id": q, "committed_offset": o}
         for q, o in ((0, 60), (1, 40), (2, 30))]
        + [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "K", "topic": "X",
            "broker_name": "b", "queue_id": 0, "committed_offset": 4}])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members,
                         offsets=offsets)
    out = tmp_path / "out"
    run(AuditConfig(queues=paths["queues"], members=paths["members"],
                    offsets=paths["offsets"], output=str(out), engine="offline",
                    what_if="off", buckets=2), spark=spark)
    assigned = table(out, "assignments").sort_values(["consumer_group", "topic", "queue_id"])
    assert list(assigned["lag"]) == [0, 10, 20, 6]
    load = table(out, "consumer_load").set_index("client_id")
    assert dict(load.loc[["a", "b", "c"], "lag"]) == {"a": 0, "b": 10, "c": 20}
    balance = table(out, "group_balance")
    g = balance[(balance["consumer_group"] == "G") & balance["topic"].isna()].iloc[0]
    assert (g["lag_total"], g["min_lag"], g["max_lag"]) == (30, 0, 20)
    x = balance[(balance["consumer_group"] == "K") & (balance["topic"] == "X")].iloc[0]
    k = balance[(balance["consumer_group"] == "K") & balance["topic"].isna()].iloc[0]
    assert (x["lag_total"], x["in_rate_total"]) == (6, 2.0)  # the topic's queues: known
    for row in (x, k):  # its subscribing clients' spreads: none known
        assert row[["min_lag", "max_lag", "mean_lag", "min_in_rate", "max_in_rate",
                    "mean_in_rate"]].isna().all(), row
