"""Churn in Spark: what the report pass needs to compare each group's snapshots in its own
call (`History`, the predecessor's rows marked PRIOR beside the run's), and the same
comparison over assignment and consumer_load rows given as frames (`churn`), for
rebalance_churn on its own (`reports.rebalance_churn.rebalance_churn_report`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn import churn_totals
from rebalance_udfs.churn_link import CLIENT_ROW_COLUMNS, PAIR_KEYS, ROW_COLUMNS, churn_inputs
from rebalance_udfs.spark.buckets import BUCKET, BUCKET_KEYS, bucketed
from vocabulary.schemas import CHURN_TOTALS_SCHEMA

# a row of the predecessor snapshot, from the output tables
PRIOR = "_prior"


@dataclass(frozen=True)
class History:
    """What churn compares the run's snapshots with: each run snapshot with a predecessor
    (`pairs`, PAIR_KEYS, a few rows collected on the driver) and the predecessor's
    assignment and consumer_load rows when it is not in the run (from the output
    tables; `consumer_load` alone is refused: its queues would all look added)."""

    pairs: pa.Table
    assignments: DataFrame | None = None
    consumer_load: DataFrame | None = None

    def __post_init__(self) -> None:
        if self.consumer_load is not None and self.assignments is None:
            raise ValueError("churn: prior consumer_load needs prior assignments too")


def no_history() -> History:
    return History(pa.table({"cluster": pa.array([], pa.string()),
                             "snapshot_id": pa.array([], pa.string()),
                             "previous_snapshot_id": pa.array([], pa.string()),
                             "previous_in_run": pa.array([], pa.bool_())}))


def with_prior(run: DataFrame, prior: DataFrame | None, columns: list[str]) -> DataFrame:
    """`run`'s rows and the predecessor's (`columns` of `prior`), marked PRIOR."""
    if prior is None:
        return run
    return (run.withColumn(PRIOR, F.lit(False))
            .unionByName(prior.select(*columns).withColumn(PRIOR, F.lit(True)),
                         allowMissingColumns=True))


def split_prior(rows: pa.Table, columns: list[str]) -> tuple[pa.Table, pa.Table | None]:
    """In a UDF body: (the run's rows, the predecessor's rows (`columns`), or None when
    no PRIOR rows came), BUCKET dropped."""
    rows = rows.drop_columns([BUCKET])
    if PRIOR not in rows.column_names:
        return rows, None
    prior = pc.fill_null(rows.column(PRIOR), False)
    return (rows.filter(pc.invert(prior)).drop_columns([PRIOR]),
            rows.filter(prior).select(columns))


def churn(assignments: DataFrame, consumer_load: DataFrame, history: History,
          buckets: int) -> DataFrame:
    """CHURN_TOTALS_SCHEMA rows of every compared group, from assignment rows and
    consumer_load rows given as frames: one cogrouped Arrow call per bucket of groups
    links both sides (`churn_inputs`) and counts (`churn_totals`), as the report pass
    does in its own call."""
    pairs = history.pairs.select(PAIR_KEYS)
    prior_load = history.consumer_load is not None

    def body(rows: pa.Table, clients: pa.Table) -> pa.Table:
        rows, prior_rows = split_prior(rows, ROW_COLUMNS)
        clients, prior_clients = split_prior(clients, CLIENT_ROW_COLUMNS)
        return churn_totals(*churn_inputs(rows, clients, prior_rows,
                                          prior_clients if prior_load else None, pairs))

    rows = with_prior(assignments.select(*ROW_COLUMNS), history.assignments, ROW_COLUMNS)
    clients = with_prior(consumer_load.select(*CLIENT_ROW_COLUMNS), history.consumer_load,
                         CLIENT_ROW_COLUMNS)
    return (bucketed(rows, buckets, BUCKET_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(clients, buckets, BUCKET_KEYS).groupBy(BUCKET))
            .applyInArrow(body, CHURN_TOTALS_SCHEMA))
