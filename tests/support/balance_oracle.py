"""The Spark-aggregation consumer_load and group_balance this project ran before the
per-bucket kernel (`rebalance_udfs.group_figures`): kept as the tests' independent oracle.

`oracle_reports(assigned, members, times)` gives both tables as the job computed them
with one Spark aggregation or join per figure; tests/spark/test_group_figures.py holds
the kernel's tables equal to these on every upstream example and on random groups.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.spark.members import clustering
from rebalance_udfs.spark.rates import rate_out
from reports.group_balance import (
    COLUMNS,
    DRIFT_COLUMNS,
    RATE_COLUMNS,
    _in_contract_order,
    _recommendation,
    with_rejected_members,
    with_rejected_queues,
)
from tests.support.facts_oracle import client_topic_facts
from vocabulary.columns import (
    BROKER,
    CLIENT,
    CLIENT_KEYS,
    CLUSTERING,
    GROUP_KEYS,
    POOLED_ASSIGNORS,
    POP,
    RETRY_TOPIC_PREFIX,
    SHARED_MODES,
    SNAPSHOT_KEYS,
    STICKY_BREAK,
)
from vocabulary.findings import BROKER_STRATEGIES, LAG_SKEW_FACTOR, LOAD_FINDINGS, SPLIT_BRAIN

KEYS = [*GROUP_KEYS, "topic", "client_id"]


def oracle_reports(assigned: DataFrame, members: DataFrame, times: DataFrame,
                   drift: DataFrame | None = None) -> dict[str, DataFrame]:
    """consumer_load and group_balance (without the what-if line) as the Spark
    aggregations computed them. `assigned`: assignment rows with queue_first."""
    facts = client_topic_facts(assigned)
    member_topics = member_topic_facts(members)
    member_clients = member_client_facts(member_topics)
    return {
        "consumer_load": consumer_load_report(facts, member_clients, times),
        "group_balance": group_balance_report(facts, member_topics, member_clients, times,
                                              drift),
    }


def _union_of(sets: str) -> Column:
    """The distinct elements of all the arrays in column `sets` of the group."""
    return F.array_distinct(F.flatten(F.collect_list(sets)))


def member_topic_facts(members: DataFrame) -> DataFrame:
    """One row per (snapshot, cluster, group, topic, client_id) of the member rows (topic
    null: the member's rows that subscribe nothing): `addrs`, `strategies`, `variants`
    (strategy with its parameters), `clustering` (1 when a row is in clustering mode),
    `message_model`, `client_room`, `modes` (who allocates: CLIENT when unset)."""
    # a POP member on a strategy the broker does not pop with is as a BROKER one
    mode = (F.when((F.col("allocation_mode") == POP)
                   & ~F.col("strategy").isin(*BROKER_STRATEGIES), F.lit(BROKER))
            .otherwise(F.coalesce(F.col("allocation_mode"), F.lit(CLIENT)))
            if "allocation_mode" in members.columns else F.lit(CLIENT))
    raw = F.coalesce(F.col("strategy_params"), F.create_map().cast("map<string,string>"))
    strategy = F.col("strategy")
    # what each strategy reads of its parameters, as it reads them; a CONFIG client's
    # queue list is its own, and a key no strategy reads changes nothing: not parameters
    # the members must agree on
    hashes = F.when(strategy.endswith("CONSISTENT_HASH"), F.coalesce(
        F.trim(raw["virtual_nodes"]).cast("int"), F.lit(10)).cast("string"))
    rooms = F.when(strategy == "MACHINE_ROOM", F.coalesce(F.array_join(F.array_sort(
        F.array_distinct(F.filter(F.split(F.regexp_replace(F.regexp_replace(
            raw["rooms"], r"\s*,\s*", ","), r"^\s+|\s+$", ""), ","),
            lambda r: r != ""))), ","),
        F.lit("<unset>")))
    pop = (F.when((F.col("allocation_mode") == "POP") & strategy.isin(*BROKER_STRATEGIES),
                  F.greatest(F.coalesce(raw["pop_share_queue_num"].cast("int"), F.lit(0)),
                             F.lit(0)).cast("string"))
           if "allocation_mode" in members.columns else F.lit(None))
    params = F.concat_ws(";", F.coalesce(hashes, F.lit("-")), F.coalesce(rooms, F.lit("-")),
                         F.coalesce(pop, F.lit("-")))
    return members.groupBy(*KEYS).agg(
        F.collect_set("client_addr").alias("addrs"),
        F.collect_set("strategy").alias("strategies"),
        F.collect_set(F.concat_ws("|", "strategy", params)).alias("variants"),
        F.max(clustering().cast("int")).alias("clustering"),
        F.max("message_model").alias("message_model"),
        F.max("client_room").alias("client_room"),
        F.collect_set(mode).alias("modes"),
    )


def member_client_facts(member_topics: DataFrame) -> DataFrame:
    """One row per (snapshot, cluster, group, client_id): `strategies` and `topics`
    (sorted), `variants`, `connections` (distinct addresses), `clustering` (1 when some row
    is in clustering mode), `subscribes` (1 when some clustering row names a topic),
    `message_model`, `client_room`, `modes`."""
    named = F.col("topic").isNotNull()
    return member_topics.groupBy(*CLIENT_KEYS).agg(
        F.array_sort(_union_of("strategies")).alias("strategies"),
        _union_of("variants").alias("variants"),
        F.size(_union_of("addrs")).alias("connections"),
        F.array_sort(F.collect_list("topic")).alias("topics"),
        F.max("clustering").alias("clustering"),
        F.coalesce(F.max(F.when(named, F.col("clustering"))), F.lit(0)).alias("subscribes"),
        F.max("message_model").alias("message_model"),
        F.max("client_room").alias("client_room"),
        _union_of("modes").alias("modes"),
    )

def consumer_load_report(facts: DataFrame, member_clients: DataFrame,
                         times: DataFrame) -> DataFrame:
    """Every member with its claims; `topics` are what it subscribes (for churn triggers).

    `facts` / `member_clients`: `client_topic_facts` of the assignment rows
    and `member_client_facts` of the member rows."""
    clients = member_clients.select(
        *CLIENT_KEYS, "strategies",
        F.coalesce(F.col("message_model"), F.lit(CLUSTERING)).alias("message_model"),
        "client_room", F.greatest(F.col("connections"), F.lit(1)).alias("connections"),
        "topics",
    )
    per_client = facts.where(F.col("client_id").isNotNull()).groupBy(*CLIENT_KEYS).agg(
        F.sum("rows").cast("int").alias("queues"),
        F.map_from_entries(F.array_sort(F.collect_list(
            F.struct("topic", F.col("rows").alias("n"))))).alias("queues_by_topic"),
        F.when(F.sum("lag_all_known") > 0, F.sum("lag_all")).alias("lag"),
        F.when(F.sum("rate_all_known") > 0, F.sum("rate_all")).alias("in_rate"),
        F.sum("contended").cast("int").alias("contended_queues"),
    )
    return (
        clients.join(per_client, CLIENT_KEYS, "left")
        .join(F.broadcast(times), SNAPSHOT_KEYS, "left")
        .withColumn("queues", F.coalesce("queues", F.lit(0)))
        .withColumn("queues_by_topic", F.coalesce(
            "queues_by_topic", F.create_map().cast("map<string,int>")))
        .withColumn("contended_queues", F.coalesce("contended_queues", F.lit(0)))
        .withColumn("idle", F.col("queues") == 0)
        .withColumn("in_rate", rate_out(F.col("in_rate")))
        .select("snapshot_id", "cluster", "captured_at", "consumer_group", "client_id",
                "strategies", "message_model", "client_room", "connections", "topics",
                "queues", "queues_by_topic", "lag", "in_rate", "contended_queues", "idle")
    )

def _group_facts(member_clients: DataFrame) -> DataFrame:
    """Per group: client count, strategy mix, duplicate ids, subscription consistency, who
    allocates (`_shared_group`: every clustering client in POP / MESSAGE mode;
    `_unsupported`: strategies a broker is asked for but does not know)."""
    clustering = F.col("clustering") == 1
    by_broker = F.exists("modes", lambda m: m.isin(BROKER, POP))
    return member_clients.groupBy(*GROUP_KEYS).agg(
        F.coalesce(F.min(F.when(clustering, F.forall(
            "modes", lambda m: m.isin(*SHARED_MODES)).cast("int"))), F.lit(0))
        .alias("_shared_group"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list(F.when(by_broker, F.filter(
            "strategies", lambda st: ~st.isin(*BROKER_STRATEGIES))))))).alias("_unsupported"),
        F.count(F.lit(1)).cast("int").alias("clients"),
        F.array_sort(F.collect_list(F.when(F.col("connections") > 1, F.col("client_id"))))
        .alias("duplicate_ids"),
        F.countDistinct(F.when(clustering, F.col("topics"))).alias("topic_sets"),
        F.sum(F.when(clustering & (F.size("topics") > 0), 1).otherwise(0))
        .cast("int").alias("_group_subscribing"),
        F.sum("clustering").cast("int").alias("clustering_clients"),
        F.size(F.array_distinct(F.flatten(F.collect_list("variants"))))
        .alias("strategy_variants"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("strategies"))))
        .alias("strategies"),
    )


def _all_in(names: str, allowed: tuple[str, ...]) -> Column:
    """The array column `names` is not empty and holds only `allowed` values."""
    return F.coalesce((F.size(names) > 0) & F.forall(names, lambda s: s.isin(*allowed)),
                      F.lit(False))


def _load_figures(subscriber: Column, n: Column, lag: Column, rate: Column) -> list[Column]:
    """Queue count and lag / rate spread over the subscribing clients (`subscriber`)."""
    def over(value: Column) -> Column:
        return F.when(subscriber, value)

    lag, rate = F.coalesce(lag, F.lit(0)), F.coalesce(rate, F.lit(0))  # rate: exact decimal
    return [
        F.min(over(n)).cast("int").alias("min_queues"),
        F.max(over(n)).cast("int").alias("max_queues"),
        F.avg(over(n)).alias("mean_queues"),
        F.min(over(lag)).alias("min_lag"), F.max(over(lag)).alias("max_lag"),
        F.avg(over(lag)).alias("mean_lag"),
        F.min(over(rate)).alias("min_in_rate"), F.max(over(rate)).alias("max_in_rate"),
        F.avg(over(rate)).alias("mean_in_rate"),
    ]


def _topic_rows(facts: DataFrame, member_topics: DataFrame) -> DataFrame:
    """One row per (group, topic) some member subscribes: one aggregation over the members'
    and the claims' (group, topic, client) facts side by side."""
    keys = [*GROUP_KEYS, "topic"]
    subscribed = member_topics.where(F.col("topic").isNotNull()).select(
        *keys, "client_id", "clustering", F.col("strategies").alias("_member_strategies"))
    # a full join: the unconsumed queues' null-client facts match no member, and are kept
    both = subscribed.join(facts, [*keys, "client_id"], "full")
    subscriber = F.coalesce(F.col("clustering") == 1, F.lit(False))
    n = F.coalesce(F.col("claims"), F.lit(0))
    return both.groupBy(*keys).agg(
        F.count(F.when(subscriber, 1)).cast("int").alias("subscribing_clients"),
        *_load_figures(subscriber, n, F.col("claim_lag"), F.col("claim_rate")),
        F.count(F.when(subscriber & (n == 0), 1)).cast("int").alias("idle_clients"),
        F.coalesce(F.sum("queues"), F.lit(0)).cast("int").alias("queues"),
        F.coalesce(F.sum("unconsumed_queues"), F.lit(0)).cast("int")
        .alias("unconsumed_queues"),
        F.coalesce(F.sum("contended_queues"), F.lit(0)).cast("int").alias("contended_queues"),
        # lag / rate figures only where some lag / rate is known
        F.when(F.sum("queue_lag_known") > 0, F.sum("queue_lag")).alias("lag_total"),
        F.when(F.sum("queue_rate_known") > 0, F.sum("queue_rate")).alias("in_rate_total"),
        # spreads: only where some subscribing client's claims have a known lag / rate
        F.count(F.when(subscriber & F.col("claim_lag").isNotNull(), 1)).alias("_lag_known"),
        F.count(F.when(subscriber & F.col("claim_rate").isNotNull(), 1)).alias("_rate_known"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("_member_strategies"))))
        .alias("_topic_strategy_names"),
        F.count("_member_strategies").alias("_member_rows"),
    ).where(F.col("_member_rows") > 0).transform(_known_lag_and_rate).withColumn(
        "_topic_strategies", F.size("_topic_strategy_names"))


