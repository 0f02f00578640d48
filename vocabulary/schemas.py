"""Spark schemas of the rows the pandas / Arrow UDFs return, shared by the Spark glue,
the reports and the tests; the Arrow twin is derived, never hand-mapped."""

from __future__ import annotations

from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from vocabulary.columns import QUEUE_FIRST

# one row per (queue, claiming client) and one null-client row per unclaimed queue
ASSIGNED_SCHEMA = T.StructType([
    T.StructField("snapshot_id", T.StringType(), False),
    T.StructField("cluster", T.StringType(), False),
    T.StructField("consumer_group", T.StringType(), False),
    T.StructField("topic", T.StringType(), False),
    T.StructField("broker_name", T.StringType(), True),
    T.StructField("queue_id", T.IntegerType(), False),
    T.StructField("broker_room", T.StringType(), True),
    T.StructField("max_offset", T.LongType(), True),
    T.StructField("in_rate", T.DoubleType(), True),
    T.StructField("committed_offset", T.LongType(), True),
    T.StructField("consumed_offset", T.LongType(), True),
    T.StructField("client_id", T.StringType(), True),
    T.StructField("strategy", T.StringType(), True),
    T.StructField("status", T.StringType(), False),
    # one row per queue: where reports count the queue's own facts (see first_of_queue)
    T.StructField(QUEUE_FIRST, T.BooleanType(), False),
])
# the same schema on the Arrow side: what the UDF bodies return
ASSIGNED_ARROW_SCHEMA = to_arrow_schema(ASSIGNED_SCHEMA)

# the what_if table without captured_at: one row per (group, candidate)
WHAT_IF_SCHEMA = T.StructType([
    T.StructField("snapshot_id", T.StringType(), False),
    T.StructField("cluster", T.StringType(), False),
    T.StructField("consumer_group", T.StringType(), False),
    T.StructField("candidate", T.StringType(), False),
    T.StructField("clients", T.IntegerType(), False),
    T.StructField("strategy", T.StringType(), True),
    T.StructField("virtual_nodes", T.IntegerType(), True),
    T.StructField("split_by_topic", T.BooleanType(), False),
    T.StructField("max_queues", T.IntegerType(), False),
    T.StructField("min_queues", T.IntegerType(), False),
    T.StructField("idle_clients", T.IntegerType(), False),
    T.StructField("skew", T.IntegerType(), False),
    T.StructField("queues_moved", T.IntegerType(), False),
    T.StructField("estimated_duplicates", T.LongType(), True),
    T.StructField("is_current", T.BooleanType(), False),
    T.StructField("recommended", T.BooleanType(), False),
])
WHAT_IF_ARROW_SCHEMA = to_arrow_schema(WHAT_IF_SCHEMA)

# the drift table (columns DRIFT_COLUMNS): one row per drifting queue
DRIFT_SCHEMA = T.StructType([
    T.StructField("snapshot_id", T.StringType()), T.StructField("cluster", T.StringType()),
    T.StructField("consumer_group", T.StringType()), T.StructField("topic", T.StringType()),
    T.StructField("broker_name", T.StringType()), T.StructField("queue_id", T.IntegerType()),
    T.StructField("expected_clients", T.ArrayType(T.StringType())),
    T.StructField("observed_clients", T.ArrayType(T.StringType())),
    T.StructField("kind", T.StringType()),
])

