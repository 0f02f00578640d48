"""`strategy_comparison`: how many queue moves each strategy would have caused.

For each candidate strategy every CLUSTERING member of every group is switched to it
(`rooms` / `queues` params cleared; `virtual_nodes` kept, so CONSISTENT_HASH uses the
member's own count or the default 10; BROADCASTING members keep theirs, they claim every
queue anyway), all snapshots of the run are re-allocated by the kernels the audit runs
(sticky ones chain the run's snapshots so each starts from the previous hypothetical
assignment) and consecutive snapshots of a cluster are compared per group with the churn
report's definition of a move (`reports.rebalance_churn`): every candidate of a bucket of
groups in the assign-and-report pass's call (`rebalance_udfs.spark.comparison`).

One row per (snapshot, cluster, consumer_group present in the snapshot, strategy) for the
snapshots that have a predecessor in the run: `queues` (after), `moves`, the duplicates those
moves would cause where offsets are known (`estimated_duplicates`, null when unknown;
`duplicates_known_moves`), `max_client_queues` (the heaviest client's queue count after:
what the strategy costs in balance) and `actual_strategy` (what the group's members really
run, sorted), so an operator can weigh stability against balance.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from vocabulary.columns import SNAPSHOT_KEYS

COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "previous_snapshot_id", "consumer_group",
    "strategy", "actual_strategy", "queues", "moves", "estimated_duplicates",
    "duplicates_known_moves", "max_client_queues",
]


def strategy_comparison_report(rows: DataFrame, times: DataFrame) -> DataFrame:
    """Move counts per candidate strategy (COLUMNS); see the module docstring.

    `rows`: the pass's rows (`rebalance_udfs.comparison.ROWS_SCHEMA`: one per group
    present in a compared snapshot and candidate, zero counts where the candidate gave it
    no queue on either side); `times`: the snapshots' captured_at."""
    return rows.join(F.broadcast(times), SNAPSHOT_KEYS, "left").select(*COLUMNS)
