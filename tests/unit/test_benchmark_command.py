"""The benchmark's parent passes its settings on to the children that measure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.run import _metric_total, arguments, child_command, fastest, ratios, table
from jobs.config import AuditConfig


def _child_args(argv: list[str]):
    parent = arguments().parse_args(argv)
    cmd = child_command("spark", Path("/data/1M/manifest.json"), parent, Path("/tmp/out.json"),
                        parts=8)
    assert cmd[:3] == [sys.executable, "-m", "benchmarks.run"]
    return arguments().parse_args(cmd[3:])


def test_the_children_measure_with_the_parents_what_if_setting() -> None:
    child = _child_args(["--sizes", "1M", "--what-if", "off", "--floor-runs", "1",
                         "--audit-runs", "1", "--conf", "spark.driver.memory=8g",
                         "--keep-output"])
    assert (child.child, child.what_if, child.floor_runs, child.audit_runs, child.conf,
            child.keep_output) == ("spark", "off", 1, 1, ["spark.driver.memory=8g"], True)
    assert (child.shuffle_partitions, child.buckets, child.work) == (8, 8, "/data/1M")


def test_by_default_the_benchmark_audits_as_the_job_does() -> None:
    assert _child_args(["--sizes", "1M"]).what_if == AuditConfig().what_if


def test_by_default_the_audit_and_the_io_floor_are_each_the_best_of_two_runs() -> None:
    """The floor's faster run (cold or warm JVM) against one audit run favoured the
    floor; both sides now take the faster of a run after a cold start and a warm one."""
    child = _child_args(["--sizes", "1M"])
    assert (child.floor_runs, child.audit_runs) == (2, 2)


@pytest.mark.parametrize(("text", "value"), [
    ("total (min, med, max (stageId: taskId))\n2.3 m (1.2 s, 4.0 s, 9.9 s (stage 3.0: task 7))",
     138.0),
    ("total (min, med, max)\n24.0 s (2.2 s, 3.0 s, 5.1 s)", 24.0),
    ("total (min, med, max)\n850 ms (1 ms, 2 ms, 9 ms)", 0.85),
    ("total (min, med, max)\n1.02 h (1.0 m, 2.0 m, 3.0 m)", 3672.0),
    ("total (min, med, max)\n2.0 GiB (1.0 MiB, 2.0 MiB, 3.0 MiB)", 2048.0),
    ("1,234", 1234.0),
])
def test_spark_metrics_are_read_in_seconds_and_mib(text: str, value: float) -> None:
    """Spark writes minutes as "m": read as seconds they undercounted a long metric 60×."""
    assert _metric_total(text) == pytest.approx(value)


def test_the_ratio_divides_the_faster_audit_and_shows_the_first_beside_it() -> None:
    first = {"total": 60.0, "session": 1.0}
    kept = {"total": 50.0, "session": 1.0}
    cpu = {"jvm_cpu_s": 10.0, "python_workers_cpu_s": 5.0, "driver_python_cpu_s": 1.0}
    sizes = {"1M": {"spark": {
        "io_floor": {"total": 20.0, "cpu": cpu},
        "audit": {"timings": kept, "cpu": cpu,
                  "runs": [{"timings": first}, {"timings": kept}]}}}}
    row = ratios(sizes)["1M"]
    assert (row["job_over_io_floor"], row["first_audit_over_io_floor"]) == (2.45, 2.95)
    sizes["1M"]["spark"]["audit"]["runs"] = [{"timings": kept}]
    assert "first_audit_over_io_floor" not in ratios(sizes)["1M"]


def _metered_tree(folder: Path, child: str) -> dict:
    """CpuMeter's figures for a stand-in driver (a shell) whose one child runs the script
    `child`: the meter follows the root's descendants, so the root is a process of the
    test's own (under pytest the shared Spark session's JVM and workers are children of
    the test process)."""
    import subprocess
    import time

    from benchmarks.run import CpuMeter

    folder.mkdir()
    (folder / "child.sh").write_text(child)
    done = folder / "done"
    driver = subprocess.Popen(["bash", "-c", f"sleep 0.2; bash {folder / 'child.sh'}; "
                                             f"touch {done}; sleep 30"])
    try:
        with CpuMeter(driver.pid, interval=0.1) as meter:
            while not done.exists():
                time.sleep(0.05)
    finally:
        driver.kill()
        driver.wait()
    return meter.result


# ~0.6 s of CPU here, then a second alive and idle: the meter samples every 0.1 s, and in
# one full CI run (stop 79) it saw no sample of a stand-in that idled 0.3 s. `; true` keeps
# bash from exec'ing its last command in place (a process that execs into another program
# is no longer the executor it was)
_BUSY = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 1.0; true"


def test_executor_jvms_are_measured_apart_from_the_python_workers(tmp_path: Path) -> None:
    """With a `local-cluster` master the executors' JVMs are children of the driver's: their
    CPU and memory are the executors', not the Python workers'. A busy child named as an
    executor stands in for one (the meter reads command lines, not JVMs)."""
    result = _metered_tree(tmp_path / "executor",
                           f"exec -a CoarseGrainedExecutorBackend bash -c '{_BUSY}'\n")
    assert result["executor_jvms_cpu_s"] >= 0.3
    assert result["executor_jvm_peak_rss_mb"] > 0
    assert result["python_workers_cpu_s"] < 0.2

    plain = _metered_tree(tmp_path / "plain", f"{_BUSY}\n")
    assert "executor_jvms_cpu_s" not in plain
    assert plain["python_workers_cpu_s"] >= 0.3


def test_the_fastest_run_is_kept_with_every_runs_seconds_beside_it() -> None:
    runs = [{"total": 30.0, "spark": {"stages": 9}, "cpu": 1}, {"total": 20.0, "spark": {}}]
    kept = fastest(runs, lambda r: r["total"])
    assert kept == {"total": 20.0, "spark": {}, "runs_s": [30.0, 20.0],
                    "runs": [{"total": 30.0, "cpu": 1}, {"total": 20.0}]}


def _sized(floor_jvm: float, audit_jvm: float, errors: dict | None = None) -> dict:
    cpu = {"jvm_cpu_s": 10.0, "python_workers_cpu_s": 5.0, "driver_python_cpu_s": 1.0}
    spark = {"io_floor": {"total": 20.0, "cpu": cpu},
             "audit": {"timings": {"total": 30.0}, "cpu": cpu},
             "memory": {"jvm_peak_after_io_floor_mb": floor_jvm,
                        "jvm_driver_peak_mb": audit_jvm, "python_driver_peak_mb": 200.0}}
    return {"spark": {**spark, "errors": errors} if errors else spark}


def test_the_audits_jvm_is_set_against_the_peak_spark_reached_reading_and_writing() -> None:
    """In local mode the audit runs in the JVM the IO floor grew: its peak over the floor's
    is what the job adds to Spark's own read and write, and the floor's 10M ÷ 1M is how
    much Spark's own grows the same JVM."""
    out = ratios({"1M": _sized(2000.0, 2200.0), "10M": _sized(4600.0, 4646.0)})
    assert (out["1M"]["audit_jvm_over_io_floor_jvm"],
            out["10M"]["audit_jvm_over_io_floor_jvm"]) == (1.1, 1.01)
    assert out["driver_memory"] == {"python_10M_over_1M": 1.0, "jvm_10M_over_1M": 2.11,
                                    "io_floor_jvm_10M_over_1M": 2.3}
    # without the floor's first run the JVM's peak is the session's, not Spark's read+write
    out = ratios({"1M": _sized(400.0, 2200.0, errors={"io_floor_1": {}}),
                  "10M": _sized(4600.0, 4646.0)})
    assert "audit_jvm_over_io_floor_jvm" not in out["1M"]
    assert "io_floor_jvm_10M_over_1M" not in out["driver_memory"]


