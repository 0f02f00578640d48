"""CONFIG lists that name queues the snapshot has no readable queue for: said, not dropped."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table


def test_a_config_list_naming_no_readable_queue_is_a_warning(spark, tmp_path) -> None:
    """AllocateMessageQueueByConfig hands a client its list unchecked: a's names T@b1:7
    (T has 2 queues on b1), T@b2:0 (b2 is not readable) and T@B1:1 (broker names are
    case-sensitive). The audit claimed none of them and said nothing (probe-found)."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": b, "queue_id": q, "readable": b == "b1"}
                           for b in ("b1", "b2") for q in range(2)])
    lists = {"a": "T@b1:0, T@b1:7, T@b2:0, T@B1:1", "b": "T@b1:1"}
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": "T", "strategy": "CONFIG",
                             "strategy_params": {"queues": lists[c]}} for c in lists])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members)
    out = Path(tmp_path) / "out"
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(out), engine="offline", what_if="off"), spark=spark)
    said = [w for w in result.warnings if "CONFIG" in w]
    assert said == [
        "snapshot s1 (cluster c): strategy_params.queues of 1 CONFIG member(s) name 3 "
        "queue(s) this snapshot has no readable queue for (group G client a: T@B1:1; "
        "group G client a: T@b1:7; group G client a: T@b2:0): the client pulls from "
        "queues that do not exist or cannot be read, and the audit assigns it none of "
        "them"], said
    claims = table(out, "assignments")
    assert sorted(zip(claims["client_id"], claims["queue_id"], strict=True)) == [
        ("a", 0), ("b", 1)]
