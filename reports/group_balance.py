"""`group_balance`: how evenly each group's queues are spread, per topic and for the whole
group (null topic), with findings and a plain-words recommendation.

Load is counted over *clustering* clients that subscribe (broadcasting members consume
everything by design and would only blur the figures). On the whole-group row,
`pooled_max` is the max load a balanced assignment pooling all the group's queues would
give — max(ceil(Q / S), max over topics of ceil(q_t / s_t)), exact for groups whose
clients share one subscription — and `skew` is the actual max load minus it.

The figures and findings come from the report pass (`rebalance_udfs.group_figures`, in
the call that assigns a group's queues); this module adds observed drift, the capture time and the
recommendation's words, Spark expressions over one row each. A group some of whose members
rows were rejected is audited without them: its recommendation says so, and names the clients.
So does one whose topics lost queues rows to the rejects.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from rebalance_udfs.report_pass import LINE_COLUMN
from rebalance_udfs.spark.rates import rate_out
from vocabulary.columns import (
    GROUP_KEYS,
    KAFKA_STRATEGIES,
    POOLED_ASSIGNORS,
    SNAPSHOT_KEYS,
    STICKY_BREAK,
    STICKY_STRATEGIES,
    UNIT_KEYS,
)
from vocabulary.contracts import EXACT_DUPLICATE
from vocabulary.findings import FINDINGS, LAG_SKEW_FACTOR

DRIFT_COLUMNS = ["drift_queues", "drift_held_twice", "drift_not_held", "drift_held_by_other",
                 "drift_not_expected"]
# exact decimals while computed (rebalance_udfs.spark.rates.EXACT_RATE), doubles in the table
RATE_COLUMNS = ("in_rate_total", "min_in_rate", "max_in_rate", "mean_in_rate")
COLUMNS = [
    "snapshot_id", "cluster", "captured_at", "consumer_group", "topic", "clients",
    "subscribing_clients", "queues", "min_queues",
    "max_queues", "mean_queues", "ideal_max", "idle_clients", "unconsumed_queues",
    "contended_queues", "lag_total", "min_lag", "max_lag", "mean_lag", "in_rate_total",
    "min_in_rate", "max_in_rate", "mean_in_rate", "pooled_max", "skew", "findings",
    "recommendation",
]


def group_balance_report(figures: DataFrame, times: DataFrame,
                         drift: DataFrame | None = None,
                         rejects: DataFrame | None = None,
                         queue_rejects: DataFrame | None = None) -> DataFrame:
    """group_balance rows (COLUMNS) of the report pass's group_balance figures (`figures`,
    `rebalance_udfs.report_pass`: rates still exact decimals, the group's what-if line
    on its whole-group row); `drift`: `reports.drift.drift_by_group` when observed
    holders are known; `rejects`: the run's rejects (REJECTS_SCHEMA) when members rows
    of its snapshots were rejected; `queue_rejects`: the same when queues rows were."""
    rows = with_rejected_members(with_drift(figures, drift), rejects)
    rows = with_rejected_queues(rows, queue_rejects)
    rows = rows.join(F.broadcast(times), SNAPSHOT_KEYS, "left")
    rows = rows.withColumn("recommendation", with_what_if(_recommendation()))
    findings_type = rows.schema["findings"].dataType
    return rows.withColumns({
        **{c: rate_out(F.col(c)) for c in RATE_COLUMNS},
        # never null (the pass fills them): declared so, as the table has always been
        "clients": F.coalesce(F.col("clients"), F.lit(0)),
        "findings": F.coalesce(F.col("findings"), F.array().cast(findings_type)),
    }).select(*COLUMNS)


_WHAT_IF_PREFIX = " What-if: "


def with_what_if(recommendation: Column) -> Column:
    """The recommendation of a whole-group row with findings, the group's best concrete
    change appended: `... What-if: run 16 clients, AVG (max 6 queues ...).`"""
    line = F.col(LINE_COLUMN)
    add = F.col("topic").isNull() & line.isNotNull() & (F.size("findings") > 0)
    return F.when(add, F.concat(recommendation, F.lit(_WHAT_IF_PREFIX), line, F.lit(".")))\
        .otherwise(recommendation)


def what_if_line(recommendation: Column) -> Column:
    """The what-if line `with_what_if` appended to a recommendation, or null."""
    line = F.regexp_extract(recommendation, rf"{_WHAT_IF_PREFIX}(.*)\.$", 1)
    return F.when(line != "", line)


def with_drift(rows: DataFrame, drift: DataFrame | None) -> DataFrame:
    """The group's drift figures on every row, and OBSERVED_DRIFT on the whole-group row
    of a group with drifting queues."""
    if drift is None:
        return rows.withColumns({**{c: F.lit(None).cast("int") for c in DRIFT_COLUMNS},
                                 STICKY_BREAK: F.lit(None).cast("string")})
    rows = rows.join(drift, GROUP_KEYS, "left")
    drifts = F.col("topic").isNull() & (F.coalesce(F.col("drift_queues"), F.lit(0)) > 0)
    return rows.withColumn("findings", F.when(drifts, _in_contract_order(F.array_union(
        F.col("findings"), F.array(F.lit("OBSERVED_DRIFT"))))).otherwise(F.col("findings")))


# the helper columns of a row's rejected members rows: how many, how many clients they
# name, and the first REJECTED_NAMED of those
_REJECTED_ROWS, _REJECTED_COUNT = "_rejected_rows", "_rejected_client_count"
_REJECTED_CLIENTS = "_rejected_clients"
# clients a recommendation names by id; the others are counted
REJECTED_NAMED = 5
_LEFT_OUT = (" were rejected, so these figures leave them out; the rejects table gives each "
             "row's reason.")


def rejected_member_rows(rejects: DataFrame) -> DataFrame:
    """The rejected members rows of `rejects` (a run's) that name a group: snapshot_id,
    cluster, consumer_group, topic, client_id. The group, topic and client come from the
    row as it came in (row_json); a row whose group is null names no group. An exact
    duplicate's first copy was audited: it leaves no client out, and is not one."""
    row = F.col("row_json")
    return rejects.where((F.col("source_table") == "members")
                         & ~F.col("reason").eqNullSafe(EXACT_DUPLICATE)).select(
        "snapshot_id", "cluster",
        *[F.get_json_object(row, f"$.{c}").alias(c)
          for c in ("consumer_group", "topic", "client_id")],
    ).where(F.col("consumer_group").isNotNull())


def with_rejected_members(rows: DataFrame, rejects: DataFrame | None) -> DataFrame:
    """Each row with how many members rows of its group (whole-group row) or of its group
    and topic were rejected, how many distinct client ids they name and the first
    REJECTED_NAMED of those, sorted; null when none.

    A rejected row is left out of the audit (SPEC: one that conflicts with another row of
    its client takes that client out of the topic), so the figures describe the group
    without it: the recommendation says so. Read from the rejects' row_json, which holds
    the row as it came in; rows whose group or snapshot is null name no group."""
    if rejects is None:
        return rows.withColumns({_REJECTED_ROWS: F.lit(None).cast("long"),
                                 _REJECTED_COUNT: F.lit(None).cast("int"),
                                 _REJECTED_CLIENTS: F.lit(None).cast("array<string>")})
    members = rejected_member_rows(rejects)

    def counted(keys: list[str]) -> DataFrame:
        clients = F.collect_set("client_id")
        return members.groupBy(*keys).agg(
            F.count(F.lit(1)).alias(_REJECTED_ROWS),
            F.size(clients).alias(_REJECTED_COUNT),
            F.slice(F.array_sort(clients), 1, REJECTED_NAMED).alias(_REJECTED_CLIENTS))

    per_topic = counted(UNIT_KEYS).where(F.col("topic").isNotNull())
    whole = counted(GROUP_KEYS).withColumn("topic", F.lit(None).cast("string"))
    named = per_topic.unionByName(whole).select(
        *[F.col(k).alias(f"_rejected_{k}") for k in UNIT_KEYS], _REJECTED_ROWS,
        _REJECTED_COUNT, _REJECTED_CLIENTS)
    # the whole-group row (null topic) takes the group's count; a topic's row its own.
    # Broadcast: a row per group and topic with rejected rows, five ids at most; left to
    # Spark, whose estimate of the aggregate is unknown, the join shuffled every
    # group_balance row (10M: 101.6 MB, 5.5 s of task time)
    on = [F.col(k) == F.col(f"_rejected_{k}") for k in GROUP_KEYS]
    on.append(F.col("topic").eqNullSafe(F.col("_rejected_topic")))
    return rows.join(F.broadcast(named), on, "left").drop(
        *[f"_rejected_{k}" for k in UNIT_KEYS])


_REJECTED_QUEUE_ROWS = "_rejected_queue_rows"


def with_rejected_queues(rows: DataFrame, rejects: DataFrame | None) -> DataFrame:
    """Each row with how many queues rows of its topic (a topic's row) or of the group's
    topics (the whole-group row) were rejected; null when none.

    A rejected queues row is left out of the audit (two rows of one queue that disagree
    leave the queue out: SPEC), so the topic's figures count fewer queues than it has: the
    recommendation says so. An exact duplicate's first copy was audited: not one. Read
    from the rejects' row_json; a row whose topic is null names no topic."""
    if rejects is None:
        return rows.withColumn(_REJECTED_QUEUE_ROWS, F.lit(None).cast("long"))
    topic = F.get_json_object(F.col("row_json"), "$.topic")
    per_topic = (rejects.where((F.col("source_table") == "queues")
                               & ~F.col("reason").eqNullSafe(EXACT_DUPLICATE)
                               & topic.isNotNull())
                 .groupBy(*[F.col(k).alias(f"_rq_{k}") for k in SNAPSHOT_KEYS],
                          topic.alias("_rq_topic"))
                 .agg(F.count(F.lit(1)).alias("_rq_rows")))
    # broadcast: a row per topic with rejected rows (as with_rejected_members' join)
    on = [F.col(k) == F.col(f"_rq_{k}") for k in (*SNAPSHOT_KEYS, "topic")]
    rows = rows.join(F.broadcast(per_topic), on, "left")
    of_group = F.sum(F.col("_rq_rows")).over(Window.partitionBy(*GROUP_KEYS))
    return rows.withColumn(
        _REJECTED_QUEUE_ROWS,
        F.when(F.col("topic").isNull(), of_group).otherwise(F.col("_rq_rows")),
    ).drop("_rq_snapshot_id", "_rq_cluster", "_rq_topic", "_rq_rows")


def _rejected_queues_sentence() -> Column:
    """The queues rows the figures leave out, counted."""
    return F.when(F.col(_REJECTED_QUEUE_ROWS) > 0, F.concat(
        F.col(_REJECTED_QUEUE_ROWS).cast("string"), F.lit(" queues row(s) of "),
        F.when(F.col("topic").isNull(), F.lit("the group's topics"))
        .otherwise(F.lit("this topic")),
        F.lit(_LEFT_OUT)))


def _rejected_sentence() -> Column:
    """The rows the figures leave out, with the first REJECTED_NAMED clients they name."""
    clients = F.col(_REJECTED_CLIENTS)
    more = F.col(_REJECTED_COUNT) - F.size(clients)
    named = F.concat(F.array_join(clients, ", "),
                     F.when(more > 0, F.concat(F.lit(" and "), more.cast("string"),
                                               F.lit(" more"))).otherwise(F.lit("")))
    return F.when(F.col(_REJECTED_ROWS) > 0, F.concat(
        F.col(_REJECTED_ROWS).cast("string"), F.lit(" members row(s) of this "),
        F.when(F.col("topic").isNull(), F.lit("group")).otherwise(F.lit("topic")),
        F.when(F.size(clients) > 0, F.concat(F.lit(" (client(s) "), named, F.lit(")")))
        .otherwise(F.lit("")),
        F.lit(_LEFT_OUT)))


def rejected_members_line(recommendation: Column) -> Column:
    """Of a whole-group row's recommendation, the words `_rejected_sentence` put there
    before its fixed tail ("2 members row(s) of this group (client(s) b)"), or null: how
    the console summary finds the groups audited without some of their members rows."""
    # Java's regex quotes the tail between \Q and \E
    line = F.regexp_extract(recommendation,
                            rf"(?s)(\d+ members row\(s\) of this group.*?)\Q{_LEFT_OUT}\E", 1)
    return F.when(line != "", line)


# how the recommendation opens its sentence on topics with no readable queue
NO_READABLE_QUEUE = "No readable queue in topic(s) "


def names_empty_topics(recommendation: Column) -> Column:
    """Whether a recommendation names topics with no readable queue (`_recommendation`;
    the whole-group row names its group's): how the console summary counts the groups
    that subscribe one, which no finding code names."""
    return F.coalesce(recommendation.contains(NO_READABLE_QUEUE), F.lit(False))


def rejected_queues_line(recommendation: Column) -> Column:
    """Of a whole-group row's recommendation, the count `_rejected_queues_sentence` put
    there ("3 queues row(s)"), or null: how the console summary finds the groups whose
    topics lost queues rows to the rejects."""
    line = F.regexp_extract(recommendation,
                            rf"(\d+ queues row\(s\)) of the group's topics\Q{_LEFT_OUT}\E", 1)
    return F.when(line != "", line)


def _lag_skewed(max_col: str, mean_col: str) -> Column:
    """One client carries far more lag / input rate than the group's mean."""
    return F.coalesce((F.col("subscribing_clients") > 1) & (F.col(mean_col) > 0)
                      & (F.col(max_col) > F.col(mean_col) * LAG_SKEW_FACTOR), F.lit(False))


def _in_contract_order(findings: Column) -> Column:
    """Findings sorted in the contract's order (most structural first), deterministic."""
    return F.filter(F.array(*[F.lit(c) for c in FINDINGS]),
                    lambda code: F.array_contains(findings, code))


def _all_run(names: tuple[str, ...]) -> Column:
    """The row's members all run one of `names` (its `strategies`): `KAFKA_STRATEGIES`,
    or `STICKY_STRATEGIES`, the groups drift checks by Kafka's validity and balance
    (`rebalance_udfs.drift`)."""
    strategies = F.col("strategies")
    return F.coalesce((F.size(strategies) > 0) & F.forall(
        strategies, lambda s: s.isin(*names)), F.lit(False))


def _recommendation() -> Column:
    """Plain words for the most important findings, most urgent first."""
    has = lambda code: F.array_contains(F.col("findings"), code)  # noqa: E731
    n = lambda col: F.col(col).cast("string")  # noqa: E731
    # a Kafka group's advice in Kafka's words: partitions, not RocketMQ's read queues
    kafka = _all_run(KAFKA_STRATEGIES)
    add = F.when(kafka, F.lit("partitions")).otherwise(F.lit("read queues"))
    sentences = [
        F.when(has("CONTENDED_QUEUES"), F.concat(
            n("contended_queues"), F.lit(" queue(s) are pulled by two or more clients at once "
                                         "(duplicate consumption): "),
            F.when(has("DUPLICATE_CLIENT_ID") & ~has("MIXED_STRATEGIES")
                   & ~has("INCONSISTENT_SUBSCRIPTION"), F.lit("fix the cause named below."))
            .otherwise(F.lit("every client of a group must run the same strategy, parameters "
                             "and subscriptions.")))),
        F.when(has("UNCONSUMED_QUEUES"), F.concat(
            n("unconsumed_queues"), F.lit(" queue(s) are consumed by nobody and their backlog "
                                          "grows; "),
            F.when(has("DUPLICATE_CLIENT_ID") | has("MIXED_STRATEGIES")
                   | has("INCONSISTENT_SUBSCRIPTION"), F.lit("fix the causes named below."))
            .otherwise(F.lit("no client's own strategy takes them (MACHINE_ROOM rooms or "
                             "CONFIG lists that leave them out, MACHINE_ROOM_NEARBY with a "
                             "client or broker of no room, on which the client's allocation "
                             "throws and the client keeps pulling whatever it held before, "
                             "which no snapshot of the queues shows (--observed does), "
                             "CONSISTENT_HASH with 0 virtual nodes, or a client id "
                             "the client refuses, such as an empty one): their assignments "
                             "rows have status UNCONSUMED.")))),
        F.when(has("DUPLICATE_CLIENT_ID"), F.concat(
            F.lit("Client id(s) "), F.array_join(F.col("duplicate_ids"), ", "),
            F.lit(" are used by several processes, and each pulls the id's whole share: give "
                  "every process a unique instanceName."))),
        F.when(has("MIXED_STRATEGIES"), F.concat(
            F.lit("Members run different strategies or parameters ("),
            F.array_join(F.col("strategies"), ", "),
            F.lit("): deploy one allocation strategy to the whole group."))),
        F.when(has("INCONSISTENT_SUBSCRIPTION") & _all_run(STICKY_STRATEGIES), F.lit(
            "Members subscribe different topics: Kafka assigns each topic among its own "
            "subscribers, and each client's load follows its subscriptions, but when the "
            "first member the sticky assignors meet subscribes nothing (a consumer whose "
            "pattern matches no topic yet) and the others one set, they deal it a share, "
            "which it refuses and rejoins: the group rebalances again and again and that "
            "share stays unconsumed; give every client the same subscriptions, or stop the "
            "consumer that subscribes nothing.")).when(
            has("INCONSISTENT_SUBSCRIPTION") & _all_run(KAFKA_STRATEGIES), F.lit(
            "Members subscribe different topics: Kafka assigns each topic among its own "
            "subscribers, so none of it is left to a client that does not subscribe it, but "
            "each client's load follows its subscriptions; give every client the same "
            "subscriptions for an even spread.")).when(has("INCONSISTENT_SUBSCRIPTION"), F.lit(
            "Members subscribe different topics: RocketMQ splits each topic over all clients "
            "of the group, so the shares of clients that do not subscribe it are left "
            "unconsumed; give every client the same subscriptions, or give each "
            "subscription a consumer group of its own.")),
        F.when(has("MULTI_TOPIC_SKEW"), F.concat(
            F.lit("Each topic is allocated on its own and the first-sorted clients win every "
                  "topic: max load "), n("max_queues"), F.lit(" queue(s) where a pooled "
                                                              "assignment would give "),
            n("pooled_max"), F.when(kafka, F.lit(
                "; make each topic's partition count a multiple of the client count, run a "
                "pooled assignor (roundrobin, cooperative-sticky), or give each topic a "
                "consumer group of its own.")).otherwise(F.lit(
                "; make each topic's queue count a multiple of the client count, or give "
                "each topic a consumer group of its own.")))),
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
            F.lit(" different topic sets, and the group's strategy does not reach a pooled "
                  "balance (max "), n("pooled_max"),
            F.lit(") over them: give all clients one subscription, or give each "
                  "subscription a consumer group of its own."))),
        F.when(has("BROKER_UNSUPPORTED_STRATEGY"), F.concat(
            F.lit("The broker allocates this group but knows only AVG and AVG_BY_CIRCLE, not "),
            F.array_join("_unsupported", ", "),
            F.lit(": it answers nothing and the clients keep their old queues (the figures "
                  "here are what the clients would compute); switch to AVG or set "
                  "clientRebalance=true."))),
        F.when(has("LAG_SKEW") & F.col("topic").isNull(), _lag_sentence()),
        # on the whole group with no idle client, it is a topic's: fewer clients would
        # idle elsewhere (a topic of 1 queue under 2 clients busy on another); so it is
        # when the group has a queue per client (two topics of 2 queues under 4 clients
        # idle 2 of them: the topics need the queues, not the group fewer clients)
        F.when(has("MORE_CLIENTS_THAN_QUEUES") & F.col("topic").isNull()
               & ((F.coalesce(F.col("idle_clients"), F.lit(0)) == 0)
                  | (F.col("subscribing_clients") <= F.col("queues"))), F.concat(F.lit(
            "More clients than queues in some topic (its row says which): the clients past "
            "its queue count idle on it; add "), add, F.lit(" there (at least one per "
                                                            "client).")))
        .when(has("MORE_CLIENTS_THAN_QUEUES") & F.col("topic").isNull(), F.concat(F.lit(
            "More clients than queues: the extra clients can only idle; add "), add, F.lit(
            " (at least one per client) or run fewer clients.")))
        # on a topic's row: its clients may be busy on the group's other topics, and are
        # when a pooled assignor deals the topics out together
        .when(has("MORE_CLIENTS_THAN_QUEUES") & _all_run(POOLED_ASSIGNORS), F.lit(
            "More subscribing clients than partitions in this topic: the clients past its "
            "partition count get none of it, and the pooled assignor gives them partitions "
            "of the group's other topics instead (the whole-group row says whether any "
            "client idles); add partitions here only if this topic needs more consumers "
            "reading it in parallel."))
        .when(has("MORE_CLIENTS_THAN_QUEUES"), F.concat(F.lit(
            "More subscribing clients than queues in this topic: the clients past its queue "
            "count get none of it; add "), add, F.lit(" here (at least one per client)."))),
        F.when(has("IDLE_CLIENTS") & ~has("MORE_CLIENTS_THAN_QUEUES")
               & ~has("MULTI_TOPIC_SKEW"), F.concat(
                   n("idle_clients"), F.when(F.col("topic").isNull(),
                                             F.lit(" client(s) claim no queue."))
                   .otherwise(F.lit(" subscribing client(s) claim none of this topic's "
                                    "queues.")))),
        F.when(F.size(F.coalesce(F.col("_empty_topics"), F.array())) > 0, F.concat(
            F.lit(NO_READABLE_QUEUE), F.array_join(F.col("_empty_topics"), ", "),
            F.lit(": nothing to allocate there (the queues table has no readable row of "
                  "it: a topic it lacks, or one without read permission)."))),
    ]
    sentences.append(F.when(has("OBSERVED_DRIFT"), _drift_sentence()))
    sentences.append(_rejected_sentence())
    sentences.append(_rejected_queues_sentence())
    text = F.concat_ws(" ", *sentences)
    return F.when(text == "", F.lit("Balanced: no action needed.")).otherwise(text)