def test_the_printed_ratios_keep_two_decimals() -> None:
    """A target is a ratio like 2.0: 2.04 printed with one decimal read as met."""
    results = {"sizes": {"10M": _sized(4600.0, 4646.0)}, "load_before": [0.0],
               "load_after": [0.0], "cores": 2}
    results["ratios"] = ratios(results["sizes"])
    results["ratios"]["10M"]["job_over_io_floor"] = 2.04
    lines = table(results).splitlines()
    row = lines[lines.index("ratios") + 2].split()  # after the column names
    assert row[:3] == ["10M", "2.04", "-"]  # size, job/floor, 1st/floor (one run)


def test_a_results_file_that_is_not_there_or_not_ours_is_told_not_raised(tmp_path) -> None:
    """`--report` names a file under benchmarks/results/, which is not in the repository:
    on a fresh clone the README's example file is missing, and that is said plainly."""
    import subprocess

    from benchmarks.run import unreadable_results

    missing = tmp_path / "20261203T230356Z.json"
    assert "no such file" in unreadable_results(missing)
    garbled = tmp_path / "garbled.json"
    garbled.write_text("{not json")
    assert "not a results file" in unreadable_results(garbled)
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"rows": 3}')
    assert "no 'sizes', 'load_before', 'load_after'" in unreadable_results(foreign)
    ours = tmp_path / "ours.json"
    ours.write_text('{"sizes": {}, "load_before": [0, 0, 0], "load_after": [0, 0, 0]}')
    assert unreadable_results(ours) is None

    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--report", str(missing)],
                          capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert done.returncode == 1
    assert done.stderr.startswith(f"--report {missing}: no such file")
    assert "Traceback" not in done.stderr


