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
    InputSize,
    input_size,
    main,
    new_jvm_options,
)
from jobs.session import DRIVER_MEMORY, LOG4J_CONF, launch_conf
from jobs.sizing import C1_ONLY, SHORT_RUN_INPUT_ROWS


def _table(path: Path, rows: int, snapshot: str = "s1") -> str:
    write_deltalake(str(path), pa.table({"snapshot_id": [snapshot] * rows,
                                         "queue_id": list(range(rows))}),
                    partition_by=["snapshot_id"], mode="append")
    return str(path)


def test_the_estimate_is_the_inputs_rows_from_their_logs(tmp_path: Path) -> None:
    q, m = _table(tmp_path / "q", 30), _table(tmp_path / "m", 7)
    o = _table(tmp_path / "o", 12)
    assert input_size(AuditConfig(queues=q, members=m)) == (37, 30)
    assert input_size(AuditConfig(queues=q, members=m, offsets=o)) == (49, 30)
    # a table that is not there, or not local: its rows unknown, so the JVM's default; the
    # known tables still bound their own tasks
    assert input_size(AuditConfig(queues=q, members=str(tmp_path / "none"))) == (None, 30)
    assert input_size(AuditConfig(queues="s3://b/q", members=m)) == (None, 7)
    assert input_size(AuditConfig(queues="s3://b/q", members="s3://b/m")) == (None, None)


def test_a_run_limited_to_snapshots_counts_only_their_rows(tmp_path: Path) -> None:
    """The rows, and the largest file's, which bound what one task reads (a Parquet row
    group is not split), of the run's snapshots."""
    q = _table(tmp_path / "q", 30)
    _table(tmp_path / "q", 500, snapshot="s2")
    m = _table(tmp_path / "m", 7)
    assert input_size(AuditConfig(queues=q, members=m)) == (537, 500)
    assert input_size(AuditConfig(queues=q, members=m, snapshots=("s1",))) == (37, 30)
    assert input_size(AuditConfig(queues=q, members=m, snapshots=("s2",))) == (500, 500)
    assert input_size(AuditConfig(queues=q, members=m, snapshots=("none",))) == (0, 0)


def test_the_launcher_is_told_the_heap_a_large_file_asks_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When the launcher chooses the heap and the largest file asks for more than 1g per
    core, the answer names that heap (spark-submit.sh then gives it to spark-submit) and
    a JVM started here gets it too."""
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # launch_conf sets it for a local JVM
    q, m = _table(tmp_path / "q", 30), _table(tmp_path / "m", 7)
    run = ["audit", "--queues", q, "--members", m, "--output", str(tmp_path / "out")]
    main(["--launcher-heap", "local[2]", *run])
    assert capsys.readouterr().out.splitlines() == [C1_ONLY]  # 30 rows: 1g per core
    monkeypatch.setattr("jobs.sizing.BYTES_PER_FILE_ROW", 2**25)  # 1 GiB for 30 rows
    main(["--launcher-heap", "local[2]", *run])
    assert capsys.readouterr().out.splitlines() == [C1_ONLY, "spark.driver.memory=4g"]
    main(run)  # spark-submit's own heap (the user's --driver-memory): not the launcher's
    assert capsys.readouterr().out.splitlines() == [C1_ONLY]
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", "3g")  # the user's heap wins
    main(["--launcher-heap", "local[2]", *run])
    assert capsys.readouterr().out.splitlines() == [C1_ONLY]
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY")
    config = AuditConfig(queues=q, members=m, master="local[2]")
    file_rows = input_size(config).largest_file_rows
    assert launch_conf(None, "local[2]", "", file_rows)[DRIVER_MEMORY] == "4g"
    not_short = InputSize(10**7, file_rows)
    assert new_jvm_options(config, not_short) == "-Xms4g"
    assert new_jvm_options(config, not_short._replace(largest_file_rows=None)) == "-Xms2g"
    assert new_jvm_options(config) == C1_ONLY  # 37 rows: short, no heap committed


def test_each_inputs_log_is_read_once_before_the_jvm(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows and the largest file come from one read of each log, for the launcher's
    answer and for a JVM started here alike."""
    import storage.offline

    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    q, m = _table(tmp_path / "q", 30), _table(tmp_path / "m", 7)
    o = _table(tmp_path / "o", 12)
    reads: list[str] = []
    real = storage.offline._file_records
    monkeypatch.setattr(storage.offline, "_file_records",
                        lambda path, snapshots: reads.append(path) or real(path, snapshots))
    run = ["audit", "--queues", q, "--members", m, "--offsets", o,
           "--output", str(tmp_path / "out")]
    assert main(["--launcher-heap", "local[2]", *run]) == 0
    assert sorted(reads) == sorted([q, m, o])
    reads.clear()
    config = AuditConfig(queues=q, members=m, offsets=o, master="local[2]")
    assert input_size(config) == InputSize(49, 30)
    assert sorted(reads) == sorted([q, m, o])
    assert capsys.readouterr().out.splitlines() == [C1_ONLY]


