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

from reports.facts import rate_out
from vocabulary.columns import BROKER, GROUP_KEYS, POP, SHARED_MODES, SNAPSHOT_KEYS

FINDINGS = [
    "MULTI_TOPIC_SKEW", "IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES",
    "INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES", "DUPLICATE_CLIENT_ID",
    "UNCONSUMED_QUEUES", "CONTENDED_QUEUES", "OBSERVED_DRIFT",
    "STRATEGY_IMBALANCE", "UNEVEN_SUBSCRIPTIONS", "LAG_SKEW", "BROKER_UNSUPPORTED_STRATEGY",
]
# what the broker computes when it allocates (clientRebalance=false, POP mode)
BROKER_STRATEGIES = ("AVG", "AVG_BY_CIRCLE")
# findings about load spread: meaningless where queues are shared by design (POP, MESSAGE)
LOAD_FINDINGS = ("IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES", "MULTI_TOPIC_SKEW",
                 "STRATEGY_IMBALANCE", "UNEVEN_SUBSCRIPTIONS", "LAG_SKEW")
# a client holding more than this multiple of the group's mean lag / in_rate is named
LAG_SKEW_FACTOR = 2.0
DRIFT_COLUMNS = ["drift_queues", "drift_held_twice", "drift_not_held", "drift_held_by_other",
                 "drift_not_expected"]
# exact decimals while computed (reports.facts.EXACT_RATE), doubles in the table
RATE_COLUMNS = ("in_rate_total", "min_in_rate", "max_in_rate", "mean_in_rate")
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "consumer_group", "topic", "clients",
    "subscribing_clients", "queues", "min_queues",
    "max_queues", "mean_queues", "ideal_max", "idle_clients", "unconsumed_queues",
    "contended_queues", "lag_total", "min_lag", "max_lag", "mean_lag", "in_rate_total",
    "min_in_rate", "max_in_rate", "mean_in_rate", "pooled_max", "skew", "findings",
    "recommendation",
]


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
        F.coalesce(F.sum("queue_lag_known"), F.lit(0)).alias("_lag_known"),
        F.coalesce(F.sum("queue_rate_known"), F.lit(0)).alias("_rate_known"),
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