def _share(top: str, value: str, total: str,
           figure: Callable[[Column], Column] = lambda c: F.format_number(c, 0)) -> Column:
    return F.concat(F.lit("client "), F.col(top), F.lit(" carries "),
                    figure(F.col(value)), F.lit(" ("),
                    F.format_number(F.col(value) / F.col(total) * 100, 0),
                    F.lit("% of the group's total; mean per client "))


def _rate_figure(rate: Column) -> Column:
    """An input rate, or a mean lag, with the decimals it needs: a mean of 0.008 msg/s read
    "0.0", a client's 0.5 msg/s "0", and a mean lag of 0.67 messages "1", as if a client
    of 2 were not above twice it."""
    size = F.abs(rate)
    return (F.when(size >= 100, F.format_number(rate, 0))
            .when(size >= 1, F.format_number(rate, 1))
            .otherwise(F.format_number(rate, 3)))


def _lag_sentence() -> Column:
    """LAG_SKEW: name the client with the most lag / input rate, with its share."""
    lag = F.when(_lag_skewed("max_lag", "mean_lag"), F.concat(
        F.lit("By lag, "), _share("_top_lag_client", "max_lag", "_client_lag_sum"),
        _rate_figure(F.col("mean_lag")), F.lit(" messages).")))
    rate = F.when(_lag_skewed("max_in_rate", "mean_in_rate"), F.concat(
        F.lit("By input rate, "),
        _share("_top_rate_client", "max_in_rate", "_client_rate_sum", _rate_figure),
        _rate_figure(F.col("mean_in_rate")), F.lit(" msg/s).")))
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
        .when(_all_run(STICKY_STRATEGIES), F.concat(
            F.lit("the group runs a sticky assignor, whose assignment is checked as Kafka "
                  "checks it, and this one is not one it could settle on: "),
            # the failing check, named by the drift comparison; the list of them where
            # it named none
            F.coalesce(F.col(STICKY_BREAK), F.lit(
                "a holder does not subscribe the topic (or is not a member), holds a queue "
                "nobody should, or holds two or more queues more than a member subscribing "
                "that topic")),
            F.lit("; the queues are then compared holder by holder, so some held by another "
                  "client may be moves a sticky assignor would make; likely cause: a member "
                  "not on the declared assignor, or the members table missing a member that "
                  "holds queues.")))
        .otherwise(F.lit(
            "likely cause: the clients allocate with a different strategy than the one "
            "declared (check allocateMessageQueueStrategy / partition.assignment.strategy), "
            "or some subscribe other topics than the members table says (a capture that "
            "cannot read each member's subscription, such as kafka-consumer-groups output, "
            "gives every member all of its group's topics)."))
    )
    return F.concat(
        n("drift_queues"), F.lit(" queue(s) are held differently from the recomputed "
                                 "assignment ("),
        n("drift_held_twice"), F.lit(" held twice, "), n("drift_not_held"),
        F.lit(" held by nobody, "), n("drift_held_by_other"), F.lit(" held by another "
                                                                     "client, "),
        n("drift_not_expected"), F.lit(" held though unassigned); "), cause)
