"""Report: every output table but rejects, from the assignment rows and the inputs.

consumer_load and group_balance come from one per-bucket pass over each group's claim
facts and member rows (`rebalance_udfs.group_figures`), churn from one per-bucket pass over
both snapshots of each compared group (`rebalance_udfs.churn`); drift and what-if are
per-bucket passes too (`reports/`). This step wires them together and decides what is
materialized: the assignment rows and the figures are read by several reports each, and
the kernels must not run twice. Materializing computes
(`jobs.persist`), so each part runs inside its own `step` (one progress line each).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from pyspark.sql import DataFrame

from jobs.persist import Persist
from jobs.prior import Prior
from jobs.read import Inputs
from rebalance_udfs.spark.group_figures import figures as group_figures
from reports.assignments import COLUMNS as ASSIGNMENT_COLUMNS
from reports.consumer_load import consumer_load_report
from reports.drift import drift_by_group, drift_report
from reports.facts import client_topic_facts
from reports.group_balance import group_balance_report
from reports.rebalance_churn import rebalance_churn_report
from reports.strategy_comparison import strategy_comparison_report
from reports.what_if import best_sentence, what_if_report, with_what_if

# compute_reports' entry that is not an output table: the groups' what-if lines
WHAT_IF_LINES = "what_if_lines"


def compute_reports(inputs: Inputs, assigned: DataFrame, times: DataFrame, prior: Prior,
                    buckets: int, persist: Persist, what_if: str = "findings",
                    candidates: dict[str, DataFrame] | None = None,
                    compare: bool = False,
                    step: Callable[[str], AbstractContextManager] = lambda _label: nullcontext(),
                    ) -> dict[str, DataFrame]:
    """Every output table but rejects, as DataFrames (without run_id), and under
    WHAT_IF_LINES (not a table) each group's what-if line (`reports.what_if.best_sentence`).

    `assigned`: the assign step's rows with captured_at (persisted by the caller).
    `what_if`: which groups get what-if candidates (all, findings, off); their best change
    is quoted in the group_balance recommendation. `candidates`: the strategy comparison's
    hypothetical assignments; its table is empty unless `compare`. `step(label)`: the
    context each materialized part runs in."""
    assignments = assigned.select(*ASSIGNMENT_COLUMNS)
    # `assigned` is bucketed by group (`jobs.audit`): the facts aggregation, the figures
    # pass and the what-if read each bucket where it is; the member rows are shuffled to
    # their buckets by each pass
    members = inputs.members
    with step("group figures"):
        figures = persist(group_figures(client_topic_facts(assigned), members, buckets))
    consumer_load = consumer_load_report(figures, times)
    drift = drift_report(assignments, inputs.observed, buckets)
    if inputs.observed is not None:
        with step("drift"):
            drift = persist(drift)
    drift_groups = drift_by_group(drift) if inputs.observed is not None else None
    balance = group_balance_report(figures, times, drift_groups)
    if what_if == "off":
        simulated = what_if_report(assigned, members, balance, times, buckets, "off")
        lines = best_sentence(simulated)
    else:
        with step("balance figures"):
            balance = persist(balance)
        with step("what_if simulation"):
            simulated = persist(what_if_report(assigned, members, balance, times,
                                               buckets, what_if))
        with step("what_if lines"):
            # one row per group: read by group_balance and by the run's summary
            lines = persist(best_sentence(simulated))
        balance = with_what_if(balance, lines)
    reports = {
        "assignments": assignments,
        "consumer_load": consumer_load,
        "group_balance": balance,
        "rebalance_churn": rebalance_churn_report(
            assignments, consumer_load, prior.assignments, prior.consumer_load, buckets),
        "drift": drift,
        "what_if": simulated,
        WHAT_IF_LINES: lines,
    }
    if candidates:
        comparison = strategy_comparison_report(candidates, inputs.queues, inputs.members)
        # written empty when not asked for but an earlier run wrote it: this run's
        # snapshots must not keep that run's rows
        reports["strategy_comparison"] = comparison if compare else comparison.limit(0)
    return reports
