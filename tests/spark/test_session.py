"""The session's settings: the job's defaults, the user's settings over them, the Python
workers' Arrow memory pool as the workers really see it, and Kryo as the session uses it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from jobs.jvm_logs import _NO_RETRIES, QUIET_LOGGERS, RDD_LOGGERS, TASK_FAILURE_LOGGERS, quieted
from jobs.persist import Persisted
from jobs.session import (
    DRIVER_JAVA_OPTIONS,
    DRIVER_MEMORY,
    LOG4J_CONF,
    REQUIRED_CONF,
    SESSION_DEFAULTS,
    heap_to_commit,
    launch_conf,
    session_conf,
)

POOL = "spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL"
SERIALIZER = "spark.serializer"
KRYO = "org.apache.spark.serializer.KryoSerializer"
REFERENCES = "spark.kryo.referenceTracking"
HUGE_METHOD = "spark.sql.codegen.hugeMethodLimit"


def test_the_defaults_apply_unless_the_user_says_otherwise() -> None:
    assert SESSION_DEFAULTS == {SERIALIZER: KRYO, REFERENCES: "false", POOL: "system",
                                HUGE_METHOD: "8000"}
    conf = session_conf(None, False)
    assert conf[POOL] == "system" and conf[SERIALIZER] == KRYO
    assert conf["spark.ui.showConsoleProgress"] == "false"
    assert all(conf[k] == v for k, v in REQUIRED_CONF.items())
    java = "org.apache.spark.serializer.JavaSerializer"
    mine = session_conf({POOL: "jemalloc", SERIALIZER: java}, True)
    assert mine[POOL] == "jemalloc" and mine[SERIALIZER] == java


def test_under_spark_submit_a_default_applies_only_where_the_submit_left_it_unset() -> None:
    # a setting given to the builder would replace the user's --conf of the same key
    conf = session_conf({"spark.sql.shuffle.partitions": "4"}, False, already={POOL})
    assert POOL not in conf and conf[SERIALIZER] == KRYO
    assert conf["spark.sql.shuffle.partitions"] == "4"
    assert not set(SESSION_DEFAULTS) & set(session_conf(None, False, set(SESSION_DEFAULTS)))


def test_a_setting_spark_submit_was_given_beats_the_config_files() -> None:
    """`./spark-submit.sh --conf spark.sql.shuffle.partitions=5 audit --config f.yaml` ran
    with the file's 3: flags override the file. Left out of the builder, the submitted
    value stays (the session's SparkConf loaded it). spark-submit.sh always submits the
    progress switch, which `--spark-progress` (or the file) decides."""
    partitions = "spark.sql.shuffle.partitions"
    progress = "spark.ui.showConsoleProgress"
    file = {partitions: "3", "spark.sql.files.minPartitionNum": "7", progress: "true"}
    conf = session_conf(file, False, already={partitions, progress},
                        given={partitions, progress})
    assert partitions not in conf and conf["spark.sql.files.minPartitionNum"] == "7"
    assert conf[progress] == "true"
    # spark-defaults.conf or a properties file set it, the command line did not: the file's
    assert session_conf(file, False, already={partitions})[partitions] == "3"
    assert session_conf(file, False)[partitions] == "3"  # nothing submitted: the file's


def test_spark_submit_sh_names_the_keys_its_command_line_conf_sets(tmp_path) -> None:
    """The launcher passes the command line's --conf keys (not spark-defaults.conf's) to
    the driver; a stand-in spark-submit prints what the driver would see."""
    import subprocess

    from jobs.session import COMMAND_LINE_CONF_ENV, command_line_conf

    fake = tmp_path / "home" / "bin" / "spark-submit"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\nprintf '%s' \"${COMMAND_LINE_CONF_ENV}\"\n")
    fake.chmod(0o755)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "SPARK_HOME": str(tmp_path / "home"),
           "REBALANCE_AUDIT_PYTHON": sys.executable}
    out = subprocess.run(
        [str(root / "spark-submit.sh"), "--conf", "spark.sql.shuffle.partitions=5",
         "--conf=spark.a.b=c=d", "-c", "spark.x=1", "--driver-memory", "1g", "audit",
         "--output", str(tmp_path / "o")], capture_output=True, text=True, env=env,
        timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["spark.sql.shuffle.partitions", "spark.a.b", "spark.x"]
    os.environ[COMMAND_LINE_CONF_ENV] = out.stdout
    try:
        assert command_line_conf() == {"spark.sql.shuffle.partitions", "spark.a.b", "spark.x"}
    finally:
        del os.environ[COMMAND_LINE_CONF_ENV]


def test_a_jvm_started_from_plain_python_logs_as_the_launchers_does(monkeypatch) -> None:
    """`python -m jobs.cli` printed Spark's start-up banner, hostname and native-library
    warnings before the first progress line; spark-submit.sh's JVM does not."""
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    ours = f"-Dlog4j2.configurationFile=file:{LOG4J_CONF}"
    assert LOG4J_CONF.is_file()
    assert launch_conf(None, "local[2]")[DRIVER_JAVA_OPTIONS] == ours
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    # the user's driver options are kept, and a log configuration of theirs wins
    kept = launch_conf({DRIVER_JAVA_OPTIONS: "-Xss4m", "k": "v"}, "local[*]")
    assert kept[DRIVER_JAVA_OPTIONS] == f"{ours} -Xss4m" and kept["k"] == "v"
    mine = "-Dlog4j2.configurationFile=file:/etc/mine.properties"
    assert launch_conf({DRIVER_JAVA_OPTIONS: mine}, "local[*]")[DRIVER_JAVA_OPTIONS] == mine
    # a cluster master binds where the cluster says
    monkeypatch.delenv("SPARK_LOCAL_IP")
    launch_conf(None, "spark://host:7077")
    assert "SPARK_LOCAL_IP" not in os.environ


