"""The table contracts: what the inputs must hold (SPEC §2) and the shapes of the tables
every run writes beside the reports (`rejects`, `runs`). Validation, scoping, publishing and
the report page all read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import types as T

STRING, INT, LONG, DOUBLE = T.StringType(), T.IntegerType(), T.LongType(), T.DoubleType()
BOOL, TIMESTAMP = T.BooleanType(), T.TimestampType()
PARAMS = T.MapType(T.StringType(), T.StringType())
# the strategy_params keys a strategy reads (CONSISTENT_HASH, MACHINE_ROOM, CONFIG, POP)
STRATEGY_PARAM_KEYS = ("virtual_nodes", "rooms", "queues", "pop_share_queue_num")


@dataclass(frozen=True)
class Col:
    name: str
    type: T.DataType
    required: bool


QUEUES = [
    Col("snapshot_id", STRING, True), Col("cluster", STRING, True),
    Col("captured_at", TIMESTAMP, False), Col("topic", STRING, True),
    Col("broker_name", STRING, False), Col("queue_id", INT, True),
    Col("readable", BOOL, False), Col("broker_room", STRING, False),
    Col("max_offset", LONG, False), Col("in_rate", DOUBLE, False),
]
MEMBERS = [
    Col("snapshot_id", STRING, True), Col("cluster", STRING, True),
    Col("consumer_group", STRING, True), Col("client_id", STRING, True),
    Col("topic", STRING, False), Col("strategy", STRING, True),
    Col("message_model", STRING, False), Col("client_room", STRING, False),
    Col("client_addr", STRING, False), Col("strategy_params", PARAMS, False),
    Col("allocation_mode", STRING, False),
]
OFFSETS = [
    Col("snapshot_id", STRING, True), Col("cluster", STRING, True),
    Col("consumer_group", STRING, True), Col("topic", STRING, True),
    Col("broker_name", STRING, False), Col("queue_id", INT, True),
    Col("committed_offset", LONG, False), Col("consumed_offset", LONG, False),
]
OBSERVED = [
    Col("snapshot_id", STRING, True), Col("cluster", STRING, True),
    Col("consumer_group", STRING, True), Col("topic", STRING, True),
    Col("broker_name", STRING, False), Col("queue_id", INT, True),
    Col("client_id", STRING, True), Col("source", STRING, False),
]
CONTRACTS = {"queues": QUEUES, "members": MEMBERS, "offsets": OFFSETS, "observed": OBSERVED}


def contract_schema(table: str) -> T.StructType:
    """An input table's contract as a Spark schema (required columns not nullable)."""
    return T.StructType([T.StructField(c.name, c.type, not c.required)
                         for c in CONTRACTS[table]])

REJECTS_SCHEMA = T.StructType([
    T.StructField("snapshot_id", STRING), T.StructField("cluster", STRING),
    T.StructField("source_table", STRING), T.StructField("row_json", STRING),
    T.StructField("reason", STRING),
])

# the reason of a row that repeats another row whole: the first copy is audited, so a
# copy leaves nothing out of the figures
EXACT_DUPLICATE = "exact duplicate of another row"

RUNS = "runs"
# the tables an audit writes under its output root (`runs` last, after every other)
OUTPUT_TABLES = ("assignments", "consumer_load", "group_balance", "rebalance_churn",
                 "strategy_comparison", "drift", "what_if", "rejects")
COMPLETE, NOT_AUDITED = "COMPLETE", "NOT_AUDITED"
RUNS_SCHEMA = T.StructType([
    T.StructField("snapshot_id", T.StringType()), T.StructField("cluster", T.StringType()),
    T.StructField("captured_at", T.TimestampType()),
    T.StructField("run_id", T.StringType()),
    T.StructField("started_at", T.TimestampType()),
    T.StructField("finished_at", T.TimestampType()),
    T.StructField("tables", T.ArrayType(T.StringType())),
    T.StructField("rows", T.MapType(T.StringType(), T.LongType())),
    T.StructField("engine", T.StringType()), T.StructField("status", T.StringType()),
])
