"""An offsets row that no audited queue of its group takes is a `rejects` row with its
reason, counted in `runs`, never dropped without a word; found by the assign-and-report
pass itself, so a run whose offsets all match pays nothing for it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from rebalance_udfs.spark.arrow import GROUP_NOT_AUDITED, OFFSETS_NOT_READ
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table

pytestmark = pytest.mark.spark

AT = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")


def _inputs() -> dict[str, pd.DataFrame]:
    """G reads T (queues 0-1 of broker b; queue 2 unreadable); R's only member is rejected
    (an unknown strategy). G's offsets name its two queues, queue 2, a queue 9 the topic
    lacks, a misspelt broker and a topic U no member subscribes; R's name T's queue 0."""
    queues = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "captured_at": AT, "topic": t,
         "broker_name": "b", "queue_id": q, "max_offset": 100, "readable": q < 2}
        for t in ("T", "U") for q in range(3)])
    members = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "consumer_group": g, "client_id": c,
         "topic": "T", "strategy": s}
        for g, c, s in (("G", "a", "AVG"), ("G", "b", "AVG"), ("R", "r", "AVERAGE"))])

    def offsets(group: str, topic: str, broker: str, queue: int) -> dict:
        return {"snapshot_id": "s1", "cluster": "c", "consumer_group": group, "topic": topic,
                "broker_name": broker, "queue_id": queue, "committed_offset": 90,
                "consumed_offset": 95}
    return {"queues": queues, "members": members, "offsets": pd.DataFrame([
        offsets("G", "T", "b", 0), offsets("G", "T", "b", 1), offsets("G", "T", "b", 2),
        offsets("G", "T", "b", 9), offsets("G", "T", "bb", 0), offsets("G", "U", "b", 0),
        offsets("R", "T", "b", 0)])}


def _audit(spark, paths: dict[str, str], out: Path, offsets: bool = True):
    return run(AuditConfig(queues=paths["queues"], members=paths["members"],
                           offsets=paths["offsets"] if offsets else None, output=str(out),
                           engine="offline", what_if="off", buckets=3), spark=spark)


def test_offsets_rows_no_queue_takes_are_rejects_with_their_reason(spark, tmp_path) -> None:
    paths = write_inputs(spark, Path(tmp_path) / "in", **_inputs())
    out = Path(tmp_path) / "out"
    result = _audit(spark, paths, out)
    rejects = table(out, "rejects")
    offsets = rejects[rejects["source_table"] == "offsets"]
    got = sorted((r["consumer_group"], r["topic"], r["broker_name"], r["queue_id"], reason)
                 for r, reason in zip(map(json.loads, offsets["row_json"]),
                                      offsets["reason"], strict=True))
    assert got == [("G", "T", "b", 2, OFFSETS_NOT_READ), ("G", "T", "b", 9, OFFSETS_NOT_READ),
                   ("G", "T", "bb", 0, OFFSETS_NOT_READ), ("G", "U", "b", 0, OFFSETS_NOT_READ),
                   ("R", "T", "b", 0, GROUP_NOT_AUDITED)]
    assert set(offsets["snapshot_id"]) == {"s1"} and set(offsets["cluster"]) == {"c"}
    assert set(offsets["run_id"]) == {result.run_id}
    # the row as it came in, every contract column, nulls kept
    assert json.loads(offsets["row_json"].iloc[0]).keys() == {
        "snapshot_id", "cluster", "consumer_group", "topic", "broker_name", "queue_id",
        "committed_offset", "consumed_offset"}
    assert list(rejects["source_table"]).count("members") == 1  # R's member, as before
    # R's offsets read as an input problem only: the run says no member of it was seen
    assert ("snapshot s1 (cluster c): 1 group(s) have committed offsets but no usable member "
            "row subscribing a topic of the queues table (R): no consumer of theirs was seen, "
            "so if none is running, nobody consumes their queues and their backlog grows"
            ) in "\n".join(result.warnings)
    runs = table(out, "runs")
    assert dict(runs.iloc[0]["rows"])["rejects"] == 6 == result.rows["rejects"]
    # the offsets G's queues take still give their lag
    assignments = table(out, "assignments")
    assert sorted(assignments["committed_offset"]) == [90, 90]

    # a re-run replaces them, never multiplies them; a run without offsets has none
    _audit(spark, paths, out)
    assert len(table(out, "rejects")) == 6
    _audit(spark, paths, out, offsets=False)
    assert list(table(out, "rejects")["source_table"]) == ["members"]
