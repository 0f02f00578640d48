"""Offsets no real queue reaches: a sum of lags beyond a long ends the run with exit 2 and
a message naming the input columns, not a worker's traceback (validation already rejects
negative offsets, offsets of 2^53 or more and rates it cannot sum). Run as a user runs
it, through the launcher: Spark's own logs of the failed task
(`jobs.jvm_logs.quiet_task_failures`) are seen too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import beyond_its_type
from tests.support.delta_inputs import write_inputs

pytestmark = pytest.mark.spark


def test_a_sum_beyond_a_long_is_an_input_error(spark, tmp_path) -> None:
    at = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")
    # every offset under the 2^53 validation rejects, but 1,025 lags of 2^53 - 1 sum
    # beyond a long
    n = 1025
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "captured_at": at,
                            "topic": "T", "broker_name": "b", "queue_id": q,
                            "max_offset": 2**53 - 1} for q in range(n)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": "a", "topic": "T", "strategy": "AVG"}])
    offsets = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "topic": "T", "broker_name": "b", "queue_id": q,
                             "committed_offset": 0} for q in range(n)])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members,
                         offsets=offsets)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "REBALANCE_AUDIT_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    proc = subprocess.run(
        [str(root / "spark-submit.sh"), "audit", "--queues", paths["queues"], "--members",
         paths["members"], "--offsets", paths["offsets"], "--output", str(tmp_path / "out"),
         "--what-if", "off"], capture_output=True, text=True, timeout=600, env=env, cwd=root)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said[-3000:]
    assert ("rebalance-audit: error: the sum of lag of the queues of client 'a' is beyond "
            "its type (snapshot 's1', cluster 'c', group 'G', topic 'T'): the inputs hold "
            "offsets or rates no real queue reaches (queues.max_offset") in said
    assert "Traceback" not in said and "OverflowError" not in said
    # nothing published: no runs rows name the snapshot
    assert not (tmp_path / "out" / "runs").exists()


def test_only_a_figure_beyond_its_type_is_an_input_error() -> None:
    spark_own = RuntimeError("[ARITHMETIC_OVERFLOW] long overflow. Use 'try_add' to tolerate")
    assert str(beyond_its_type(spark_own)).startswith("long overflow: the inputs hold")
    assert beyond_its_type(RuntimeError("Py4JJavaError: something else")) is None


def test_a_sentinel_offset_is_rejected_and_the_other_groups_audited(spark, tmp_path) -> None:
    """Long.MAX_VALUE as "unknown" max_offset on two queues of group G's topic: their lags
    would sum beyond a long and end the whole run. They are rejects rows instead, said in
    G's group_balance row, and group H is audited as usual."""
    from deltalake import DeltaTable

    from jobs.audit import run
    from jobs.config import AuditConfig

    at = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "captured_at": at,
                            "topic": t, "broker_name": "b", "queue_id": q,
                            "max_offset": 2**63 - 1 if t == "T" and q < 2 else 50}
                           for t in ("T", "U") for q in range(4)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "client_id": "a", "topic": t, "strategy": "AVG"}
                            for g, t in (("G", "T"), ("H", "U"))])
    offsets = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "topic": t, "broker_name": "b", "queue_id": q,
                             "committed_offset": 0}
                            for g, t in (("G", "T"), ("H", "U")) for q in range(4)])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members,
                         offsets=offsets)
    out = tmp_path / "out"
    run(AuditConfig(queues=paths["queues"], members=paths["members"],
                    offsets=paths["offsets"], output=str(out), engine="offline",
                    what_if="off"), spark=spark)
    rejects = DeltaTable(str(out / "rejects")).to_pandas()
    queues_rejected = rejects[rejects["source_table"] == "queues"]
    assert len(queues_rejected) == 2
    assert queues_rejected["reason"].str.startswith("max_offset is 2^53 or more").all()
    # the two queues' offsets rows name no queue left: rejected too, saying so
    assert (rejects["source_table"] == "offsets").sum() == 2
    balance = DeltaTable(str(out / "group_balance")).to_pandas()
    whole = balance[balance["topic"].isna()].set_index("consumer_group")
    assert whole.loc["H", "lag_total"] == 200 and whole.loc["G", "lag_total"] == 100
    assert "rejected" in whole.loc["G", "recommendation"]
    assert len(DeltaTable(str(out / "runs")).to_pandas()) == 1
