"""How many shuffle partitions and pandas-UDF buckets a run uses and how its local JVM
compiles, sized from its data; and its local JVM's heap, sized from its cores.

The rule: one task per ROWS_PER_TASK input rows (queues + members + offsets + observed,
counted from the Delta logs' file statistics, no scan; of the snapshots the run names,
when it names some), never fewer than the cores Spark has, never more than
MAX_PARTITIONS. A bucket holds whole groups, so a bucket of 250,000 input rows keeps a
Python worker's batch at a few hundred MB whatever the input size: the 1M benchmark (1.8M
input rows) runs in 8 tasks, 10M (18.1M) in 73, 100M in about 730.
The input files are read in at least as many splits (`spark.sql.files.minPartitionNum`;
a split is never smaller than Spark's 4 MB file open cost). A setting given by the user
wins: `assign.buckets` (or `--buckets`) for the buckets, `spark.sql.shuffle.partitions`
and `spark.sql.files.minPartitionNum` (config `spark.conf`, spark-submit `--conf`) for
the partitions and splits.

The join of the queue rows to the members' subscriptions (one row per snapshot, cluster,
group and topic) is a broadcast up to BROADCAST_SUBSCRIPTIONS of them, estimated by the
scope's aggregate (`jobs.scope`, no scan of its own): at 10M (309,272 subscriptions)
Spark's own estimate is above its 10 MB threshold, and it shuffled and sorted the queue
rows for a sort-merge join. The broadcast relation took 72.0 MiB at 10M (Spark's
"data size"), so about 115 MiB at the limit, which the driver and every executor hold;
above it (about 16M queue rows of the benchmark's shape) Spark chooses.

The JIT: a local run of fewer than SHORT_RUN_INPUT_ROWS input rows starts its JVM with C1
alone (`-XX:TieredStopAtLevel=1`, with the code cache a tiered JVM has, `jobs.launch`):
such a run ends before C2's compiles,
which take one of the cores, pay for themselves. Larger runs keep the JVM's default.
The heap: a larger (or unknown) local run whose heap the launcher chose starts with that
heap committed (`-Xms` = the heap, see `java_options_for`). Its size is 1g per core, or
more when the inputs' largest file asks for it (`heap_gb_for_file_rows`): a task that
reads an input straight into a shuffle reads at least a Parquet row group, which Spark
does not split, so its rows follow the files, not ROWS_PER_TASK.
"""

from __future__ import annotations

import math
import os
import re
import sys

from vocabulary.errors import ConfigError

ROWS_PER_TASK = 250_000
MAX_PARTITIONS = 4_000


def partitions_for(input_rows: int | None, cores: int) -> int:
    """Tasks for this many input rows (cores when unknown)."""
    if not input_rows:
        return max(1, cores)
    return max(1, cores, min(MAX_PARTITIONS, math.ceil(input_rows / ROWS_PER_TASK)))


