"""rebalance_churn on the upstream stability facts and on small hand-made snapshots."""

from __future__ import annotations

import logging
from datetime import datetime

import pytest
from chispa import assert_df_equality

from reports.rebalance_churn import COLUMNS, rebalance_churn_report
from tests.support import stability
from tests.support.examples import claims_of

pytestmark = pytest.mark.spark


def _rows(df):
    return {(r["cluster"], r["snapshot_id"], r["consumer_group"]): r.asDict(recursive=True)
            for r in df.collect()}


def test_stability_moves_match_upstream(spark):
    assigned, load = stability.assignment_rows()
    # the premise: the kernel reproduces the upstream assignments of every step
    for cluster, snap, _, scenario in stability.steps():
        for strategy in stability.FILES:
            rows = assigned[(assigned["cluster"] == cluster) & (assigned["snapshot_id"] == snap)
                            & (assigned["consumer_group"] == stability.group_of(strategy))]
            v = stability.vector(strategy, scenario)
            want = {(c, t): {(b, q) for b, q in qs} for c, per in v["assignment"].items()
                    for t, qs in per.items()}
            assert claims_of(rows) == {k: s for k, s in want.items() if s}, (strategy, scenario)

    churn = rebalance_churn_report(
        spark.createDataFrame(assigned[stability.ASSIGNMENTS_SCHEMA_COLUMNS],
                              stability.ASSIGNMENTS_SCHEMA),
        spark.createDataFrame(load[stability.LOAD_SCHEMA_COLUMNS], stability.LOAD_SCHEMA),
    )
    assert churn.columns == COLUMNS
    rows = _rows(churn)
    assert len(rows) == 6  # only snap-2 has a predecessor, in each cluster, per group
    base = stability.vector("AVG", stability.BASE)["consumers"]
    for cluster, expected in stability.EXPECTED_MOVES.items():
        after = stability.vector("AVG", stability.CLUSTERS[cluster])["consumers"]
        joined, left = sorted(set(after) - set(base)), sorted(set(base) - set(after))
        for strategy, moved in expected.items():
            r = rows[(cluster, "snap-2", stability.group_of(strategy))]
            assert r["previous_snapshot_id"] == "snap-1"
            assert r["previous_captured_at"] == stability.TIMES[0]
            assert r["queues_moved"] == moved, (cluster, strategy)
            assert r["paused_queues"] == moved
            assert len(r["moves"]) == moved
            assert (r["queues_before"], r["queues_after"]) == (32, 32)
            assert (r["queues_added"], r["queues_removed"]) == (0, 0)
            assert r["clients_joined"] == joined and r["clients_left"] == left
            assert (r["clients_before"], r["clients_after"]) == (len(base), len(after))
            assert r["triggers"] == ["CLIENTS_CHANGED"]
            # no offsets known: no figure
            assert r["estimated_duplicates"] is None and r["duplicates_known_moves"] == 0
            if strategy == "CONSISTENT_HASH":
                # upstream property: only the removed client's / the new client's queues move
                ends = {m["from_client"] if left else m["to_client"] for m in r["moves"]}
                assert ends == set(left or joined)


# --- small hand-made snapshots ---------------------------------------------------------------

T1, T2 = datetime(2024, 1, 1, 0, 0), datetime(2024, 1, 1, 0, 1)


def _a(snap, at, group, topic, broker, qid, client, status="OK", committed=None,
       consumed=None, cluster="c1"):
    return (snap, cluster, at, group, topic, broker, qid, client, "AVG", status, None, None,
            None, committed, consumed, None)


def _l(snap, at, group, client, topics=("t",), strategies=("AVG",), cluster="c1"):
    return (snap, cluster, at, group, client, list(strategies), list(topics))


