"""group_balance's recommendation says what its figures show, on the row it is on."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table

pytestmark = pytest.mark.spark


def _group_balance(spark, tmp_path, queues: pd.DataFrame,
                   members: pd.DataFrame) -> pd.DataFrame:
    """The group_balance rows of an audit of `queues` and `members` (no what-if)."""
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members)
    out = Path(tmp_path) / "out"
    run(AuditConfig(queues=paths["queues"], members=paths["members"], output=str(out),
                    engine="offline", what_if="off", buckets=2), spark=spark)
    return table(out, "group_balance")


def test_more_clients_than_a_topics_queues_is_not_told_to_run_fewer_clients(
        spark, tmp_path) -> None:
    """2 clients on T (4 queues) and on its retry topic R (1 queue): neither idles, yet
    the whole group was told "the extra clients can only idle ... run fewer clients"."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": "b", "queue_id": q, "readable": True}
                           for t, n in (("T", 4), ("R", 1)) for q in range(n)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": t, "strategy": "AVG"}
                            for c in ("a", "b") for t in ("T", "R")])
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].iloc[0]
    retry = balance[balance["topic"] == "R"].iloc[0]
    assert whole["idle_clients"] == 0
    assert "MORE_CLIENTS_THAN_QUEUES" in list(whole["findings"])
    assert ("More clients than queues in some topic (its row says which): the clients past "
            "its queue count idle on it; add read queues there (at least one per "
            "client).") in whole["recommendation"]
    assert "run fewer clients" not in whole["recommendation"]
    assert ("More clients than queues: the extra clients can only idle; add read queues "
            "(at least one per client) or run fewer clients.") in retry["recommendation"]


def test_small_input_rates_keep_their_digits(spark, tmp_path) -> None:
    """20 clients, one queue of 0.5 msg/s: the sentence read "carries 0 (100% ...; mean
    per client 0.0 msg/s)"."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "b", "queue_id": 0, "readable": True,
                            "in_rate": 0.5}])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": f"c{i:02}", "topic": "T", "strategy": "AVG"}
                            for i in range(20)])
    balance = _group_balance(spark, tmp_path, queues, members)
    whole = balance[balance["topic"].isna()].iloc[0]
    assert ("By input rate, client c00 carries 0.500 (100% of the group's total; mean per "
            "client 0.025 msg/s).") in whole["recommendation"], whole["recommendation"]
