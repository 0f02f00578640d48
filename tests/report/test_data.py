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
