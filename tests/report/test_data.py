"""What `load` reads: every group in the few columns the overview and the choice of groups
need, whole rows only for the groups the page details."""

from __future__ import annotations

from reports.html.data import load
from tests.report import frames


def test_whole_rows_only_for_the_detailed_groups(tmp_path):
    output = frames.write_outputs(str(tmp_path / "out"))
    data = load(output, top=1)
    # the worst group of s2 (a contended queue) is the one detailed ...
    assert set(data.group_balance["consumer_group"]) == {frames.NASTY}
    assert "recommendation" in data.group_balance.columns
    assert set(data.consumer_load["consumer_group"]) == {frames.NASTY}
    # ... while the histogram still counts every shown group of complete runs
    assert sorted(data.skews.fillna(-1).tolist()) == [0, 0, 0, 3]


def test_a_group_filter_details_that_group(tmp_path):
    output = frames.write_outputs(str(tmp_path / "out"))
    data = load(output, groups=["g-skew"])
    assert set(data.group_balance["consumer_group"]) == {"g-skew"}
    assert sorted(data.group_balance["topic"].fillna("").tolist()) == ["", "t1"]
    assert data.skews.tolist() == [3]


def test_churn_timeline_sums_each_snapshot_of_complete_runs(tmp_path):
    from deltalake import write_deltalake

    output = frames.write_outputs(str(tmp_path / "out"))
    dead = frames.churn().assign(run_id="dead", queues_moved=100)  # a run that died
    write_deltalake(f"{output}/rebalance_churn", frames.to_arrow(dead), mode="append",
                    partition_by=["snapshot_id"])
    churn = load(output).churn
    assert churn[["cluster", "snapshot_id", "queues_moved"]].values.tolist() == [
        ["c1", "s2", 6]]


def test_the_index_counts_findings_of_whole_group_rows_of_complete_runs(tmp_path):
    from reports.html.data import balance_index, complete_runs

    output = frames.write_outputs(str(tmp_path / "out"))
    index = balance_index(output, ["s2"], None, complete_runs(output))
    expected = frames.group_balance()
    expected = expected[(expected["snapshot_id"] == "s2") & expected["topic"].isna()
                        & (expected["run_id"] == frames.RUN)]
    assert sorted(index["consumer_group"]) == sorted(expected["consumer_group"])
    counts = dict(zip(index["consumer_group"], index["findings"], strict=True))
    assert counts == {g: len(f) if f is not None else 0
                      for g, f in zip(expected["consumer_group"], expected["findings"],
                                      strict=True)}
