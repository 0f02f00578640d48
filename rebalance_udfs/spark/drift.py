"""The drift comparison in Spark: one grouped pandas call per bucket of groups
(`rebalance_udfs.drift.drift_rows`)."""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame

from rebalance_udfs.drift import drift_rows
from rebalance_udfs.spark.buckets import BUCKET, bucketed
from vocabulary.columns import DRIFT_COLUMNS, GROUP_KEYS
from vocabulary.schemas import DRIFT_SCHEMA

SIDE = "_side"  # "E": an expected holder, "O": an observed one, "S": a member's topic
EXPECTED, OBSERVED, SUBSCRIBER = "E", "O", "S"


def _compare_bucket(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.drop(columns=BUCKET)
    members = rows[rows[SIDE] == SUBSCRIBER]
    out = drift_rows(rows[rows[SIDE] == EXPECTED], rows[rows[SIDE] == OBSERVED],
                     members[[*GROUP_KEYS, "topic", "client_id", "strategy"]]
                     if len(members) else None)
    if out.empty:  # typed empty columns: Arrow cannot infer list<string> from nothing
        return pd.DataFrame({c: pd.Series([], dtype="int32" if c == "queue_id" else object)
                             for c in DRIFT_COLUMNS})
    out["queue_id"] = out["queue_id"].astype("int32")
    return out


def compare(holders: DataFrame, buckets: int) -> DataFrame:
    """DRIFT_SCHEMA rows from expected and observed holders and the members' topics
    (QUEUE_KEYS, client_id, strategy: a member's, null for a holder; SIDE)."""
    return (bucketed(holders, buckets, GROUP_KEYS).groupBy(BUCKET)
            .applyInPandas(_compare_bucket, DRIFT_SCHEMA))
