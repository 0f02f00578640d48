"""Validation: the inputs against their contracts (SPEC §2), and row-level rejects.

A table whose *shape* is wrong (a required column missing, a column of the wrong type)
stops the run with a message naming the table and column. Rows that cannot be used go to
`rejects` with the reason; every other row proceeds. Nothing is dropped silently.
"""

from __future__ import annotations

import difflib
import re
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.persist import Persist
from rebalance_udfs.hashring import MAX_VIRTUAL_NODES
from rebalance_udfs.spark.rates import RATE_LIMIT
from rebalance_udfs.strategies import supported_strategies
from vocabulary.columns import (
    ALLOCATION_MODES,
    FIRST_CAPTURE_YEAR,
    MAX_QUEUE_ID,
    MESSAGE_MODELS,
    OFFSET_LIMIT,
)
from vocabulary.contracts import CONTRACTS, EXACT_DUPLICATE, INT
from vocabulary.errors import InputError
from vocabulary.partitions import (
    ESCAPED_CHARS,
    FOLDER_NAME_BYTES,
    NO_FOLDER,
    NULL_PARTITION_NAME,
    PARTITION_FOLDER,
    TOO_LONG,
)

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = (*_INTEGRAL, T.FloatType, T.DoubleType, T.DecimalType)
# a dict key no row gives a value is typed void (NullType)
_SCALARS = (*_NUMERIC, T.StringType, T.BooleanType, T.NullType)


def _compatible(actual: T.DataType, wanted: T.DataType) -> bool:
    """Types we accept and cast: any integer for int/long, any number for double."""
    if isinstance(wanted, (T.IntegerType, T.LongType)):
        return isinstance(actual, _INTEGRAL)
    if isinstance(wanted, T.DoubleType):
        return isinstance(actual, _NUMERIC)
    if isinstance(wanted, T.TimestampType):
        return isinstance(actual, (T.TimestampType, T.TimestampNTZType, T.DateType))
    if isinstance(wanted, T.MapType):
        # values of any scalar type read as text, as a dict struct's do (`_struct_as_map`):
        # a map<string,int> written by Spark or pyarrow was refused, its struct twin read
        return (isinstance(actual, T.MapType) and isinstance(actual.keyType, T.StringType)
                and isinstance(actual.valueType, _SCALARS))
    return type(actual) is type(wanted)


def _is_dict_struct(actual: T.DataType, wanted: T.DataType) -> bool:
    """A struct of scalars where a map<string,string> is wanted: how pandas and pyarrow
    write a column of Python dicts (one field per key any row has, null where a row
    lacks it)."""
    return (isinstance(wanted, T.MapType) and isinstance(actual, T.StructType)
            and all(isinstance(f.dataType, _SCALARS) for f in actual.fields))


def _struct_as_map(value: Column, struct: T.StructType) -> Column:
    """The map a dict struct spells: its non-null fields, values as text (a number 10
    reads as "10", as a map would hold it); null where the struct is null."""
    if struct.fields:
        pairs = F.create_map(*[part for f in struct.fields
                               for part in (F.lit(f.name), value[f.name].cast("string"))])
    else:  # no key in any row: an empty map of the contract's type
        pairs = F.create_map().cast("map<string,string>")
    return F.when(value.isNotNull(), F.map_filter(pairs, lambda _, v: v.isNotNull()))


def _hint(actual: T.DataType, wanted: T.DataType) -> str:
    """Why a column came out of pandas with that type, where it is a known trap."""
    if (isinstance(wanted, (T.IntegerType, T.LongType))
            and isinstance(actual, (T.FloatType, T.DoubleType))):
        return (" (pandas makes an integer column holding a missing value float: write it "
                "as pandas' nullable Int64, whose missing values are nulls)")
    return ""