SPLIT_BRAIN = ("INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES", "DUPLICATE_CLIENT_ID",
               "CONTENDED_QUEUES", "BROKER_UNSUPPORTED_STRATEGY")


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
    """`facts`, `member_topics`, `member_clients`: `reports.facts.client_topic_facts` of
    the assignment rows, `member_topic_facts` and `member_client_facts` of the members;
    `drift`: `reports.drift.drift_by_group` when observed holders are known."""
    group_facts = _group_facts(member_clients)
    if drift is not None:
        group_facts = group_facts.join(drift, GROUP_KEYS, "left")
    else:
        for col in DRIFT_COLUMNS:
            group_facts = group_facts.withColumn(col, F.lit(None).cast("int"))
    topics = _topic_rows(facts, member_topics).join(group_facts, GROUP_KEYS)
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
        (F.size("_unsupported") > 0, "BROKER_UNSUPPORTED_STRATEGY"),
    )).withColumn("balanced", F.coalesce(F.col("max_queues") <= F.col("ideal_max"),
                                         F.lit(True)))
    # the strategy itself is the cause: AVG over the same subscribing clients reaches
    # ideal_max (it always does), this topic does not, and no split brain explains it
    split_brain = F.arrays_overlap(F.col("findings"), F.array(*[F.lit(c) for c in SPLIT_BRAIN]))
    topic_rows = topic_rows.withColumn("findings", F.when(
        ~F.col("balanced") & ~split_brain,
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
    load = client_totals.groupBy(*keys).agg(
        *_load_figures(F.col("subscribes") == 1, F.col("n"), F.col("lag"), F.col("in_rate")),
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
    groups = groups.withColumn("findings", F.array_distinct(F.concat(
        _codes(
            ((F.col("skew") > 0) & (F.col("_topics_with_queues") >= 2)
             & (F.col("_all_topics_balanced") == 1), "MULTI_TOPIC_SKEW"),
            (F.col("idle_clients") > 0, "IDLE_CLIENTS"),
            (F.col("topic_sets") > 1, "INCONSISTENT_SUBSCRIPTION"),
            (F.col("strategy_variants") > 1, "MIXED_STRATEGIES"),
            (F.coalesce(F.col("drift_queues"), F.lit(0)) > 0, "OBSERVED_DRIFT"),
            ((F.col("skew") > 0) & (F.col("topic_sets") > 1), "UNEVEN_SUBSCRIPTIONS"),
            (_lag_skewed("max_lag", "mean_lag") | _lag_skewed("max_in_rate", "mean_in_rate"),
             "LAG_SKEW"),
        ),
        F.filter(has_topic, lambda c: c != F.lit("IDLE_CLIENTS")),
    ))).transform(_without_load_findings)
    groups = groups.withColumn("findings", _in_contract_order(F.col("findings")))
    topic_rows = topic_rows.withColumn("findings", _in_contract_order(F.col("findings")))
    topic_rows = (topic_rows.withColumn("pooled_max", F.lit(None).cast("int"))
                  .withColumn("skew", F.lit(None).cast("int"))
                  .withColumn("_empty_topics", F.when(F.col("queues") == 0,
                                                      F.array(F.col("topic")))))
    out = topic_rows.unionByName(groups, allowMissingColumns=True)
    out = out.join(F.broadcast(times), SNAPSHOT_KEYS, "left")
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
        F.when(has("STRATEGY_IMBALANCE") & F.col("topic").isNull(), F.concat(
            F.lit("The strategy itself leaves topic(s) uneven where AVG over the same clients "
                  "would not: "), F.array_join("_imbalanced_topics", "; "),
            F.lit(" (CONSISTENT_HASH: more virtual nodes; MACHINE_ROOM / NEARBY: rooms of "
                  "equal size; CONFIG: even lists)."))),
        F.when(has("STRATEGY_IMBALANCE") & F.col("topic").isNotNull(), F.concat(
            F.lit("The strategy ("), F.array_join("_topic_strategy_names", ", "),
            F.lit(") gives a client "), n("max_queues"), F.lit(" queue(s) where AVG over the "
                                                              "same "),
            n("subscribing_clients"), F.lit(" clients gives at most "), n("ideal_max"),
            F.lit("."))),
        F.when(has("UNEVEN_SUBSCRIPTIONS"), F.concat(
            F.lit("Clients subscribe "), n("topic_sets"),
            F.lit(" different topic sets, so a pooled balance (max "), n("pooled_max"),
            F.lit(") is out of reach as configured: give all clients one subscription or "
                  "split the group by subscription."))),
        F.when(has("BROKER_UNSUPPORTED_STRATEGY"), F.concat(
            F.lit("The broker allocates this group but knows only AVG and AVG_BY_CIRCLE, not "),
            F.array_join("_unsupported", ", "),
            F.lit(": it answers nothing and the clients keep their old queues (the figures "
                  "here are what the clients would compute); switch to AVG or set "
                  "clientRebalance=true."))),
        F.when(has("LAG_SKEW") & F.col("topic").isNull(), _lag_sentence()),
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
    sentences.append(F.when(has("OBSERVED_DRIFT"), _drift_sentence()))
    text = F.concat_ws(" ", *sentences)
    return F.when(text == "", F.lit("Balanced: no action needed.")).otherwise(text)


def _share(top: str, value: str, total: str) -> Column:
    return F.concat(F.lit("client "), F.col(top), F.lit(" carries "),
                    F.format_number(F.col(value), 0), F.lit(" ("),
                    F.format_number(F.col(value) / F.col(total) * 100, 0),
                    F.lit("% of the group's total; mean per client "))


def _lag_sentence() -> Column:
    """LAG_SKEW: name the client with the most lag / input rate, with its share."""
    lag = F.when(_lag_skewed("max_lag", "mean_lag"), F.concat(
        F.lit("By lag, "), _share("_top_lag_client", "max_lag", "_client_lag_sum"),
        F.format_number(F.col("mean_lag"), 0), F.lit(" messages).")))
    rate = F.when(_lag_skewed("max_in_rate", "mean_in_rate"), F.concat(
        F.lit("By input rate, "), _share("_top_rate_client", "max_in_rate", "_client_rate_sum"),
        F.format_number(F.col("mean_in_rate"), 1), F.lit(" msg/s).")))
    return F.concat_ws(" ", lag, rate, F.lit(
        "Balance queue counts first; then look at that client's queues (hot partitions) or "
        "its consumption speed."))


def _drift_sentence() -> Column:
    """OBSERVED_DRIFT in figures, with the cause the kinds point to."""
    n = lambda col: F.coalesce(F.col(col), F.lit(0)).cast("string")  # noqa: E731
    twice_or_gap = (F.col("drift_held_twice") > 0) | (F.col("drift_not_held") > 0)
    cause = (
        F.when(F.array_contains(F.col("findings"), "DUPLICATE_CLIENT_ID"), F.lit(
            "likely cause: a duplicated client id (two processes compute the same share)."))
        .when(twice_or_gap, F.lit(
            "likely cause: a client with a stale view of the group (it has not rebalanced "
            "since a member or queue changed) holds queues it no longer owns or has not "
            "picked up its new ones; look for rebalance errors in its log."))
        .otherwise(F.lit(
            "likely cause: the clients allocate with a different strategy than the one "
            "declared (check allocateMessageQueueStrategy / partition.assignment.strategy)."))
    )
    return F.concat(
        n("drift_queues"), F.lit(" queue(s) are held differently from the recomputed "
                                 "assignment ("),
        n("drift_held_twice"), F.lit(" held twice, "), n("drift_not_held"),
        F.lit(" held by nobody, "), n("drift_held_by_other"), F.lit(" held by another "
                                                                     "client, "),
        n("drift_not_expected"), F.lit(" held though unassigned); "), cause)
