"""group_balance finding codes and the rules' constants, spelled once: the per-bucket
kernel (`rebalance_udfs.group_figures`) and the report's words (`reports.group_balance`)
both read them."""

from __future__ import annotations

# the contract's order (SPEC §4 and §6): most structural first
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
# not raised on a %RETRY% topic's row (columns.RETRY_TOPIC_PREFIX): its queue count is the
# group's retryQueueNums (default 1), so clients without one of its queues are by design
RETRY_BY_DESIGN = ("IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES")
# a topic whose imbalance one of these explains is not blamed on its strategy
SPLIT_BRAIN = ("INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES", "DUPLICATE_CLIENT_ID",
               "CONTENDED_QUEUES", "BROKER_UNSUPPORTED_STRATEGY")
# a client holding more than this multiple of the group's mean lag / in_rate is named
LAG_SKEW_FACTOR = 2.0

# each code in a sentence, for readers who meet it in a table (report.html's findings
# overview); the group's `recommendation` says what to do about its own figures
FINDING_MEANINGS = {
    "MULTI_TOPIC_SKEW": "Every topic is split evenly on its own, yet the first-sorted clients "
                        "win a queue of several topics: some client carries more than a "
                        "pooled split would give it.",
    "IDLE_CLIENTS": "Clients that claim no queue.",
    "MORE_CLIENTS_THAN_QUEUES": "A topic has more subscribing clients than readable queues: "
                                "the extra clients can only idle.",
    "INCONSISTENT_SUBSCRIPTION": "Members subscribe different topics: RocketMQ leaves the "
                                 "shares of the clients that do not subscribe a topic "
                                 "unconsumed; Kafka splits each topic among its own "
                                 "subscribers, so the clients' loads follow their "
                                 "subscriptions.",
    "MIXED_STRATEGIES": "Members run different strategies or parameters, so their views of "
                        "the split disagree (CONFIG's per-client queue lists aside).",
    "DUPLICATE_CLIENT_ID": "Several processes share one client id and compute the same "
                           "share: each pulls it, so its queues are CONTENDED (and under "
                           "AVG, AVG_BY_CIRCLE and MACHINE_ROOM the share of the id's second "
                           "slot goes unconsumed).",
    "UNCONSUMED_QUEUES": "Readable queues no client claims: their backlog grows.",
    "CONTENDED_QUEUES": "Queues two or more clients claim at once: duplicate consumption.",
    "OBSERVED_DRIFT": "Who really holds the queues (--observed) differs from the "
                      "recomputed assignment.",
    "STRATEGY_IMBALANCE": "The strategy leaves a topic more uneven than AVG over the same "
                          "clients would (not said of Kafka's pooled assignors, which "
                          "balance each client's total instead).",
    "UNEVEN_SUBSCRIPTIONS": "Clients subscribe different topic sets, and the group's "
                            "strategy does not reach an even total over them.",
    "LAG_SKEW": "A client holds more than twice the group's mean lag or input rate.",
    "BROKER_UNSUPPORTED_STRATEGY": "The broker allocates the group but knows only AVG and "
                                   "AVG_BY_CIRCLE: it answers nothing and the clients keep "
                                   "their old queues.",
}
