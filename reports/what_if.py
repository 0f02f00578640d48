"""`what_if`: per group and candidate (client count, strategy, split by topic), the load the
same allocation kernels would give and what would move (`rebalance_udfs.what_if`).

The candidates are simulated in the report pass (`rebalance_udfs.report_pass`), in the
call that assigns the group's queues, with each group's what-if line
(`rebalance_udfs.what_if_lines`); this module shapes its rows into the table. Groups:
those with a finding (`findings`, the default), every group (`all`) or none (`off`: the
table is written empty).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from vocabulary.columns import GROUP_KEYS, SNAPSHOT_KEYS
from vocabulary.schemas import WHAT_IF_SCHEMA

COLUMNS = ["snapshot_id", "cluster", "captured_at", *WHAT_IF_SCHEMA.fieldNames()[2:]]


def what_if_report(simulated: DataFrame, times: DataFrame,
                   balance: DataFrame | None = None) -> DataFrame:
    """The what_if table (COLUMNS) from the report pass's rows (`simulated`,
    WHAT_IF_SCHEMA). `balance`: group_balance rows, given when the pass simulated more
    groups than have a finding (a run with observed rows: OBSERVED_DRIFT is known after
    the pass); only the groups whose whole-group row has a finding keep their rows."""
    if balance is not None:
        found = balance.where(F.col("topic").isNull() & (F.size("findings") > 0))
        simulated = simulated.join(found.select(*GROUP_KEYS), GROUP_KEYS, "left_semi")
    return simulated.join(F.broadcast(times), SNAPSHOT_KEYS, "left").select(*COLUMNS)
