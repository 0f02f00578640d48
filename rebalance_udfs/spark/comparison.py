"""The strategy comparison in Spark: every candidate strategy of a bucket of groups in the
assign-and-report pass's call (`rebalance_udfs.spark.report_pass`), from the rows that
call already holds (`bucket_comparison`, `rebalance_udfs.comparison`).

Buckets are by (cluster, consumer_group), so a group's snapshots, which the comparison
pairs, are in one call; the queue rows have their offsets attached there. What the calls
need besides is a few rows per cluster, collected once before the pass
(`comparison_plan`): the candidates, the snapshots' order (the sticky candidate chains
them) and the pairs compared. Before, the comparison shuffled the queue rows, their
offsets and the members a second time into a cogrouped call of its own, and grouped the
members once more in Spark for the groups and their strategies (1M queue rows: a 12 s
step).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from rebalance_udfs.allocate import QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.batch import batch_layout
from rebalance_udfs.churn_link import PAIR_KEYS
from rebalance_udfs.comparison import candidate_figures, comparison_rows, switched
from rebalance_udfs.spark.arrow import gather_assigned, kernel_claims, kernel_keys
from rebalance_udfs.spark.sticky import chain_order, ordered_keys
from rebalance_udfs.sticky_chain import ORDER_COLUMNS, member_side, sticky_bucket
from rebalance_udfs.strategies import supported_strategies
from vocabulary.columns import GROUP_KEYS, QUEUE_KEYS, STICKY_STRATEGIES


@dataclass(frozen=True)
class Plan:
    """What every call of the pass needs to compare candidates (a few rows per cluster).

    `order`: SNAPSHOT_KEYS and ORDER_COLUMNS of the run's snapshots (`chain_order`, no
    prior: the sticky candidate starts from nobody's queues); `pairs`: PAIR_KEYS of those
    with a predecessor in the run."""

    strategies: tuple[str, ...]
    order: pa.Table
    pairs: pa.Table


def comparison_plan(times: DataFrame, strategies: tuple[str, ...]) -> Plan | None:
    """The comparison of `strategies` over the snapshots of `times` (snapshot_id, cluster,
    captured_at), collected in one Spark job; None when no snapshot has a predecessor in
    the run (nothing to compare). Unknown strategies are refused before any Spark job."""
    strategies = tuple(dict.fromkeys(strategies))
    known = set(supported_strategies())
    unknown = [s for s in strategies if s not in known]
    if unknown or not strategies:
        raise ValueError(f"strategy_comparison: unknown or no strategies {list(unknown)} "
                         f"(supported: {', '.join(sorted(known))})")
    order = chain_order(times).toArrow()
    paired = order.filter(pc.is_valid(order.column("_previous")))
    if not paired.num_rows:
        return None
    pairs = pa.table({"cluster": paired.column("cluster"),
                      "snapshot_id": paired.column("snapshot_id"),
                      "previous_snapshot_id": paired.column("_previous"),
                      "previous_in_run": paired.column("_previous_in_run")}).select(PAIR_KEYS)
    return Plan(strategies, order, pairs)


def bucket_comparison(queues: pa.Table, frame: pd.DataFrame, members: pa.Table,
                      comparison: Plan) -> pa.Table:
    """strategy_comparison's rows of a bucket (`rebalance_udfs.comparison.ROWS_SCHEMA`):
    every candidate's figures, per group present in a compared snapshot.

    Every clustering member is switched to each candidate in turn
    (`rebalance_udfs.comparison.switched`) and the bucket allocated again: by the batch
    kernels, on one layout of its queues and clients for all of them
    (`rebalance_udfs.batch.batch_layout`: only the calls differ), or by the sticky chain
    from no prior over the snapshots' order.

    `queues`: the bucket's queue rows, offsets attached; `frame`: its member rows as the
    kernels take them; `members`: the same rows in Arrow (GROUP_KEYS and strategy)."""
    keys = kernel_keys(queues, QUEUE_COLUMNS)
    layout = batch_layout(keys, frame) if len(keys) and len(frame) else None
    figures = []
    for strategy in comparison.strategies:
        candidates = switched(frame, strategy)
        if strategy in STICKY_STRATEGIES:
            claims = kernel_claims(ordered_keys(queues, comparison.order),
                                   [*QUEUE_KEYS, *ORDER_COLUMNS], member_side(candidates),
                                   sticky_bucket)
        else:
            claims = allocate_bucket(keys, candidates, layout)
        figures.append(candidate_figures(gather_assigned(queues, claims), comparison.pairs,
                                         strategy))
    return comparison_rows(pa.concat_tables(figures),
                           members.select([*GROUP_KEYS, "strategy"]), comparison.pairs,
                           comparison.strategies)
