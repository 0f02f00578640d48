"""`group_balance`: how evenly each group's queues are spread, per topic and for the whole
group (null topic), with findings and a plain-words recommendation.

Load is counted over *clustering* clients that subscribe (broadcasting members consume
everything by design and would only blur the figures). On the whole-group row,
`pooled_max` is the max load a balanced assignment pooling all the group's queues would
give — max(ceil(Q / S), max over topics of ceil(q_t / s_t)), exact for groups whose
clients share one subscription — and `skew` is the actual max load minus it.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.batch import GROUP_KEYS

FINDINGS = [
    "MULTI_TOPIC_SKEW", "IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES",
    "INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES", "DUPLICATE_CLIENT_ID",
    "UNCONSUMED_QUEUES", "CONTENDED_QUEUES",
]
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "consumer_group", "topic", "clients",
    "subscribing_clients", "queues", "min_queues",
    "max_queues", "mean_queues", "ideal_max", "idle_clients", "unconsumed_queues",
    "contended_queues", "lag_total", "min_lag", "max_lag", "mean_lag", "in_rate_total",
    "min_in_rate", "max_in_rate", "mean_in_rate", "pooled_max", "skew", "findings",
    "recommendation",
]


def _clustering() -> Column:
    """Members in CLUSTERING mode (the default when message_model is null)."""
    return F.coalesce(F.col("message_model"), F.lit("CLUSTERING")) == "CLUSTERING"


def _group_facts(members: DataFrame) -> DataFrame:
    """Per group: client count, strategy mix, duplicate ids, subscription consistency."""
    params = F.to_json(F.array_sort(F.map_entries(
        F.coalesce(F.col("strategy_params"), F.create_map().cast("map<string,string>")))))
    per_client = members.groupBy(*GROUP_KEYS, "client_id").agg(
        F.countDistinct("client_addr").alias("addrs"),
        F.array_sort(F.collect_set("topic")).alias("topic_set"),
        F.max(_clustering().cast("int")).alias("clustering"),
    )
    strategies = members.groupBy(*GROUP_KEYS).agg(
        F.countDistinct(F.concat_ws("|", "strategy", params)).alias("strategy_variants"),
        F.array_sort(F.collect_set("strategy")).alias("strategies"),
    )
    clients = per_client.groupBy(*GROUP_KEYS).agg(
        F.count(F.lit(1)).cast("int").alias("clients"),
        F.array_sort(F.collect_set(F.when(F.col("addrs") > 1, F.col("client_id"))))
        .alias("duplicate_ids"),
        F.countDistinct(F.when(F.col("clustering") == 1, F.col("topic_set")))
        .alias("topic_sets"),
        F.sum(F.when((F.col("clustering") == 1) & (F.size("topic_set") > 0), 1).otherwise(0))
        .cast("int").alias("_group_subscribing"),
        F.sum("clustering").cast("int").alias("clustering_clients"),
    )
    return clients.join(strategies, GROUP_KEYS)


def _topic_rows(assignments: DataFrame, members: DataFrame) -> DataFrame:
    keys = [*GROUP_KEYS, "topic"]
    subscribers = (members.where(_clustering() & F.col("topic").isNotNull())
                   .select(*keys, "client_id").distinct())
    claims = (assignments.where(F.col("client_id").isNotNull()
                                & F.col("status").isin("OK", "CONTENDED"))
              .groupBy(*keys, "client_id")
              .agg(F.count(F.lit(1)).alias("n"), F.sum("lag").alias("lag"),
                   F.sum("in_rate").alias("in_rate")))
    load = subscribers.join(claims, [*keys, "client_id"], "left").fillna(0, subset=["n"])
    per_topic_load = load.groupBy(*keys).agg(
        F.count(F.lit(1)).cast("int").alias("subscribing_clients"),
        F.min("n").cast("int").alias("min_queues"),
        F.max("n").cast("int").alias("max_queues"),
        F.avg("n").alias("mean_queues"),
        F.sum(F.when(F.col("n") == 0, 1).otherwise(0)).cast("int").alias("idle_clients"),
        F.min(F.coalesce("lag", F.lit(0))).alias("min_lag"),
        F.max(F.coalesce("lag", F.lit(0))).alias("max_lag"),
        F.avg(F.coalesce("lag", F.lit(0))).alias("mean_lag"),
        F.min(F.coalesce("in_rate", F.lit(0.0))).alias("min_in_rate"),
        F.max(F.coalesce("in_rate", F.lit(0.0))).alias("max_in_rate"),
        F.avg(F.coalesce("in_rate", F.lit(0.0))).alias("mean_in_rate"),
        F.array_sort(F.collect_list(F.struct("client_id", "n"))).alias("_loads"),
    )
    per_queue = assignments.groupBy(*keys, "broker_name", "queue_id").agg(
        F.first("lag", ignorenulls=True).alias("lag"),
        F.first("in_rate", ignorenulls=True).alias("in_rate"),
        F.max((F.col("status") == "UNCONSUMED").cast("int")).alias("unconsumed"),
        F.max((F.col("status") == "CONTENDED").cast("int")).alias("contended"),
    )
    queue_facts = per_queue.groupBy(*keys).agg(
        F.count(F.lit(1)).cast("int").alias("queues"),
        F.sum("unconsumed").cast("int").alias("unconsumed_queues"),
        F.sum("contended").cast("int").alias("contended_queues"),
        F.sum("lag").alias("lag_total"), F.count("lag").alias("_lag_known"),
        F.sum("in_rate").alias("in_rate_total"), F.count("in_rate").alias("_rate_known"),
    )
    subscribed_topics = members.where(F.col("topic").isNotNull()).select(*keys).distinct()
    strategies = members.where(F.col("topic").isNotNull()).groupBy(*keys).agg(
        F.countDistinct("strategy").alias("_topic_strategies"))
    rows = (
        subscribed_topics.join(per_topic_load, keys, "left")
        .join(queue_facts, keys, "left")
        .join(strategies, keys, "left")
        .fillna(0, subset=["queues", "unconsumed_queues", "contended_queues",
                           "subscribing_clients", "idle_clients", "_lag_known", "_rate_known"])
    )
    # lag / rate figures only where some lag / rate is known
    for col in ("lag_total", "min_lag", "max_lag", "mean_lag"):
        rows = rows.withColumn(col, F.when(F.col("_lag_known") > 0, F.col(col)))
    for col in ("in_rate_total", "min_in_rate", "max_in_rate", "mean_in_rate"):
        rows = rows.withColumn(col, F.when(F.col("_rate_known") > 0, F.col(col)))
    return rows


def _ceil_div(a: Column, b: Column) -> Column:
    return F.when(b > 0, F.ceil(a / b).cast("int"))


def _codes(*pairs: tuple[Column, str]) -> Column:
    return F.array_compact(F.array(*[F.when(cond, F.lit(code)) for cond, code in pairs]))


def group_balance_report(assignments: DataFrame, members: DataFrame,
                         times: DataFrame) -> DataFrame:
    facts = _group_facts(members)
    topics = _topic_rows(assignments, members).join(facts, GROUP_KEYS)
    topics = topics.withColumn("ideal_max",
                               _ceil_div(F.col("queues"), F.col("subscribing_clients")))
    topic_rows = topics.withColumn("findings", _codes(
        (F.col("idle_clients") > 0, "IDLE_CLIENTS"),
        ((F.col("subscribing_clients") > F.col("queues")) & (F.col("queues") > 0),
         "MORE_CLIENTS_THAN_QUEUES"),
        (F.col("subscribing_clients") < F.col("clustering_clients"),
         "INCONSISTENT_SUBSCRIPTION"),
        ((F.col("_topic_strategies") > 1) | (F.col("strategy_variants") > 1),
         "MIXED_STRATEGIES"),
        (F.size("duplicate_ids") > 0, "DUPLICATE_CLIENT_ID"),
        (F.col("unconsumed_queues") > 0, "UNCONSUMED_QUEUES"),
        (F.col("contended_queues") > 0, "CONTENDED_QUEUES"),
    )).withColumn("balanced", F.coalesce(F.col("max_queues") <= F.col("ideal_max"),
                                         F.lit(True)))

    # whole-group rows: per-client totals over all topics
    keys = GROUP_KEYS
    client_totals = (
        members.where(_clustering()).select(*keys, "client_id").distinct()
        .join(assignments.where(F.col("client_id").isNotNull()
                                & F.col("status").isin("OK", "CONTENDED"))
              .groupBy(*keys, "client_id")
              .agg(F.count(F.lit(1)).alias("n"), F.sum("lag").alias("lag"),
                   F.sum("in_rate").alias("in_rate")),
              [*keys, "client_id"], "left")
        .fillna(0, subset=["n"])
    )
    subscribing = members.where(_clustering() & F.col("topic").isNotNull()).select(
        *keys, "client_id").distinct().withColumn("_subscribes", F.lit(True))
    client_totals = client_totals.join(subscribing, [*keys, "client_id"], "left")
    sub_only = F.col("_subscribes").isNotNull()
    load = client_totals.groupBy(*keys).agg(
        F.min(F.when(sub_only, F.col("n"))).cast("int").alias("min_queues"),
        F.max(F.when(sub_only, F.col("n"))).cast("int").alias("max_queues"),
        F.avg(F.when(sub_only, F.col("n"))).alias("mean_queues"),
        F.sum(F.when(F.col("n") == 0, 1).otherwise(0)).cast("int").alias("idle_clients"),
        F.min(F.when(sub_only, F.coalesce("lag", F.lit(0)))).alias("min_lag"),
        F.max(F.when(sub_only, F.coalesce("lag", F.lit(0)))).alias("max_lag"),
        F.avg(F.when(sub_only, F.coalesce("lag", F.lit(0)))).alias("mean_lag"),
        F.min(F.when(sub_only, F.coalesce("in_rate", F.lit(0.0)))).alias("min_in_rate"),
        F.max(F.when(sub_only, F.coalesce("in_rate", F.lit(0.0)))).alias("max_in_rate"),
        F.avg(F.when(sub_only, F.coalesce("in_rate", F.lit(0.0)))).alias("mean_in_rate"),
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
    )
    groups = facts.join(load, keys, "left").join(rollup, keys, "left").fillna(
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
    groups = groups.withColumn("findings", F.array_distinct(F.concat(
        _codes(
            ((F.col("skew") > 0) & (F.col("_topics_with_queues") >= 2)
             & (F.col("_all_topics_balanced") == 1), "MULTI_TOPIC_SKEW"),
            (F.col("idle_clients") > 0, "IDLE_CLIENTS"),
            (F.col("topic_sets") > 1, "INCONSISTENT_SUBSCRIPTION"),
            (F.col("strategy_variants") > 1, "MIXED_STRATEGIES"),
        ),
        F.filter(has_topic, lambda c: c != F.lit("IDLE_CLIENTS")),
    )))
    groups = groups.withColumn("findings", _in_contract_order(F.col("findings")))
    topic_rows = topic_rows.withColumn("findings", _in_contract_order(F.col("findings")))
    topic_rows = (topic_rows.withColumn("pooled_max", F.lit(None).cast("int"))
                  .withColumn("skew", F.lit(None).cast("int"))
                  .withColumn("_empty_topics", F.when(F.col("queues") == 0,
                                                      F.array(F.col("topic")))))
    out = topic_rows.unionByName(groups, allowMissingColumns=True)
    out = out.join(F.broadcast(times), ["snapshot_id", "cluster"], "left")
    return out.withColumn("recommendation", _recommendation()).select(*COLUMNS)


def _in_contract_order(findings: Column) -> Column:
    """Findings sorted in the contract's order (most structural first), deterministic."""
    return F.filter(F.array(*[F.lit(c) for c in FINDINGS]),
                    lambda code: F.array_contains(findings, code))