BEFORE_A = [
    # g1: c1 and c2 hand over everything to c3
    _a("s1", T1, "g1", "t", "b", 0, "c1", committed=100, consumed=150),
    _a("s1", T1, "g1", "t", "b", 1, "c1", committed=10),
    _a("s1", T1, "g1", "t", "b", 2, "c2", committed=5, consumed=3),
    _a("s1", T1, "g1", "t", "b", 3, "c2"),
    # g2: offsets never known; contended, unconsumed, removed queues; null broker (Kafka)
    _a("s1", T1, "g2", "k", None, 0, "x", status="CONTENDED"),
    _a("s1", T1, "g2", "k", None, 0, "y", status="CONTENDED"),
    _a("s1", T1, "g2", "k", None, 1, None, status="UNCONSUMED"),
    _a("s1", T1, "g2", "k", None, 2, "x"),
    _a("s1", T1, "g2", "k", None, 3, "y"),
    # g3 vanishes in s2
    _a("s1", T1, "g3", "t", "b", 0, "z"),
]
AFTER_A = [
    _a("s2", T2, "g1", "t", "b", 0, "c3"),
    _a("s2", T2, "g1", "t", "b", 1, "c3"),
    _a("s2", T2, "g1", "t", "b", 2, "c3"),
    _a("s2", T2, "g1", "t", "b", 3, "c3"),
    _a("s2", T2, "g2", "k", None, 0, "x"),  # contended {x, y} -> {x}: moved
    _a("s2", T2, "g2", "k", None, 1, "y"),  # unconsumed -> y: not a move
    _a("s2", T2, "g2", "k", None, 2, "x"),  # unchanged
    _a("s2", T2, "g2", "k", None, 4, "y"),  # added (3 removed)
]
BEFORE_L = [_l("s1", T1, "g1", c) for c in ("c1", "c2")] + [
    _l("s1", T1, "g2", "x"), _l("s1", T1, "g2", "y"), _l("s1", T1, "g3", "z")]
AFTER_L = [_l("s2", T2, "g1", "c3"), _l("s2", T2, "g2", "x", topics=("k", "other")),
           _l("s2", T2, "g2", "y", strategies=("AVG_BY_CIRCLE",))]


def _frames(spark, a_rows, l_rows):
    return (spark.createDataFrame(a_rows, stability.ASSIGNMENTS_SCHEMA),
            spark.createDataFrame(l_rows, stability.LOAD_SCHEMA))


def test_duplicates_moves_and_triggers(spark):
    a, load = _frames(spark, BEFORE_A + AFTER_A, BEFORE_L + AFTER_L)
    rows = _rows(rebalance_churn_report(a, load))
    assert set(rows) == {("c1", "s2", g) for g in ("g1", "g2", "g3")}

    g1 = rows[("c1", "s2", "g1")]
    assert g1["queues_moved"] == 4
    # q0: 150 - 100; q2: 3 - 5 clipped to 0; q1 / q3 unknown
    assert [m["duplicate_estimate"] for m in g1["moves"]] == [50, None, 0, None]
    assert g1["estimated_duplicates"] == 50 and g1["duplicates_known_moves"] == 2
    assert g1["moves"][0] == {"topic": "t", "broker_name": "b", "queue_id": 0,
                              "from_client": "c1", "to_client": "c3", "from_clients": ["c1"],
                              "to_clients": ["c3"], "duplicate_estimate": 50}
    assert g1["clients_joined"] == ["c3"] and g1["clients_left"] == ["c1", "c2"]
    assert g1["triggers"] == ["CLIENTS_CHANGED"]

    g2 = rows[("c1", "s2", "g2")]
    assert (g2["queues_before"], g2["queues_after"]) == (4, 4)
    assert (g2["queues_added"], g2["queues_removed"], g2["queues_moved"]) == (1, 1, 1)
    (move,) = g2["moves"]
    assert (move["broker_name"], move["queue_id"]) == (None, 0)
    assert (move["from_client"], move["to_client"]) == (None, "x")  # was contended
    assert (move["from_clients"], move["to_clients"]) == (["x", "y"], ["x"])
    assert g2["estimated_duplicates"] is None and g2["duplicates_known_moves"] == 0
    assert g2["clients_joined"] == [] and g2["clients_left"] == []
    assert g2["triggers"] == ["QUEUES_CHANGED", "STRATEGY_CHANGED", "SUBSCRIPTION_CHANGED"]

    g3 = rows[("c1", "s2", "g3")]
    assert (g3["queues_before"], g3["queues_after"], g3["queues_removed"]) == (1, 0, 1)
    assert (g3["clients_before"], g3["clients_after"], g3["clients_left"]) == (1, 0, ["z"])
    assert g3["moves"] == [] and g3["queues_moved"] == 0
    assert g3["triggers"] == ["CLIENTS_CHANGED", "QUEUES_CHANGED"]


