"""The benchmark's parent passes its settings on to the children that measure."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.run import arguments, child_command
from jobs.config import AuditConfig


def _child_args(argv: list[str]):
    parent = arguments().parse_args(argv)
    cmd = child_command("spark", Path("/data/1M/manifest.json"), parent, Path("/tmp/out.json"),
                        parts=8)
    assert cmd[:3] == [sys.executable, "-m", "benchmarks.run"]
    return arguments().parse_args(cmd[3:])


def test_the_children_measure_with_the_parents_what_if_setting() -> None:
    child = _child_args(["--sizes", "1M", "--what-if", "off", "--floor-runs", "1",
                         "--conf", "spark.driver.memory=8g", "--keep-output"])
    assert (child.child, child.what_if, child.floor_runs, child.conf, child.keep_output) == (
        "spark", "off", 1, ["spark.driver.memory=8g"], True)
    assert (child.shuffle_partitions, child.buckets, child.work) == (8, 8, "/data/1M")


def test_by_default_the_benchmark_audits_as_the_job_does() -> None:
    assert _child_args(["--sizes", "1M"]).what_if == AuditConfig().what_if
