"""Report: every output table but rejects, from the assign-and-report pass and the inputs.

consumer_load and group_balance figures, the what-if candidates, churn and, when asked
for, the strategy comparison's rows come out of the pass that assigned the groups'
queues (`rebalance_udfs.report_pass`, `rebalance_udfs.spark.comparison`; unpacked by
`rebalance_udfs.spark.report_pass.unpack`); drift is one pass over the observed holders.
This step adds what Spark does best (the capture times, the recommendation's words, the
pairs' times and the triggers) over those rows, lazily: a table is computed when it is
written, from the pass's materialized rows.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.persist import Persist
from jobs.progress import Step
from jobs.read import Inputs
from jobs.sizing import waves_for
from rebalance_udfs.spark.report_pass import COMPARISON, unpack
from reports.consumer_load import consumer_load_report
from reports.drift import drift_by_group, drift_report, drift_table
from reports.group_balance import group_balance_report
from reports.rebalance_churn import churn_table
from reports.strategy_comparison import strategy_comparison_report
from reports.what_if import what_if_report
from vocabulary.columns import SNAPSHOT_KEYS


def member_snapshots(members: DataFrame, times: DataFrame) -> DataFrame:
    """snapshot_id, cluster and captured_at of every snapshot with member rows: those
    consumer_load has rows of, which churn compares."""
    return members.select(*SNAPSHOT_KEYS).distinct().join(F.broadcast(times), SNAPSHOT_KEYS,
                                                          "left")


def simulates_more(inputs: Inputs, what_if: str) -> bool:
    """Whether the pass simulated groups the what_if table leaves out: with observed rows,
    the groups OBSERVED_DRIFT may give a finding (`rebalance_udfs.report_pass`)."""
    return inputs.observed is not None and what_if == "findings"


def compute_reports(inputs: Inputs, side: DataFrame, assignments: DataFrame,
                    times: DataFrame, pairs: DataFrame, buckets: int, persist: Persist,
                    what_if: str = "findings", comparison: bool = False,
                    comparison_written: bool = False,
                    members_rejected: bool = False,
                    queues_rejected: bool = False,
                    *,
                    pass_rows: dict[str, int],
                    step: Callable[[str], AbstractContextManager[Step]] = (
                        lambda label: nullcontext(Step(label))),
                    ) -> dict[str, DataFrame]:
    """Every output table but rejects, as DataFrames (without run_id).

    `side`: the assign-and-report pass's side rows (`jobs.assign.assign_and_report_all`,
    run with `what_if`, then `side_rows`; persisted by the caller); `assignments`: its
    assignment rows as the table has them; `pairs`: the snapshots churn compares, with their times
    (`reports.rebalance_churn.churn_history`). `what_if`: which groups got what-if
    candidates (all, findings, off); their best change is quoted in the group_balance
    recommendation. `comparison`: whether the pass computed the strategy comparison's rows;
    without them the table is written empty if an earlier run wrote it
    (`comparison_written`). `members_rejected`: whether members rows of the run's
    snapshots are among the rejects (`jobs.scope.Scope`); the group_balance rows of their
    groups say so, as those of topics whose queues rows are (`queues_rejected`).
    `pass_rows`: rows per table of the pass (`pass_counts`): each table is decoded in as
    many tasks as its rows need (`jobs.sizing.waves_for`), not one per bucket.
    `step(label)`: the context each materialized part runs in."""
    cores = side.sparkSession.sparkContext.defaultParallelism

    def unpacked(name: str) -> DataFrame:
        return unpack(side, name, waves_for(pass_rows[name], cores))

    drift = drift_report(assignments, inputs.observed, buckets, inputs.members)
    if inputs.observed is not None:
        with step("drift") as line:
            drift = persist(drift)
            line.detail = "held for group_balance's OBSERVED_DRIFT and the drift table"
    drift_groups = drift_by_group(drift) if inputs.observed is not None else None
    balance = group_balance_report(unpacked("group_balance"), times, drift_groups,
                                   inputs.rejects if members_rejected else None,
                                   inputs.rejects if queues_rejected else None)
    decide = simulates_more(inputs, what_if)
    if decide:  # the groups' findings decide which what-if rows the table keeps
        with step("group_balance") as line:
            balance = persist(balance)
            line.detail = "held for what_if, which keeps the rows of groups with a finding"
    reports = {
        "assignments": assignments,
        "consumer_load": consumer_load_report(unpacked("consumer_load"), times),
        "group_balance": balance,
        "rebalance_churn": churn_table(unpacked("churn"), pairs),
        "drift": drift_table(drift),
        "what_if": what_if_report(unpacked("what_if"), times,
                                  balance if decide else None),
    }
    if comparison or comparison_written:
        # without a comparison the pass made no rows of it: this run's snapshots must not
        # keep an earlier run's
        reports["strategy_comparison"] = strategy_comparison_report(unpacked(COMPARISON),
                                                                    times)
    return reports
