"""Ctrl-C (or SIGTERM) during a run: one line saying what the output holds, not pages of
tracebacks.

PySpark's own SIGINT handler cancels Spark's jobs through py4j from inside the signal. The
driver waits on a py4j answer most of a run, so that call is reentrant on the same socket:
py4j logged it and the interrupted call as tracebacks on the root logger, pyspark its own,
then Python the KeyboardInterrupt's, and the user learned nothing of the output. During a
run (`interruptible`) Ctrl-C only raises KeyboardInterrupt; the run cancels Spark's jobs
once it is out of the py4j call, py4j's records of the interrupted call are dropped, and
the command line prints `RunInterrupted`'s message (exit 130).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from pyspark.sql import SparkSession

from jobs.jvm_logs import silence_all
from jobs.resource_errors import quiet_accumulator_eof
from vocabulary.words import listed

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C ended
# set by spark-submit.sh, which waits for spark-submit in the background
LAUNCHED = "REBALANCE_AUDIT_LAUNCHED"
# what stops a run as Ctrl-C does: SIGTERM is what timeout, schedulers and YARN send
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# the command line's process ends with the run: after Ctrl-C the JVM's log is turned off,
# else the jobs it cancels and the checkpoints the run releases fail with Java stack traces
# under the run's last line. A notebook keeps its session's log level.
_silence_jvm_after = False


def for_command_line() -> None:
    """Turn the JVM's log off after a Ctrl-C (the command line, whose process ends). Under
    spark-submit.sh, which runs spark-submit in the background to hand it SIGTERM, the job
    starts with Ctrl-C ignored, as a background command does: it takes it back."""
    global _silence_jvm_after
    _silence_jvm_after = True
    quiet_accumulator_eof()
    if (os.environ.get(LAUNCHED) and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) == signal.SIG_IGN):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def process_ending() -> bool:
    """Whether a Ctrl-C is ending the command line's process: freeing Spark's blocks then
    only logs warnings about them (the JVM goes with the process)."""
    return _silence_jvm_after and isinstance(sys.exception(), KeyboardInterrupt)


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C; its text says what the output holds. A KeyboardInterrupt
    still, so a notebook's or scheduler's handling of one is unchanged."""

    def __init__(self, output: str, published: bool,
                 withdrawn: list[str] | None = None) -> None:
        super().__init__(output, published, withdrawn)
        self.output, self.published, self.withdrawn = output, published, withdrawn

    def __str__(self) -> str:
        if self.published:
            return (f"the run had published its snapshots in {self.output} (every table and "
                    "its runs rows are complete); its summary and report.html were not made: "
                    f"`report --output {self.output}` writes the page")
        if self.withdrawn is None:
            return (f"the run published nothing in {self.output}: it had not begun writing, "
                    "so the output is as the earlier runs left it")
        # the first step of publishing (`jobs.write`) removes the runs rows of the
        # snapshots it replaces: it said "the earlier complete runs stand" of them
        return (f"the run published nothing in {self.output}: it had begun replacing "
                f"snapshot(s) {listed(self.withdrawn[:5], len(self.withdrawn))}, whose runs "
                "rows it removes first, so dashboards joining on runs skip those snapshots "
                "and the rows of tables it had committed (report.html names them as "
                "incomplete) until it is run again, which repairs them")


class _InterruptedCalls(logging.Filter):
    """Drops py4j's records of the call Ctrl-C interrupted (logged on the root logger),
    once it has: before, a failed py4j call is logged as always."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    def filter(self, record: logging.LogRecord) -> bool:
        return not (self.interrupted and "while sending command" in record.getMessage())


@contextmanager
def interruptible(spark: SparkSession) -> Iterator[None]:
    """Ctrl-C (or SIGTERM) within raises KeyboardInterrupt only, and Spark's jobs are
    cancelled after.
    Outside the main thread (a notebook's worker, a test's thread) nothing changes:
    Python delivers signals to the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    calls = _InterruptedCalls()
    root = logging.getLogger()

    def raise_interrupt(_signum: int, _frame: object) -> None:
        calls.interrupted = True
        if _silence_jvm_after:
            # the command line's process ends: py4j's own loggers (a connection closed
            # under the interrupted call) printed a traceback above the run's one line
            logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, raise_interrupt) for sig in STOP_SIGNALS}
    root.addFilter(calls)
    try:
        yield
    except KeyboardInterrupt:
        calls.interrupted = True
        with suppress(Exception):  # the JVM may be going too: the interrupt stands
            if _silence_jvm_after:
                silence_all(spark)
            spark.sparkContext.cancelAllJobs()
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        # the command line's process ends, and py4j's shutdown may still log the call; a
        # notebook's later py4j failures are logged as always
        if not (calls.interrupted and _silence_jvm_after):
            root.removeFilter(calls)
