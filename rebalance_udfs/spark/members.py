"""Member-row expressions the kernels' glue and the reports share."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from vocabulary.columns import CLUSTERING


def clustering() -> Column:
    """Members in CLUSTERING mode (the default when message_model is null)."""
    return F.coalesce(F.col("message_model"), F.lit(CLUSTERING)) == CLUSTERING


def variant() -> Column:
    """A member's strategy with its parameters, one comparable string (MIXED_STRATEGIES
    counts the distinct ones of a group)."""
    params = F.to_json(F.array_sort(F.map_entries(
        F.coalesce(F.col("strategy_params"), F.create_map().cast("map<string,string>")))))
    return F.concat_ws("|", "strategy", params)