def test_an_eager_kafka_group_pauses_every_partition_it_held(spark):
    """range (eager) and cooperative-sticky groups where m4 joins and one partition moves:
    the eager one pauses all six, the cooperative one the moved one."""
    rows = []
    for group in ("eager", "coop"):
        before = ["m1", "m1", "m2", "m2", "m3", "m3"]
        for snap, at, owners in (("s1", T1, before), ("s2", T2, [*before[:5], "m4"])):
            rows += [_a(snap, at, group, "k", None, p, c) for p, c in enumerate(owners)]
    load = [_l(snap, at, g, m, topics=("k",), strategies=(assignor,))
            for g, assignor in (("eager", "range"), ("coop", "cooperative-sticky"))
            for snap, at, ms in (("s1", T1, "123"), ("s2", T2, "1234"))
            for m in (f"m{i}" for i in ms)]
    got = _rows(rebalance_churn_report(*_frames(spark, rows, load)))
    assert {k[2]: (r["queues_moved"], r["paused_queues"]) for k, r in got.items()} == {
        "eager": (1, 6), "coop": (1, 1)}


def test_incremental_equals_full(spark):
    a_all, l_all = _frames(spark, BEFORE_A + AFTER_A, BEFORE_L + AFTER_L)
    full = rebalance_churn_report(a_all, l_all)

    # prior rows as the output tables hold them: extra run_id, and a stale copy of s2
    # written by an older run (the current run's rows replace it)
    from pyspark.sql import functions as F

    prior_a, prior_l = _frames(spark, BEFORE_A + AFTER_A[:1], BEFORE_L)
    prior_a, prior_l = prior_a.withColumn("run_id", F.lit("r0")), prior_l.withColumn(
        "run_id", F.lit("r0"))
    cur_a, cur_l = _frames(spark, AFTER_A, AFTER_L)
    incremental = rebalance_churn_report(cur_a, cur_l, prior_a, prior_l)
    assert_df_equality(incremental, full, ignore_row_order=True, ignore_nullable=True)

    # prior assignments alone: the claimants stand in for the prior clients, so the same
    # queue and client figures, but no subscription / strategy triggers can be seen
    only_a = _rows(rebalance_churn_report(cur_a, cur_l, prior_a))
    for key, want in _rows(full).items():
        got = only_a[key]
        assert {k: v for k, v in got.items() if k != "triggers"} == {
            k: v for k, v in want.items() if k != "triggers"}
        assert got["triggers"] == [t for t in want["triggers"]
                                   if t not in ("STRATEGY_CHANGED", "SUBSCRIPTION_CHANGED")]
    with pytest.raises(ValueError, match="prior_load needs prior_assignments"):
        rebalance_churn_report(cur_a, cur_l, None, prior_l)

    # without prior rows the lone snapshot has no predecessor: no row
    assert rebalance_churn_report(cur_a, cur_l).count() == 0


def test_snapshot_order_nulls_first_then_id(spark):
    # captured_at null sorts first; equal times fall back to snapshot_id
    rows = [_a("s0", None, "g", "t", "b", 0, "c1"), _a("s1", T1, "g", "t", "b", 0, "c2"),
            _a("s2", T1, "g", "t", "b", 0, "c1")]
    a, load = _frames(spark, rows, [_l(r[0], r[2], "g", r[7]) for r in rows])
    got = {r["snapshot_id"]: (r["previous_snapshot_id"], r["queues_moved"])
           for r in rebalance_churn_report(a, load).collect()}
    assert got == {"s1": ("s0", 1), "s2": ("s1", 1)}


# --- the per-bucket pass against the Spark aggregations it replaced --------------------------

def _random_snapshots(seed: int):
    """Assignment and load rows of 4 snapshots in 2 clusters: groups that come and go,
    clients that join, leave and change topics or strategies (range among them: Kafka's
    eager protocol pauses more than the moves), contended, shared, broadcast
    and unconsumed queues, Kafka queues (null broker) beside RocketMQ ones in one topic,
    offsets known or not, non-ASCII ids."""
    import random

    rnd = random.Random(seed)
    clients = ["c1", "c2", "c3", "ç4", "c10", "Z"]
    a_rows, l_rows = [], []
    for cluster in ("k1", "k2"):
        for n, snap in enumerate(("s1", "s2", "s3", "s4")):
            at = datetime(2024, 1, 1, 0, n) if (cluster, n) != ("k2", 0) else None
            for group in rnd.sample(["g1", "g2", "g3", "g4"], rnd.randint(1, 4)):
                members = rnd.sample(clients, rnd.randint(1, 4))
                for client in members:
                    l_rows.append(_l(snap, at, group, client, cluster=cluster,
                                     topics=rnd.choice([("t",), ("t", "u"), ("u",)]),
                                     strategies=rnd.choice([("AVG",), ("AVG_BY_CIRCLE",),
                                                            ("range",)])))
                for topic, broker in (("t", "b1"), ("t", "b2"), ("t", None), ("u", None)):
                    for qid in range(rnd.randint(0, 4)):
                        status = rnd.choice(["OK"] * 6 + ["CONTENDED", "SHARED", "BROADCAST",
                                                          "UNCONSUMED"])
                        if status == "UNCONSUMED":
                            a_rows.append(_a(snap, at, group, topic, broker, qid, None,
                                             "UNCONSUMED", cluster=cluster))
                            continue
                        claimants = rnd.sample(members, 1 if status in ("OK", "BROADCAST")
                                               else min(2, len(members)))
                        for client in claimants:
                            a_rows.append(_a(
                                snap, at, group, topic, broker, qid, client, status,
                                committed=rnd.choice([None, 5, 40]),
                                consumed=rnd.choice([None, 3, 50]), cluster=cluster))
    return a_rows, l_rows