def _recommendation() -> Column:
    """Plain words for the most important findings, most urgent first."""
    has = lambda code: F.array_contains(F.col("findings"), code)  # noqa: E731
    n = lambda col: F.col(col).cast("string")  # noqa: E731
    sentences = [
        F.when(has("CONTENDED_QUEUES"), F.concat(
            n("contended_queues"), F.lit(" queue(s) are pulled by two or more clients at once "
                                         "(duplicate consumption): every client of a group must "
                                         "run the same strategy, parameters and subscriptions."))),
        F.when(has("UNCONSUMED_QUEUES"), F.concat(
            n("unconsumed_queues"), F.lit(" queue(s) are consumed by nobody and their backlog "
                                          "grows; fix the causes named below."))),
        F.when(has("DUPLICATE_CLIENT_ID"), F.concat(
            F.lit("Client id(s) "), F.array_join(F.col("duplicate_ids"), ", "),
            F.lit(" are used by several processes: give every process a unique instanceName."))),
        F.when(has("MIXED_STRATEGIES"), F.concat(
            F.lit("Members run different strategies or parameters ("),
            F.array_join(F.col("strategies"), ", "),
            F.lit("): deploy one allocation strategy to the whole group."))),
        F.when(has("INCONSISTENT_SUBSCRIPTION"), F.lit(
            "Members subscribe different topics: RocketMQ splits each topic over all clients "
            "of the group, so the shares of clients that do not subscribe it are left "
            "unconsumed; give every client the same subscriptions or split the group.")),
        F.when(has("MULTI_TOPIC_SKEW"), F.concat(
            F.lit("Each topic is allocated on its own and the first-sorted clients win every "
                  "topic: max load "), n("max_queues"), F.lit(" queue(s) where a pooled "
                                                              "assignment would give "),
            n("pooled_max"), F.lit("; make each topic's queue count a multiple of the client "
                                   "count, or split the group by topic."))),
        F.when(has("MORE_CLIENTS_THAN_QUEUES"), F.lit(
            "More clients than queues: the extra clients can only idle; add read queues "
            "(at least one per client) or run fewer clients.")),
        F.when(has("IDLE_CLIENTS") & ~has("MORE_CLIENTS_THAN_QUEUES")
               & ~has("MULTI_TOPIC_SKEW"), F.concat(
                   n("idle_clients"), F.lit(" client(s) claim no queue."))),
        F.when(F.size(F.coalesce(F.col("_empty_topics"), F.array())) > 0, F.concat(
            F.lit("No readable queue in topic(s) "), F.array_join(F.col("_empty_topics"), ", "),
            F.lit(": nothing to allocate there (check the topic's read permission)."))),
    ]
    text = F.concat_ws(" ", *sentences)
    return F.when(text == "", F.lit("Balanced: no action needed.")).otherwise(text)
