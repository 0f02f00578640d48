"""The launcher as a user runs it: a separate spark-submit process, exit codes, messages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from jobs.cli import JOBS, main, parse_args
from jobs.session import SESSION_DEFAULTS
from rebalance_udfs.spark.arrow import GROUP_NOT_AUDITED

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _launch(*args: str, timeout: int = 900, **env_extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REBALANCE_AUDIT_PYTHON": sys.executable, **env_extra}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return subprocess.run([str(ROOT / "spark-submit.sh"), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


def test_demo_run_writes_the_tables_and_flags_the_seed_skew(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = _launch("audit", "--output", str(out), "--demo-groups", "10",
                   "--conf", "spark.sql.shuffle.partitions=4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Groups that need attention" in proc.stdout
    # the run's own progress, one line per step; no Spark stage bars, no big-task warnings
    said = proc.stdout + proc.stderr
    for step in ("read ", "validate ", "assign ", "report group_balance ", "write assignments ",
                 "published "):
        assert step in said, step
    assert "[Stage" not in said and "very large size" not in said
    # nor Spark's warnings about what the job does on purpose (jobs.jvm_logs): cut plan
    # texts (27 in the default demo before) and released local checkpoints
    assert "Truncated the string representation" not in said
    assert "was locally checkpointed" not in said
    for table in ("assignments", "consumer_load", "group_balance", "rejects", "rebalance_churn",
                  "strategy_comparison"):
        assert DeltaTable(str(out / table)).version() >= 0
    balance = DeltaTable(str(out / "group_balance")).to_pandas()
    seed = balance[(balance["consumer_group"] == "GID_seed_multitopic_skew_2x2q_4c")
                   & balance["topic"].isna()]
    assert len(seed) == 3  # every demo snapshot
    assert all("MULTI_TOPIC_SKEW" in f for f in seed["findings"])
    load = DeltaTable(str(out / "consumer_load")).to_pandas()
    idle = load[(load["consumer_group"] == "GID_seed_multitopic_skew_2x2q_4c") & load["idle"]]
    assert set(idle["client_id"]) == {"consumer-3", "consumer-4"}
    churn = DeltaTable(str(out / "rebalance_churn")).to_pandas()
    assert set(churn["snapshot_id"]) == {"demo-0002", "demo-0003"}  # each vs the one before
    assert (churn["clients_joined"].str.len() > 0).any()
    rejects = DeltaTable(str(out / "rejects")).to_pandas()
    # the demo's bad row (a misspelt strategy) and, its group left with no usable member,
    # that group's offsets rows
    by_table = rejects.groupby("source_table")["reason"]
    assert set(by_table.get_group("members").str.split(" ").str[0]) == {"unknown"}
    assert set(by_table.get_group("offsets")) == {GROUP_NOT_AUDITED}
    assert set(rejects["row_json"].str.contains('"consumer_group":"GID_typo"')) == {True}


def _stand_in_spark(tmp_path: Path) -> str:
    """A SPARK_HOME whose spark-submit prints what it is given, one per line: no JVM."""
    bin_ = tmp_path / "spark" / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "spark-submit").write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    (bin_ / "spark-submit").chmod(0o755)
    return str(tmp_path / "spark")


def test_the_launcher_passes_the_users_options_to_spark_submit(tmp_path: Path) -> None:
    pool = "spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL"
    proc = _launch("--conf", f"{pool}=jemalloc", "audit", "--output", str(tmp_path / "out"),
                   SPARK_HOME=_stand_in_spark(tmp_path))
    assert proc.returncode == 0, proc.stderr
    given = proc.stdout.splitlines()
    assert f"{pool}=jemalloc" in given
    # the job's defaults are the job's (jobs.session), not the launcher's
    assert [a for a in given if a.split("=", 1)[0] in SESSION_DEFAULTS] == [f"{pool}=jemalloc"]
    assert given[-4:] == [str(ROOT / "jobs" / "cli.py"), "audit", "--output",
                          str(tmp_path / "out")]


def test_help_and_mistakes_seen_before_spark_start_no_jvm(tmp_path: Path) -> None:
    """`audit --help`, and flags, a config file or an output root the run rejects, are
    answered by the job itself (jobs.launch, jobs.cli) without spark-submit: seconds, not a
    JVM's start."""
    home = _stand_in_spark(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text("assign:\n  bukets: 3\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    cases = {("audit", "--help"): (0, "usage: spark-submit.sh audit"),
             ("audit", "--queues", "only-one"): (2, "--members / inputs.members is not"),
             ("audit", "--config", str(config)): (2, "unknown setting assign.bukets"),
             ("audit", "--output", str(a_file)): (2, "is a file, not a folder"),
             # spark-submit's --conf and --queue read as the job's --config and --queues
             # shortened: spark-submit printed its usage, or took a path as a YARN queue
             ("audit", "--conf", str(config)): (
                 2, f"--conf is spark-submit's KEY=VALUE, not '{config}': the audit's "
                    "settings file is --config"),
             ("audit", "--queue=/data/q", "--members", "m"): (
                 2, "--queue is spark-submit's YARN queue, and '/data/q' is a path: the "
                    "queues table is --queues"),
             # YARN without the cluster's configuration: a Java stack trace, exit 1
             ("--master", "yarn", "audit", "--output", str(tmp_path / "y")): (
                 2, "--master yarn needs the cluster's Hadoop configuration: set "
                    "HADOOP_CONF_DIR (or YARN_CONF_DIR)")}
    for args, (code, said) in cases.items():
        proc = _launch(*args, SPARK_HOME=home, timeout=120, HADOOP_CONF_DIR="",
                       YARN_CONF_DIR="")
        assert proc.returncode == code and said in proc.stdout + proc.stderr, args
        assert str(ROOT / "jobs" / "cli.py") not in proc.stdout, args  # no spark-submit
        assert "Traceback" not in proc.stdout + proc.stderr
    # a run the launcher cannot judge (an input that is not there) goes to spark-submit
    proc = _launch("audit", "--queues", str(tmp_path / "q"), "--members", str(tmp_path / "m"),
                   "--output", str(tmp_path / "out"), SPARK_HOME=home, timeout=120)
    assert proc.returncode == 0 and str(ROOT / "jobs" / "cli.py") in proc.stdout


def test_spark_options_before_a_job_that_needs_no_spark_start_no_jvm(tmp_path: Path) -> None:
    """capture, report and a job's --help after spark-submit options (`--master yarn` on
    a line kept for audits) run without spark-submit, saying its options are not used:
    they went to spark-submit, whose YARN client failed in Java."""
    home = _stand_in_spark(tmp_path)
    cases = {("--master", "yarn", "report", "--output", str(tmp_path)):
             (2, "report starts no Spark", "no output tables here"),
             ("--master", "yarn", "--conf", "a=b", "audit", "--help"):
             (0, "audit --help starts no Spark", "usage: spark-submit.sh audit"),
             ("--master", "yarn", "capture", "import", "--help"):
             (0, "capture --help starts no Spark", "usage: spark-submit.sh capture import")}
    for args, (code, note, said) in cases.items():
        proc = _launch(*args, SPARK_HOME=home, JAVA_HOME="/nonexistent/no-jvm", timeout=120)
        both = proc.stdout + proc.stderr
        assert proc.returncode == code and note in proc.stderr and said in both, (args, both)
        assert str(ROOT / "jobs" / "cli.py") not in proc.stdout, args  # no spark-submit
    # with no spark option: no note
    proc = _launch("audit", "--help", SPARK_HOME=home, timeout=120)
    assert proc.returncode == 0 and "starts no Spark" not in proc.stderr


def test_the_launcher_sizes_a_local_jvms_jit_and_heap_from_the_inputs(tmp_path: Path) -> None:
    """C1 alone for a short local run (jobs.launch); a larger one commits the heap the
    launcher chose at start (-Xms); a heap of the user's, or a driver that runs no task,
    keeps the JVM's default."""
    home = _stand_in_spark(tmp_path)
    out = str(tmp_path / "out")

    def driver_options(*args: str, **env: str) -> list[str]:
        proc = _launch(*args, SPARK_HOME=home, **env)
        assert proc.returncode == 0, proc.stderr
        key = "spark.driver.extraJavaOptions="
        return [a[len(key):] for a in proc.stdout.splitlines() if a.startswith(key)]

    logs = f"-Dlog4j2.configurationFile=file:{ROOT / 'conf' / 'log4j2.properties'}"
    large = ("audit", "--output", out, "--demo-groups", "50000")
    assert driver_options("audit", "--output", out) == [
        f"{logs} -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"]
    assert driver_options("--master", "local[2]", *large) == [f"{logs} -Xms2g"]
    assert driver_options("--master", "local[2]", *large,
                          REBALANCE_AUDIT_DRIVER_MEMORY="5g") == [f"{logs} -Xms5g"]
    assert driver_options("--master", "local[2]", "--driver-memory", "6g", *large) == [logs]
    assert driver_options("--master", "local-cluster[2,1,1024]", *large) == [logs]
    assert driver_options("--master", "yarn", "audit", "--output", out,
                          HADOOP_CONF_DIR=str(tmp_path)) == [logs]


def test_the_launcher_gives_a_local_driver_a_heap_per_core(tmp_path: Path) -> None:
    """1g per core that runs tasks, 2g-4g (jobs.sizing.local_heap_for); the user's size,
    spark-submit's or REBALANCE_AUDIT_DRIVER_MEMORY, wins; a cluster's driver keeps
    Spark's default."""
    home = _stand_in_spark(tmp_path)
    out = str(tmp_path / "out")

    def heaps(*args: str, **env: str) -> list[str]:
        proc = _launch(*args, "audit", "--output", out, SPARK_HOME=home, **env)
        assert proc.returncode == 0, proc.stderr
        given = proc.stdout.splitlines()
        return [given[i + 1] for i, a in enumerate(given) if a == "--driver-memory"]

    assert heaps("--master", "local[2]") == ["2g"]
    assert heaps("--master", "local[3]") == ["3g"]
    assert heaps("--master", "local[16]") == ["4g"]
    assert heaps() == [f"{min(4, max(2, os.cpu_count() or 1))}g"]  # local[*]
    assert heaps("--master", "local[2]", "--driver-memory", "6g") == ["6g"]
    assert heaps("--master", "local[2]", REBALANCE_AUDIT_DRIVER_MEMORY="5g") == ["5g"]
    assert heaps("--master", "yarn", YARN_CONF_DIR=str(tmp_path)) == []


def test_a_properties_files_driver_settings_are_left_to_it(tmp_path: Path) -> None:
    """spark.driver.memory and extraJavaOptions in the user's --properties-file (or
    spark-defaults.conf) were replaced by the launcher's --driver-memory and --conf, which
    spark-submit ranks above the file: the user's heap and options never applied."""
    home = _stand_in_spark(tmp_path)
    out = str(tmp_path / "out")
    props = tmp_path / "mine.conf"
    props.write_text("spark.driver.memory        5g\n"
                     "spark.driver.extraJavaOptions=-Xss7m\n")

    def given(*args: str, **env: str) -> list[str]:
        proc = _launch(*args, "audit", "--output", out, SPARK_HOME=home, **env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    launched = given("--master", "local[2]", "--properties-file", str(props))
    assert "--driver-memory" not in launched
    assert not [a for a in launched if a.startswith("spark.driver.extraJavaOptions=")]
    (Path(home) / "conf").mkdir()
    (Path(home) / "conf" / "spark-defaults.conf").write_text("spark.driver.memory 5g\n")
    assert "--driver-memory" not in given("--master", "local[2]")
    # a key that only starts like it is another setting: the launcher's heap stays
    (Path(home) / "conf" / "spark-defaults.conf").write_text("spark.driver.memoryOverhead 1g\n")
    launched = given("--master", "local[2]")
    assert launched[launched.index("--driver-memory") + 1] == "2g"
    assert [a for a in launched if a.startswith("spark.driver.extraJavaOptions=")]


def test_the_config_files_driver_settings_reach_spark_submit(tmp_path: Path) -> None:
    """spark-submit starts the driver's JVM before the job reads its config file: a local
    run's spark.driver.memory and other start-only settings of the config's spark.conf go
    to spark-submit (jobs.launch), and the config's heap is the user's: the launcher
    neither chooses one nor commits it; the command line's own settings still win."""
    home = _stand_in_spark(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text("spark:\n  conf:\n    spark.driver.memory: 7g\n"
                      "    spark.driver.extraClassPath: /opt/extra.jar\n"
                      "    spark.driver.extraJavaOptions: -Dx=1\n"
                      "    spark.sql.shuffle.partitions: '12'\n")
    out = str(tmp_path / "out")

    def given(*args: str) -> list[str]:
        proc = _launch(*args, "audit", "--config", str(config), "--output", out,
                       "--demo-groups", "50000", SPARK_HOME=home)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    logs = f"-Dlog4j2.configurationFile=file:{ROOT / 'conf' / 'log4j2.properties'}"
    args = given("--master", "local[2]")
    assert "--driver-memory" not in args
    assert "spark.driver.memory=7g" in args and "spark.driver.extraClassPath=/opt/extra.jar" in args
    # the config's driver options, the last given (spark-submit keeps the last), come
    # merged with the launcher's; no -Xms: the heap is the user's
    options = [a for a in args if a.startswith("spark.driver.extraJavaOptions=")]
    assert options[-1] == f"spark.driver.extraJavaOptions={logs} -Dx=1"
    assert not any(a.startswith("spark.sql.shuffle.partitions") for a in args)  # the job's
    # the command line's --conf comes after the config's, so spark-submit keeps it
    args = given("--master", "local[2]", "--conf", "spark.driver.memory=9g")
    assert args.index("spark.driver.memory=7g") < args.index("spark.driver.memory=9g")


def test_a_large_input_file_gets_the_heap_it_asks_for(tmp_path: Path) -> None:
    """A task reads at least a Parquet row group: when the inputs' largest file (its rows
    in the Delta log) asks for more than 1g per core, spark-submit gets that heap from the
    launcher, committed at start (jobs.sizing.local_heap_for: 3g for 1.8M rows on 2 cores)."""
    home = _stand_in_spark(tmp_path)
    rows = 1_800_000
    queues, members = str(tmp_path / "q"), str(tmp_path / "m")
    write_deltalake(queues, pa.table({"snapshot_id": pa.array(["s1"] * rows),
                                      "queue_id": pa.array(range(rows), pa.int64())}))
    write_deltalake(members, pa.table({"snapshot_id": ["s1"], "client_id": ["c"]}))
    proc = _launch("--master", "local[2]", "audit", "--queues", queues, "--members", members,
                   "--output", str(tmp_path / "out"), SPARK_HOME=home)
    assert proc.returncode == 0, proc.stderr
    args = proc.stdout.splitlines()
    assert "spark.driver.memory=3g" in args and "--driver-memory" not in args
    options = next(a for a in args if a.startswith("spark.driver.extraJavaOptions="))
    assert options.endswith(" -Xms3g")


SHOW_JVM_ARGS = """
from jobs.launch import new_jvm_options
from jobs.config import AuditConfig
from jobs.session import build_session
spark = build_session(master="local[1]", java_options=new_jvm_options(AuditConfig()))
bean = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(bean.getInputArguments().toString())
hotspot = spark._jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
diagnostic = spark._jvm.java.lang.management.ManagementFactory.getPlatformMXBean(hotspot)
print("code cache", diagnostic.getVMOption("ReservedCodeCacheSize").getValue())
"""


def test_a_jvm_started_from_plain_python_runs_as_the_launchers_does(tmp_path: Path) -> None:
    """`jobs.audit.run` starts its JVM as this does: the option, and the launcher's heap
    (2g for local[1]; Spark's default is 1g), reach the JVM itself."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    env.pop("REBALANCE_AUDIT_DRIVER_MEMORY", None)
    proc = subprocess.run([sys.executable, "-c", SHOW_JVM_ARGS], capture_output=True,
                          text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "-XX:TieredStopAtLevel=1" in proc.stdout
    assert "-XX:ReservedCodeCacheSize=240m" in proc.stdout
    assert f"code cache {240 * 2**20}" in proc.stdout  # C1 alone had 48 MB
    assert "-Xmx2g" in proc.stdout


SHOW_CONF = """
from jobs.session import SESSION_DEFAULTS, build_session
conf = build_session(conf={"spark.driver.memory": "3g"}).sparkContext.getConf()
for key in [*SESSION_DEFAULTS, "spark.driver.memory"]:
    print(f"{key}={conf.get(key)}")
"""


def test_a_plain_spark_submit_gets_the_defaults_its_conf_leaves_unset(tmp_path: Path) -> None:
    script = tmp_path / "show_conf.py"
    script.write_text(SHOW_CONF)
    pool = "spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL"
    import pyspark

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable,
           "SPARK_HOME": str(Path(pyspark.__file__).parent)}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    proc = subprocess.run([str(Path(sys.executable).parent / "spark-submit"), "--master",
                           "local[1]", "--driver-memory", "1g", "--conf", f"{pool}=jemalloc",
                           str(script)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    shown = dict(line.split("=", 1) for line in proc.stdout.splitlines()
                 if "=" in line and not line.startswith("warning: "))
    # a heap in the config comes too late for a JVM spark-submit started: said, and the
    # session's settings keep the heap the JVM has
    assert shown == {**SESSION_DEFAULTS, pool: "jemalloc", "spark.driver.memory": "1g"}
    assert ("warning: spark.driver.memory=3g in the config file's spark.conf does not apply: "
            "spark-submit started the driver's JVM with spark.driver.memory=1g") in proc.stdout


def test_user_mistakes_exit_2_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    proc = _launch("audit", "--queues", str(tmp_path / "nope_q"), "--members",
                   str(tmp_path / "nope_m"), "--output", str(tmp_path / "out"))
    # spark-submit merges the Python process's stderr into its stdout
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2
    assert "queues table at" in said and "nope_q does not exist (check the path)" in said
    assert re.search(r"^read +[0-9.]+ s  input rows not counted → [0-9]+ partitions$", said,
                     re.M)
    assert "Traceback" not in said
    proc = _launch("audit", "--queues", "only-one")
    assert proc.returncode == 2 and "--members / inputs.members is not" in proc.stdout + proc.stderr


def test_a_data_file_gone_from_an_input_is_the_message_without_a_java_stack(
        tmp_path: Path) -> None:
    """Spark's FileStreamSink logged "Assume no metadata directory" with a 92-line Java
    stack trace ahead of the run's own message naming the table and the file."""
    rows = pa.table({"snapshot_id": ["s1"], "cluster": ["c"], "topic": ["T"],
                     "broker_name": ["b"], "queue_id": pa.array([0], pa.int32())})
    write_deltalake(str(tmp_path / "queues"), rows)
    write_deltalake(str(tmp_path / "members"), pa.table({
        "snapshot_id": ["s1"], "cluster": ["c"], "consumer_group": ["G"],
        "client_id": ["a"], "topic": ["T"], "strategy": ["AVG"]}))
    for data_file in (tmp_path / "queues").glob("*.parquet"):
        data_file.unlink()
    proc = _launch("audit", "--queues", str(tmp_path / "queues"), "--members",
                   str(tmp_path / "members"), "--output", str(tmp_path / "out"))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said[-3000:]
    assert "a data file its log names cannot be read" in said
    assert "\tat " not in said and "Traceback" not in said


def test_spark_setting_mistakes_exit_2_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    # a master Spark does not know, and a SQL setting of the wrong type, each gave a Py4J
    # traceback and exit 1 (the setting's only once the run had read and validated)
    cases = {
        "master": ('spark:\n  master: "nonsense://x"\n',
                   "Spark did not start (master nonsense://x): its JVM exited"),
        "conf": ("spark:\n  conf:\n    spark.sql.shuffle.partitions: lots\n",
                 "Spark refused a setting: [INVALID_CONF_VALUE.TYPE_MISMATCH] The value "
                 "'lots' in the config \"spark.sql.shuffle.partitions\""),
    }
    for name, (text, message) in cases.items():
        config = tmp_path / f"{name}.yaml"
        config.write_text(text)
        env = {**os.environ}
        env.pop("PYSPARK_GATEWAY_PORT", None)
        proc = subprocess.run([sys.executable, "-m", "jobs.cli", "audit", "--config",
                               str(config), "--output", str(tmp_path / name)],
                              capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert f"rebalance-audit: error: {message}" in proc.stderr, proc.stderr[-3000:]
        assert "Traceback" not in proc.stderr
        assert not (tmp_path / name / "demo_inputs").exists()


def test_capture_mistakes_exit_2_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    # capture runs without spark-submit (no JVM): through the launcher and as
    # `python -m capture.cli`, a file it cannot read is a message and exit 2
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    args = ("import", str(bad), "--output", str(tmp_path / "out"), "--cluster", "c")
    launched = _launch("capture", *args, timeout=120)
    module = subprocess.run([sys.executable, "-m", "capture.cli", *args], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    for proc in (launched, module):
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert "rebalance-audit: error:" in proc.stderr and "notes.txt: unrecognised" in proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists()


AUDIT_FLAGS = ("--config", "--queues", "--members", "--offsets", "--observed", "--output",
               "--snapshot", "--engine", "--buckets", "--what-if", "--strict")


def test_help_lists_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    # `audit --help` is argparse's: in-process, no SparkSession, no JVM
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: spark-submit.sh audit")
    for flag in AUDIT_FLAGS:
        assert flag in text
    assert "findings" in text and "offline" in text  # choices are spelled out


@pytest.mark.parametrize(("argv", "said"), [
    (["audit", "--outptu", "x"], "spark-submit.sh audit: error: unrecognized arguments: "
                                 "--outptu x (did you mean --output?)"),
    (["report", "--output", "o", "--grop", "g"],
     "spark-submit.sh report: error: unrecognized arguments: --grop g (did you mean "
     "--group?)"),
    (["capture", "import", "f", "--cluster", "c", "--output", "o", "--formt=x"],
     "spark-submit.sh capture import: error: unrecognized arguments: --formt=x (did you "
     "mean --format?)"),
    (["audit", "--zzz"], "spark-submit.sh audit: error: unrecognized arguments: --zzz\n"),
])
def test_a_flag_the_job_lacks_is_the_jobs_usage_error(argv: list[str], said: str,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """It was the top-level parser's, with `usage: spark-submit.sh [-h] JOB ...` and no
    hint of the flag meant."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    job = " ".join(argv[:2] if argv[0] == "capture" else argv[:1])
    assert err.startswith(f"usage: spark-submit.sh {job} ")
    assert said in err


@pytest.mark.parametrize(("entry", "argv", "said"), [
    (["-m", "jobs.cli"], ["audit", "--zzz"],
     "python -m jobs.cli audit: error: unrecognized arguments: --zzz"),
    (["-m", "capture.cli"], ["import", "f", "--cluster", "c", "--output", "o", "--formt=x"],
     "python -m capture.cli import: error: unrecognized arguments: --formt=x"),
    (["-m", "capture.cli"], [],
     "python -m capture.cli: error: the following arguments are required: SOURCE"),
])
def test_usage_names_the_command_the_user_ran(entry: list[str], argv: list[str],
                                              said: str) -> None:
    """The usage line and errors said `spark-submit.sh` under `python -m jobs.cli` and
    `python -m capture.cli` too (`capture.cli` as `spark-submit.sh capture`): a command
    those users had not run. No JVM: argparse answers first."""
    env = {k: v for k, v in os.environ.items() if k != "REBALANCE_AUDIT_PROG"}
    proc = subprocess.run([sys.executable, *entry, *argv], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert "spark-submit.sh" not in proc.stderr


@pytest.mark.parametrize(("argv0", "named"), [
    ("/opt/venv/bin/rebalance-audit", "rebalance-audit"),
    (str(ROOT / "jobs" / "cli.py"), "python -m jobs.cli"),
    (str(ROOT / "capture" / "cli.py"), "python -m capture.cli"),
    ("/usr/bin/pytest", "spark-submit.sh"),
    ("", "spark-submit.sh"),
])
def test_program_name_follows_the_entry_point(argv0: str, named: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from jobs.cli import PROG_ENV, program_name

    monkeypatch.delenv(PROG_ENV, raising=False)
    assert program_name(argv0) == named
    # spark-submit.sh names itself (it runs `python -m jobs.cli` and `spark-submit
    # jobs/cli.py`, which argv[0] cannot tell from the user's own); a wrapper may too
    monkeypatch.setenv(PROG_ENV, "nightly-audit.sh")
    assert program_name(argv0) == "nightly-audit.sh"


@pytest.mark.parametrize(("argv", "said"), [
    (["audit", "--output", "{tmp}/prod", "--buckets", "4", "--output={tmp}/scratch"],
     "spark-submit.sh audit: error: argument --output: given twice (--output {tmp}/prod, "
     "--output {tmp}/scratch): give it once"),
    (["capture", "import", "f", "--cluster", "eu", "--output", "{tmp}/o", "--cluster", "us"],
     "spark-submit.sh capture import: error: argument --cluster: given twice (--cluster eu, "
     "--cluster us): give it once"),
    (["report", "--output", "{tmp}/o", "--top", "5", "--top", "9"],
     "spark-submit.sh report: error: argument --top: given twice (--top 5, --top 9)"),
])
def test_a_single_value_flag_given_twice_is_refused(argv: list[str], said: str, tmp_path,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    """argparse kept the last value without a word: a scheduled line with an `--output`
    added at its end wrote elsewhere than the one it already named. (Paths under tmp_path:
    the parser before the fix ran these, the audit writing its demo there.)"""
    with pytest.raises(SystemExit) as exit_:
        main([arg.format(tmp=tmp_path) for arg in argv])
    assert exit_.value.code == 2
    assert said.format(tmp=tmp_path) in capsys.readouterr().err


def test_a_flag_given_twice_with_one_value_and_repeatable_flags_are_kept() -> None:
    """Only a conflict is refused: the same value twice is one value, and `--snapshot`
    (append) takes every one."""
    args = parse_args(["audit", "--output", "o", "--output", "o", "--snapshot", "s1",
                       "--snapshot", "s2"])
    assert (args.output, args.snapshots) == ("o", ["s1", "s2"])
    assert not any(name.startswith("_") for name in vars(args))


@pytest.mark.parametrize("value", ["a\nb", "run\t1", "\x7f"])
def test_a_run_id_with_a_control_character_is_refused(value: str,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """A newline in --run-id split the console's lines and was stamped into every row."""
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "--run-id", value])
    assert exit_.value.code == 2
    assert (f"argument --run-id: {value!r} holds a control character (a newline, a tab): "
            "the run id is stamped on every row and printed; use visible characters"
            ) in capsys.readouterr().err


def test_launcher_help_needs_no_jvm() -> None:
    # `spark-submit.sh --help` with no job is the launcher's own usage, printed before
    # spark-submit is started (`audit --help` goes through spark-submit: tested above);
    # a JAVA_HOME without a java would fail any spark-submit
    proc = _launch("--help", timeout=120, JAVA_HOME="/nonexistent/no-jvm")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("usage: ./spark-submit.sh")
    for flag in ("--config", "--queues", "--members", "--offsets", "--observed", "--output",
                 "--snapshot", "--engine", "--master", "--with-delta-package", "--top"):
        assert flag in proc.stdout
    for job in JOBS:  # every command the launcher runs is in its usage
        assert f"./spark-submit.sh {job} " in proc.stdout or \
            f"./spark-submit.sh [spark-submit options] {job} " in proc.stdout, job


def _children(pid: int, named: bytes) -> list[int]:
    """The processes whose parent is `pid` and whose command line holds `named` (from
    /proc: the JVM pyspark started, the pyspark.daemon that JVM started)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat, command = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid and named in command:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize(("step", "killed", "said"), [
    ("read ", "jvm", "Spark's JVM stopped during the run (killed, or ended by an error it "
                     "logged above;"),
    ("write ", "jvm", "Spark's JVM stopped during the run (killed, or ended by an error it "
                      "logged above;"),
    ("read prior ", "worker", "a Python worker of Spark's died under the run"),
])
def test_a_jvm_or_worker_killed_under_the_run_is_one_line_not_a_traceback(
        step: str, killed: str, said: str, tmp_path: Path) -> None:
    """The JVM a run from plain Python started, killed (as the system's out-of-memory
    killer does) once the run reads its inputs, or writes its tables: py4j's "Answer from
    Java side is empty" and a page of traceback (while writing, the tidying up's own
    ConnectionRefusedError over the run's error), now one line saying so, exit 1. So is
    its pyspark.daemon killed as the assign pass starts (a 127-line Py4J and Java
    traceback)."""
    import signal
    import time

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    err_path = tmp_path / "stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "jobs.cli", "audit", "--output",
                                 str(tmp_path / "out"), "--demo-groups", "10"],
                                stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=ROOT)
        try:
            deadline = time.monotonic() + 240
            while f"\n{step}" not in err_path.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, err_path.read_text()[-3000:]
                time.sleep(0.05)
            jvms = _children(proc.pid, b"java")
            assert len(jvms) == 1, err_path.read_text()[-3000:]
            victims = jvms
            while killed == "worker" and time.monotonic() < deadline:
                if victims := _children(jvms[0], b"pyspark.daemon"):
                    break
                time.sleep(0.02)
            for victim in victims:
                os.kill(victim, signal.SIGKILL)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    text = err_path.read_text()
    assert code == 1, text[-3000:]
    assert f"rebalance-audit: error: {said}" in text, text[-3000:]
    assert "Traceback" not in text, text[-3000:]


@pytest.mark.parametrize("how", ["SIGTERM to the launcher", "Ctrl-C in its terminal"])
def test_sigterm_to_the_launcher_stops_the_run_as_ctrl_c_does(how: str, tmp_path: Path) -> None:
    """timeout, YARN and Kubernetes send SIGTERM: to spark-submit's JVM alone it was, whose
    shutdown stopped Spark under the job: exit 143, Java stack traces, no word of the
    output. The launcher hands it to the job: one line, exit 130. Ctrl-C, which a
    terminal sends to its whole process group, stops it as before."""
    import signal
    import time

    env = {**os.environ, "REBALANCE_AUDIT_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    out, log = tmp_path / "out", tmp_path / "said"
    with open(log, "w") as said_file:
        proc = subprocess.Popen([str(ROOT / "spark-submit.sh"), "audit", "--output", str(out),
                                 "--demo-groups", "10"], stdout=said_file,
                                stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while "\nvalidate " not in log.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.2)
            if how == "SIGTERM to the launcher":
                proc.send_signal(signal.SIGTERM)
            else:
                os.killpg(proc.pid, signal.SIGINT)
            code = proc.wait(timeout=180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    said = log.read_text()
    assert code == 130, said[-3000:]
    assert [line for line in said.splitlines() if line.startswith("rebalance-audit:")] == [
        f"rebalance-audit: interrupted: the run published nothing in {out}: it had not begun "
        "writing, so the output is as the earlier runs left it"], said[-3000:]
    assert "\tat " not in said and "Traceback" not in said
