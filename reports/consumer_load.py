"""`consumer_load`: one row per client: what it claims, in total and per topic, and whether
it idles. Every member appears, also those that claim nothing (that is the point)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from rebalance_udfs.spark.rates import rate_out
from vocabulary.columns import CLUSTERING, SNAPSHOT_KEYS

COLUMNS = ["snapshot_id", "cluster", "captured_at", "consumer_group", "client_id",
           "strategies", "message_model", "client_room", "connections", "topics", "queues",
           "queues_by_topic", "lag", "in_rate", "contended_queues", "idle"]


def _not_null() -> dict[str, Column]:
    """Columns the pass always fills, with the default that makes Spark declare them not
    null, as the table has always declared them."""
    no_strings = F.array().cast(T.ArrayType(T.StringType(), containsNull=False))
    return {
        "strategies": no_strings, "message_model": F.lit(CLUSTERING), "connections": F.lit(1),
        "topics": no_strings, "queues": F.lit(0),
        "queues_by_topic": F.create_map().cast(T.MapType(T.StringType(), T.IntegerType())),
        "contended_queues": F.lit(0), "idle": F.lit(True),
    }


def consumer_load_report(figures: DataFrame, times: DataFrame) -> DataFrame:
    """Every member with its claims; `topics` are what it subscribes (for churn triggers).

    `figures`: the report pass's consumer_load figures (`rebalance_udfs.report_pass`,
    LOAD_FIGURES: rates still exact decimals)."""
    rows = figures.join(F.broadcast(times), SNAPSHOT_KEYS, "left")
    return rows.withColumns({
        "in_rate": rate_out(F.col("in_rate")),
        **{name: F.coalesce(F.col(name), default) for name, default in _not_null().items()},
    }).select(*COLUMNS)