def conform(df: DataFrame, table: str) -> DataFrame:
    """Check the columns against the contract; add absent nullable columns as nulls (and
    void ones, which hold nothing else); cast accepted types to the contract's (a struct
    of dict keys to a map); drop extra columns. Raises InputError."""
    fields = {f.name: f.dataType for f in df.schema.fields}
    lower = {name.lower(): name for name in fields}
    problems, columns, void = [], [], []
    for col in CONTRACTS[table]:
        actual_name = col.name if col.name in fields else lower.get(col.name.lower())
        if actual_name is None:
            if col.required:
                problems.append(f"required column `{col.name}` ({col.type.simpleString()}) "
                                "is missing")
            columns.append(F.lit(None).cast(col.type).alias(col.name))
            continue
        actual = fields[actual_name]
        if isinstance(actual, T.NullType):
            # void: the writer had no value to type the column by (pandas and pyarrow
            # write a column that is null everywhere, or an empty frame's text, so)
            if col.required:
                void.append(f"`{actual_name}` ({col.type.simpleString()})")
            else:  # null everywhere, as when it is left out
                columns.append(F.lit(None).cast(col.type).alias(col.name))
            continue
        if _is_dict_struct(actual, col.type):
            columns.append(_struct_as_map(F.col(f"`{actual_name}`"), actual).alias(col.name))
            continue
        if not _compatible(actual, col.type):
            problems.append(f"column `{actual_name}` is {actual.simpleString()}, "
                            f"expected {col.type.simpleString()}{_hint(actual, col.type)}")
            continue
        value = F.col(f"`{actual_name}`")
        if col.name == "broker_name":
            # a Kafka partition's is null, which sorts as "" (SPEC): the two spellings
            # were two queues of one id, both assigned
            value = F.nullif(value, F.lit(""))
        if isinstance(col.type, T.IntegerType) and isinstance(actual, T.LongType):
            # keep the raw value: out-of-range ids become a reject, not a silent null
            columns.append(value.alias(col.name))
        else:
            columns.append(value.cast(col.type).alias(col.name))
    if void and not problems and df.isEmpty():
        # an empty pandas frame writes its text columns as void: no rows, so the empty
        # input it is (a warning; `--strict`: exit 2), as a typed empty table is
        return df.sparkSession.createDataFrame([], T.StructType(
            [T.StructField(c.name, c.type, True) for c in CONTRACTS[table]]))
    if void:
        problems.append(f"required column{'s' if len(void) > 1 else ''} {', '.join(void)} "
                        f"{'have' if len(void) > 1 else 'has'} type void: no value anywhere "
                        "(written from a column null everywhere, or from an empty frame)")
    if problems:
        raise InputError(f"{table} table: " + "; ".join(problems)
                         + f". Columns found: {', '.join(fields) or '(none)'}.")
    return df.select(*columns)


def unread_lookalikes(columns: list[str], table: str) -> list[tuple[str, str]]:
    """(column, contract column) for each column the audit does not read that looks like
    one it does (`maxOffset`, `message_model ` for max_offset, message_model): an extra
    column is ignored, and a missing nullable one is null everywhere, so a misspelt
    `readable` or `message_model` silently audited unreadable queues as readable and a
    broadcasting group as clustering. Said, not refused: an extra column may be the
    user's own."""
    contract = [c.name for c in CONTRACTS[table]]
    read = {name.lower() for name in contract}

    def squeezed(name: str) -> str:
        return re.sub(r"[^0-9a-z]", "", name.lower())

    by_squeeze = {squeezed(name): name for name in contract}
    present = {column.lower() for column in columns}
    pairs = []
    for column in columns:
        if column.lower() in read:
            continue
        near = by_squeeze.get(squeezed(column)) or next(iter(difflib.get_close_matches(
            column.lower(), contract, n=1, cutoff=0.8)), None)
        if near is not None and near.lower() not in present:
            pairs.append((column, near))
    return pairs


def _reasons(*checks: tuple[Column, str]) -> Column:
    """Semicolon-joined reasons of the failing checks, or null when the row is fine.

    The reasons' array is built only for a row that fails a check: a fine row (nearly
    every row) costs the checks alone, not an array per row."""
    if not checks:
        return F.lit(None).cast("string")
    fails = reduce(lambda a, b: a | b, [cond for cond, _ in checks])
    parts = F.array_compact(F.array(*[F.when(cond, F.lit(msg)) for cond, msg in checks]))
    return F.when(fails, F.array_join(parts, "; "))


def _required_null_checks(table: str) -> list[tuple[Column, str]]:
    return [(F.col(c.name).isNull(), f"{c.name} is null")
            for c in CONTRACTS[table] if c.required]


# the characters Spark escapes in a partition folder's name (`vocabulary.partitions`) as a
# Java regex class, each by its code
_ESCAPED_IN_FOLDERS = "[" + "".join(f"\\x{ord(c):02x}" for c in sorted(ESCAPED_CHARS)) + "]"


