"""The JVM out of a resource, or gone, is said as what to change (`jobs.resource_errors`):
the texts below are the JVM's and py4j's own words, as a run's exception carries them."""

from __future__ import annotations

from py4j.protocol import Py4JError, Py4JNetworkError

from jobs.resource_errors import jvm_gone_message, resource_message, worker_gone_message

# how a failed Spark job carries a task's error: the Java error a line among many
STAGE_FAILURE = """An error occurred while calling o412.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 7.0 \
failed 1 times, most recent failure: Lost task 3.0 in stage 7.0 (TID 31) (host executor \
driver): {error}
\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)
\tat org.apache.spark.sql.execution.SparkPlan.executeCollect(SparkPlan.scala:448)
"""


def test_each_resource_the_jvm_runs_out_of_names_its_setting() -> None:
    said = {error: resource_message(RuntimeError(STAGE_FAILURE.format(error=error)))
            for error in ("java.lang.OutOfMemoryError: Java heap space",
                          "java.lang.OutOfMemoryError: GC overhead limit exceeded",
                          "java.lang.OutOfMemoryError: unable to create native thread: "
                          "possibly out of memory or process/resource limits reached",
                          "java.lang.OutOfMemoryError: Metaspace",
                          "java.lang.OutOfMemoryError: Direct buffer memory",
                          "java.lang.VirtualMachineError: Out of space in CodeCache for "
                          "adapters")}
    assert said["java.lang.OutOfMemoryError: Java heap space"] == (
        "Spark's JVM ran out of memory (java.lang.OutOfMemoryError: Java heap space): give "
        "it more with the driver's heap: `--driver-memory 6g` (spark-submit.sh, local runs; "
        "`--executor-memory` on a cluster), `REBALANCE_AUDIT_DRIVER_MEMORY=6g` for a run "
        "started from plain Python, or `spark.driver.memory`; the output is as a run stopped "
        "part-way leaves it (README: Guarantees): the snapshots it had begun replacing have "
        "no `runs` row until a re-run of the same command repairs them")
    assert "`--driver-memory 6g`" in said[
        "java.lang.OutOfMemoryError: GC overhead limit exceeded"]
    assert "ran out of threads" in said[
        "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory "
        "or process/resource limits reached"]
    assert "`-XX:MaxMetaspaceSize=1g`" in said["java.lang.OutOfMemoryError: Metaspace"]
    assert "`-XX:MaxDirectMemorySize=2g`" in said[
        "java.lang.OutOfMemoryError: Direct buffer memory"]
    assert said["java.lang.VirtualMachineError: Out of space in CodeCache for adapters"
                ].startswith("Spark's JVM ran out of its code cache (java.lang."
                             "VirtualMachineError: Out of space in CodeCache for adapters)")
    assert "`-XX:ReservedCodeCacheSize=512m`" in said[
        "java.lang.VirtualMachineError: Out of space in CodeCache for adapters"]


def test_a_wrapped_error_is_found_through_its_cause() -> None:
    try:
        try:
            raise RuntimeError("java.lang.OutOfMemoryError: Java heap space")
        except RuntimeError as inner:
            raise ValueError("the write failed") from inner
    except ValueError as outer:
        assert "ran out of memory" in resource_message(outer)


def test_other_errors_are_left_to_their_traceback() -> None:
    """A group named after a JVM area, or a storage error, is no resource running out."""
    for text in ("group Metaspace-consumers: native thread pool",
                 "java.net.ConnectException: Connection refused", "CodeCache"):
        assert resource_message(RuntimeError(text)) is None
        assert jvm_gone_message(RuntimeError(text)) is None
    assert jvm_gone_message(Py4JError("An error occurred while calling o1.count")) is None


def test_a_jvm_gone_under_the_run_is_said_as_such() -> None:
    for gone in (Py4JNetworkError("Answer from Java side is empty"),
                 Py4JError("Error while receiving"), ConnectionRefusedError(111, "refused")):
        said = jvm_gone_message(gone)
        assert said.startswith("Spark's JVM stopped during the run (killed, or ended by an "
                               "error it logged above;")
        assert resource_message(gone) is None


def test_a_python_worker_killed_under_a_task_is_said_as_such() -> None:
    """kill -9 of pyspark.daemon during the assign pass: exit 1 and a 127-line Py4J and
    Java traceback, with no word that the output was untouched."""
    error = RuntimeError(STAGE_FAILURE.format(
        error="org.apache.spark.SparkException: EOFException occurred while reading the "
              "port number from pyspark.daemon's stdout and terminated with code: 137.."))
    said = worker_gone_message(error)
    assert said.startswith("a Python worker of Spark's died under the run (its exit code "
                           "137): killed, by the system's out-of-memory killer as a rule")
    assert "a re-run of the same command repairs them" in said
    assert worker_gone_message(RuntimeError("Python worker exited unexpectedly (crashed)"))
    assert worker_gone_message(RuntimeError("a group named daemon")) is None
    assert resource_message(error) is None and jvm_gone_message(error) is None


def test_a_failure_the_job_said_in_its_own_words_is_still_a_worker_or_jvm_gone(
        monkeypatch, capsys) -> None:
    """A write the job turned into an AuditError (exit 2, a user's mistake) because a
    worker or the JVM died under it is said as that loss, exit 1, as the same loss
    outside a write is; an AuditError of any other cause keeps its own words."""
    from jobs import cli
    from vocabulary.errors import AuditError

    def fails_with(cause: BaseException):
        def job(_args) -> int:
            raise AuditError("writing consumer_load failed") from cause
        return job

    killed = RuntimeError(STAGE_FAILURE.format(error="Python worker exited unexpectedly"))
    for cause, code, words in (
            (killed, cli.EXIT_FAILED, "a Python worker of Spark's died under the run"),
            (Py4JNetworkError("Answer from Java side is empty"), cli.EXIT_FAILED,
             "Spark's JVM stopped during the run"),
            (ValueError("a bad row"), cli.EXIT_USER, "writing consumer_load failed")):
        monkeypatch.setitem(cli.JOBS, "audit", fails_with(cause))
        assert cli.main(["audit", "--output", "out"]) == code
        err = capsys.readouterr().err
        assert err.startswith("rebalance-audit: error: ") and words in err
        assert err.count("\n") == 1