@pytest.mark.parametrize("seed", [1, 2])
def test_pass_equals_the_spark_aggregations(spark, seed):
    from pyspark.sql import functions as F

    from tests.support.churn_oracle import oracle_churn

    a_rows, l_rows = _random_snapshots(seed)
    a, load = _frames(spark, a_rows, l_rows)
    got = rebalance_churn_report(a, load, buckets=3)
    assert got.count() > 0
    # seed 1 draws an eager (range) group that pauses queues that do not move
    assert (got.where(F.col("paused_queues") > F.col("queues_moved")).count() > 0) == (
        seed == 1)
    assert_df_equality(got, oracle_churn(a, load), ignore_row_order=True,
                       ignore_nullable=True)
    # incremental: s1, s2 from the output tables (prior load or assignments alone)
    prior = F.col("snapshot_id").isin("s1", "s2")
    for prior_load in (load.where(prior), None):
        cur_a, cur_l = a.where(~prior), load.where(~prior)
        assert_df_equality(
            rebalance_churn_report(cur_a, cur_l, a.where(prior), prior_load, buckets=2),
            oracle_churn(cur_a, cur_l, a.where(prior), prior_load),
            ignore_row_order=True, ignore_nullable=True)


def _with_sticky_g5(data: dict) -> dict:
    """`data` (`_random_cluster`'s tables) with group g5 on the Kafka sticky assignor."""
    members = data["members"]
    sticky = members["consumer_group"] == "g5"
    members.loc[sticky, "strategy"] = "sticky"
    members.loc[sticky, ["strategy_params", "allocation_mode"]] = None
    return data


def _auditing(spark, folder, data: dict):
    """(audit(out, *snapshots), table(out, name)) over `data` written under `folder`:
    an audit of those inputs into `out` (no what-if) and an output table without run_id."""
    from jobs.audit import run
    from jobs.config import AuditConfig
    from storage.delta import DeltaStore
    from tests.support.delta_inputs import write_inputs

    paths = write_inputs(spark, folder, **data)

    def audit(out: str, *snapshots: str):
        return run(AuditConfig(queues=paths["queues"], members=paths["members"],
                               offsets=paths["offsets"], output=out, engine="offline",
                               snapshots=snapshots, what_if="off"), spark=spark)

    def table(out: str, name: str):
        return DeltaStore(spark, "offline").read(f"{out}/{name}", name).drop("run_id")

    return audit, table


def test_the_jobs_churn_equals_the_spark_aggregations(spark, tmp_path, caplog, monkeypatch):
    """The report pass computes churn in the call that assigns the queues, with a sticky
    group reported apart: on random inputs of two snapshots, audited together and one
    after the other (the second run compares with the first's output), its table equals
    the Spark aggregations over the written assignments and consumer_load."""
    from pathlib import Path

    from pyspark.sql import functions as F

    from tests.spark.test_group_figures import _random_cluster
    from tests.support.churn_oracle import oracle_churn

    audit, table = _auditing(spark, Path(tmp_path) / "in", _with_sticky_g5(_random_cluster(6)))

    full, split = str(tmp_path / "full"), str(tmp_path / "split")
    audit(full)
    audit(split, "s1")
    caplog.set_level(logging.INFO, logger="rebalance_audit")
    monkeypatch.setattr(logging.getLogger("rebalance_audit"), "propagate", True)
    audit(split, "s2")
    # the run says where churn starts from, in a step of its own
    assert [r for r in caplog.records if r.getMessage().startswith("read prior ")
            and r.getMessage().endswith("compared with s1 from the output")]
    churn = table(full, "rebalance_churn")
    assert churn.where(F.col("queues_moved") > 0).count() > 0
    assert churn.where(F.col("consumer_group") == "g5").count() == 1
    expected = oracle_churn(table(full, "assignments"), table(full, "consumer_load"))
    for got in (churn, table(split, "rebalance_churn")):
        assert_df_equality(got.select(*COLUMNS), expected.select(*COLUMNS),
                           ignore_row_order=True, ignore_nullable=True)