def unwritable_snapshot_id(snapshot_id: Column) -> tuple[Column, Column, Column, Column]:
    """(empty, too long, holding a NUL, the null partition's name): whether each snapshot id
    cannot name an output partition (the driver's `snapshot_id_fits`, as a column)."""
    escaped = F.length(snapshot_id) - F.length(F.regexp_replace(snapshot_id,
                                                                _ESCAPED_IN_FOLDERS, ""))
    folder_bytes = len(PARTITION_FOLDER) + F.octet_length(snapshot_id) + 2 * escaped
    # an id of this many bytes fits even if every character is escaped: its characters
    # are not searched (Spark's `and` stops at a false left side), the usual id's case
    always_fits = (FOLDER_NAME_BYTES - len(PARTITION_FOLDER)) // 3
    return (snapshot_id == "", (F.octet_length(snapshot_id) > always_fits) & (
        folder_bytes > FOLDER_NAME_BYTES), snapshot_id.contains(NUL),
        snapshot_id == NULL_PARTITION_NAME)


def writable_snapshot_id(snapshot_id: Column) -> Column:
    """`snapshot_id`, or null where no partition folder can hold it: how the rejects
    table keeps such a row (its row_json has the id)."""
    return F.when(~reduce(lambda a, b: a | b, unwritable_snapshot_id(snapshot_id)),
                  snapshot_id)


def _snapshot_id_checks() -> list[tuple[Column, str]]:
    # a NUL is rejected in any text (`_nul_checks`): its reason says so once
    empty, too_long, _nul, null_name = unwritable_snapshot_id(F.col("snapshot_id"))
    return [(empty, "snapshot_id is empty (it names the outputs' partition of the snapshot)"),
            (too_long, f"snapshot_id is {TOO_LONG}"),
            (null_name, f"snapshot_id is {NO_FOLDER}")]


# pandas and numpy, which the kernels run on, end a string at its first NUL: 'c' and
# 'c\x00' would be one client (numpy also drops trailing NULs, so 'c\x00' alone gets no
# rank). No RocketMQ or Kafka name has one in practice; a row with one is rejected, never
# audited as another row's key.
NUL = "\x00"


def _nul_checks(table: str) -> list[tuple[Column, str]]:
    """A NUL in any text of the row (strategy_params keys and values too)."""
    checks = []
    for c in CONTRACTS[table]:
        column = F.col(c.name)
        if isinstance(c.type, T.StringType):
            checks.append((column.contains(NUL), f"{c.name} contains a NUL character"))
        elif isinstance(c.type, T.MapType):
            has_nul = F.exists(F.array_union(F.map_keys(column), F.map_values(column)),
                               lambda v: v.contains(NUL))
            checks.append((has_nul, f"{c.name} contains a NUL character"))
    return checks


def _queue_id_checks() -> list[tuple[Column, str]]:
    return [(F.col("queue_id") < 0, "queue_id is negative"),
            (F.col("queue_id") > MAX_QUEUE_ID, "queue_id does not fit an int")]


# Keys shared by several rows are broadcast to the rows' joins up to this many (they are
# normally none); above it a shuffle join is used and every row is scored and stored again.
BROADCAST_DUPLICATE_KEYS = 200_000
# the column of a key's 64-bit hash in the repeated hashes
KEY_HASH = "_key_hash"


def _split(
    df: DataFrame, table: str, reason: Column, key: list[str], persist: Persist
) -> tuple[DataFrame, DataFrame]:
    """Rows with a reason go to rejects; of exact duplicates the first copy proceeds and the
    others are rejected; rows that share `key` but differ are all rejected (ambiguous).

    The rows are materialized through the caller's `persist`, so good rows and rejects come
    from one pass over the input (the caller releases them); reading the files again in
    every later step measured slower (1M rows: read 15 s → 23 s, assign 19 s → 27 s).
    Duplicates are found by an aggregate of each row's key hash, its first action, not a
    window over every row (`_repeated_hashes`). Only the rows of a repeated hash (a shared
    key, or rarely two keys that collide: normally none) are scored against each other and
    stored apart; the other rows are the materialized rows as they are, less those hashes
    (a broadcast anti-join on the key's hash), so a few duplicates do not cost a second
    materialization of every row."""
    cols = [c for c in df.columns if not c.startswith("_")]
    key_hash = F.xxhash64(*[F.col(k) for k in key])
    # materialized by the key aggregate below, its first action: one scan of the input
    # serves both (the rows checkpointed first and then aggregated were two)
    rows = persist(df.withColumn("_reason", reason), eager=False)
    repeated = _repeated_hashes(rows, key_hash, persist)
    if repeated is None:
        scored = rows.withColumn("_final", F.col("_reason"))
    else:
        hashes, count = repeated
        few = count <= BROADCAST_DUPLICATE_KEYS
        if few:
            hashes = F.broadcast(hashes)
        repeats = key_hash == F.col(KEY_HASH)
        suspects = _scored(rows.join(hashes, repeats, "left_semi"), key, cols)
        others = rows.join(hashes, repeats, "left_anti").withColumn("_final", F.col("_reason"))
        # many repeated keys (an input loaded twice): every row scored and stored again,
        # so that later reads do not each repeat a shuffle join
        scored = (others.unionByName(persist(suspects)) if few
                  else persist(others.unionByName(suspects)))
    good = scored.where(F.col("_final").isNull()).select(*cols)
    return good, reject_rows(scored.where(F.col("_final").isNotNull()), table, F.col("_final"))