def test_a_jvm_started_from_plain_python_takes_the_jit_sized_from_the_inputs(
        monkeypatch) -> None:
    """`jobs.launch`'s options reach a local JVM started here, after the log settings and
    the user's own options, unless the user chose a JIT setting; a cluster master's driver
    keeps the JVM's default."""
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    ours = f"-Dlog4j2.configurationFile=file:{LOG4J_CONF}"
    c1 = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    def options(conf, master: str, java: str) -> str:
        return launch_conf(conf, master, java)[DRIVER_JAVA_OPTIONS]

    assert options(None, "local[2]", c1) == f"{ours} {c1}"
    assert options({DRIVER_JAVA_OPTIONS: "-Xss4m"}, "local[*]", c1) == f"{ours} -Xss4m {c1}"
    theirs = {DRIVER_JAVA_OPTIONS: "-XX:TieredStopAtLevel=4"}
    assert options(theirs, "local[*]", c1) == f"{ours} -XX:TieredStopAtLevel=4"
    # the code cache goes with the JIT: the user's JIT setting keeps the JVM's cache, and
    # a cache of their own keeps C1 alone beside it
    cache = {DRIVER_JAVA_OPTIONS: "-XX:ReservedCodeCacheSize=64m"}
    assert options(cache, "local[*]", c1) == (
        f"{ours} -XX:ReservedCodeCacheSize=64m -XX:TieredStopAtLevel=1")
    assert options(None, "local[*]", "") == ours
    assert options(None, "yarn", c1) == ours
    # the heap committed at start, unless the user's own options set an initial heap
    assert options(None, "local[2]", "-Xms2g") == f"{ours} -Xms2g"
    assert options({DRIVER_JAVA_OPTIONS: "-Xms1g"}, "local[2]", "-Xms2g") == f"{ours} -Xms1g"
    initial = {DRIVER_JAVA_OPTIONS: "-XX:InitialHeapSize=1g"}
    assert options(initial, "local[2]", "-Xms2g") == f"{ours} -XX:InitialHeapSize=1g"
    # -Xms after it would raise the user's minimum heap to the launcher's whole heap
    least = {DRIVER_JAVA_OPTIONS: "-XX:MinHeapSize=512m"}
    assert options(least, "local[2]", "-Xms2g") == f"{ours} -XX:MinHeapSize=512m"
    assert options({DRIVER_JAVA_OPTIONS: "-Xss4m"}, "local[2]", "-Xms2g") == \
        f"{ours} -Xss4m -Xms2g"


