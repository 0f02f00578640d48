"""strategy_comparison, computed in the assign-and-report pass, on the upstream stability
scenarios, and against the Spark assignments and aggregations it replaced
(`tests/support/comparison_oracle.py`) on random groups: sticky and cooperative-sticky
ones, broadcasting members, CONFIG parameters cleared by the switch, offsets known or
not."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.assign import DEFAULT_CANDIDATES
from jobs.persist import Persisted
from rebalance_udfs.spark.comparison import comparison_plan
from rebalance_udfs.spark.report_pass import COMPARISON, assign_and_report, unpack
from rebalance_udfs.spark.sticky import chain_order
from reports.assignments import snapshot_times
from reports.strategy_comparison import COLUMNS, strategy_comparison_report
from tests.support import stability
from tests.support.comparison_oracle import oracle_candidates, oracle_comparison
from tests.support.delta_inputs import read_written, write_inputs

pytestmark = pytest.mark.spark


def _stability_frames(spark):
    queues, members = stability.input_tables(("AVG",))
    members_df = spark.createDataFrame(members[stability.MEMBERS_SCHEMA_COLUMNS],
                                       stability.MEMBERS_SCHEMA)
    return (spark.createDataFrame(queues[stability.QUEUES_SCHEMA_COLUMNS],
                                  stability.QUEUES_SCHEMA),
            # the pass's reports read the allocation mode too (none here: the classic one)
            members_df.withColumn("allocation_mode", F.lit(None).cast("string"))
            .withColumn("pop_share_queue_num", F.lit(None).cast("int")))


def _compared(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
              buckets: int) -> DataFrame:
    """strategy_comparison as the audit makes it: planned, computed by the pass (its
    groups on the sticky assignors chained), and completed with the snapshots' times."""
    times = snapshot_times(queues)
    packed = assign_and_report(queues, members, offsets, buckets, "off",
                               chain=chain_order(queues).toArrow(),
                               comparison=comparison_plan(times, DEFAULT_CANDIDATES))
    return strategy_comparison_report(unpack(packed, COMPARISON), times)


def test_stability_moves_per_strategy(spark):
    # one group that really runs AVG; every candidate is computed on the same inputs
    queues_df, members_df = _stability_frames(spark)
    report = _compared(queues_df, members_df, None, buckets=2)
    assert report.columns == COLUMNS
    assert report.schema["actual_strategy"].dataType == T.ArrayType(T.StringType(), False)
    rows = {(r["cluster"], r["strategy"]): r.asDict() for r in report.collect()}
    assert len(rows) == 2 * 4  # snap-2 of each cluster, four candidates

    for cluster, expected in stability.EXPECTED_MOVES.items():
        for strategy, moves in expected.items():
            r = rows[(cluster, strategy)]
            assert (r["snapshot_id"], r["previous_snapshot_id"]) == ("snap-2", "snap-1")
            assert r["consumer_group"] == stability.group_of("AVG")
            assert r["actual_strategy"] == ["AVG"]
            assert r["queues"] == 32
            assert r["moves"] == moves, (cluster, strategy)
            assert r["estimated_duplicates"] is None and r["duplicates_known_moves"] == 0
        sticky = rows[(cluster, "sticky")]
        assert sticky["moves"] <= expected["AVG"]
        # only what balance needs: the removed client's 4 queues / the newcomer's 3
        assert sticky["moves"] == {"k-removed": 4, "k-added": 3}[cluster]
        assert sticky["max_client_queues"] == rows[(cluster, "AVG")]["max_client_queues"]


def _random_inputs(seed: int) -> dict:
    """`test_group_figures._random_cluster` (two snapshots, the batch strategies with
    CONFIG parameters, broadcasting and POP members, duplicated client ids), with a
    sticky and a cooperative-sticky group, a third snapshot, and consumed offsets beside
    the committed ones (duplicate estimates)."""
    from tests.spark.test_group_figures import _random_cluster

    rnd = random.Random(seed)
    data = _random_cluster(seed)
    third = _random_cluster(seed + 100)
    for name in ("queues", "members", "offsets"):
        later = third[name][third[name]["snapshot_id"] == "s2"].assign(snapshot_id="s3")
        data[name] = pd.concat([data[name], later], ignore_index=True)
    members = data["members"]
    for group, strategy in (("g4", "sticky"), ("g5", "cooperative-sticky")):
        chosen = (members["consumer_group"] == group) & (members["snapshot_id"] != "s1")
        members.loc[chosen, "strategy"] = strategy
        members.loc[chosen, ["strategy_params", "allocation_mode"]] = None
    offsets = data["offsets"]
    offsets["consumed_offset"] = pd.array(
        [pd.NA if pd.isna(c) or rnd.random() < 0.3 else int(c) + rnd.randint(-5, 60)
         for c in offsets["committed_offset"]], dtype="Int64")
    return data