def reject_rows(rows: DataFrame, table: str, reason: Column) -> DataFrame:
    """`rejects` rows (REJECTS_SCHEMA's columns) of `rows` of input `table`: the row as it
    came in (its contract columns, nulls kept, as JSON) and `reason`."""
    return rows.select(
        F.col("snapshot_id"), F.col("cluster"), F.lit(table).alias("source_table"),
        F.to_json(F.struct(*[F.col(c.name) for c in CONTRACTS[table]]),
                  {"ignoreNullFields": "false"}).alias("row_json"),
        reason.alias("reason"),
    )


def _repeated_hashes(rows: DataFrame, key_hash: Column,
                     persist: Persist) -> tuple[DataFrame, int] | None:
    """The key hashes (KEY_HASH) more than one row has, and how many; None when none.

    Every row is counted once, by its 64-bit key hash: an aggregate over a single long,
    about half the cost of grouping every row by the key's strings (10M offsets rows:
    8.5–9.9 s against 19–28 s). Hashes that repeat are then stored (the aggregate once
    more): every later read of the rows joins them, and each would aggregate every row
    again (10M queues: 7 s a read). Stored by the counting job itself, inputs without a
    repeated key (nearly all) paid 0.4–0.9 s more (10M queues)."""
    spark = rows.sparkSession
    # hashed into the run's shuffle partitions by count, which adaptive execution keeps:
    # by bytes it merged 10M offsets' hashes into 3 tasks of 3.4M keys each, whose hash maps
    # spilled (169.5 MB on a 2g heap). Nearly every key is unique, so a partial aggregate
    # before the shuffle saved nothing: only the hashes are shuffled.
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    repeated = (rows.select(key_hash.alias(KEY_HASH)).repartition(parts, KEY_HASH)
                .groupBy(KEY_HASH).agg(F.count(F.lit(1)).alias("_rows"))
                .where(F.col("_rows") > 1).select(KEY_HASH))
    hashes = repeated.count()  # one Spark job over the materialized rows
    if hashes == 0:
        return None
    # a few partitions, not the shuffle's hundreds (100M): a checkpoint keeps them all, and
    # a hash-partitioned checkpoint would be planned without adaptive execution
    cores = spark.sparkContext.defaultParallelism
    return persist(repeated.coalesce(max(1, cores))), hashes


def _scored(rows: DataFrame, key: list[str], cols: list[str]) -> DataFrame:
    """`rows` with `_final`, the reason each is rejected for (null: it proceeds): its own
    `_reason`, or its key shared with a differing row, or an earlier exact copy.

    Rows of one hash are told apart by the key itself, which is what decides (the hash
    skips nulls, so two keys can hash alike), in one window over the key: its row count,
    whether its rows differ (their row hashes' min ≠ max, no distinct aggregation) and
    each row's copy number. (An aggregate by the key joined back to the rows read them
    twice.)"""
    comparable = [c for c in cols if not isinstance(rows.schema[c].dataType, T.MapType)]
    row_hash = F.xxhash64(*[
        F.to_json(F.array_sort(F.map_entries(F.col(c)))) if c not in comparable else F.col(c)
        for c in cols
    ])
    same_key = Window.partitionBy(*[F.col(k) for k in key])
    shared = F.count(F.lit(1)).over(same_key) > 1
    differ = F.min(row_hash).over(same_key) != F.max(row_hash).over(same_key)
    copy = F.row_number().over(same_key.orderBy(*comparable))
    final_reason = F.coalesce(
        F.col("_reason"),
        F.when(shared & differ, F.lit(f"conflicting rows for the same {', '.join(key)}")),
        F.when(shared & (copy > 1), F.lit(EXACT_DUPLICATE)),
    )
    return rows.withColumn("_final", final_reason)


