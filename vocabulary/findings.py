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
# a topic whose imbalance one of these explains is not blamed on its strategy
SPLIT_BRAIN = ("INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES", "DUPLICATE_CLIENT_ID",
               "CONTENDED_QUEUES", "BROKER_UNSUPPORTED_STRATEGY")
# a client holding more than this multiple of the group's mean lag / in_rate is named
LAG_SKEW_FACTOR = 2.0
