"""Report: every output table but rejects, from the assign-and-report pass and the inputs.

consumer_load and group_balance figures and the what-if candidates come out of the pass
that assigned the groups' queues (`rebalance_udfs.report_pass`, unpacked by
`rebalance_udfs.spark.report_pass.unpack`); churn is one per-bucket pass over both
snapshots of each compared group (`rebalance_udfs.churn`), drift one over the observed
holders. This step adds what Spark does best (the capture times, the recommendation's
words, the pairs of snapshots) and decides what is materialized: a table several
reports read is materialized once (`jobs.persist`), each in its own `step` (one progress
line each).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.persist import Persist
from jobs.prior import Prior
from jobs.read import Inputs
from rebalance_udfs.report_pass import LINE_COLUMN
from rebalance_udfs.spark.report_pass import unpack
from reports.consumer_load import consumer_load_report
from reports.drift import drift_by_group, drift_report
from reports.group_balance import group_balance_report
from reports.rebalance_churn import rebalance_churn_report
from reports.strategy_comparison import strategy_comparison_report
from reports.what_if import what_if_report
from vocabulary.columns import GROUP_KEYS

# compute_reports' entry that is not an output table: the groups' what-if lines
WHAT_IF_LINES = "what_if_lines"


def compute_reports(inputs: Inputs, packed: DataFrame, assignments: DataFrame,
                    times: DataFrame, prior: Prior, buckets: int, persist: Persist,
                    what_if: str = "findings",
                    candidates: dict[str, DataFrame] | None = None,
                    compare: bool = False,
                    step: Callable[[str], AbstractContextManager] = lambda _label: nullcontext(),
                    ) -> dict[str, DataFrame]:
    """Every output table but rejects, as DataFrames (without run_id), and under
    WHAT_IF_LINES (not a table) each group's what-if line (`rebalance_udfs.what_if_lines`,
    read by the run's summary).

    `packed`: the assign-and-report pass's rows (`jobs.assign.assign_and_report_all`, run
    with `what_if`; persisted by the caller); `assignments`: its assignment rows as the
    table has them. `what_if`: which groups got what-if candidates (all, findings, off);
    their best change is quoted in the group_balance recommendation. `candidates`: the
    strategy comparison's hypothetical assignments; its table is empty unless `compare`.
    `step(label)`: the context each materialized part runs in."""
    with step("consumer_load"):
        # read by churn and written: materialized once
        consumer_load = persist(consumer_load_report(unpack(packed, "consumer_load"), times))
    drift = drift_report(assignments, inputs.observed, buckets)
    if inputs.observed is not None:
        with step("drift"):
            drift = persist(drift)
    drift_groups = drift_by_group(drift) if inputs.observed is not None else None
    figures = unpack(packed, "group_balance")
    balance = group_balance_report(figures, times, drift_groups)
    # with observed rows the pass also simulated the groups that only OBSERVED_DRIFT may
    # give a finding (`rebalance_udfs.report_pass`): the groups' findings decide here
    decide = inputs.observed is not None and what_if == "findings"
    if decide:
        with step("group_balance"):
            balance = persist(balance)
    lines = figures.where(F.col(LINE_COLUMN).isNotNull()).select(
        *GROUP_KEYS, F.col(LINE_COLUMN).alias("what_if_line"))
    reports = {
        "assignments": assignments,
        "consumer_load": consumer_load,
        "group_balance": balance,
        "rebalance_churn": rebalance_churn_report(
            assignments, consumer_load, prior.assignments, prior.consumer_load, buckets),
        "drift": drift,
        "what_if": what_if_report(unpack(packed, "what_if"), times,
                                  balance if decide else None),
        WHAT_IF_LINES: lines,
    }
    if candidates:
        comparison = strategy_comparison_report(candidates, inputs.queues, inputs.members)
        # written empty when not asked for but an earlier run wrote it: this run's
        # snapshots must not keep that run's rows
        reports["strategy_comparison"] = comparison if compare else comparison.limit(0)
    return reports