def _offset_checks(*columns: str) -> list[tuple[Column, str]]:
    """Offsets are never negative: a -1 some tools print for "none" would count as a real
    offset (a lag one past the max offset), and no lag of two real offsets can overflow.
    Nor do they reach OFFSET_LIMIT: a sentinel such as Long.MAX_VALUE would count as
    one, and the lag sums of its group overflow and end the whole run."""
    return [check for c in columns for check in (
        (F.col(c) < 0, f"{c} is negative (an unknown offset is null)"),
        (F.col(c) >= OFFSET_LIMIT,
         f"{c} is 2^53 or more, which no real queue reaches (a sentinel such as "
         "Long.MAX_VALUE for an unknown offset must be null)"))]


def _rate_checks() -> list[tuple[Column, str]]:
    """A rate is a finite number of messages per second, at least 0 and below RATE_LIMIT
    (1e29): the reports sum rates as exact decimals (`rebalance_udfs.spark.rates`), which
    have no NaN, infinity or value that large; such a rate would be an unknown one, unsaid."""
    rate = F.col("in_rate")
    return [(F.isnan(rate) | rate.isin(float("inf"), float("-inf")),
             "in_rate is not a finite number (NaN or infinite; an unknown rate is null)"),
            (rate < 0, "in_rate is negative"),
            # Spark orders NaN above infinity: neither is counted here again
            ((rate >= RATE_LIMIT) & (rate < float("inf")),
             "in_rate is 1e29 messages per second or more (the reports sum rates as "
             "exact decimals of 38 digits, 9 of them after the point)")]


# capture times the driver holds as Python datetimes (years 1 to 9999; Spark's calendar
# rebasing moves 0001-01-01 into year 0): a time outside them stopped the run with a
# traceback. Neither end is a real capture time: Go's zero time (0001-01-01, "unknown")
# or epoch nanoseconds read as microseconds (year 57,971) lie beyond them.
FIRST_CAPTURE = f"{FIRST_CAPTURE_YEAR}-01-01 00:00:00"
LAST_CAPTURE = "9999-12-31 23:59:59.999999"


def _capture_time_checks() -> list[tuple[Column, str]]:
    at = F.col("captured_at")
    return [((at < F.to_timestamp(F.lit(FIRST_CAPTURE)))
             | (at > F.to_timestamp(F.lit(LAST_CAPTURE))),
             f"captured_at is before {FIRST_CAPTURE_YEAR} or after 9999: no capture time "
             "(a tool's zero time for unknown, or a timestamp in the wrong unit); leave it "
             "null if unknown")]


def validate_queues(df: DataFrame, persist: Persist) -> tuple[DataFrame, DataFrame]:
    reason = _reasons(
        *_required_null_checks("queues"),
        *_snapshot_id_checks(),
        *_capture_time_checks(),
        *_queue_id_checks(),
        *_offset_checks("max_offset"),
        *_rate_checks(),
        *_nul_checks("queues"),
    )
    good, bad = _split(df, "queues", reason,
                       ["snapshot_id", "cluster", "topic", "broker_name", "queue_id"], persist)
    return good.withColumn("queue_id", F.col("queue_id").cast(INT)), bad


def with_strategy_params(df: DataFrame) -> DataFrame:
    """Typed strategy parameters next to the raw map (what the kernels read)."""
    params = F.col("strategy_params")
    return (
        df.withColumn("virtual_nodes_raw", params.getItem("virtual_nodes"))
        .withColumn("virtual_nodes", F.col("virtual_nodes_raw").try_cast(INT))
        .withColumn("rooms", params.getItem("rooms"))
        .withColumn("config_queues", params.getItem("queues"))
        .withColumn("pop_share_raw", params.getItem("pop_share_queue_num"))
        .withColumn("pop_share_queue_num", F.col("pop_share_raw").try_cast(INT))
    )


def _malformed_config_queues(text: Column) -> Column:
    """The Spark twin of `rebalance_udfs.rocketmq.parse_config_queues`, the one Python parser
    of the format (keep the two in step): topic up to the first '@', a non-empty broker, a
    queue id after the last ':' that fits a Java int."""
    # a lambda, not F.trim itself: transform() would pass the index as trim's 2nd argument
    entries = F.transform(F.split(text, ","), lambda e: F.trim(e))
    return (F.trim(text) != "") & F.exists(entries, lambda e: (
        ~e.rlike(r"^[^@]+@.+:[0-9]{1,10}$")
        | (F.regexp_extract(e, r":([0-9]+)$", 1).cast("long") > MAX_QUEUE_ID)
    ))


