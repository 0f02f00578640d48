"""The what-if benchmark compares this version's table with a baseline's and, where a
change of the candidate set makes them differ, says what differs instead of failing."""

from __future__ import annotations

from benchmarks.what_if_sweep import differences, synthetic_bucket
from rebalance_udfs.what_if import what_if_bucket


def test_the_sweep_benchmark_names_what_differs() -> None:
    table = what_if_bucket(*synthetic_bucket(40, seed=3))
    assert differences(table, table.sample(frac=1.0, random_state=1)) is None
    changed = table.copy()
    flip = changed.index[changed["recommended"] & (changed.index >= 3)][:2]
    changed.loc[flip, "recommended"] = False
    assert differences(changed, table.iloc[3:]) == (
        "3 candidate rows only in this version; 0 only in the baseline; of the shared, "
        "2 differ in recommended")
    # a baseline from before a column existed: named, not a KeyError
    assert differences(table, table.drop(columns="recommended")) == (
        "0 candidate rows only in this version; 0 only in the baseline; columns only in "
        "this version: recommended; of the shared, none differs")