def test_the_slowest_stages_name_the_job_the_run_described() -> None:
    """Each stage carries its job's description ("audit: write assignments", as the run
    sets it), and the figures add up per description too: a write stage's table is read
    off the result file, not guessed from commit order. The payloads have the shape of
    Spark 4.2's REST API answers (/jobs, /stages, /sql) for a job group."""
    from benchmarks.run import SparkUI, _parse_time

    def at(second: int) -> str:
        return f"2026-12-04T12:00:{second:02d}.000GMT"

    jobs = [{"jobId": 0, "jobGroup": "audit", "stageIds": [0], "submissionTime": at(0),
             "name": "count at steps.py:1", "description": "audit: read queues"},
            {"jobId": 1, "jobGroup": "audit", "stageIds": [1, 2], "submissionTime": at(5),
             "name": "save at write.py:2", "description": "audit: write assignments"},
            {"jobId": 2, "jobGroup": "audit", "stageIds": [2, 3], "submissionTime": at(9),
             "name": "collect at summary.py:3"},
            {"jobId": 3, "jobGroup": "io_floor", "stageIds": [4], "submissionTime": at(20),
             "name": "save at run.py:4", "description": "floor"}]

    def stage(sid: int, start: int, end: int, tasks: int, status: str = "COMPLETE") -> dict:
        return {"stageId": sid, "status": status, "submissionTime": at(start),
                "completionTime": at(end), "numCompleteTasks": tasks,
                "executorRunTime": 1000 * (end - start), "name": f"stage {sid}"}

    stages = [stage(0, 0, 4, 2), stage(1, 5, 6, 1), stage(2, 6, 9, 3), stage(3, 9, 10, 1),
              stage(4, 20, 30, 9)]

    class Recorded(SparkUI):
        def __init__(self) -> None:
            self.base = ""

        def _get(self, path: str):
            return {"/jobs": jobs, "/stages": stages}.get(path, [])

    t0 = _parse_time(at(0))
    summary = Recorded().summary("audit", [("read", t0, t0 + 4.5), ("write", t0 + 4.5, t0 + 9.5)])
    assert [(s["stage"], s["step"], s["job"], s["wall_s"]) for s in summary["slowest_stages"]] \
        == [(0, "read", "audit: read queues", 4.0),
            (2, "write", "audit: write assignments", 3.0),
            (1, "write", "audit: write assignments", 1.0),
            (3, "write", "collect at summary.py:3", 1.0)]  # no description: the call site
    per = summary["per_job_description"]
    assert (per["audit: write assignments"]["stages"], per["audit: write assignments"]["tasks"],
            per["audit: write assignments"]["jobs"]) == (2, 4, 1)
    assert set(per) == {"audit: read queues", "audit: write assignments",
                        "collect at summary.py:3"}  # the other group's job is not counted
