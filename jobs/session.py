"""The SparkSession: the same code on a laptop (local[*]) and on a cluster.

`spark-submit` decides master and resources; when the job is started as plain Python
(tests, notebooks) we default to local[*]. Settings here are the ones the job needs
whatever the cluster: Arrow for pandas UDFs, the driver's interpreter for the workers.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Collection
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.jvm_logs import quiet_known_warnings, quiet_task_failures
from jobs.sizing import INITIAL_HEAP, launcher_heap, tasks_heap
from vocabulary.errors import ConfigError, first_line

log = logging.getLogger("rebalance_audit")

REQUIRED_CONF = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # Spark's own marker files are not part of a Delta table
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # Spark renders every query's plan into a string for its listeners (the SQL tab), even
    # with the UI off. Plans that nested persisted plans reached 23 MB of text each in the
    # demo and kept strings of them filled the driver heap; the run's checkpoints
    # (jobs/persist.py) keep plans short now, and this bound stays for the plans that are
    # still long. 100k characters keep the operators readable.
    "spark.sql.maxPlanStringLength": "100000",
}

# Defaults a user's setting replaces (the config's spark.conf, or spark-submit's --conf and
# properties file: under spark-submit a default applies only where the submitted
# SparkConf has no value for its key).
SESSION_DEFAULTS = {
    # Kryo, not Java serialization, for the rows the run checkpoints to local disk (its
    # validated inputs and the report pass's output, jobs/persist.py; Spark SQL's shuffles
    # have their own serializer). Three 10M audits with it against three without,
    # alternated: 239 s against 251 s on average, the JVM's CPU 306 s against 324 (the
    # read step's tasks 61 against 67). Kryo's buffer limit (64 MB) does not bound a
    # checkpointed or collected row: rows of 80 MB went through both.
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    # Without reference tracking: the checkpointed rows are flat byte arrays (UnsafeRow),
    # never a graph with shared or cyclic references, and tracking cleared Kryo's
    # reference maps after every row: 3.6% of the executors' CPU in a profiled 10M audit
    # (Java Flight Recorder). Checkpointing 8M five-column rows and reading them back, two
    # sessions per setting, alternated, warm: 1.3-1.6 s and 1.0-1.3 s with it off against
    # 1.8-2.1 s and 1.2-1.7 s with it on.
    "spark.kryo.referenceTracking": "false",
    # The Python workers allocate Arrow buffers from glibc's malloc instead of pyarrow's
    # default mimalloc. A worker runs bucket after bucket, and mimalloc kept memory the
    # buckets had freed: the same 1M bucket run 10 times in one process took the peak from
    # 488 to 626 MB, and the benchmark's workers peaked at 553 MB at 1M and 663 MB at 10M
    # (about 36 buckets per worker against 4). With glibc they peaked at 459 and 523 MB,
    # at the same speed (benchmarks/README.md).
    "spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL": "system",
    # HotSpot never compiles a method of more than 8,000 bytes of bytecode: it stays
    # interpreted. Spark's default limit (65,535) keeps such a method in a fused stage; at
    # 8,000 (what Spark's documentation suggests on HotSpot) the stage falls back to code
    # the JIT compiles. The one stage of the audit past it is group_balance's words (its
    # fused method is 30,330 bytes). 10M, alternated in one session: computed in 1.9-2.7 s
    # against 3.5-3.9 s; computed and written as the job does, 4.8-7.5 against 7.5-8.1 s.
    "spark.sql.codegen.hugeMethodLimit": "8000",
}

# The launcher's log settings (spark-submit.sh passes the same file): warnings and errors
# only, without Spark's start-up banner.
LOG4J_CONF = Path(__file__).resolve().parent.parent / "conf" / "log4j2.properties"
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# a local driver, the only executor, gets the launcher's heap (`jobs.sizing.launcher_heap`)
DRIVER_MEMORY = "spark.driver.memory"
# Settings the driver's JVM takes only when it starts, each with spark-submit's flag for it.
# Under spark-submit that JVM runs before the config file is read: spark-submit.sh hands a
# local run's to spark-submit (`jobs.launch`); elsewhere the run warns (`build_session`).
JVM_START_SETTINGS = {DRIVER_MEMORY: "--driver-memory",
                      DRIVER_JAVA_OPTIONS: "--driver-java-options",
                      "spark.driver.extraClassPath": "--driver-class-path",
                      "spark.driver.extraLibraryPath": "--driver-library-path"}


def build_session(
    app_name: str = "rebalance-audit",
    master: str | None = None,
    conf: dict[str, str] | None = None,
    log_level: str = "WARN",
    console_progress: bool = False,
    java_options: str = "",
    largest_file_rows: int | None = None,
) -> SparkSession:
    """Get or create the session; `master` only applies when spark-submit did not set one,
    and a JVM started here gets `launch_conf` (`largest_file_rows`: the inputs' largest
    file, which may ask for a larger local heap, `jobs.sizing.local_heap_for`).
    Spark's console progress bars stay off unless `console_progress` (the run prints one
    line per step instead, `jobs.progress`), and so do Spark's warnings about what the job
    does on purpose (`jobs.jvm_logs`)."""
    # Without this the Python workers start the system python3, which lacks pandas/pyarrow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    submitted = launched_by_spark_submit()
    if not submitted:
        builder = builder.master(master or "local[*]")
        conf = launch_conf(conf, master or "local[*]", java_options, largest_file_rows)
    running = submitted_conf() if submitted else {}
    late = too_late(conf, running)
    for key, value in late.items():
        log.warning("warning: %s", late_setting_note(key, value, running.get(key)))
    conf = {k: v for k, v in (conf or {}).items() if k not in late}
    already = frozenset(running)
    given = command_line_conf() if submitted else frozenset()
    for key, value in session_conf(conf, console_progress, already, given).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
        # the SQL settings are type-checked when first read: here, not minutes into the run
        spark.conf.get("spark.sql.shuffle.partitions")
    except Exception as exc:  # a Py4J or gateway error: the user's master or settings
        raise ConfigError(_start_failure(exc, master, submitted)) from exc
    spark.sparkContext.setLogLevel(log_level)
    quiet_known_warnings(spark)
    quiet_task_failures(spark)
    return spark


def _start_failure(exc: Exception, master: str | None, submitted: bool) -> str:
    """What to tell the user when Spark refuses to start or refuses a setting's value."""
    text = first_line(exc)
    if "JAVA_GATEWAY_EXITED" not in text:
        return (f"Spark refused a setting: {text} (spark.conf in the config file, or "
                "spark-submit's --conf)")
    where = "" if submitted else f" (master {master or 'local[*]'})"
    return (f"Spark did not start{where}: its JVM exited with the message above. Check "
            "spark.master and spark.conf in the config file, spark-submit's options, and "
            "that Java 17 is on the PATH or in JAVA_HOME")


