"""The drift comparison in Spark: one grouped pandas call per bucket of groups
(`rebalance_udfs.drift.drift_rows`)."""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from rebalance_udfs.drift import drift_rows
from rebalance_udfs.spark.buckets import BUCKET, bucketed
from vocabulary.columns import DRIFT_COLUMNS, GROUP_KEYS, STICKY_BREAK
from vocabulary.schemas import DRIFT_SCHEMA

SIDE = "_side"  # "E": an expected holder, "O": an observed one, "S": a member's topic
EXPECTED, OBSERVED, SUBSCRIBER = "E", "O", "S"
# the drift rows, each with why its sticky group's assignment failed the sticky check
EXPLAINED_SCHEMA = T.StructType([*DRIFT_SCHEMA.fields,
                                 T.StructField(STICKY_BREAK, T.StringType())])


def _compare_bucket(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.drop(columns=BUCKET)
    members = rows[rows[SIDE] == SUBSCRIBER]
    out = drift_rows(rows[rows[SIDE] == EXPECTED], rows[rows[SIDE] == OBSERVED],
                     members[[*GROUP_KEYS, "topic", "client_id", "strategy"]]
                     if len(members) else None, explained=True)
    if out.empty:  # typed empty columns: Arrow cannot infer list<string> from nothing
        return pd.DataFrame({c: pd.Series([], dtype="int32" if c == "queue_id" else object)
                             for c in [*DRIFT_COLUMNS, STICKY_BREAK]})
    out["queue_id"] = out["queue_id"].astype("int32")
    return out


def compare(holders: DataFrame, buckets: int) -> DataFrame:
    """EXPLAINED_SCHEMA rows (the drift table's and STICKY_BREAK) from expected and
    observed holders and the members' topics (QUEUE_KEYS, client_id, strategy: a
    member's, null for a holder; SIDE)."""
    return (bucketed(holders, buckets, GROUP_KEYS).groupBy(BUCKET)
            .applyInPandas(_compare_bucket, EXPLAINED_SCHEMA))
