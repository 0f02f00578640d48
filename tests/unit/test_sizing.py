"""The sizing rule: one task per ROWS_PER_TASK input rows, within [cores, MAX_PARTITIONS]."""

from __future__ import annotations

from jobs.sizing import MAX_PARTITIONS, ROWS_PER_TASK, partitions_for, waves_for


def test_rows_per_task_within_cores_and_cap() -> None:
    assert partitions_for(None, 2) == 2  # unknown size: the cores
    assert partitions_for(0, 4) == 4
    assert partitions_for(10, 2) == 2  # tiny inputs never go below the cores
    assert partitions_for(1_798_561, 2) == 8  # the 1M benchmark's inputs
    assert partitions_for(18_000_000, 2) == 72
    assert partitions_for(ROWS_PER_TASK * 10 + 1, 2) == 11
    assert partitions_for(10**12, 2) == MAX_PARTITIONS
    assert partitions_for(None, 0) == 1


def test_waves_round_up_to_whole_waves_of_the_cores() -> None:
    assert waves_for(581_000, 2) == 4  # 3 tasks of rows, on 2 cores
    assert waves_for(2_400_000, 2) == 10  # already whole
    assert waves_for(0, 2) == 2 and waves_for(None, 3) == 3
    assert waves_for(ROWS_PER_TASK * 5, 4) == 8
    assert waves_for(10, 0) == 1
