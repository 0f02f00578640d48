"""Sticky groups chained inside the assign-and-report pass (`assign_and_report_all`),
against the three passes that pass replaced (`tests/support/sticky_pass_oracle.py`), on
random clusters: sticky and cooperative-sticky groups, broadcasting members, offsets, and
a predecessor snapshot read from earlier output rows, whose sticky claims the chain
continues. Groups mixing members on a sticky and on a batch strategy (even one client)
are checked on their own: the replaced passes counted a queue claimed by both kinds of
member twice, each time OK."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

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


def _mixing(members: pd.DataFrame) -> set[str]:
    """The groups with members on a sticky and on another strategy in some snapshot."""
    sticky = members["strategy"].isin(["sticky", "cooperative-sticky"])
    kinds = sticky.groupby([members["snapshot_id"], members["consumer_group"]]).nunique()
    return set(kinds[kinds > 1].index.get_level_values("consumer_group"))


def _tables(packed: DataFrame, without: set[str] = frozenset()) -> dict[str, pd.DataFrame]:
    """Every table of a pass's packed rows but the rows of groups `without`, as sorted
    text."""
    frames = {"assignments": assignment_rows(packed)}
    frames.update({name: unpack(packed, name) for name in TABLES})
    out = {}
    for name, df in frames.items():
        frame = df.toArrow().to_pandas()
        frame = frame[~frame["consumer_group"].isin(without)].astype(str)
        out[name] = frame.sort_values(list(frame.columns)).reset_index(drop=True)
    return out


def _rows_as_text(rows: pd.DataFrame) -> pd.DataFrame:
    """Assignment rows' placement (who claims which queue, with which status), sorted."""
    cols = ["snapshot_id", "consumer_group", "topic", "broker_name", "queue_id",
            "client_id", "strategy", "status"]
    frame = rows[cols].astype(str)
    return frame.sort_values(cols).reset_index(drop=True)


def _one_status_per_queue(rows: pd.DataFrame) -> None:
    """Every queue of assignment rows `rows` has one status: CONTENDED (or SHARED, when
    all share it by design) exactly where two or more clients claim it in clustering
    mode, UNCONSUMED where nobody does."""
    queue = ["snapshot_id", "consumer_group", "topic", "broker_name", "queue_id"]
    clustering = rows[rows["client_id"].notna() & (rows["status"] != "BROADCAST")]
    claimants = clustering.groupby(queue)["client_id"].nunique()
    for key, status in rows[rows["status"] != "BROADCAST"].groupby(queue)["status"]:
        assert status.nunique() == 1, key
        n = claimants.get(key, 0)
        expected = {"UNCONSUMED"} if n == 0 else {"CONTENDED", "SHARED"} if n > 1 else {"OK"}
        assert status.iloc[0] in expected, key


@pytest.mark.parametrize("seed", [3, 4])
def test_sticky_groups_in_the_pass_give_the_three_passes_rows(spark, tmp_path, seed):
    data = _mixed(seed)
    mixing = _mixing(data["members"])
    assert "gm" in mixing
    paths = write_inputs(spark, Path(tmp_path), **data)
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
        packed = assign_and_report_all(inputs, run_times, 3, prior, True, "all", history)
        ours = _tables(packed, mixing)
        theirs = _tables(oracle_pass(inputs, 2, prior, "all", history), mixing)
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
        mixed = assignment_rows(packed).where(
            F.col("consumer_group").isin(*mixing)).toPandas()
        assert (mixed["status"] == "CONTENDED").any()
        _one_status_per_queue(mixed)
    finally:
        persist.release()