def _known_lag_and_rate(rows: DataFrame) -> DataFrame:
    """Lag / rate spreads only where some lag / rate is known (else null, not 0)."""
    for col in ("min_lag", "max_lag", "mean_lag"):
        rows = rows.withColumn(col, F.when(F.col("_lag_known") > 0, F.col(col)))
    for col in ("min_in_rate", "max_in_rate", "mean_in_rate"):
        rows = rows.withColumn(col, F.when(F.col("_rate_known") > 0, F.col(col)))
    return rows



def _without_load_findings(rows: DataFrame) -> DataFrame:
    """POP / MESSAGE groups share queues by design: no idle or skew findings there."""
    return rows.withColumn("findings", F.when(
        F.col("_shared_group") == 1,
        F.filter("findings", lambda c: ~c.isin(*LOAD_FINDINGS)),
    ).otherwise(F.col("findings")))


def _ceil_div(a: Column, b: Column) -> Column:
    return F.when(b > 0, F.ceil(a / b).cast("int"))


def _codes(*pairs: tuple[Column, str]) -> Column:
    return F.array_compact(F.array(*[F.when(cond, F.lit(code)) for cond, code in pairs]))


def group_balance_report(facts: DataFrame, member_topics: DataFrame,
                         member_clients: DataFrame, times: DataFrame,
                         drift: DataFrame | None = None) -> DataFrame:
    """`facts`, `member_topics`, `member_clients`: `client_topic_facts` of
    the assignment rows, `member_topic_facts` and `member_client_facts` of the members;
    `drift`: `reports.drift.drift_by_group` when observed holders are known."""
    group_facts = _group_facts(member_clients)
    if drift is not None:
        group_facts = group_facts.join(drift, GROUP_KEYS, "left")
    else:
        for col in DRIFT_COLUMNS:
            group_facts = group_facts.withColumn(col, F.lit(None).cast("int"))
        group_facts = group_facts.withColumn(STICKY_BREAK, F.lit(None).cast("string"))
    topics = _topic_rows(facts, member_topics).join(group_facts, GROUP_KEYS)
    topics = topics.withColumn("ideal_max",
                               _ceil_div(F.col("queues"), F.col("subscribing_clients")))
    # a retry topic's queue count is its group's retryQueueNums: idling there is by design
    retry = F.col("topic").startswith(RETRY_TOPIC_PREFIX)
    topic_rows = topics.withColumn("findings", _codes(
        # a topic with no readable queue is named by its recommendation, by no code
        ((F.col("idle_clients") > 0) & (F.col("queues") > 0) & ~retry, "IDLE_CLIENTS"),
        ((F.col("subscribing_clients") > F.col("queues")) & (F.col("queues") > 0) & ~retry,
         "MORE_CLIENTS_THAN_QUEUES"),
        (F.col("subscribing_clients") < F.col("clustering_clients"),
         "INCONSISTENT_SUBSCRIPTION"),
        ((F.col("_topic_strategies") > 1) | (F.col("strategy_variants") > 1),
         "MIXED_STRATEGIES"),
        (F.size("duplicate_ids") > 0, "DUPLICATE_CLIENT_ID"),
        (F.col("unconsumed_queues") > 0, "UNCONSUMED_QUEUES"),
        (F.col("contended_queues") > 0, "CONTENDED_QUEUES"),
        (F.size("_unsupported") > 0, "BROKER_UNSUPPORTED_STRATEGY"),
    )).withColumn("balanced", F.coalesce(F.col("max_queues") <= F.col("ideal_max"),
                                         F.lit(True)))
    # the strategy itself is the cause: AVG over the same subscribing clients reaches
    # ideal_max (it always does), this topic does not, and no split brain explains it
    split_brain = F.arrays_overlap(F.col("findings"), F.array(*[F.lit(c) for c in SPLIT_BRAIN]))
    pooled = _all_in("_topic_strategy_names", POOLED_ASSIGNORS)
    topic_rows = topic_rows.withColumn("findings", F.when(
        ~F.col("balanced") & ~split_brain & ~pooled,
        F.concat(F.col("findings"), F.array(F.lit("STRATEGY_IMBALANCE"))),
    ).otherwise(F.col("findings"))).transform(_without_load_findings)

    # whole-group rows: per-client totals over all topics, for the clustering clients
    keys = GROUP_KEYS
    claims = (facts.where(F.col("client_id").isNotNull() & (F.col("claims") > 0))
              .groupBy(*keys, "client_id")
              .agg(F.sum("claims").alias("n"), F.sum("claim_lag").alias("lag"),
                   F.sum("claim_rate").alias("in_rate")))
    client_totals = (member_clients.where(F.col("clustering") == 1)
                     .select(*keys, "client_id", "subscribes")
                     .join(claims, [*keys, "client_id"], "left")
                     .fillna(0, subset=["n"]))
    subscriber = F.col("subscribes") == 1
    load = client_totals.groupBy(*keys).agg(
        *_load_figures(subscriber, F.col("n"), F.col("lag"), F.col("in_rate")),
        F.sum(F.when(subscriber & F.col("lag").isNotNull(), 1)).alias("_lag_known"),
        F.sum(F.when(subscriber & F.col("in_rate").isNotNull(), 1)).alias("_rate_known"),
        F.sum(F.when(F.col("n") == 0, 1).otherwise(0)).cast("int").alias("idle_clients"),
        _top_client("lag").alias("_top_lag_client"),
        F.sum("lag").alias("_client_lag_sum"),
        _top_client("in_rate").alias("_top_rate_client"),
        F.sum("in_rate").alias("_client_rate_sum"),
    )
    rollup = topic_rows.groupBy(*keys).agg(
        F.sum("queues").cast("int").alias("queues"),
        F.sum("unconsumed_queues").cast("int").alias("unconsumed_queues"),
        F.sum("contended_queues").cast("int").alias("contended_queues"),
        F.sum("lag_total").alias("lag_total"),
        F.sum("in_rate_total").alias("in_rate_total"),
        F.max("ideal_max").alias("_max_topic_ideal"),
        F.sum((F.col("queues") > 0).cast("int")).alias("_topics_with_queues"),
        F.min(F.col("balanced").cast("int")).alias("_all_topics_balanced"),
        F.array_distinct(F.flatten(F.collect_list("findings"))).alias("_topic_findings"),
        F.sort_array(F.collect_list(F.when(F.col("queues") == 0, F.col("topic"))))
        .alias("_empty_topics"),
        F.sort_array(F.collect_list(F.when(
            F.array_contains("findings", "STRATEGY_IMBALANCE"),
            F.concat(F.col("topic"), F.lit(" ("), F.array_join("_topic_strategy_names", "/"),
                     F.lit(": max "), F.col("max_queues").cast("string"), F.lit(" where "),
                     F.col("ideal_max").cast("string"), F.lit(" is even)")))))
        .alias("_imbalanced_topics"),
    )
    groups = group_facts.join(load, keys, "left").join(rollup, keys, "left").fillna(
        0, subset=["queues", "unconsumed_queues", "contended_queues", "idle_clients",
                   "_topics_with_queues"])
    groups = (
        groups.withColumn("topic", F.lit(None).cast("string"))
        .withColumn("subscribing_clients", F.col("_group_subscribing"))
        .withColumn("ideal_max", _ceil_div(F.col("queues"), F.col("subscribing_clients")))
        .withColumn("pooled_max", F.greatest(F.col("ideal_max"), F.col("_max_topic_ideal")))
        .withColumn("skew", F.col("max_queues") - F.col("pooled_max"))
    )
    has_topic = F.coalesce(F.col("_topic_findings"), F.array().cast("array<string>"))
    pooled_group = _all_in("strategies", POOLED_ASSIGNORS)
    groups = groups.withColumn("findings", F.array_distinct(F.concat(
        _codes(
            ((F.col("skew") > 0) & (F.col("_topics_with_queues") >= 2)
             & (F.col("_all_topics_balanced") == 1) & ~pooled_group, "MULTI_TOPIC_SKEW"),
            (F.col("idle_clients") > 0, "IDLE_CLIENTS"),
            (F.col("topic_sets") > 1, "INCONSISTENT_SUBSCRIPTION"),
            (F.col("strategy_variants") > 1, "MIXED_STRATEGIES"),
            (F.coalesce(F.col("drift_queues"), F.lit(0)) > 0, "OBSERVED_DRIFT"),
            ((F.col("skew") > 0) & (F.col("topic_sets") > 1), "UNEVEN_SUBSCRIPTIONS"),
            (_lag_skewed("max_lag", "mean_lag") | _lag_skewed("max_in_rate", "mean_in_rate"),
             "LAG_SKEW"),
        ),
        # a pooled group with nobody idle is not short of queues for a small topic
        F.filter(has_topic, lambda c: (c != F.lit("IDLE_CLIENTS")) & ~(
            (c == F.lit("MORE_CLIENTS_THAN_QUEUES")) & pooled_group
            & (F.col("idle_clients") == 0))),
    ))).transform(_without_load_findings).transform(_known_lag_and_rate)
    groups = groups.withColumn("findings", _in_contract_order(F.col("findings")))
    topic_rows = topic_rows.withColumn("findings", _in_contract_order(F.col("findings")))
    topic_rows = (topic_rows.withColumn("pooled_max", F.lit(None).cast("int"))
                  .withColumn("skew", F.lit(None).cast("int"))
                  .withColumn("_empty_topics", F.when(F.col("queues") == 0,
                                                      F.array(F.col("topic")))))
    out = topic_rows.unionByName(groups, allowMissingColumns=True)
    out = out.join(F.broadcast(times), SNAPSHOT_KEYS, "left")
    # the oracle's groups have no rejected members or queues rows
    out = with_rejected_queues(with_rejected_members(out, None), None)
    out = out.withColumn("recommendation", _recommendation())
    return out.withColumns({c: rate_out(F.col(c)) for c in RATE_COLUMNS}).select(*COLUMNS)


def _top_client(value: str) -> Column:
    """The client with the largest `value` (null as 0); of equal ones the smallest client
    id, so the named client does not depend on the order Spark meets the rows in."""
    ranked = F.struct((-F.coalesce(F.col(value), F.lit(0))).alias("v"), F.col("client_id"))
    return F.min(ranked)["client_id"]


def _lag_skewed(max_col: str, mean_col: str) -> Column:
    """One client carries far more lag / input rate than the group's mean."""
    return F.coalesce((F.col("subscribing_clients") > 1) & (F.col(mean_col) > 0)
                      & (F.col(max_col) > F.col(mean_col) * LAG_SKEW_FACTOR), F.lit(False))


