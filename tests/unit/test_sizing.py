"""The sizing rules: one task per ROWS_PER_TASK input rows, within [cores, MAX_PARTITIONS];
a local JVM on C1 alone below SHORT_RUN_INPUT_ROWS; the subscriptions broadcast up to
BROADCAST_SUBSCRIPTIONS; a local driver's heap per core."""

from __future__ import annotations

from jobs.sizing import (
    BROADCAST_SUBSCRIPTIONS,
    C1_ONLY,
    INITIAL_HEAP,
    MAX_PARTITIONS,
    ROWS_PER_TASK,
    SHORT_RUN_INPUT_ROWS,
    broadcasts_subscriptions,
    heap_gb_for_file_rows,
    java_options_for,
    launcher_heap,
    local_cores,
    local_heap_for,
    main,
    partitions_for,
    tasks_heap,
    waves_for,
)


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


def test_a_short_run_compiles_with_c1_alone_and_a_long_or_unknown_one_as_the_jvm_does() -> None:
    # C1 alone, and the code cache a tiered JVM has: C1 alone shrinks it to 48 MB, which
    # a small audit of many files filled (probe B: "Out of space in CodeCache")
    assert C1_ONLY == "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    assert java_options_for(66_639) == C1_ONLY  # the demo's inputs
    assert java_options_for(0) == C1_ONLY
    assert java_options_for(SHORT_RUN_INPUT_ROWS - 1) == C1_ONLY
    assert java_options_for(SHORT_RUN_INPUT_ROWS) == ""
    assert java_options_for(1_798_561) == ""  # the 1M benchmark's inputs
    assert java_options_for(None) == ""


def test_a_run_that_is_not_short_commits_the_launchers_heap_at_start() -> None:
    """G1 grew a local driver's heap with the run's length (1.06-1.50x from 1M to 10M over
    eleven runs); committed at start it is the same at every size. A short run keeps the
    JVM's lazy heap, and a heap the launcher did not choose is not touched."""
    assert INITIAL_HEAP == "-Xms"
    assert java_options_for(1_798_561, "2g") == "-Xms2g"  # the 1M benchmark's inputs
    assert java_options_for(None, "3g") == "-Xms3g"  # unknown: not short
    assert java_options_for(66_639, "2g") == C1_ONLY  # the demo's: lazy, as before
    assert java_options_for(SHORT_RUN_INPUT_ROWS, None) == ""


def test_the_heap_to_commit_is_the_launchers_where_the_driver_runs_the_tasks(
        monkeypatch) -> None:
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert tasks_heap("local[2]") == "2g" and tasks_heap("local") == "2g"
    assert tasks_heap("local-cluster[2,1,2048]") is None  # its driver runs no task
    assert tasks_heap("yarn") is None
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", "6g")
    assert tasks_heap("local[2]") == "6g"


def test_subscriptions_are_broadcast_up_to_the_limit_and_left_to_spark_when_unknown() -> None:
    assert broadcasts_subscriptions(315_600)  # the 10M benchmark's estimate
    assert broadcasts_subscriptions(0) and broadcasts_subscriptions(BROADCAST_SUBSCRIPTIONS)
    assert not broadcasts_subscriptions(BROADCAST_SUBSCRIPTIONS + 1)
    assert not broadcasts_subscriptions(None)


def test_a_local_driver_gets_1g_per_core_within_2g_and_4g() -> None:
    assert local_heap_for("local[2]") == "2g"  # the benchmark's: 10M runs without spill
    assert local_heap_for("local") == "2g" and local_heap_for("local[1]") == "2g"
    assert local_heap_for("local[3]") == "3g"
    assert local_heap_for("local[16]") == "4g"  # at most what every local run had before
    assert local_heap_for("local[*]", machine_cores=2) == "2g"
    assert local_heap_for("local[*]", machine_cores=12) == "4g"
    assert local_heap_for("local[3,2]") == "3g"  # local[N, maxFailures]
    assert local_heap_for("local[*, 4]", machine_cores=3) == "3g"
    assert local_heap_for("local-cluster[2,1,2048]") == "4g"  # tasks run in executors
    assert local_heap_for("yarn") is None and local_heap_for("spark://h:7077") is None


def test_a_local_master_runs_its_tasks_on_the_cores_it_names() -> None:
    assert local_cores("local") == 1 and local_cores("local[2]") == 2
    assert local_cores("local[3,2]") == 3 and local_cores("local[*]", machine_cores=6) == 6
    assert local_cores("local[*, 4]", machine_cores=3) == 3
    assert local_cores("local-cluster[2,1,2048]") is None and local_cores("yarn") is None


def test_the_users_heap_wins_over_the_heap_per_core(monkeypatch, capsys) -> None:
    """REBALANCE_AUDIT_DRIVER_MEMORY, for every launch; `python -m jobs.sizing MASTER`
    prints the same heap for spark-submit.sh."""
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert launcher_heap("local[2]") == "2g" and launcher_heap("yarn") is None
    assert main(["local[3]"]) == 0 and capsys.readouterr().out == "3g\n"
    assert main(["yarn"]) == 0 and capsys.readouterr().out == ""
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", "")  # empty: as if unset
    assert launcher_heap("local[2]") == "2g"
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", "5g")
    assert launcher_heap("local[2]") == "5g" and launcher_heap("local[16]") == "5g"
    assert main(["local[2]"]) == 0 and capsys.readouterr().out == "5g\n"


def test_the_inputs_largest_file_raises_a_local_heap_within_the_bounds(monkeypatch) -> None:
    """A task reads at least a Parquet row group: the heap leaves every core's task room
    for the largest file's rows (jobs.sizing, measured on the benchmark's 100M inputs)."""
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert local_heap_for("local[2]", largest_file_rows=3_137_288) == "4g"  # 100M spilled on 2g
    assert local_heap_for("local[2]", largest_file_rows=315_044) == "2g"  # 10M: no spill on 2g
    assert local_heap_for("local[2]", largest_file_rows=None) == "2g"  # unknown: per core
    assert local_heap_for("local[2]", largest_file_rows=0) == "2g"
    assert local_heap_for("local[1]", largest_file_rows=3_137_288) == "2g"  # one task's share
    assert local_heap_for("local[2]", largest_file_rows=50_000_000) == "4g"  # at most 4g
    assert local_heap_for("local[16]", largest_file_rows=315_044) == "4g"
    assert local_heap_for("local-cluster[2,1,2048]", largest_file_rows=10**8) == "4g"
    assert local_heap_for("yarn", largest_file_rows=10**8) is None
    # the share each task gets: (heap - 300 MB) x 0.6 / cores, in whole gigabytes
    assert heap_gb_for_file_rows(3_137_288, 2) == 4 and heap_gb_for_file_rows(315_044, 2) == 1
    assert heap_gb_for_file_rows(1_718_000, 2) == 2 and heap_gb_for_file_rows(1_719_000, 2) == 3
    assert launcher_heap("local[2]", 3_137_288) == "4g"
    assert tasks_heap("local[2]", 3_137_288) == "4g"
    assert tasks_heap("local-cluster[2,1,2048]", 3_137_288) is None
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", "3g")  # the user's heap wins
    assert launcher_heap("local[2]", 3_137_288) == "3g"