def test_only_the_launchers_heap_of_a_driver_that_runs_the_tasks_is_committed(
        monkeypatch) -> None:
    """A JVM started here commits at start the heap `launch_conf` gives it (the run's
    options decide whether: `jobs.sizing.java_options_for`), never the user's heap."""
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert heap_to_commit(None, "local[2]") == "2g"
    assert heap_to_commit({}, None) == launch_conf(None, "local[*]")[DRIVER_MEMORY]
    assert heap_to_commit({DRIVER_MEMORY: "12g"}, "local[2]") is None
    assert heap_to_commit(None, "local-cluster[2,1,2048]") is None
    assert heap_to_commit(None, "yarn") is None


def test_a_local_jvm_started_from_plain_python_gets_the_launchers_heap(monkeypatch) -> None:
    """spark-submit.sh gives a local driver, the only executor, 1g per core within 2g-4g:
    so does a JVM started here (Spark's own 1g dies near 10M assignment rows); the user's
    setting wins, and a cluster's driver keeps Spark's default."""
    monkeypatch.delenv("REBALANCE_AUDIT_DRIVER_MEMORY", raising=False)
    assert launch_conf(None, "local[2]")[DRIVER_MEMORY] == "2g"
    assert launch_conf(None, "local[8]")[DRIVER_MEMORY] == "4g"
    assert launch_conf({DRIVER_MEMORY: "12g"}, "local[*]")[DRIVER_MEMORY] == "12g"
    assert DRIVER_MEMORY not in launch_conf(None, "yarn")
    monkeypatch.setenv("REBALANCE_AUDIT_DRIVER_MEMORY", "6g")
    assert launch_conf(None, "local[*]")[DRIVER_MEMORY] == "6g"


def test_the_test_sessions_jvm_took_the_launchers_log_configuration(spark) -> None:
    options = spark.sparkContext.getConf().get(DRIVER_JAVA_OPTIONS)
    assert f"log4j2.configurationFile=file:{LOG4J_CONF}" in options
    native = "org.apache.hadoop.util.NativeCodeLoader"  # the file sets it to ERROR
    assert jvm_log_level(spark, native) == "ERROR"


def test_no_fused_stage_keeps_a_method_the_jit_will_not_compile(spark) -> None:
    """A stage whose fused method passes HotSpot's 8,000 bytes runs as code the JIT
    compiles (group_balance's words were 30,330 bytes, interpreted)."""
    assert spark.conf.get(HUGE_METHOD) == "8000"


def test_the_runs_checkpoints_go_through_kryo(spark) -> None:
    assert spark.sparkContext.getConf().get(SERIALIZER) == KRYO
    assert spark.sparkContext.getConf().get(REFERENCES) == "false"
    persisted = Persisted()
    try:  # a row of every column type the run checkpoints (inputs, packed rows,
        # group_balance), read back as it went in
        df = spark.createDataFrame(
            [("s", 1, 2**40, 2.5, True, 3, datetime(2026, 11, 26, 12, 0, tzinfo=UTC),
              ["a"], {"k": "v"}, bytearray(b"\x00\x01"))],
            "snapshot_id string, queue_id int, max_offset bigint, rate double, "
            "readable boolean, _table tinyint, captured_at timestamp, "
            "findings array<string>, params map<string,string>, blob binary")
        assert persisted(df).collect() == df.collect()
    finally:
        persisted.release()


