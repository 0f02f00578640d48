"""Offsets no real queue reaches: a sum of lags beyond a long ends the run with exit 2 and
a message naming the input columns, not a worker's traceback (validation already rejects
negative offsets and rates it cannot sum)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jobs import cli
from jobs.audit import beyond_its_type
from tests.support.delta_inputs import write_inputs

pytestmark = pytest.mark.spark


def test_a_sum_beyond_a_long_is_an_input_error(spark, tmp_path, capsys) -> None:
    at = pd.Timestamp("2026-11-01 08:00:00", tz="UTC")
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "captured_at": at,
                            "topic": "T", "broker_name": "b", "queue_id": q,
                            "max_offset": 2**62} for q in range(3)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": "a", "topic": "T", "strategy": "AVG"}])
    offsets = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "topic": "T", "broker_name": "b", "queue_id": q,
                             "committed_offset": 0} for q in range(3)])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members,
                         offsets=offsets)
    code = cli.main(["audit", "--queues", paths["queues"], "--members", paths["members"],
                     "--offsets", paths["offsets"], "--output", str(tmp_path / "out"),
                     "--engine", "offline", "--what-if", "off"])
    err = capsys.readouterr().err
    assert code == 2
    assert ("rebalance-audit: error: the sum of lag of a client's queues is beyond its type: "
            "the inputs hold offsets or rates no real queue reaches (queues.max_offset") in err
    # nothing published: no runs rows name the snapshot
    assert not (tmp_path / "out" / "runs").exists()


def test_only_a_figure_beyond_its_type_is_an_input_error() -> None:
    spark_own = RuntimeError("[ARITHMETIC_OVERFLOW] long overflow. Use 'try_add' to tolerate")
    assert str(beyond_its_type(spark_own)).startswith("long overflow: the inputs hold")
    assert beyond_its_type(RuntimeError("Py4JJavaError: something else")) is None