@pytest.mark.parametrize("seed", [1, 2])
def test_random_groups_give_the_oracle_comparison(spark, tmp_path, seed):
    paths = write_inputs(spark, Path(tmp_path), **_random_inputs(seed))
    persist = Persisted()
    try:
        inputs = read_written(spark, paths, persist)
        ours = _compared(inputs.queues, inputs.members, inputs.offsets, 3)
        oracle = oracle_comparison(
            oracle_candidates(inputs.queues, inputs.members, inputs.offsets, 2,
                              DEFAULT_CANDIDATES), inputs.queues, inputs.members)
        rows = ours.collect()
        assert {r["snapshot_id"] for r in rows} == {"s2", "s3"}
        assert sum(r["moves"] for r in rows) > 0
        assert any(r["estimated_duplicates"] for r in rows)
        assert_df_equality(ours, oracle, ignore_row_order=True, ignore_nullable=True)
    finally:
        persist.release()


def test_one_snapshot_compares_nothing(spark):
    queues_df, members_df = _stability_frames(spark)
    first = queues_df.where("snapshot_id = 'snap-1'")
    # no pair to compare: no plan, so the pass simulates no candidate
    assert comparison_plan(snapshot_times(first), DEFAULT_CANDIDATES) is None
    assert _compared(first, members_df.where("snapshot_id = 'snap-1'"), None, 2).count() == 0
    both = comparison_plan(snapshot_times(queues_df), DEFAULT_CANDIDATES)
    assert both is not None and both.strategies == DEFAULT_CANDIDATES
    assert sorted(both.pairs.to_pydict()["cluster"]) == ["k-added", "k-removed"]


def test_unknown_strategy_is_refused_before_any_job(spark):
    queues_df, _members_df = _stability_frames(spark)
    times = snapshot_times(queues_df)
    sc = spark.sparkContext
    sc.setJobGroup("strategy-comparison-refusal", "unknown strategies are refused")
    try:
        with pytest.raises(ValueError) as refused:
            comparison_plan(times, ("AVG", "FASTEST"))
        with pytest.raises(ValueError, match=r"unknown or no strategies \[\]"):
            comparison_plan(times, ())
        assert sc.statusTracker().getJobIdsForGroup("strategy-comparison-refusal") == []
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    message = str(refused.value)
    assert message.startswith("strategy_comparison: unknown or no strategies ['FASTEST'] "
                              "(supported: AVG, AVG_BY_CIRCLE, ")
    assert "CONSISTENT_HASH" in message and "sticky" in message


def test_the_audit_writes_the_comparison_and_a_rerun_without_it_empties_its_snapshots(
        spark, tmp_path):
    from jobs.audit import run
    from jobs.config import AuditConfig
    from tests.support.outputs import table

    data = _random_inputs(3)
    paths = write_inputs(spark, Path(tmp_path) / "in", **data)
    out = Path(tmp_path) / "out"

    def audit(compare: bool, *snapshots: str):
        return run(AuditConfig(queues=paths["queues"], members=paths["members"],
                               offsets=paths["offsets"], output=str(out), engine="offline",
                               what_if="off", compare_strategies=compare,
                               snapshots=snapshots), spark=spark)

    rows = audit(True).rows
    written = table(out, "strategy_comparison")
    # the run's rows per table, in the order the summary has always listed them
    assert list(rows) == ["assignments", "consumer_load", "group_balance", "what_if",
                          "rebalance_churn", "strategy_comparison", "drift", "rejects"]
    assert rows["strategy_comparison"] == len(written)
    schema = pa.schema(DeltaTable(str(out / "strategy_comparison")).schema().to_arrow())
    assert schema.field("actual_strategy").type.value_field.nullable is False
    assert not schema.field("strategy").nullable and not schema.field("actual_strategy").nullable
    groups = data["members"].query("snapshot_id != 's1'")[["snapshot_id", "consumer_group"]]
    assert len(written) == len(groups.drop_duplicates()) * len(DEFAULT_CANDIDATES)
    assert set(written["strategy"]) == set(DEFAULT_CANDIDATES)
    assert written["moves"].sum() > 0 and written["run_id"].nunique() == 1
    # the last snapshot alone, the flag given: the run has none before it to compare
    # with, so its rows go, and the run says so (it said nothing, probe Z)
    last = sorted(data["members"]["snapshot_id"].unique())[-1]
    of_last = int((written["snapshot_id"] == last).sum())
    alone = audit(True, last)
    assert alone.rows["strategy_comparison"] == 0 < of_last
    assert [w for w in alone.warnings if w.startswith("strategy_comparison:")] == [
        f"strategy_comparison: the output's complete runs of snapshot {last} (cluster c) "
        f"wrote {of_last} strategy comparison row(s); this run compares its own consecutive "
        "snapshots only, and audits none before them, so its strategy_comparison table has "
        "none of them (audit each with the snapshot before it, in one run, to keep them)"]
    # the same snapshots again: that run's comparison rows must not stay
    assert audit(False).rows["strategy_comparison"] == 0
    assert table(out, "strategy_comparison").empty
