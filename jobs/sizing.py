"""How many shuffle partitions and pandas-UDF buckets a run uses: sized from its data.

The rule: one task per ROWS_PER_TASK input rows (queues + members + offsets + observed,
counted from the Delta logs' file statistics, no scan), never fewer than the cores Spark
has, never more than MAX_PARTITIONS. A bucket holds whole groups, so a bucket of 250,000
input rows keeps a Python worker's batch at a few hundred MB whatever the input size: the
1M benchmark (1.8M input rows) runs in 8 tasks, 10M (18.1M) in 73, 100M in about 730.
The input files are read in at least as many splits (`spark.sql.files.minPartitionNum`;
a split is never smaller than Spark's 4 MB file open cost). A setting given by the user
wins: `assign.buckets` (or `--buckets`) for the buckets, `spark.sql.shuffle.partitions`
and `spark.sql.files.minPartitionNum` (config `spark.conf`, spark-submit `--conf`) for
the partitions and splits.
"""

from __future__ import annotations

import math

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
