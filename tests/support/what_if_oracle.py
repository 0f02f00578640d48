"""The what-if kernel as a separate Spark pass, before the report pass computed it in the
assigning call (`rebalance_udfs.report_pass`), kept as its oracle: one cogrouped pandas
call per bucket of groups, the rows and their conversions Spark's own
(`applyInPandas`)."""

from __future__ import annotations

import pandas as pd
from pyspark.sql import DataFrame

from rebalance_udfs.spark.buckets import BUCKET, bucketed, with_bucket
from rebalance_udfs.what_if import (
    ASSIGNED_COLUMNS,
    WHAT_IF_MEMBER_COLUMNS,
    typed,
    what_if_bucket,
)
from vocabulary.columns import GROUP_KEYS
from vocabulary.schemas import WHAT_IF_SCHEMA


def _bucket_body(assigned: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """The UDF body: one bucket of groups in, their candidate rows out (WHAT_IF_SCHEMA)."""
    out = what_if_bucket(assigned.drop(columns=BUCKET), members.drop(columns=BUCKET))
    return typed(out)[WHAT_IF_SCHEMA.fieldNames()]


def simulate(assigned: DataFrame, members: DataFrame, buckets: int) -> DataFrame:
    """WHAT_IF_SCHEMA rows of every group in `assigned` (assignment rows with offsets) and
    `members` (the same groups' member rows)."""
    a = bucketed(with_bucket(assigned, *ASSIGNED_COLUMNS), buckets, GROUP_KEYS)
    m = bucketed(members.select(*WHAT_IF_MEMBER_COLUMNS), buckets, GROUP_KEYS)
    return (a.groupBy(BUCKET).cogroup(m.groupBy(BUCKET))
            .applyInPandas(_bucket_body, WHAT_IF_SCHEMA))
