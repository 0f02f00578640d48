"""Members that subscribe a topic with no readable queue (misspelt, every queue
readable=false, missing from the capture) are reported, not allocated (SPEC §3). No
finding code names such a topic, so a group whose other topics are even had no finding,
and the run printed "every audited group is balanced" and report.html "every shown group
is balanced": the run now warns per snapshot and cluster, naming the groups and topics
(counted by the assign-and-report pass, no job of its own), and neither says balanced."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from reports.summary import print_summary
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table

pytestmark = pytest.mark.spark


def _inputs() -> dict[str, pd.DataFrame]:
    """T1: 4 readable queues; T2: 2 queues, none readable; T9: no queue row. G subscribes
    T1 and T9, H T1 and T2, K T1 only: every group is even on T1."""
    at = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")
    queues = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "captured_at": at, "topic": t,
         "broker_name": "b", "queue_id": q, "readable": t == "T1"}
        for t, n in (("T1", 4), ("T2", 2)) for q in range(n)])
    members = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "consumer_group": g, "client_id": c,
         "topic": t, "strategy": "AVG"}
        for g, topics in (("G", ("T1", "T9")), ("H", ("T1", "T2")), ("K", ("T1",)))
        for c in ("c1", "c2") for t in topics])
    return {"queues": queues, "members": members}


def test_groups_subscribing_a_topic_with_no_readable_queue_are_said(spark, tmp_path) -> None:
    paths = write_inputs(spark, Path(tmp_path) / "in", **_inputs())
    out = tmp_path / "out"
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(out), engine="offline", what_if="off", buckets=2),
                 spark=spark)
    said = [w for w in result.warnings if "no readable queue" in w]
    assert said == [
        "snapshot s1 (cluster c): 2 group(s) subscribe topic(s) with no readable queue, so "
        "nothing of those topics is assigned: G (T9); H (T2); the queues table has no "
        "readable row of them (a misspelt topic, one whose queues are all readable=false, "
        "or one the capture missed) and no finding code says so: group_balance lists them "
        "all, its rows where topic is not null and queues = 0"], result.warnings
    # the warning's query on group_balance lists them; their whole-group rows say so too
    balance = table(out, "group_balance")
    empty = balance[balance["topic"].notna() & (balance["queues"] == 0)]
    assert sorted(zip(empty["consumer_group"], empty["topic"], strict=True)) == [
        ("G", "T9"), ("H", "T2")]
    whole = balance[balance["topic"].isna()].set_index("consumer_group")
    assert [list(f) for f in whole["findings"]] == [[], [], []]
    assert whole.loc["G", "recommendation"].startswith("No readable queue in topic(s) T9: ")
    assert whole.loc["K", "recommendation"] == "Balanced: no action needed."
    # the console summary does not call them balanced
    assert result.worst_groups == [] and result.finding_counts.empty_topics == 2
    text = io.StringIO()
    print_summary(result, text)
    assert "every audited group is balanced" not in text.getvalue()
    assert ("\nNo group has findings, but 2 group(s) subscribe topic(s) with no readable "
            "queue, so nothing of those topics is assigned (see the warnings).\n"
            ) in text.getvalue()
    # nor does report.html
    page = Path(result.report).read_text(encoding="utf-8")
    assert "every shown group is balanced" not in page
    assert ('No group has findings, but groups the <a href="#warnings">warnings</a> name '
            "subscribe topic(s) with no readable queue, so nothing of those topics is "
            "assigned.") in page