# the group-figures pass's two tables (`rebalance_udfs.group_figures`): consumer_load and
# group_balance rows; rates are exact decimals there, doubles in the tables
_RATE = T.DecimalType(38, 9)
_STRINGS = T.ArrayType(T.StringType())
_SETS = T.ArrayType(T.StringType(), containsNull=False)  # as consumer_load declares them
LOAD_FIGURES = T.StructType([
    T.StructField("snapshot_id", T.StringType()), T.StructField("cluster", T.StringType()),
    T.StructField("consumer_group", T.StringType()), T.StructField("client_id", T.StringType()),
    T.StructField("strategies", _SETS), T.StructField("message_model", T.StringType()),
    T.StructField("client_room", T.StringType()), T.StructField("connections", T.IntegerType()),
    T.StructField("topics", _SETS), T.StructField("queues", T.IntegerType()),
    T.StructField("queues_by_topic", T.MapType(T.StringType(), T.IntegerType())),
    T.StructField("lag", T.LongType()), T.StructField("in_rate", _RATE),
    T.StructField("contended_queues", T.IntegerType()), T.StructField("idle", T.BooleanType()),
])
_INT_FIGURES = ("clients", "subscribing_clients", "queues", "min_queues", "max_queues")
BALANCE_FIGURES = T.StructType([
    *[T.StructField(k, T.StringType())
      for k in ("snapshot_id", "cluster", "consumer_group", "topic")],
    *[T.StructField(k, T.IntegerType()) for k in _INT_FIGURES],
    T.StructField("mean_queues", T.DoubleType()),
    *[T.StructField(k, T.IntegerType())
      for k in ("ideal_max", "idle_clients", "unconsumed_queues", "contended_queues")],
    *[T.StructField(k, T.LongType()) for k in ("lag_total", "min_lag", "max_lag")],
    T.StructField("mean_lag", T.DoubleType()),
    *[T.StructField(k, _RATE) for k in ("in_rate_total", "min_in_rate", "max_in_rate")],
    # Spark's type of a mean of decimal(38, 9) sums
    T.StructField("mean_in_rate", T.DecimalType(38, 13)),
    T.StructField("pooled_max", T.IntegerType()), T.StructField("skew", T.IntegerType()),
    T.StructField("findings", _SETS),
    # what the recommendation's words quote
    T.StructField("_topic_strategy_names", _STRINGS), T.StructField("_empty_topics", _STRINGS),
    T.StructField("_imbalanced_topics", _STRINGS),
    T.StructField("_top_lag_client", T.StringType()),
    T.StructField("_client_lag_sum", T.LongType()),
    T.StructField("_top_rate_client", T.StringType()),
    T.StructField("_client_rate_sum", _RATE),
    T.StructField("duplicate_ids", _STRINGS), T.StructField("strategies", _STRINGS),
    T.StructField("_unsupported", _STRINGS), T.StructField("topic_sets", T.LongType()),
])
# the report pass's group_balance rows: the figures and, on a whole-group row, the group's
# what-if line (`rebalance_udfs.what_if_lines`)
BALANCE_FIGURES_WITH_LINE = T.StructType([*BALANCE_FIGURES.fields,
                                          T.StructField("_what_if_line", T.StringType())])
LOAD_FIGURES_ARROW_SCHEMA = to_arrow_schema(LOAD_FIGURES)
BALANCE_FIGURES_ARROW_SCHEMA = to_arrow_schema(BALANCE_FIGURES)
BALANCE_FIGURES_WITH_LINE_ARROW_SCHEMA = to_arrow_schema(BALANCE_FIGURES_WITH_LINE)

# the churn pass (`rebalance_udfs.churn`): one row per (later snapshot, cluster, group) of
# a compared pair; rebalance_churn adds the pair's times and the triggers. Nullability as
# the table has always declared it (an existing table's schema is appended to).
_MOVE = T.StructType([
    T.StructField("topic", T.StringType()), T.StructField("broker_name", T.StringType()),
    T.StructField("queue_id", T.IntegerType()),
    T.StructField("from_client", T.StringType()), T.StructField("to_client", T.StringType()),
    T.StructField("from_clients", _SETS, False), T.StructField("to_clients", _SETS, False),
    T.StructField("duplicate_estimate", T.LongType()),
])
CHURN_TOTALS_SCHEMA = T.StructType([
    *[T.StructField(k, T.StringType()) for k in ("snapshot_id", "cluster", "consumer_group")],
    *[T.StructField(k, T.IntegerType()) for k in ("clients_before", "clients_after")],
    *[T.StructField(k, _SETS, False) for k in ("clients_joined", "clients_left")],
    *[T.StructField(k, T.IntegerType()) for k in (
        "queues_before", "queues_after", "queues_added", "queues_removed", "queues_moved",
        "paused_queues")],
    T.StructField("moves", T.ArrayType(_MOVE, containsNull=False), False),
    T.StructField("estimated_duplicates", T.LongType()),
    T.StructField("duplicates_known_moves", T.IntegerType(), False),
    # whether a client present on both sides subscribes / runs something else
    T.StructField("_subscription", T.BooleanType(), False),
    T.StructField("_strategy", T.BooleanType(), False),
])
CHURN_TOTALS_ARROW_SCHEMA = to_arrow_schema(CHURN_TOTALS_SCHEMA)