def test_a_run_of_snapshots_with_held_ones_between_compares_each_with_its_own_previous(
        spark, tmp_path):
    """A run of s1 and s3 into an output holding s2 (and s4) compares s3 with s2, as one
    run of all four does: it compared s3 with s1, skipping s2, with no word; a sticky
    group ran from s1's assignment. Every table equals the one run's."""
    from pathlib import Path

    import pandas as pd
    from pyspark.sql import functions as F

    from tests.spark.test_group_figures import _random_cluster

    first, later = _random_cluster(6), _random_cluster(7)
    for frame in later.values():
        frame["snapshot_id"] = frame["snapshot_id"].map({"s1": "s3", "s2": "s4"})
    data = {name: pd.concat([first[name], later[name]], ignore_index=True) for name in first}
    audit, table = _auditing(spark, Path(tmp_path) / "in", _with_sticky_g5(data))

    full, gaps = str(tmp_path / "full"), str(tmp_path / "gaps")
    audit(full)
    audit(gaps)
    result = audit(gaps, "s1", "s3")
    assert result.snapshots == ["s1", "s3"]
    churn = table(gaps, "rebalance_churn")
    assert sorted(r.previous_snapshot_id for r in churn.where(F.col("snapshot_id") == "s3")
                  .select("previous_snapshot_id").distinct().collect()) == ["s2"]
    for name in ("assignments", "consumer_load", "group_balance", "rebalance_churn"):
        # a map column cannot be sorted on: its entries as a sorted array
        def comparable(df):
            return (df.withColumn("queues_by_topic",
                                  F.array_sort(F.map_entries("queues_by_topic")))
                    if "queues_by_topic" in df.columns else df)

        assert_df_equality(comparable(table(gaps, name)), comparable(table(full, name)),
                           ignore_row_order=True, ignore_nullable=True)


def test_captures_in_the_autumns_repeated_hour_pair_in_capture_order(spark, tmp_path,
                                                                     monkeypatch):
    """Spark hands a timestamp to the driver's Python as a naive local time: in New York,
    05:40Z (01:40 EDT) and 06:20Z (01:20 EST, the repeated hour of 2026-11-01) compared
    the wrong way round, so s3 audited after s2 was taken for an earlier snapshot: its
    churn compared with nothing, s2's `runs` row was said to follow it, and its own
    capture time went to `runs` an hour off. The driver reads times in UTC, as the
    session does."""
    import time as clock
    from datetime import UTC
    from pathlib import Path

    import pandas as pd
    from pyspark.sql import functions as F

    from tests.spark.test_group_figures import _random_cluster

    at = {"s1": datetime(2026, 11, 1, 5, 10, tzinfo=UTC),
          "s2": datetime(2026, 11, 1, 5, 40, tzinfo=UTC),
          "s3": datetime(2026, 11, 1, 6, 20, tzinfo=UTC)}
    data = _random_cluster(6)
    for name, frame in data.items():
        third = frame[frame["snapshot_id"] == "s2"].assign(snapshot_id="s3")
        data[name] = pd.concat([frame, third], ignore_index=True)
    data["queues"]["captured_at"] = data["queues"]["snapshot_id"].map(at)
    monkeypatch.setenv("TZ", "America/New_York")
    clock.tzset()
    try:
        audit, table = _auditing(spark, Path(tmp_path) / "in", data)
        out = str(tmp_path / "out")
        for snapshot in ("s1", "s2", "s3"):
            said = audit(out, snapshot).warnings
            assert not [w for w in said if "already in the output" in w], said
    finally:
        monkeypatch.undo()
        clock.tzset()
    churn = table(out, "rebalance_churn")
    pairs = {(r.snapshot_id, r.previous_snapshot_id)
             for r in churn.select("snapshot_id", "previous_snapshot_id").collect()}
    assert pairs == {("s2", "s1"), ("s3", "s2")}
    runs = table(out, "runs").select("snapshot_id", F.date_format(
        "captured_at", "HH:mm").alias("at")).collect()
    assert sorted(tuple(r) for r in runs) == [("s1", "05:10"), ("s2", "05:40"),
                                              ("s3", "06:20")]
