"""The driver JVM's options for a local run, chosen before the JVM starts.

`spark-submit.sh` asks `python -m jobs.launch audit [flags]` before it starts spark-submit
(which starts the JVM first), and `jobs.audit.run` applies the same rule to a JVM it starts
itself. The same question tells the launcher when there is nothing to start a JVM for:
`--help`, or flags, settings or an output root the run would reject (NOT_RUNNABLE); it
then lets `jobs.cli` print the help or the message at once.

The options (`jobs.sizing.java_options_for`): a short run compiles with C1 alone; a larger
one starts with its heap committed when the launcher chooses the heap of a driver that runs
the tasks (spark-submit.sh says it may: `--launcher-heap MASTER` before the job's flags;
a `spark.driver.memory` in the config file is the user's heap instead). The size is the
inputs' rows from their Delta logs, as the run counts them (no scan, no JVM); unknown (a
remote table, a log without statistics) counts as not short. The heap is 1g per core, or
more when the inputs' largest file asks for it (`jobs.sizing.local_heap_for`; its rows
from the same logs): the answer then names it (below).

The same answer carries the config file's settings that only a JVM not yet started takes,
one `key=value` line each after the options: spark-submit.sh hands them to spark-submit.
The config's driver options come merged with the launcher's (`jobs.session.
driver_java_options`: the log4j2 file, the JIT, the heap committed at start, each unless
the user's name one of its kind), as a JVM started from plain Python gets them; given
alone they would replace the launcher's.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from jobs.config import AuditConfig
from jobs.sizing import driver_memory_env, java_options_for, launcher_heap

# input rows of the generated demo per ordinary group (`jobs.demo`: 300 groups wrote
# 66,639 rows, 3,000 wrote 668,164; the seed scenarios alone 432)
DEMO_ROWS_PER_GROUP = 225
# `--launcher-heap MASTER` before the job's flags: spark-submit.sh gave the driver the
# launcher's heap for MASTER (`jobs.sizing.launcher_heap`)
LAUNCHER_HEAP = "--launcher-heap"
# main's exit code for --help and for flags, settings or an output root the run rejects
NOT_RUNNABLE = 3


class InputSize(NamedTuple):
    """What the launcher knows of the run's inputs before the JVM starts: `rows`, all
    inputs' (None when one's log does not tell), and `largest_file_rows`, the rows of the
    largest data file among the inputs whose log tells (None when none does)."""

    rows: int | None
    largest_file_rows: int | None


def input_size(config: AuditConfig) -> InputSize:
    """`InputSize` from the inputs' Delta logs (queues, members, offsets, observed; of the
    run's snapshots when it names them), each log read once; the demo's rows from its
    group count, and no file bound."""
    if config.is_demo:
        return InputSize(DEMO_ROWS_PER_GROUP * max(config.demo_groups, 1), None)
    from jobs.read import InputPaths

    return input_size_of(InputPaths.of(config).named().values(),
                         list(config.snapshots) or None)


def input_size_of(paths: Iterable[str], snapshots: list[str] | None = None) -> InputSize:
    """`InputSize` of these Delta tables."""
    from storage.offline import log_file_rows

    logs = [log_file_rows(path, snapshots) for path in paths]
    known = [rows for rows in logs if rows is not None]
    return InputSize(sum(rows.total for rows in known) if len(known) == len(logs) else None,
                     max(rows.largest for rows in known) if known else None)


def new_jvm_options(config: AuditConfig, size: InputSize | None = None) -> str:
    """The options (`jobs.sizing.java_options_for`) of a JVM this process would start, with
    the heap `launch_conf` gives it for inputs of `size` (read from their logs when not
    given); none when spark-submit started it: the launcher chose its options."""
    from jobs.session import heap_to_commit, launched_by_spark_submit

    if launched_by_spark_submit():
        return ""
    size = size or input_size(config)
    heap = heap_to_commit(config.spark_conf, config.master, size.largest_file_rows)
    return java_options_for(size.rows, heap)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the options for `audit [flags]` (nothing for another job), then one line
    `key=value` per setting of the config file's spark.conf that only a JVM not yet started
    takes (`jobs.session.JVM_START_SETTINGS`: spark-submit.sh hands them to spark-submit,
    and does not choose the heap when one is `spark.driver.memory`; driver options merged
    with the launcher's); when the launcher
    chooses the heap and the inputs' largest file asks for more than 1g per core
    (`jobs.sizing.local_heap_for`), that heap as `spark.driver.memory=...` too. Return
    NOT_RUNNABLE, printing nothing, for `--help` and for what the run would reject before it starts
    Spark: its flags, its config file, its output root (`jobs.cli.run_audit` says what is
    wrong, in the same order)."""
    from jobs.cli import audit_config, parse_args
    from jobs.preflight import check_output_place
    from jobs.session import (
        DRIVER_JAVA_OPTIONS,
        DRIVER_MEMORY,
        driver_java_options,
        heap_to_commit,
        start_settings,
    )
    from vocabulary.errors import AuditError

    argv = list(sys.argv[1:] if argv is None else argv)
    master = None
    if argv[:1] == [LAUNCHER_HEAP] and len(argv) > 1:  # spark-submit.sh may choose the heap
        master, argv = argv[1], argv[2:]
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            args = parse_args(argv)
            if args.job != "audit":
                return 0
            config = audit_config(args)
            check_output_place(config)
            driver_memory_env()  # the JVM would refuse a heap that is not a size
    except (SystemExit, AuditError):  # --help, or a mistake the run would name
        return NOT_RUNNABLE
    except Exception:  # anything else: the run meets it and says what it is
        return 0
    # the config's own heap is the user's: no heap of the launcher's to commit
    size = input_size(config)
    heap = heap_to_commit(config.spark_conf, master, size.largest_file_rows) if master else None
    ours = java_options_for(size.rows, heap)
    print(ours)
    if heap and heap != launcher_heap(master):
        print(f"{DRIVER_MEMORY}={heap}")
    for key, value in start_settings(config.spark_conf).items():
        if key == DRIVER_JAVA_OPTIONS:  # they replace the launcher's: merged as a JVM
            value = driver_java_options(value, ours)  # started here merges them
        if "\n" not in value:  # a line each (one with a line break: the run warns)
            print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
