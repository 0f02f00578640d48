"""The run's own progress lines say what each step did (`jobs.progress`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs

pytestmark = pytest.mark.spark


def test_the_parts_held_for_other_tables_say_what_for(spark, tmp_path, caplog,
                                                      monkeypatch) -> None:
    """With observed holders and what-if for the groups with findings, drift and
    group_balance are held before the tables that read them: their `compute` lines had
    an empty detail, unlike every other step line."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "b", "queue_id": q, "readable": True}
                           for q in range(3)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": "T", "strategy": "AVG"}
                            for c in ("a", "b", "c", "d")])
    observed = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                              "topic": "T", "broker_name": "b", "queue_id": q,
                              "client_id": "a", "source": "test"} for q in range(3)])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members,
                         observed=observed)
    caplog.set_level(logging.INFO, logger="rebalance_audit")
    monkeypatch.setattr(logging.getLogger("rebalance_audit"), "propagate", True)
    run(AuditConfig(queues=paths["queues"], members=paths["members"],
                    observed=paths["observed"], output=str(tmp_path / "out"),
                    engine="offline", what_if="findings", buckets=2), spark=spark)
    lines = {m.split("  ")[0].strip(): m.rsplit(" s  ", 1)[-1]
             for m in (r.getMessage() for r in caplog.records) if m.startswith("compute ")}
    assert lines == {
        "compute drift": "held for group_balance's OBSERVED_DRIFT and the drift table",
        "compute group_balance": "held for what_if, which keeps the rows of groups with a "
                                 "finding"}
