"""Assign: every group's queues recomputed with the clients' own strategies, through the
kernels' Spark glue (`rebalance_udfs`), with the per-group reports computed in the same
call (`rebalance_udfs.report_pass`), and the strategy comparison's figures (every
clustering member switched to one candidate strategy after another)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.prior import Prior
from jobs.read import Inputs
from rebalance_udfs.report_pass import OBSERVED
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.buckets import BUCKET_KEYS
from rebalance_udfs.spark.churn import History
from rebalance_udfs.spark.comparison import comparison_figures
from rebalance_udfs.spark.report_pass import assign_and_report, report
from rebalance_udfs.spark.sticky import assign_sticky
from rebalance_udfs.strategies import supported_strategies
from vocabulary.columns import GROUP_KEYS, STICKY_STRATEGIES

# what strategy_comparison weighs when not told otherwise
DEFAULT_CANDIDATES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "sticky")


def assign_and_report_all(inputs: Inputs, buckets: int, prior: Prior, has_sticky: bool,
                          what_if: str, history: History) -> DataFrame:
    """Every group's assignment rows and per-group reports, packed
    (`rebalance_udfs.spark.report_pass`): batch kernels and reports in one call per bucket
    of groups, churn against `history`. Groups with a member on a Kafka sticky assignor
    in any snapshot of the run run snapshot after snapshot from the previous assignment
    (`assign_sticky`; their other members through the batch kernels, as ever), and their
    reports run over the rows of both."""
    members = _with_observed(inputs.members, inputs.observed)
    if not has_sticky:
        return assign_and_report(inputs.queues, members, inputs.offsets, buckets, what_if,
                                 history)
    sticky = F.col("strategy").isin(*STICKY_STRATEGIES)
    # by (cluster, group): churn compares a group's snapshots in one of the two passes
    chained = members.where(sticky).select(*BUCKET_KEYS).distinct()

    def part(how: str) -> History:
        def rows(df: DataFrame | None) -> DataFrame | None:
            return None if df is None else df.join(chained, BUCKET_KEYS, how)
        return History(history.pairs, rows(history.assignments), rows(history.consumer_load))

    def offsets(how: str) -> DataFrame | None:
        # each pass ships only its groups' offsets rows (the sticky groups' passes would
        # otherwise shuffle and join every group's: 1M, 10% of members sticky, a 4.2 s join)
        return None if inputs.offsets is None else inputs.offsets.join(chained, BUCKET_KEYS,
                                                                       how)

    plain = members.join(chained, BUCKET_KEYS, "left_anti")
    members = members.join(chained, BUCKET_KEYS, "left_semi")
    chained_offsets = offsets("left_semi")
    rows = assign(inputs.queues, members.where(~sticky), chained_offsets, buckets).unionByName(
        assign_sticky(inputs.queues, members.where(sticky), chained_offsets, buckets,
                      prior.assignments))
    return (assign_and_report(inputs.queues, plain, offsets("left_anti"), buckets, what_if,
                              part("left_anti"))
            .unionByName(report(rows, members, buckets, what_if, part("left_semi"))))


def _with_observed(members: DataFrame, observed: DataFrame | None) -> DataFrame:
    """Members with OBSERVED (their group has observed rows: the report pass simulates
    its what-if candidates, since OBSERVED_DRIFT is known only after it)."""
    if observed is None:
        return members
    seen = observed.select(*GROUP_KEYS).distinct().withColumn(OBSERVED, F.lit(True))
    return (members.join(seen, GROUP_KEYS, "left")
            .withColumn(OBSERVED, F.coalesce(F.col(OBSERVED), F.lit(False))))


def strategy_comparison(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                        buckets: int, strategies: tuple[str, ...] = DEFAULT_CANDIDATES
                        ) -> DataFrame:
    """Per compared group and candidate strategy, the queues, moves, duplicate estimate and
    heaviest client had every clustering member run it (`rebalance_udfs.spark.comparison`:
    sticky ones chained over the run's snapshots from no prior). Unknown strategies are
    refused before any Spark job."""
    strategies = tuple(dict.fromkeys(strategies))
    known = set(supported_strategies())
    unknown = [s for s in strategies if s not in known]
    if unknown or not strategies:
        raise ValueError(f"strategy_comparison: unknown or no strategies {list(unknown)} "
                         f"(supported: {', '.join(sorted(known))})")
    return comparison_figures(queues, members, offsets, buckets, strategies)
