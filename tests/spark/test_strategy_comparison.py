"""strategy_comparison on the upstream stability scenarios."""

from __future__ import annotations

import pytest

from jobs.assign import assign_candidates
from reports.strategy_comparison import COLUMNS, strategy_comparison_report
from tests.support import stability

pytestmark = pytest.mark.spark


def test_stability_moves_per_strategy(spark):
    # one group that really runs AVG; every candidate is computed on the same inputs
    queues, members = stability.input_tables(("AVG",))
    queues_df = spark.createDataFrame(queues[stability.QUEUES_SCHEMA_COLUMNS],
                                      stability.QUEUES_SCHEMA)
    members_df = spark.createDataFrame(members[stability.MEMBERS_SCHEMA_COLUMNS],
                                       stability.MEMBERS_SCHEMA)
    candidates = assign_candidates(queues_df, members_df, None, buckets=2)
    report = strategy_comparison_report(candidates, queues_df, members_df)
    assert report.columns == COLUMNS
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


def test_unknown_strategy_is_refused_before_any_job(spark):
    queues, members = stability.input_tables(("AVG",))
    queues_df = spark.createDataFrame(queues[stability.QUEUES_SCHEMA_COLUMNS],
                                      stability.QUEUES_SCHEMA)
    members_df = spark.createDataFrame(members[stability.MEMBERS_SCHEMA_COLUMNS],
                                       stability.MEMBERS_SCHEMA)
    sc = spark.sparkContext
    sc.setJobGroup("strategy-comparison-refusal", "unknown strategies are refused")
    try:
        with pytest.raises(ValueError) as refused:
            assign_candidates(queues_df, members_df, None, 2, ("AVG", "FASTEST"))
        with pytest.raises(ValueError, match=r"unknown or no strategies \[\]"):
            assign_candidates(queues_df, members_df, None, 2, ())
        assert sc.statusTracker().getJobIdsForGroup("strategy-comparison-refusal") == []
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    message = str(refused.value)
    assert message.startswith("strategy_comparison: unknown or no strategies ['FASTEST'] "
                              "(supported: AVG, AVG_BY_CIRCLE, ")
    assert "CONSISTENT_HASH" in message and "sticky" in message
