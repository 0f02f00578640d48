"""Spark's JVM running out of a resource, said as the setting to change, not a traceback.

A run too large for its heap, a code cache filled by a long query plan, a machine out of
threads: the JVM throws a `java.lang.OutOfMemoryError` or `VirtualMachineError`, which
reached the user as a Python traceback wrapping a Java one, with the cause a hundred
lines down. These are no bug of the job and no mistake in the inputs: the run needs more
of something, and the message names it and where to set it. A JVM that stopped under
the run (killed by the system's OOM killer, or by Spark after an error in a task
thread) is said as such too, in one line, and so is a Python worker killed under a task.

The output stays as the README's Guarantees say a run stopped part-way leaves it: the
snapshots it had begun replacing without a `runs` row until a re-run repairs them.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator

_HEAP = ("the driver's heap: `--driver-memory 6g` (spark-submit.sh, local runs; "
         "`--executor-memory` on a cluster), `REBALANCE_AUDIT_DRIVER_MEMORY=6g` for a run "
         "started from plain Python, or `spark.driver.memory`")
_CODE_CACHE = "`-XX:ReservedCodeCacheSize=512m` in `spark.driver.extraJavaOptions`"
# the JVM's words for a full code cache (a VirtualMachineError, not an OutOfMemoryError)
CODE_CACHE_FULL = ("CodeCache is full", "Out of space in CodeCache")
OUT_OF_MEMORY = "java.lang.OutOfMemoryError"
# (what an OutOfMemoryError's line holds, what ran out, where to give more); first wins
OUT_OF: tuple[tuple[str, str, str], ...] = (
    ("native thread", "threads",
     "fewer cores (`--master local[2]`) or a higher process limit (`ulimit -u`)"),
    ("Metaspace", "its metaspace",
     "`-XX:MaxMetaspaceSize=1g` in `spark.driver.extraJavaOptions`"),
    ("Direct buffer memory", "direct buffer memory",
     "`-XX:MaxDirectMemorySize=2g` in `spark.driver.extraJavaOptions`"),
    ("", "memory", _HEAP),
)
# what py4j says when the JVM it talked to is gone (no Java exception came back)
JVM_GONE = ("Answer from Java side is empty", "Error while receiving", "Error while sending")
RERUN = ("the output is as a run stopped part-way leaves it (README: Guarantees): the "
         "snapshots it had begun replacing have no `runs` row until a re-run of the same "
         "command repairs them")


def resource_message(exc: BaseException) -> str | None:
    """What ran out and where to give more, when `exc` (or an exception it wraps) is the
    JVM out of a resource; None otherwise."""
    lines = "\n".join(_texts(exc)).splitlines()
    full = next((line for line in lines if any(m in line for m in CODE_CACHE_FULL)), None)
    if full is not None:
        return _said(full, "its code cache", _CODE_CACHE)
    oom = next((line for line in lines if OUT_OF_MEMORY in line), None)
    if oom is None:
        return None
    what, remedy = next((what, remedy) for marker, what, remedy in OUT_OF if marker in oom)
    return _said(oom, what, remedy)


def jvm_gone_message(exc: BaseException) -> str | None:
    """A run whose JVM stopped under it (py4j can no longer reach it), said as such;
    None for any other error, a Java exception among them."""
    from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError

    def gone(e: BaseException) -> bool:
        if isinstance(e, (Py4JNetworkError, ConnectionRefusedError, ConnectionResetError)):
            return True
        return (isinstance(e, Py4JError) and not isinstance(e, Py4JJavaError)
                and any(marker in _text(e) for marker in JVM_GONE))

    if not any(gone(e) for e in _chain(exc)):
        return None
    return ("Spark's JVM stopped during the run (killed, or ended by an error it logged "
            "above; the system's out-of-memory killer, or a JVM out of memory, are the usual "
            f"causes: give it more with {_HEAP}); {RERUN}")


# what Spark says when a Python worker (or the daemon forking them) died under a task
WORKER_GONE = ("Python worker exited unexpectedly",
               "while reading the port number from pyspark.daemon's stdout")


def worker_gone_message(exc: BaseException) -> str | None:
    """A run whose Python worker died under a task (killed: the out-of-memory killer,
    an operator), said as such; None for any other error."""
    text = "\n".join(_texts(exc))
    if not any(marker in text for marker in WORKER_GONE):
        return None
    code = re.search(r"terminated with code: (-?\d+)", text)
    how = f" (its exit code {code.group(1)})" if code else ""
    return (f"a Python worker of Spark's died under the run{how}: killed, by the system's "
            "out-of-memory killer as a rule; give the machine more memory, or the run fewer "
            f"cores (`--master local[1]`) so that fewer workers hold groups at once; {RERUN}")


def gone_message(exc: BaseException) -> str | None:
    """The JVM or a Python worker gone under the run (`jvm_gone_message`,
    `worker_gone_message`), said as such; None for any other error. Whatever the job
    made of the failure (a write's AuditError, say) came after the loss, which is the
    news."""
    return jvm_gone_message(exc) or worker_gone_message(exc)


def _said(line: str, what: str, remedy: str) -> str:
    """The sentence, quoting the JVM's error from its class name on (a failed job's line
    opens with the stage and task that hit it)."""
    if OUT_OF_MEMORY in line:
        start = line.find(OUT_OF_MEMORY)
    else:
        marker = min(line.find(m) for m in CODE_CACHE_FULL if m in line)
        start = max(line.rfind("java.lang.", 0, marker), 0)
    java = line[start:].strip()
    return f"Spark's JVM ran out of {what} ({java}): give it more with {remedy}; {RERUN}"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _texts(exc: BaseException) -> Iterator[str]:
    return (_text(e) for e in _chain(exc))


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a Py4JJavaError whose JVM is gone cannot render itself
        return type(exc).__name__


def quiet_accumulator_eof() -> None:
    """pyspark's accumulator server, a thread reading the JVM's updates, prints a
    traceback (EOFError) when the JVM is killed mid-run, above the run's one line: for the
    command line, whose process ends with the run, that one is not printed; any other
    error of the thread still is."""
    from pyspark import accumulators

    for name in ("AccumulatorTCPServer", "AccumulatorUnixServer"):
        server = getattr(accumulators, name, None)
        if server is None or getattr(server, "_jvm_gone_quiet", False):
            continue
        printed = server.handle_error

        def handle_error(self, request, client_address, _printed=printed) -> None:
            if not isinstance(sys.exception(), (EOFError, ConnectionError)):
                _printed(self, request, client_address)

        server.handle_error = handle_error
        server._jvm_gone_quiet = True


def mute_py4j() -> None:
    """Once the JVM is gone and said so: py4j's records of the calls that still try it,
    as the process ends (logged on the root logger and its own, each with a traceback)."""
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
    logging.getLogger().addFilter(
        lambda record: "while sending command" not in record.getMessage())