def test_a_group_mixing_sticky_and_other_members_counts_each_queue_once(spark, tmp_path):
    """Group gm reads topic ts (12 queues): in s1 m1 and m3 on sticky, m2 on range. m2
    takes its range share among all three (queues 4-7); the sticky chain splits the 12
    between m1 and m3. A queue is one queue however many claim it: 4-7 are CONTENDED
    (two claimants), the rest OK, and the group has 12 queues, not 24. In s2 m4 joins on
    sticky: the chain continues from all that m1 and m3 held, contended or not, whether
    s1 was audited in an earlier run or in the same one. Group gx, all sticky, has a
    client on sticky for topic A and on cooperative-sticky for B: each of its claims
    carries the strategy its client runs on that topic, and every queue is claimed."""
    queues = pd.DataFrame([
        {"snapshot_id": s, "cluster": "c", "topic": t, "broker_name": "broker-a",
         "queue_id": i, "readable": True, "max_offset": 100, "in_rate": 1.0,
         "broker_room": None}
        for s in ("s1", "s2") for t, n in (("ts", 12), ("A", 2), ("B", 2)) for i in range(n)])
    member = {"snapshot_id": "s1", "cluster": "c", "message_model": None,
              "allocation_mode": None, "client_room": None, "strategy_params": None}
    members = pd.DataFrame([
        *({**member, "snapshot_id": s, "consumer_group": "gm", "client_id": c, "topic": "ts",
           "strategy": "range" if c == "m2" else "sticky", "client_addr": f"h-{c}"}
          for s, clients in (("s1", "m1 m2 m3"), ("s2", "m1 m2 m3 m4"))
          for c in clients.split()),
        *({**member, "consumer_group": "gx", "client_id": c, "topic": t, "strategy": st,
           "client_addr": f"h-{c}"}
          for c, t, st in (("k1", "A", "sticky"), ("k1", "B", "cooperative-sticky"),
                           ("k2", "A", "sticky"), ("k2", "B", "sticky")))])
    paths = write_inputs(spark, Path(tmp_path), queues=queues, members=members)
    persist = Persisted()

    def audit(inputs, prior: Prior) -> tuple[DataFrame, DataFrame]:
        times = snapshot_times(inputs.queues)
        history, _ = churn_history(member_snapshots(inputs.members, times),
                                   prior.assignments)
        packed = assign_and_report_all(inputs, times, 2, prior, True, "all", history)
        return packed, assignments_report(assignment_rows(packed), times)

    try:
        read = read_written(spark, paths, persist)
        packed, first = audit(read.limited_to(["s1"]), Prior([]))
        rows = assignment_rows(packed).toPandas()
        gx = rows[rows["consumer_group"] == "gx"]
        assert sorted(zip(gx["topic"], gx["queue_id"], gx["status"], strict=True)) == [
            ("A", 0, "OK"), ("A", 1, "OK"), ("B", 0, "OK"), ("B", 1, "OK")]
        assert {(r.client_id, r.topic, r.strategy) for r in gx.itertuples()} <= {
            ("k1", "A", "sticky"), ("k1", "B", "cooperative-sticky"), ("k2", "A", "sticky"),
            ("k2", "B", "sticky")}
        rows = rows[rows["consumer_group"] == "gm"]
        by_queue = rows.groupby("queue_id")
        assert sorted(by_queue.groups) == list(range(12))
        claimants = by_queue["client_id"].apply(sorted)
        assert all("m2" in claimants[q] for q in range(4, 8))
        assert not any("m2" in claimants[q] for q in (*range(4), *range(8, 12)))
        sticky = rows[rows["client_id"] != "m2"]
        assert sorted(sticky["queue_id"]) == list(range(12))
        assert sorted(sticky["client_id"].value_counts()) == [6, 6]
        status = by_queue["status"].agg(set)
        assert all(status[q] == {"CONTENDED"} for q in range(4, 8))
        assert all(status[q] == {"OK"} for q in (*range(4), *range(8, 12)))
        balance = unpack(packed, "group_balance").where(
            "topic IS NULL AND consumer_group = 'gm'").collect()
        assert [(r.queues, r.contended_queues, r.unconsumed_queues) for r in balance] == [
            (12, 4, 0)]

        later, _ = audit(read.limited_to(["s2"]), Prior(["s1"], persist(first)))
        both, _ = audit(read, Prior([]))
        split = _rows_as_text(assignment_rows(later).toPandas())
        once = _rows_as_text(assignment_rows(both).where("snapshot_id = 's2'").toPandas())
        once = once[once["consumer_group"] == "gm"].reset_index(drop=True)
        split = split[split["consumer_group"] == "gm"].reset_index(drop=True)
        assert split.equals(once)
        held = once[once["client_id"].isin(["m1", "m3", "m4"])]
        assert sorted(held["client_id"].value_counts()) == [4, 4, 4]
        _one_status_per_queue(assignment_rows(both).toPandas())
    finally:
        persist.release()


def test_a_member_subscribing_nothing_refuses_its_share_in_a_wholly_sticky_group(spark,
                                                                                  tmp_path):
    """Group q: a and b read T (4 queues), member 0 subscribes nothing; all on sticky.
    Upstream's HashMap meets 0 first, so its constrained path deals 0 a share, which it
    refuses and rejoins, until a round changes nothing: a holds 1 and 3, b 2, and queue 0
    is nobody's. Group m is the same with b on range: 0 takes no part there (range counts
    T's subscribers only), and no queue is left unconsumed for it."""
    queues = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "c", "topic": "T", "broker_name": None,
         "queue_id": i, "readable": True, "max_offset": 100, "in_rate": 1.0,
         "broker_room": None} for i in range(4)])
    member = {"snapshot_id": "s1", "cluster": "c", "message_model": None,
              "allocation_mode": None, "client_room": None, "strategy_params": None}
    members = pd.DataFrame([
        {**member, "consumer_group": g, "client_id": c, "topic": t, "strategy": st,
         "client_addr": f"h-{c}"}
        for g, rows in (("q", (("a", "T", "sticky"), ("b", "T", "sticky"),
                               ("0", None, "sticky"))),
                        ("m", (("a", "T", "sticky"), ("b", "T", "range"),
                               ("0", None, "sticky"))))
        for c, t, st in rows])
    paths = write_inputs(spark, Path(tmp_path), queues=queues, members=members)
    persist = Persisted()
    try:
        inputs = read_written(spark, paths, persist)
        times = snapshot_times(inputs.queues)
        history, _ = churn_history(member_snapshots(inputs.members, times), None)
        packed = assign_and_report_all(inputs, times, 2, Prior([]), True, "all", history)
        rows = assignment_rows(packed).toPandas()
        claims = {g: sorted(zip(r["queue_id"], r["client_id"].fillna("-"), r["status"],
                                strict=True))
                  for g, r in rows.groupby("consumer_group")}
        assert claims["q"] == [(0, "-", "UNCONSUMED"), (1, "a", "OK"), (2, "b", "OK"),
                               (3, "a", "OK")]
        assert "0" not in {c for _, c, _ in claims["m"]}
        assert "UNCONSUMED" not in {s for *_, s in claims["m"]}
    finally:
        persist.release()
