"""The audit job from Delta inputs to Delta outputs on the offline engine."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs
from tests.support.examples import load, rocketmq_case

pytestmark = pytest.mark.spark


def _seed_skew_inputs(spark, root: Path) -> dict[str, str]:
    vector = next(v for v in load("rocketmq_averagely.json")
                  if v["name"] == "seed_multitopic_skew_2x2q_4c")
    case = rocketmq_case(vector, "AVG", snapshot="snap-1")
    queues = case.queues.drop(columns="consumer_group").drop_duplicates()
    queues["max_offset"] = 1000
    offsets = case.queues[["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                           "queue_id"]].assign(committed_offset=900, consumed_offset=950)
    return write_inputs(spark, root, queues=queues, members=case.members, offsets=offsets)


def _table(path: str) -> pd.DataFrame:
    return DeltaTable(path).to_pandas()


def test_seed_multi_topic_skew_end_to_end(spark, tmp_path: Path) -> None:
    paths = _seed_skew_inputs(spark, tmp_path / "in")
    out = tmp_path / "out"
    config = AuditConfig(queues=paths["queues"], members=paths["members"],
                         offsets=paths["offsets"], output=str(out), engine="offline",
                         run_id="run-1")
    result = run(config, spark=spark, log=lambda _m: None)
    assert result.snapshots == ["snap-1"]

    balance = _table(str(out / "group_balance"))
    whole = balance[balance["topic"].isna()].iloc[0]
    assert "MULTI_TOPIC_SKEW" in whole["findings"] and "IDLE_CLIENTS" in whole["findings"]
    assert (whole["max_queues"], whole["pooled_max"], whole["skew"]) == (2, 1, 1)
    assert whole["idle_clients"] == 2 and whole["clients"] == 4
    assert "multiple of the client count" in whole["recommendation"]

    load_ = _table(str(out / "consumer_load")).set_index("client_id")
    assert load_.loc[["consumer-3", "consumer-4"], "idle"].tolist() == [True, True]
    assert load_.loc["consumer-1", "queues"] == 2 and load_.loc["consumer-1", "lag"] == 200

    assignments = _table(str(out / "assignments"))
    assert len(assignments) == 4 and set(assignments["status"]) == {"OK"}
    assert set(assignments["lag"]) == {100} and set(assignments["run_id"]) == {"run-1"}
    assert _table(str(out / "rejects")).empty


def test_rerunning_a_snapshot_replaces_its_rows(spark, tmp_path: Path) -> None:
    paths = _seed_skew_inputs(spark, tmp_path / "in")
    out = tmp_path / "out"
    for run_id in ("first", "second"):
        run(AuditConfig(queues=paths["queues"], members=paths["members"], output=str(out),
                        engine="offline", run_id=run_id), spark=spark, log=lambda _m: None)
    for table, rows in (("assignments", 4), ("consumer_load", 4), ("group_balance", 3)):
        frame = _table(str(out / table))
        assert len(frame) == rows, table
        assert set(frame["run_id"]) == {"second"}, table
