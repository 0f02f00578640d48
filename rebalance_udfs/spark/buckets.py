"""Buckets of groups: one grouped UDF call per bucket, so a Python call's fixed cost
(~1 ms) is paid per bucket, not per group."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

BUCKET = "_bucket"


def bucket_of(buckets: int, keys: Sequence[str]) -> Column:
    """The bucket of a row's `keys`: all rows with the same keys land in the same call."""
    return F.pmod(F.xxhash64(*[F.col(k) for k in keys]), F.lit(buckets))
