"""The churn pass in Spark: one cogrouped Arrow call per bucket of groups computes the
rebalance_churn figures of its groups (`rebalance_udfs.churn`) from the linked assignment
rows and client rows of both sides of each compared pair."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.churn import CLIENT_COLUMNS, QUEUE_COLUMNS, churn_totals
from rebalance_udfs.spark.buckets import BUCKET, bucketed
from vocabulary.columns import GROUP_KEYS
from vocabulary.schemas import CHURN_TOTALS_SCHEMA


def _body(queues: pa.Table, clients: pa.Table) -> pa.Table:
    return churn_totals(queues.drop_columns([BUCKET]), clients.drop_columns([BUCKET]))


def churn_pass(queue_rows: DataFrame, client_rows: DataFrame, buckets: int) -> DataFrame:
    """CHURN_TOTALS_SCHEMA rows of every compared group. `queue_rows` / `client_rows`:
    QUEUE_COLUMNS / CLIENT_COLUMNS keyed by the later snapshot (both sides of a pair are
    bucketed together)."""
    # fresh column ids (alias): both sides usually come from one linked frame
    clients = client_rows.select(*[F.col(c).alias(c) for c in CLIENT_COLUMNS])
    return (bucketed(queue_rows.select(*QUEUE_COLUMNS), buckets, GROUP_KEYS).groupBy(BUCKET)
            .cogroup(bucketed(clients, buckets, GROUP_KEYS).groupBy(BUCKET))
            .applyInArrow(_body, CHURN_TOTALS_SCHEMA))