def launch_conf(conf: dict[str, str] | None, master: str, java_options: str = "",
                largest_file_rows: int | None = None) -> dict[str, str]:
    """`conf` plus what spark-submit.sh gives a JVM it starts, for a JVM started from plain
    Python (`python -m jobs.cli`, notebooks, tests): the launcher's log4j2 file (not
    Spark's start-up banner and hostname and native-library warnings), and, on a local
    master, the loopback address to bind (`SPARK_LOCAL_IP`, as the launcher sets it), the
    launcher's heap (`REBALANCE_AUDIT_DRIVER_MEMORY`, default 1g per core or what the
    inputs' `largest_file_rows` ask for, within 2g-4g, `jobs.sizing.launcher_heap`) and
    `java_options` (`jobs.launch`: the JIT, and the heap committed at start, sized from
    the inputs). A log configuration, heap, initial heap or JIT setting of the user's
    wins; only a JVM not yet running takes any of it."""
    conf = dict(conf or {})
    local = master.startswith("local")
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        heap = launcher_heap(master, largest_file_rows)
        if heap:
            conf.setdefault(DRIVER_MEMORY, heap)
    options = driver_java_options(conf.get(DRIVER_JAVA_OPTIONS, ""),
                                  java_options if local else "")
    if options:
        conf[DRIVER_JAVA_OPTIONS] = options
    return conf


def driver_java_options(users: str, java_options: str) -> str:
    """The user's own driver options with the launcher's added where the user chose none
    of their kind: the log4j2 file first, then `java_options` (the JIT, the heap committed
    at start). spark-submit.sh gives a config file's options so too (`jobs.launch`)."""
    options = users.strip()
    if LOG4J_CONF.is_file() and "log4j2.configurationFile" not in options:
        options = f"-Dlog4j2.configurationFile=file:{LOG4J_CONF} {options}".strip()
    for option in java_options.split():
        if not _chosen_by_user(option, users):
            options = f"{options} {option}".strip()
    return options


def heap_to_commit(conf: dict[str, str] | None, master: str | None,
                   largest_file_rows: int | None = None) -> str | None:
    """The heap a JVM started here may commit at start (`jobs.sizing.java_options_for`):
    the one `launch_conf` gives a driver that runs the tasks (`jobs.sizing.tasks_heap`),
    None when `conf` sets `spark.driver.memory` (the user's heap, the user's choice)."""
    if DRIVER_MEMORY in (conf or {}):
        return None
    return tasks_heap(master or "local[*]", largest_file_rows)


# the marks in the user's own driver options of a setting of the kind of each of ours:
# the JIT's (any tiered-compilation flag; the code cache goes with it) and the initial or
# least heap (-Xms sets both)
_USERS_OWN = {"-XX:TieredStopAtLevel": ("Tiered",),
              "-XX:ReservedCodeCacheSize": ("Tiered", "ReservedCodeCacheSize"),
              INITIAL_HEAP: (INITIAL_HEAP, "InitialHeapSize", "MinHeapSize")}


