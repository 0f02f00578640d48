"""Assign: every group's queues recomputed with the clients' own strategies, through the
kernels' Spark glue (`rebalance_udfs`), with the per-group reports computed in the same
call (`rebalance_udfs.report_pass`), the strategy comparison's rows too when asked for
(every clustering member switched to one candidate strategy after another)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.prior import Prior
from jobs.read import Inputs
from jobs.sizing import broadcasts_subscriptions
from rebalance_udfs.report_pass import OBSERVED
from rebalance_udfs.spark.churn import History
from rebalance_udfs.spark.comparison import Plan
from rebalance_udfs.spark.report_pass import assign_and_report
from rebalance_udfs.spark.sticky import chain_order
from vocabulary.columns import GROUP_KEYS

# what strategy_comparison weighs when not told otherwise
DEFAULT_CANDIDATES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "sticky")


def assign_and_report_all(inputs: Inputs, times: DataFrame, buckets: int, prior: Prior,
                          has_sticky: bool, what_if: str, history: History,
                          comparison: Plan | None = None, subscriptions: int | None = None
                          ) -> DataFrame:
    """Every group's assignment rows and per-group reports, packed
    (`rebalance_udfs.spark.report_pass`): kernels and reports in one call per bucket of
    groups, churn against `history`. When a member runs a Kafka sticky assignor, the
    sticky members' queues are chained snapshot after snapshot from the previous
    assignment in the same call (their groups' other members through the batch kernels,
    in one batch with the chain's claims: a queue claimed by both is one CONTENDED
    queue); the snapshots' order is collected for it first from their capture `times`
    (`reports.assignments.snapshot_times`, a few rows per cluster).
    With a `comparison` plan (`rebalance_udfs.spark.comparison.comparison_plan`) the same
    call computes the strategy comparison's rows. `subscriptions`: how many (snapshot,
    cluster, group, topic) the members subscribe, estimated (`jobs.scope.Scope`): the
    queue rows' join to them is a broadcast when they are few (`jobs.sizing`), else
    Spark's own choice."""
    members = _with_observed(inputs.members, inputs.observed)
    chain = chain_order(times, prior.assignments).toArrow() if has_sticky else None
    return assign_and_report(inputs.queues, members, inputs.offsets, buckets, what_if,
                             history, chain, comparison, broadcasts_subscriptions(subscriptions))


def _with_observed(members: DataFrame, observed: DataFrame | None) -> DataFrame:
    """Members with OBSERVED (their group has observed rows: the report pass simulates
    its what-if candidates, since OBSERVED_DRIFT is known only after it)."""
    if observed is None:
        return members
    seen = observed.select(*GROUP_KEYS).distinct().withColumn(OBSERVED, F.lit(True))
    return (members.join(seen, GROUP_KEYS, "left")
            .withColumn(OBSERVED, F.coalesce(F.col(OBSERVED), F.lit(False))))