def waves_for(rows: int | None, cores: int) -> int:
    """`partitions_for(rows)` rounded up to whole waves of the cores, for a stage that runs
    alone: the pass's side tables decoded as they are written (at 10M group_balance's 3
    tasks on 2 cores left one core idle for a third of the stage)."""
    cores = max(1, cores)
    return -(-partitions_for(rows, cores) // cores) * cores


BROADCAST_SUBSCRIPTIONS = 500_000


def broadcasts_subscriptions(estimate: int | None) -> bool:
    """Whether the queue rows' join broadcasts the members' subscriptions (no when their
    number is not known: Spark's own estimate decides)."""
    return estimate is not None and estimate <= BROADCAST_SUBSCRIPTIONS


# Measured cold through spark-submit.sh on 2 cores, wall clock, C1 alone against the
# default, two runs each alternating: the demo (67k input rows) 22.2 s against 25.4-26.1;
# the benchmark's 100k inputs (0.18M rows) 21.6-23.1 against 26.5-26.7; 300k (0.56M)
# 28.2-29.2 against 32.3-33.2; 1M (1.8M) 44.5-46.4 against 45.0-46.3, even: above it
# C2's faster code wins (see benchmarks/README.md).
SHORT_RUN_INPUT_ROWS = 1_000_000
# C1 alone also shrinks the JVM's code cache to 48 MB, the size for a JVM without tiered
# compilation; a 28k-row audit of 1,300 small input files filled it (46.5 MB at its peak,
# 44.8 MB from the same rows in a few files), and one run in four died with "Out of space
# in CodeCache for adapters". The cache is given the tiered default back: it is reserved
# address space, committed only as compiled code fills it.
C1_ONLY = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
INITIAL_HEAP = "-Xms"

# A local driver runs every task, and G1 grows its heap under the cap each time its pauses
# take more than their share of a stretch of the run: the longer the run, the more such
# stretches, so the JVM's peak followed the run's length, not what it holds. GC logs of
# the benchmark's audits on 2g (local[2]): the heap after mixed collections at most 497 MB
# at 1M and 575 MB at 10M, Spark's execution pages (humongous regions) up to 412 and
# 473 MB, every expansion one G1 chose for its pause time; committed 990 MB at 1M and
# 1,451 at 10M. Over eleven runs (whatever the setting tried) the peaks were 1.45-2.05 GB
# at 1M and 1.90-2.55 GB at 10M, 1.06-1.50x. Committed at start, the heap is the same at
# every size (2,501 -> 2,710 and 2,576 -> 2,713 MB: 1.08x, 1.05x) and G1 collects less:
# its threads' CPU at 10M 3.7-3.9 s against 12.5-36.3 s in four runs without. A short run
# keeps the JVM's lazy heap: the demo peaked at 1.1 GB, 1.8-2.2 GB with its heap committed
# (benchmarks/README.md, "The heap committed at start").
def java_options_for(input_rows: int | None, heap: str | None = None) -> str:
    """The local JVM's options for a run of this many input rows: C1 alone for a short run;
    else the launcher's `heap` committed at start (`-Xms`, when the launcher chose the
    heap: it is then the `-Xmx` too), or '' (the JVM's default)."""
    if input_rows is not None and input_rows < SHORT_RUN_INPUT_ROWS:
        return C1_ONLY
    return f"{INITIAL_HEAP}{heap}" if heap else ""


# The heap of a local driver, which runs every task: per core that runs tasks, within
# bounds. A task's rows are bounded by ROWS_PER_TASK where they come out of a shuffle, so
# the heap such a task needs does not grow with the input; the JVM's resident memory
# follows its heap, which G1 grows to the cap where Spark's sorts and shuffles may use it.
# Measured on 2 cores (local[2], the benchmark's 1M and 10M): 2g runs 10M without spill
# (304 s; 4g's last run here 359 s), the JVM peaking at 2.6 GB against 4.7 GB. At most 4g,
# the heap every local run had before: more cores were not measured. Spark's own 1g
# default dies near 10M assignment rows.
HEAP_GB_PER_CORE, MIN_HEAP_GB, MAX_HEAP_GB = 1, 2, 4

# A task that reads an input straight into a shuffle (the offsets rows into the report
# pass's) holds a whole Parquet row group, up to a whole file, in its shuffle writer's
# pages. At 100M the benchmark's offsets files hold 3,137,288 rows (one row group each):
# on 2g and 2 cores each of the 32 tasks that read them filled its share of execution
# memory (512 MiB of (2,048 - 300) x 0.6 / 2) and spilled 268-705 MB from memory, 4,998 MB
# to disk in all (benchmarks/results/20261204T043639Z.json, Spark's event log); on 4g none
# spilled (20261204T021626Z). So the heap gives every core's task BYTES_PER_FILE_ROW per
# row of the largest file in its share, about 40% over the most a task spilled from memory
# (705 MB for 3.1M rows, 225 bytes a row): 4g for that 100M, 2g (the cores' rule) at 10M.
BYTES_PER_FILE_ROW = 320
RESERVED_MB, MEMORY_FRACTION = 300, 0.6  # Spark's reserved heap, spark.memory.fraction


def heap_gb_for_file_rows(largest_file_rows: int, cores: int) -> int:
    """Whole gigabytes of heap in which each of `cores` tasks' share of Spark's execution
    memory holds BYTES_PER_FILE_ROW for each row of the inputs' largest file."""
    share_mb = largest_file_rows * BYTES_PER_FILE_ROW / 2**20
    return math.ceil((RESERVED_MB + max(1, cores) * share_mb / MEMORY_FRACTION) / 1024)


def local_cores(master: str, machine_cores: int | None = None) -> int | None:
    """The cores a local master runs tasks on in its driver: `local` 1, `local[N]` and
    `local[N,F]` N, `local[*]` the machine's; None for any other master (`local-cluster[...]`
    runs its tasks in executors of their own)."""
    if not master.startswith("local") or master.startswith("local-cluster"):
        return None
    machine = machine_cores or os.cpu_count() or 1
    inside = master[len("local["):-1].split(",")[0].strip() if master.endswith("]") else "1"
    return max(1, machine if inside == "*" else int(inside) if inside.isdigit() else machine)


def local_heap_for(master: str, machine_cores: int | None = None,
                   largest_file_rows: int | None = None) -> str | None:
    """The driver heap (`spark.driver.memory`) for a local master, None for any other:
    HEAP_GB_PER_CORE per core of `local_cores`, or `heap_gb_for_file_rows` when the
    inputs' largest file (its rows, when known) asks for more, within
    MIN_HEAP_GB-MAX_HEAP_GB; `local-cluster[...]` keeps MAX_HEAP_GB."""
    if master.startswith("local-cluster"):
        return f"{MAX_HEAP_GB}g"
    cores = local_cores(master, machine_cores)
    if cores is None:
        return None
    files = heap_gb_for_file_rows(largest_file_rows, cores) if largest_file_rows else 0
    return f"{min(MAX_HEAP_GB, max(MIN_HEAP_GB, HEAP_GB_PER_CORE * cores, files))}g"


# the user's driver heap for every launch of the job (spark-submit.sh, plain Python, the
# benchmark), over `local_heap_for`
DRIVER_MEMORY_ENV = "REBALANCE_AUDIT_DRIVER_MEMORY"


# a size the JVM's -Xmx and spark-submit's --driver-memory both take: 512m, 2g, 4096M
# (a bare number is bytes to the JVM and MiB to Spark, so a unit is required)
JVM_SIZE = re.compile(r"[1-9][0-9]*[kmgtKMGT]")


def driver_memory_env() -> str | None:
    """DRIVER_MEMORY_ENV's heap (None when unset or empty), refused unless it is a JVM size:
    `lots` reached the JVM ("Invalid maximum heap size", exit 1)."""
    value = os.environ.get(DRIVER_MEMORY_ENV)
    if value and not JVM_SIZE.fullmatch(value):
        raise ConfigError(f"{DRIVER_MEMORY_ENV}={value!r} is not a JVM heap size: give a "
                          "number and a unit, e.g. 512m, 2g, 4096M (or unset it)")
    return value or None


def launcher_heap(master: str, largest_file_rows: int | None = None) -> str | None:
    """The heap the launcher gives the driver when the user's launch names none:
    DRIVER_MEMORY_ENV when set (`driver_memory_env`), else `local_heap_for` (with the rows
    of the inputs' largest file, when known)."""
    return (driver_memory_env()
            or local_heap_for(master, largest_file_rows=largest_file_rows))


def tasks_heap(master: str, largest_file_rows: int | None = None) -> str | None:
    """`launcher_heap` where the driver runs the tasks (`local_cores`): the heap
    `java_options_for` commits at start; None for any other master."""
    if local_cores(master) is None:
        return None
    return launcher_heap(master, largest_file_rows)


def main(argv: list[str] | None = None) -> int:
    """`python -m jobs.sizing MASTER`: print `launcher_heap(MASTER)` (nothing when there
    is none), for spark-submit.sh; exit 2 with the message when DRIVER_MEMORY_ENV is not a
    size."""
    args = sys.argv[1:] if argv is None else argv
    try:
        heap = launcher_heap(args[0]) if args else None
    except ConfigError as exc:  # exit 2 before spark-submit.sh starts a JVM
        print(f"rebalance-audit: error: {exc}", file=sys.stderr)
        return 2
    if heap:
        print(heap)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