def _chosen_by_user(option: str, users: str) -> bool:
    return any(option.startswith(ours) and any(mark in users for mark in marks)
               for ours, marks in _USERS_OWN.items())


CONSOLE_PROGRESS = "spark.ui.showConsoleProgress"


def session_conf(conf: dict[str, str] | None, console_progress: bool,
                 already: Collection[str] = frozenset(),
                 given: Collection[str] = frozenset()) -> dict[str, str]:
    """The settings the session is built with: REQUIRED_CONF, the SESSION_DEFAULTS whose key
    is not `already` set (spark-submit's --conf or properties file: a setting given here
    would replace the user's), the console progress switch, then the config file's `conf`,
    which wins over those but not over a key the command line's `--conf` `given`: that
    overrides the file, as every flag does (the file's shuffle partitions replaced a
    `--conf spark.sql.shuffle.partitions`). The progress switch is the exception:
    spark-submit.sh always submits it, and `--spark-progress` decides it (`load_config`)."""
    defaults = {k: v for k, v in SESSION_DEFAULTS.items() if k not in already}
    progress = {CONSOLE_PROGRESS: str(console_progress).lower()}
    files = {k: v for k, v in (conf or {}).items() if k not in given or k == CONSOLE_PROGRESS}
    return {**REQUIRED_CONF, **defaults, **progress, **files}


COMMAND_LINE_CONF_ENV = "REBALANCE_AUDIT_COMMAND_LINE_CONF"


def command_line_conf() -> frozenset[str]:
    """The keys spark-submit.sh's command line set with --conf (one per line): a setting
    spark-defaults.conf or a properties file made is not a flag, and the config file beats
    it. Empty when the driver was not started by spark-submit.sh (a cluster-mode driver
    does not inherit it): the config file's settings then win, as before."""
    return frozenset(k for k in os.environ.get(COMMAND_LINE_CONF_ENV, "").splitlines() if k)


def submitted_conf() -> dict[str, str]:
    """The settings spark-submit was given (--conf, its flags, --properties-file,
    spark-defaults.conf): it hands them to the driver JVM as system properties, which a
    SparkConf made through that JVM loads. (Made before the gateway is up, a SparkConf is
    Python's alone and the builder's settings would replace the submitted ones.)"""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM; no context yet
    return dict(SparkConf().getAll())


def start_settings(conf: dict[str, str] | None) -> dict[str, str]:
    """The settings of `conf` that only a driver JVM not yet started takes."""
    return {k: v for k, v in (conf or {}).items() if k in JVM_START_SETTINGS}


def too_late(conf: dict[str, str] | None, running: dict[str, str]) -> dict[str, str]:
    """The config's start-only settings a driver JVM spark-submit started does not have
    (`running`: its submitted settings). Given to the session they would only make its
    settings say what the JVM is not; nothing when no spark-submit started it."""
    if not running:
        return {}
    return {k: v for k, v in start_settings(conf).items()
            if not _same_setting(k, v, running.get(k))}


def _same_setting(key: str, value: str, running: str | None) -> bool:
    """Equal as the JVM takes them: a heap by its size (`8g`, `8G` and `8192m` are one
    heap), anything else as written."""
    if key == DRIVER_MEMORY and running is not None:
        sizes = heap_mib(value), heap_mib(running)
        if None not in sizes:
            return sizes[0] == sizes[1]
    return value == running


def heap_mib(value: str) -> float | None:
    """A `spark.driver.memory` value in MiB, as Spark reads it (a number alone is MiB;
    k, m, g, t, p with or without b; b alone is bytes); None when it is not a size."""
    size = re.fullmatch(r"(\d+)([kmgtp]?)(b?)", value.strip().lower())
    if size is None:
        return None
    number, unit, in_bytes = int(size[1]), size[2], size[3]
    if not unit:
        return number / 2**20 if in_bytes else float(number)
    return number * 1024 ** ("kmgtp".index(unit) + 1) / 2**20


def late_setting_note(key: str, value: str, running: str | None) -> str:
    """Why a config file's start-only setting does not apply, and where to give it."""
    now = f"with {key}={running}" if running is not None else "without it"
    return (f"{key}={value} in the config file's spark.conf does not apply: spark-submit "
            f"started the driver's JVM {now} before the config was read. Give it to "
            f"spark-submit ({JVM_START_SETTINGS[key]} or --conf {key}=...); "
            "./spark-submit.sh does so for a local run.")


def launched_by_spark_submit() -> bool:
    """spark-submit starts the JVM first and hands its gateway port to Python; then the
    master and resources are spark-submit's and must not be overridden here."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
