"""Sticky groups chained inside the assign-and-report pass (`assign_and_report_all`),
against the three passes that pass replaced (`tests/support/sticky_pass_oracle.py`), on
random clusters: sticky, cooperative-sticky and mixed groups (members on a sticky and on
a batch strategy in one group, even one client), broadcasting members, offsets, and a
predecessor snapshot read from earlier output rows, whose sticky claims the chain
continues."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import DataFrame

from jobs.assign import assign_and_report_all
from jobs.persist import Persisted
from jobs.prior import Prior
from jobs.report import member_snapshots
from rebalance_udfs.report_pass import TABLES
from rebalance_udfs.spark.report_pass import assignment_rows, unpack
from reports.assignments import assignments_report, snapshot_times
from reports.rebalance_churn import churn_history
from tests.spark.test_strategy_comparison import _random_inputs
from tests.support.delta_inputs import read_written, write_inputs
from tests.support.sticky_pass_oracle import oracle_pass

pytestmark = pytest.mark.spark


def _mixed(seed: int) -> dict:
    """`_random_inputs` with g0 on cooperative-sticky in every snapshot, g2 sticky in s1
    only and g3's member rows on a sticky assignor at random (so some of its clients run
    two strategies); and a topic `ts` of 12 queues in every snapshot, read by group `gs`
    (clients k1 k2 k3, then k1 k2, then k1 k2 k4: a chain whose kept queues differ from a
    fresh assignment) and group `gm` (one client on each sticky assignor, one on range)."""
    rnd = random.Random(seed)
    data = _random_inputs(seed)
    members = data["members"]
    group = members["consumer_group"]
    flip = pd.Series([rnd.random() < 0.5 for _ in range(len(members))], index=members.index)
    changed = pd.Series(False, index=members.index)
    for chosen, strategy in (
            (group == "g0", "cooperative-sticky"),
            ((group == "g2") & (members["snapshot_id"] == "s1"), "cooperative-sticky"),
            ((group == "g3") & flip, rnd.choice(["sticky", "cooperative-sticky"]))):
        members.loc[chosen, "strategy"] = strategy
        changed |= chosen
    members.loc[changed, ["strategy_params", "allocation_mode"]] = None
    snapshots = ("s1", "s2", "s3")
    queues = [{"snapshot_id": s, "cluster": "c", "topic": "ts", "broker_name": b,
               "queue_id": i, "readable": True, "max_offset": 100 * i, "in_rate": 1.5,
               "broker_room": "r1"}
              for s in snapshots for b in ("broker-a", "broker-b") for i in range(6)]
    strategy = rnd.choice(["sticky", "cooperative-sticky"])
    clients = {"gs": [("k1 k2 k3", strategy), ("k1 k2", strategy), ("k1 k2 k4", strategy)],
               "gm": [("m1 m2 m3", None)] * 3}
    mixed = {"m1": "sticky", "m2": "range", "m3": "cooperative-sticky"}
    rows = [{"snapshot_id": s, "cluster": "c", "consumer_group": g, "client_id": c,
             "topic": "ts", "strategy": st or mixed[c], "message_model": None,
             "allocation_mode": None, "client_addr": f"h-{c}", "client_room": None,
             "strategy_params": None}
            for g, chain in clients.items()
            for s, (ids, st) in zip(snapshots, chain, strict=True) for c in ids.split()]
    data["queues"] = pd.concat([data["queues"], pd.DataFrame(queues)], ignore_index=True)
    data["members"] = pd.concat([members, pd.DataFrame(rows)], ignore_index=True)
    return data


def _tables(packed: DataFrame) -> dict[str, pd.DataFrame]:
    """Every table of a pass's packed rows, as sorted text."""
    frames = {"assignments": assignment_rows(packed)}
    frames.update({name: unpack(packed, name) for name in TABLES})
    out = {}
    for name, df in frames.items():
        frame = df.toArrow().to_pandas().astype(str)
        out[name] = frame.sort_values(list(frame.columns)).reset_index(drop=True)
    return out


@pytest.mark.parametrize("seed", [3, 4])
def test_sticky_groups_in_the_pass_give_the_three_passes_rows(spark, tmp_path, seed):
    paths = write_inputs(spark, Path(tmp_path), **_mixed(seed))
    persist = Persisted()
    try:
        read = read_written(spark, paths, persist)
        # s1 is the predecessor, from the rows an earlier run wrote; s2 and s3 the run
        earlier = read.limited_to(["s1"])
        times = snapshot_times(earlier.queues)
        first, _ = churn_history(member_snapshots(earlier.members, times))
        written = assignments_report(assignment_rows(
            assign_and_report_all(earlier, times, 2, Prior([]), True, "all", first)), times)
        prior = Prior(["s1"], persist(written))
        inputs = read.limited_to(["s2", "s3"])
        run_times = snapshot_times(inputs.queues)
        history, _ = churn_history(member_snapshots(inputs.members, run_times),
                                   prior.assignments)
        ours = _tables(assign_and_report_all(inputs, run_times, 3, prior, True, "all",
                                             history))
        theirs = _tables(oracle_pass(inputs, 2, prior, "all", history))
        assert ours.keys() == theirs.keys()
        for name, frame in ours.items():
            pd.testing.assert_frame_equal(frame, theirs[name], obj=name)
        # the chain continued from s1: k1 and k2 keep their s1 queues in s2 (a fresh
        # assignment would deal them round-robin again)
        before = written.where("consumer_group = 'gs' AND status = 'OK'").toPandas()
        after = ours["assignments"]
        after = after[(after["consumer_group"] == "gs") & (after["status"] == "OK")
                      & (after["snapshot_id"] == "s2")]
        owner = {(b, str(q)): c for b, q, c in zip(after["broker_name"], after["queue_id"],
                                                   after["client_id"], strict=True)}
        kept = before[before["client_id"].isin(["k1", "k2"])]
        assert len(kept) == 8
        assert all(owner[(b, str(q))] == c for b, q, c in zip(
            kept["broker_name"], kept["queue_id"], kept["client_id"], strict=True))
    finally:
        persist.release()
