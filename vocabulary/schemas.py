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

# the drift table (columns DRIFT_COLUMNS): one row per drifting queue
DRIFT_SCHEMA = T.StructType([
    T.StructField("snapshot_id", T.StringType()), T.StructField("cluster", T.StringType()),
    T.StructField("consumer_group", T.StringType()), T.StructField("topic", T.StringType()),
    T.StructField("broker_name", T.StringType()), T.StructField("queue_id", T.IntegerType()),
    T.StructField("expected_clients", T.ArrayType(T.StringType())),
    T.StructField("observed_clients", T.ArrayType(T.StringType())),
    T.StructField("kind", T.StringType()),
])