def _pool(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield pa.RecordBatch.from_pydict(
            {"pool": [pa.default_memory_pool().backend_name] * batch.num_rows})


def test_the_python_workers_allocate_arrow_buffers_from_glibc(spark) -> None:
    pools = spark.range(4).repartition(2).mapInArrow(_pool, "pool string").distinct().collect()
    assert [r.pool for r in pools] == ["system"]


def test_the_benchmarks_bare_pass_runs_with_the_workers_environment() -> None:
    from benchmarks.run import worker_env

    assert worker_env([]) == {"ARROW_DEFAULT_MEMORY_POOL": "system"}
    assert worker_env([f"{POOL}=jemalloc", "spark.sql.shuffle.partitions=8"]) == {
        "ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}


def _logger(spark, name: str):
    return spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getLogger(name)


def _warns(spark, name: str) -> bool:
    return bool(_logger(spark, name).isWarnEnabled())


def jvm_log_level(spark, name: str) -> str:
    """The level JVM logger `name` logs at (its own or inherited)."""
    return str(_logger(spark, name).getLevel().name())


def test_spark_keeps_its_warnings_about_what_the_job_does_on_purpose_off_the_console(
        spark) -> None:
    # the session quiets cut plan texts for good (build_session made the fixture's session)
    assert all(jvm_log_level(spark, name) == "ERROR" for name in QUIET_LOGGERS)
    assert not _warns(spark, "org.apache.spark.sql.catalyst.util.StringUtils")
    assert _warns(spark, "org.apache.spark.sql.execution.SparkPlan")  # others still warn
    # a released checkpoint's warning only while the run releases them
    checkpointed = "org.apache.spark.rdd.MapPartitionsRDD"
    before = jvm_log_level(spark, RDD_LOGGERS)
    assert _warns(spark, checkpointed)
    with quieted(spark, RDD_LOGGERS):
        assert not _warns(spark, checkpointed)
    assert _warns(spark, checkpointed) and jvm_log_level(spark, RDD_LOGGERS) == before
    # the logger had no level of its own: it follows the session's level again
    spark.sparkContext.setLogLevel("ERROR")
    try:
        assert not _warns(spark, checkpointed)
    finally:
        spark.sparkContext.setLogLevel("WARN")


def test_a_local_master_without_retries_leaves_a_failed_task_to_the_runs_error(spark) -> None:
    """local[N] fails the job on a task's first failure: the run's own error reports it
    whole, so the executor's, task set's and block manager's logs of it are quiet."""
    assert {name: jvm_log_level(spark, name) for name in TASK_FAILURE_LOGGERS} == \
        TASK_FAILURE_LOGGERS
    assert _NO_RETRIES.fullmatch(spark.sparkContext.master)
    for master in ("local", "local[2]", "local[*]"):
        assert _NO_RETRIES.fullmatch(master)
    for master in ("local[2,3]", "local-cluster[2,1,1024]", "yarn", "spark://h:7077", ""):
        assert not _NO_RETRIES.fullmatch(master)


def test_releasing_the_runs_checkpoints_leaves_the_rdd_loggers_as_they_were(spark) -> None:
    persisted = Persisted()
    frame = persisted(spark.range(10))
    assert frame.count() == 10
    rdd = frame._jdf.queryExecution().logical().rdd().id()
    stored = spark.sparkContext._jsc.sc().getPersistentRDDs
    assert stored().contains(rdd)
    persisted.release()
    assert not stored().contains(rdd)
    assert _warns(spark, "org.apache.spark.rdd.MapPartitionsRDD")


def test_a_start_only_setting_the_running_jvm_lacks_is_too_late() -> None:
    """Under spark-submit (a running JVM's submitted settings), the config's start-only
    settings that JVM does not have are the ones the run warns about and leaves out."""
    from jobs.session import late_setting_note, too_late

    conf = {DRIVER_MEMORY: "8g", "spark.driver.extraClassPath": "/x.jar",
            "spark.sql.shuffle.partitions": "12"}
    assert too_late(conf, {}) == {}  # no spark-submit: the JVM starts with them
    assert too_late(conf, {DRIVER_MEMORY: "8g", "spark.driver.extraClassPath": "/x.jar"}) == {}
    assert too_late(conf, {DRIVER_MEMORY: "2g", "spark.master": "local[2]"}) == {
        DRIVER_MEMORY: "8g", "spark.driver.extraClassPath": "/x.jar"}
    # a heap is compared by its size, as the JVM takes it
    same_jar = {"spark.driver.extraClassPath": "/x.jar"}
    for written in ("8G", "8192m", "8192", "8gb", " 8g ", str(8 * 2**30) + "b"):
        assert too_late(conf, {DRIVER_MEMORY: written, **same_jar}) == {}, written
    for other in ("8m", "8", "9g", "eight"):
        assert too_late(conf, {DRIVER_MEMORY: other, **same_jar}) == {DRIVER_MEMORY: "8g"}
    note = late_setting_note("spark.driver.extraClassPath", "/x.jar", None)
    assert "started the driver's JVM without it" in note and "--driver-class-path" in note