# integer text as an int parameter's cast reads it: digits, a sign, blanks around
_INTEGER_TEXT = r"^\s*[+-]?[0-9]+\s*$"


def _not_integer(typed: str, raw: str) -> Column:
    """The parameter (`raw`, its text; `typed`, its int cast) is given, and is not a whole
    number."""
    return F.col(raw).isNotNull() & F.col(typed).isNull() & ~F.col(raw).rlike(_INTEGER_TEXT)


def _beyond_int(typed: str, raw: str) -> Column:
    """The parameter is a whole number a Java int cannot hold (its cast is null): out of
    range, not "not an integer"."""
    return F.col(typed).isNull() & F.col(raw).rlike(_INTEGER_TEXT)


def _minus(raw: str) -> Column:
    return F.trim(F.col(raw)).startswith("-")


def validate_members(df: DataFrame, persist: Persist) -> tuple[DataFrame, DataFrame]:
    strategies = supported_strategies()
    df = with_strategy_params(df)
    # (int cast, text) of the int parameters
    vnodes, pop_share = ("virtual_nodes", "virtual_nodes_raw"), ("pop_share_queue_num",
                                                                 "pop_share_raw")
    reason = _reasons(
        *_required_null_checks("members"),
        *_snapshot_id_checks(),
        (F.col("strategy").isNotNull() & ~F.col("strategy").isin(strategies),
         "unknown strategy (supported: " + ", ".join(strategies) + ")"),
        (F.col("message_model").isNotNull() & ~F.col("message_model").isin(*MESSAGE_MODELS),
         "message_model must be CLUSTERING or BROADCASTING"),
        (_not_integer(*vnodes), "strategy_params.virtual_nodes is not an integer"),
        ((F.col("virtual_nodes") < 0) | (_beyond_int(*vnodes) & _minus(vnodes[1])),
         "strategy_params.virtual_nodes is negative"),
        ((F.col("virtual_nodes") > MAX_VIRTUAL_NODES)
         | (_beyond_int(*vnodes) & ~_minus(vnodes[1])),
         f"strategy_params.virtual_nodes is above {MAX_VIRTUAL_NODES}"),
        (_malformed_config_queues(F.col("config_queues")),
         "strategy_params.queues is not a comma list of topic@broker:queue_id"),
        (F.col("allocation_mode").isNotNull()
         & ~F.col("allocation_mode").isin(*ALLOCATION_MODES),
         "allocation_mode must be one of " + ", ".join(ALLOCATION_MODES)),
        (_not_integer(*pop_share), "strategy_params.pop_share_queue_num is not an integer"),
        (_beyond_int(*pop_share),
         "strategy_params.pop_share_queue_num is beyond a Java int"),
        *_nul_checks("members"),
    )
    # One row per client per topic; a second row that differs (other strategy) is a
    # second process sharing the id only when client_addr differs, so addr is in the key.
    df = df.withColumn("_pre_reason", reason).drop("virtual_nodes_raw", "pop_share_raw")
    good, bad = _split(df, "members", F.col("_pre_reason"),
                       ["snapshot_id", "cluster", "consumer_group", "client_id",
                        "client_addr", "topic"], persist)
    return good, bad


def validate_offsets(df: DataFrame, persist: Persist) -> tuple[DataFrame, DataFrame]:
    reason = _reasons(
        *_required_null_checks("offsets"),
        *_snapshot_id_checks(),
        *_queue_id_checks(),
        *_offset_checks("committed_offset", "consumed_offset"),
        *_nul_checks("offsets"),
    )
    good, bad = _split(df, "offsets", reason,
                       ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                        "queue_id"], persist)
    return good.withColumn("queue_id", F.col("queue_id").cast(INT)), bad


def validate_observed(df: DataFrame, persist: Persist) -> tuple[DataFrame, DataFrame]:
    """Who really holds each queue: one row per (queue, holder, source)."""
    reason = _reasons(
        *_required_null_checks("observed"),
        *_snapshot_id_checks(),
        *_queue_id_checks(),
        *_nul_checks("observed"),
    )
    good, bad = _split(df, "observed", reason,
                       ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                        "queue_id", "client_id", "source"], persist)
    return good.withColumn("queue_id", F.col("queue_id").cast(INT)), bad
