"""Assign: every group's queues recomputed with the clients' own strategies, through the
kernels' Spark glue (`rebalance_udfs`), and the hypothetical assignments the strategy
comparison weighs (every clustering member switched to one candidate strategy)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.prior import Prior
from jobs.read import Inputs
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.sticky import assign_sticky
from rebalance_udfs.strategies import supported_strategies
from reports.facts import clustering
from vocabulary.columns import STICKY_STRATEGIES

# what strategy_comparison weighs when not told otherwise
DEFAULT_CANDIDATES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "sticky")


def assign_all(inputs: Inputs, buckets: int, prior: Prior, has_sticky: bool) -> DataFrame:
    """Batch kernels for every strategy but Kafka's sticky assignors, which run snapshot
    after snapshot per group from the previous assignment."""
    if not has_sticky:
        return assign(inputs.queues, inputs.members, inputs.offsets, buckets)
    sticky = F.col("strategy").isin(*STICKY_STRATEGIES)
    regular = assign(inputs.queues, inputs.members.where(~sticky), inputs.offsets, buckets)
    return regular.unionByName(assign_sticky(inputs.queues, inputs.members.where(sticky),
                                             inputs.offsets, buckets, prior.assignments))


def with_strategy(members: DataFrame, strategy: str) -> DataFrame:
    """Members as if every CLUSTERING member ran `strategy` (params other than
    virtual_nodes cleared)."""
    member = clustering()
    return (members
            .withColumn("strategy", F.when(member, F.lit(strategy))
                        .otherwise(F.col("strategy")))
            .withColumn("rooms", F.when(~member, F.col("rooms")))
            .withColumn("config_queues", F.when(~member, F.col("config_queues"))))


def assign_candidates(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                      buckets: int, strategies: tuple[str, ...] = DEFAULT_CANDIDATES
                      ) -> dict[str, DataFrame]:
    """Per candidate strategy, the assignment rows of every snapshot had every clustering
    member run it (sticky ones chained over the run's snapshots, from no prior)."""
    strategies = tuple(dict.fromkeys(strategies))
    known = set(supported_strategies())
    unknown = [s for s in strategies if s not in known]
    if unknown or not strategies:
        raise ValueError(f"strategy_comparison: unknown or no strategies {list(unknown)} "
                         f"(supported: {', '.join(sorted(known))})")
    out = {}
    for strategy in strategies:
        switched = with_strategy(members, strategy)
        out[strategy] = (assign_sticky(queues, switched, offsets, buckets)
                         if strategy in STICKY_STRATEGIES
                         else assign(queues, switched, offsets, buckets))
    return out