def test_a_run_spark_submit_started_reads_no_input_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under spark-submit the JVM is running (the launcher read the logs to size it), so
    `jobs.audit.run` does not read them again for a heap and options nothing would take;
    from plain Python it reads each input's log once."""
    import jobs.audit
    import storage.offline

    q, m = _table(tmp_path / "q", 30), _table(tmp_path / "m", 7)
    reads: list[str] = []
    real = storage.offline._file_records
    monkeypatch.setattr(storage.offline, "_file_records",
                        lambda path, snapshots: reads.append(path) or real(path, snapshots))
    started: list[dict] = []

    class Started(Exception):
        pass

    def build_session(**kwargs):
        started.append(kwargs)
        raise Started

    monkeypatch.setattr(jobs.audit, "build_session", build_session)
    config = AuditConfig(queues=q, members=m, master="local[2]",
                         output=str(tmp_path / "out"))
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    with pytest.raises(Started):
        jobs.audit.run(config)
    assert reads == []
    assert (started[0]["java_options"], started[0]["largest_file_rows"]) == ("", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT")
    with pytest.raises(Started):
        jobs.audit.run(config)
    assert sorted(reads) == sorted([q, m]) and started[1]["largest_file_rows"] == 30


def test_the_demo_is_estimated_from_its_group_count() -> None:
    assert input_size(AuditConfig()) == (300 * DEMO_ROWS_PER_GROUP, None)  # no file bound
    assert input_size(AuditConfig(demo_groups=0)).rows == DEMO_ROWS_PER_GROUP
    big = AuditConfig(demo_groups=SHORT_RUN_INPUT_ROWS // DEMO_ROWS_PER_GROUP + 1)
    assert input_size(big).rows > SHORT_RUN_INPUT_ROWS


def test_the_launcher_is_told_the_options_or_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert main(["audit", "--output", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == C1_ONLY  # the demo is short
    main(["audit", "--demo-groups", "50000"])
    assert capsys.readouterr().out.strip() == ""
    # the launcher chose the heap: a run that is not short commits it at start
    main(["--launcher-heap", "local[2]", "audit", "--demo-groups", "50000"])
    assert capsys.readouterr().out.strip() == "-Xms2g"
    main(["--launcher-heap", "local[2]", "audit", "--output", str(tmp_path / "out")])
    assert capsys.readouterr().out.strip() == C1_ONLY
    main(["--launcher-heap", "local-cluster[2,1,2048]", "audit", "--demo-groups", "50000"])
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
    logs = f"-Dlog4j2.configurationFile=file:{LOG4J_CONF}"
    main(["--launcher-heap", "local[2]", "audit", "--config", str(config),
          "--demo-groups", "50000"])
    assert capsys.readouterr().out.splitlines() == [
        "", "spark.driver.memory=7g", f"spark.driver.extraJavaOptions={logs} -Dx=1 -Dy=2"]
    # the config's driver options would replace the launcher's: they come merged
    main(["audit", "--config", str(config), "--output", str(tmp_path / "out")])
    assert capsys.readouterr().out.splitlines() == [
        C1_ONLY, "spark.driver.memory=7g",
        f"spark.driver.extraJavaOptions={logs} -Dx=1 -Dy=2 {C1_ONLY}"]
    # ... except where the user's name one of their kind
    config.write_text("spark:\n  conf:\n    spark.driver.extraJavaOptions: "
                      "-Dlog4j2.configurationFile=mine -XX:-TieredCompilation -Xms1g\n")
    main(["--launcher-heap", "local[2]", "audit", "--config", str(config),
          "--demo-groups", "50000"])
    assert capsys.readouterr().out.splitlines() == [
        "-Xms2g", "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=mine "
        "-XX:-TieredCompilation -Xms1g"]


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


def test_what_the_config_file_or_a_blank_path_flag_gets_wrong_starts_no_jvm(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A config file that is not UTF-8 raised UnicodeDecodeError, which the launcher took
    for the run's to say: the JVM started, then a traceback. A blank path flag ran the
    demo, or a run without lag and without its warning."""
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("output: /tmp/caf\u00e9\n".encode("latin-1"))
    twice = tmp_path / "twice.yaml"
    twice.write_text(f"output: {tmp_path / 'a'}\noutput: {tmp_path / 'b'}\n")
    out = str(tmp_path / "out")
    for argv in (["audit", "--config", str(latin)], ["audit", "--config", str(tmp_path)],
                 ["audit", "--config", str(twice)], ["audit", "--config", ""],
                 ["audit", "--queues", "", "--members", "", "--output", out],
                 ["audit", "--queues", "q", "--members", "m", "--offsets", "", "--output", out],
                 ["audit", "--buckets", str(10**20), "--output", out]):
        assert main(argv) == NOT_RUNNABLE, argv
        assert capsys.readouterr().out == "", argv


@pytest.mark.parametrize("heap", ["lots", "2gb", "4096", "-1g", " 2g"])
def test_a_driver_memory_variable_that_is_no_jvm_size_is_exit_2_before_any_jvm(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, heap: str) -> None:
    """REBALANCE_AUDIT_DRIVER_MEMORY=lots reached the JVM: "Invalid maximum heap size",
    exit 1. The launcher lets jobs.cli say it (exit 2), and so does `jobs.sizing`'s
    answer to spark-submit.sh."""
    import jobs.audit
    from jobs import cli, sizing

    def no_run(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(jobs.audit, "run", no_run)
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", heap)
    out = ["audit", "--output", str(tmp_path / "out")]
    assert main(["--launcher-heap", "local[2]", *out]) == NOT_RUNNABLE
    assert main(out) == NOT_RUNNABLE
    assert capsys.readouterr().out == ""
    assert cli.main(out) == 2
    assert f"REBALANCE_AUDIT_DRIVER_MEMORY={heap!r} is not a JVM heap size" in (
        capsys.readouterr().err)
    assert sizing.main(["local[2]"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "REBALANCE_AUDIT_DRIVER_MEMORY" in captured.err
    for size in ("512m", "2g", "4096M", "1T"):
        monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", size)
        assert sizing.launcher_heap("local[2]") == size
