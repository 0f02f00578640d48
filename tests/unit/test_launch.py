"""The launcher's question before the JVM starts: how many rows will the run read?"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from jobs.config import AuditConfig
from jobs.launch import (
    DEMO_ROWS_PER_GROUP,
    NOT_RUNNABLE,
    input_row_estimate,
    main,
    new_jvm_options,
)
from jobs.sizing import C1_ONLY, SHORT_RUN_INPUT_ROWS


def _table(path: Path, rows: int, snapshot: str = "s1") -> str:
    write_deltalake(str(path), pa.table({"snapshot_id": [snapshot] * rows,
                                         "queue_id": list(range(rows))}),
                    partition_by=["snapshot_id"], mode="append")
    return str(path)


def test_the_estimate_is_the_inputs_rows_from_their_logs(tmp_path: Path) -> None:
    q, m = _table(tmp_path / "q", 30), _table(tmp_path / "m", 7)
    o = _table(tmp_path / "o", 12)
    assert input_row_estimate(AuditConfig(queues=q, members=m)) == 37
    assert input_row_estimate(AuditConfig(queues=q, members=m, offsets=o)) == 49
    # a table that is not there, or not local: unknown, so the JVM's default
    assert input_row_estimate(AuditConfig(queues=q, members=str(tmp_path / "none"))) is None
    assert input_row_estimate(AuditConfig(queues="s3://b/q", members=m)) is None


def test_a_run_limited_to_snapshots_counts_only_their_rows(tmp_path: Path) -> None:
    q = _table(tmp_path / "q", 30)
    _table(tmp_path / "q", 500, snapshot="s2")
    m = _table(tmp_path / "m", 7)
    assert input_row_estimate(AuditConfig(queues=q, members=m)) == 537
    assert input_row_estimate(AuditConfig(queues=q, members=m, snapshots=("s1",))) == 37
    assert input_row_estimate(AuditConfig(queues=q, members=m, snapshots=("s2",))) == 500
    assert input_row_estimate(AuditConfig(queues=q, members=m, snapshots=("none",))) == 0


def test_the_demo_is_estimated_from_its_group_count() -> None:
    assert input_row_estimate(AuditConfig()) == 300 * DEMO_ROWS_PER_GROUP
    assert input_row_estimate(AuditConfig(demo_groups=0)) == DEMO_ROWS_PER_GROUP
    big = AuditConfig(demo_groups=SHORT_RUN_INPUT_ROWS // DEMO_ROWS_PER_GROUP + 1)
    assert input_row_estimate(big) > SHORT_RUN_INPUT_ROWS


def test_the_launcher_is_told_the_options_or_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert main(["audit", "--output", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == C1_ONLY  # the demo is short
    main(["audit", "--demo-groups", "100000"])
    assert capsys.readouterr().out.strip() == ""
    # the launcher chose the heap: a run that is not short commits it at start
    main(["--launcher-heap", "local[2]", "audit", "--demo-groups", "100000"])
    assert capsys.readouterr().out.strip() == "-Xms2g"
    main(["--launcher-heap", "local[2]", "audit", "--output", str(tmp_path / "out")])
    assert capsys.readouterr().out.strip() == C1_ONLY
    main(["--launcher-heap", "local-cluster[2,1,2048]", "audit", "--demo-groups", "100000"])
    assert capsys.readouterr().out.strip() == ""  # its driver runs no task
    assert main(["report", "--output", str(tmp_path)]) == 0  # another job: nothing to say
    assert capsys.readouterr().out == ""
    # help, a mistake in the flags, the config file or the output root: nothing to start a
    # JVM for (the launcher lets jobs.cli print the help or the message)
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("strict: maybe\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for argv in (["audit", "--help"], ["audit", "--queues", "only-one"], ["audit", "--nope"],
                 ["audit", "--config", str(bad_yaml)], ["audit", "--output", str(a_file)],
                 ["audit", "--snapshot", ""], ["audit", "--run-id", " "]):
        assert main(argv) == NOT_RUNNABLE, argv
        assert capsys.readouterr().out == "", argv


def test_the_launcher_is_told_the_config_files_start_only_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A line `key=value` after the options for each setting only a JVM not yet started
    takes; a heap of the config's own is not the launcher's to commit."""
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    config = tmp_path / "c.yaml"
    config.write_text("spark:\n  conf:\n    spark.driver.memory: 7g\n"
                      "    spark.driver.extraJavaOptions: -Dx=1 -Dy=2\n"
                      "    spark.executor.memory: 3g\n")
    main(["--launcher-heap", "local[2]", "audit", "--config", str(config),
          "--demo-groups", "100000"])
    assert capsys.readouterr().out.splitlines() == [
        "", "spark.driver.memory=7g", "spark.driver.extraJavaOptions=-Dx=1 -Dy=2"]
    main(["audit", "--config", str(config), "--output", str(tmp_path / "out")])
    assert capsys.readouterr().out.splitlines() == [
        C1_ONLY, "spark.driver.memory=7g", "spark.driver.extraJavaOptions=-Dx=1 -Dy=2"]


def test_a_jvm_started_here_commits_only_the_heap_launch_conf_gives_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    large = SHORT_RUN_INPUT_ROWS // DEMO_ROWS_PER_GROUP + 1
    assert new_jvm_options(AuditConfig(demo_groups=large, master="local[2]")) == "-Xms2g"
    assert new_jvm_options(AuditConfig(master="local[2]")) == C1_ONLY  # the demo is short
    users = AuditConfig(demo_groups=large, master="local[2]",
                        spark_conf={"spark.driver.memory": "8g"})
    assert new_jvm_options(users) == ""
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # spark-submit started the JVM
    assert new_jvm_options(AuditConfig(demo_groups=large, master="local[2]")) == ""
