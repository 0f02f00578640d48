"""The audit job: read → validate → assign → report → write.

Each step is a module of its own (`jobs.read`, `jobs.validate`, `jobs.assign`,
`jobs.report`, `jobs.write`); `run` strings them together, one progress line per step
(`jobs.progress`). Spark is lazy, so each step materializes what the next one reuses.
Publishing is one unit per run (`jobs.write`): a `runs` row per snapshot, committed after
every other table.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from jobs import faults
from jobs.assign import DEFAULT_CANDIDATES, assign_and_report_all
from jobs.config import AuditConfig
from jobs.demo import write_demo_inputs
from jobs.held import (
    Held,
    churn_previous,
    clusters_left_out,
    comparison_without_predecessor,
    followers_of_replaced,
    held_runs,
    lag_known,
    lag_replaced_by_none,
    outdated_followers,
    published_meanwhile,
    replaced_by_none,
    replaced_rows_changed,
)
from jobs.interrupt import RunInterrupted, interruptible
from jobs.launch import InputSize, input_size, new_jvm_options
from jobs.persist import Persisted
from jobs.preflight import (
    check_inputs_apart,
    check_output_place,
    check_root_apart,
    check_tables,
)
from jobs.prior import Prior, prior_keys, read_prior, unfinished_predecessors
from jobs.progress import Hook, Steps, row_counts
from jobs.read import InputPaths, Inputs, input_rows, read_inputs
from jobs.report import compute_reports, member_snapshots, simulates_more
from jobs.scope import (
    Note,
    Scope,
    capture_time_spread,
    config_queues_not_readable,
    find_scope,
    groups_assigned_by_rack,
    groups_not_observed,
    groups_with_empty_topics,
    groups_without_lag,
    groups_without_members,
    idle_buckets,
    implausible_capture_times,
    lookalike_columns,
)
from jobs.session import build_session, launched_by_spark_submit
from jobs.sizing import partitions_for, waves_for
from jobs.validate import reject_rows, writable_snapshot_id
from jobs.write import RUNS, Publication, count_rows, publish
from rebalance_udfs.spark.comparison import comparison_plan
from rebalance_udfs.spark.report_pass import (
    COMPARISON,
    EMPTY_TOPICS,
    LAG_UNKNOWN,
    MEMBERLESS,
    RACK_AWARE,
    UNMATCHED_OFFSETS,
    assignment_rows,
    pass_counts,
    side_rows,
    unpack,
)
from reports.assignments import assignments_report, snapshot_time_spread, snapshot_times
from reports.attention import (
    FindingCounts,
    FirstGroups,
    finding_counts,
    groups_all_rejected,
    groups_missing_members,
    groups_missing_queues,
    latest_group_rows,
    top_churn,
    worst_groups,
)
from reports.rebalance_churn import churn_history
from storage.base import unreadable_file
from storage.delta import DeltaStore, Store, WriteResult
from storage.paths import is_local, without_file_scheme
from vocabulary.columns import SNAPSHOT_KEYS, STICKY_STRATEGIES
from vocabulary.contracts import OUTPUT_TABLES, REJECTS_SCHEMA
from vocabulary.errors import InputError, TableError

log = logging.getLogger("rebalance_audit")

# the pass's tables the run's summary reads after writing them: stored as they are written
SUMMARIZED = ("group_balance", "rebalance_churn")
# written when asked for, and then always replaced: a re-run without them must not leave
# an earlier run's rows beside this run's other tables
OPTIONAL_TABLES = ("strategy_comparison",)
DEMO_INPUTS = "demo_inputs"
PRIOR_ATTEMPTS = 2


class StalePrior(TableError):
    """The snapshot this run compared against changed while it computed (another run
    published an earlier snapshot of the same cluster)."""


@dataclass
class RunResult:
    run_id: str
    output: str
    engine: str
    snapshots: list[str]
    tables: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    worst_groups: list[dict] = field(default_factory=list)
    churn: list[dict] = field(default_factory=list)
    writes: list[WriteResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # the (snapshot_id, cluster) each warning is about, (None, None) for none: a page
    # showing a snapshot lists what later runs said of it (`reports.html.run_warnings`)
    warned_about: list[tuple[str | None, str | None]] = field(default_factory=list)
    not_audited: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)
    report: str | None = None  # report.html, when it could be written
    finding_counts: FindingCounts | None = None
    # groups audited without some of their members rows (rejected), and groups of the
    # audited snapshots with none left: no figures at all
    members_short: FirstGroups = field(default_factory=FirstGroups)
    members_gone: FirstGroups = field(default_factory=FirstGroups)
    # groups whose topics lost queues rows to the rejects (figures without those queues)
    queues_short: FirstGroups = field(default_factory=FirstGroups)


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


@dataclass
class _Run:
    """What the steps of one run share."""

    config: AuditConfig
    spark: SparkSession
    store: Store
    output: str
    run_id: str
    started_at: datetime
    started_clock: float
    steps: Steps
    persist: Persisted = field(default_factory=Persisted)
    # the snapshots whose runs rows publishing removed first (`jobs.write`): what Ctrl-C
    # then says (None: it had not begun)
    withdrawn: list[str] | None = None


def run(config: AuditConfig, spark: SparkSession | None = None,
        hook: Hook | None = None) -> RunResult:
    """One audit run. `hook(point)` is called at each named point of the run (the
    fault-injection tests stop or interleave runs there)."""
    started_at, started_clock, started = datetime.now(UTC), time.time(), time.perf_counter()
    read_times_in_utc()
    output = config.output.rstrip("/")
    check_output_place(config)
    steps = Steps(hook or faults.reached)
    with steps.step("session") as line:
        if spark is None:
            # each input's log read once, for a JVM this process starts; spark-submit's
            # is running, sized by the launcher, and takes neither figure
            size = (InputSize(None, None) if launched_by_spark_submit()
                    else input_size(config))
            spark = build_session(master=config.master, conf=config.spark_conf,
                                  console_progress=config.spark_progress,
                                  java_options=new_jvm_options(config, size),
                                  largest_file_rows=size.largest_file_rows)
        store = DeltaStore(spark, config.engine)
        steps.describe = spark.sparkContext.setJobDescription
        line.detail = f"{store.engine} Delta engine, output {output}"
    ctx = _Run(config, spark, store, output, config.run_id or new_run_id(), started_at,
               started_clock, steps)
    log.info("run %s", ctx.run_id)
    try:
        with interruptible(spark):
            result = _audit(ctx)
            with steps.step("report_html", "report.html", point=None) as line:
                _record_warnings(output, result)
                result.report, line.detail = _write_report(output, result.snapshots)
        result.timings["total"] = time.perf_counter() - started
        return result
    except KeyboardInterrupt as exc:
        # the `published` step ends once the runs rows committed
        raise RunInterrupted(output, "write" in steps.timings, ctx.withdrawn) from exc
    except Exception as exc:
        if (error := beyond_its_type(exc) or unreadable_data_file(exc, config)) is not None:
            raise error from exc
        raise
    finally:
        # with the run's error in flight, a JVM gone under it (killed) makes these fail
        # too: the run's own error stands, not theirs
        failing = sys.exception() is not None
        for tidy in (lambda: spark.sparkContext.setJobDescription(None), ctx.persist.release):
            try:
                tidy()
            except Exception:
                if not failing:
                    raise


def read_times_in_utc() -> None:
    """The driver's Python reads times in UTC, as the session does (`jobs.session`).
    Spark hands a timestamp to Python as a naive local time, and takes one back so: in a
    zone with daylight saving, a capture in the autumn's repeated hour sorted before one
    half an hour earlier (churn then compared the wrong snapshots, one run a snapshot)
    and went to `runs` an hour off; a capture late in year 9999 overflowed east of UTC."""
    if os.environ.get("TZ") != "UTC":
        os.environ["TZ"] = "UTC"
        time.tzset()


# Spark's words for a data file it cannot read (gone, cut short, not Parquet): raised when
# a step's job reads it, as an AnalysisException or a Java exception
_UNREADABLE_FILE = re.compile(r"PATH_NOT_FOUND|FAILED_READ_FILE|CANNOT_READ_FILE_FOOTER|"
                              r"is not a Parquet file|FileNotFoundException")
# what a Java stack trace's line opens with before the message: ": org.x.SparkException: "
_JAVA_PREFIX = re.compile(r"^[:\s]*(?:[\w.$]+(?:Exception|Error): )?")


def unreadable_data_file(exc: BaseException, config: AuditConfig) -> TableError | None:
    """The table behind a run that failed on a data file its log names and Spark cannot
    read (an input copied without all its files, vacuumed or rewritten while the run read
    it, a damaged file), or None: named, not a Java stack trace."""
    text = str(exc)
    found = _UNREADABLE_FILE.search(text)
    if found is None:
        return None
    output = config.output.rstrip("/")
    tables = {name: path for name, path in (("queues", config.queues),
                                            ("members", config.members),
                                            ("offsets", config.offsets),
                                            ("observed", config.observed)) if path}
    tables.update({name: f"{output}/{name}" for name in (*OUTPUT_TABLES, "runs")})
    for name, path in tables.items():
        root = without_file_scheme(path).rstrip("/")
        if is_local(path):
            root = os.path.abspath(root)
        if f"{root}/" in text:
            line = next(x for x in text.splitlines() if _UNREADABLE_FILE.search(x))
            detail = _JAVA_PREFIX.sub("", line)[:300]
            return unreadable_file(name, path, detail)
    return None


# an OverflowError a kernel raised in a Python worker, or Spark's own
_OVERFLOW = re.compile(r"OverflowError: ([^\n]+)|\[ARITHMETIC_OVERFLOW\] ([^\n.]+)")


def beyond_its_type(exc: BaseException) -> InputError | None:
    """The input mistake behind a run that failed on a figure beyond its type (a sum or
    difference of offsets beyond a long, of rates beyond their exact decimal), or None.
    Validation rejects negative offsets, offsets of 2^53 or more (sentinels such as
    Long.MAX_VALUE for "unknown") and rates of 1e29 or more, so only a client or group of
    over a thousand queues with offsets near 2^53, or many huge rates, get here."""
    found = _OVERFLOW.search(str(exc))
    if found is None:
        return None
    return InputError(
        f"{found.group(1) or found.group(2)}: the inputs hold offsets or rates no real queue "
        "reaches (queues.max_offset, offsets.committed_offset or consumed_offset near "
        "2^53 over a thousand queues, or queues.in_rate summing to 1e29 or more); a value "
        "that stands for \"unknown\" must be null")


def _audit(ctx: _Run) -> RunResult:
    names = [*OUTPUT_TABLES, RUNS]
    with ctx.steps.step("preflight") as line:
        check_root_apart(ctx.spark, ctx.output, ctx.store.engine)
        check_inputs_apart(ctx.spark, ctx.output, InputPaths.of(ctx.config).named(), names,
                           ctx.store.engine)
        cleaned = check_tables(ctx.store, ctx.output, names, ctx.started_clock)
        for item in cleaned:
            log.info("removed debris of a killed run: %s", item)
        baselines = {name: ctx.store.state(f"{ctx.output}/{name}") for name in names}
        line.detail = f"{len(cleaned)} leftover(s) removed" if cleaned else "ok"
    paths = _input_paths(ctx)
    (inputs, scope, rejects, times, captured, has_sticky, held,
     followers) = _read_and_validate(ctx, paths)
    existing = tuple(n for n in OPTIONAL_TABLES if baselines[n].version is not None)
    for attempt in range(1, PRIOR_ATTEMPTS + 1):
        attempt_persist = Persisted()
        try:
            with ctx.steps.step("read", "read prior", point=None) as line:
                prior = read_prior(ctx.store, ctx.output, captured, scope.audited)
                skipped = unfinished_predecessors(ctx.store, ctx.output, prior.held, captured)
                line.detail = prior_line(prior.snapshots, bool(scope.requested))
            tables, counts, named, unmatched = _assign_and_report(
                ctx, inputs, times, prior, has_sticky, existing, attempt_persist, scope)
            with ctx.steps.step("reports", "report rejects") as line:
                run_rejects = rejects if unmatched is None else rejects.unionByName(
                    _stamp(unmatched, ctx.run_id))
                counts["rejects"] = count_rows(run_rejects)
                line.detail = row_counts({"rejects": sum(counts["rejects"].values())})
            stale: list[Note] = []
            if followers:
                with ctx.steps.step("reports", "compare replaced", point=None) as line:
                    stale = replaced_rows_changed(ctx.store, ctx.output, held, followers, tables)
                    line.detail = (f"{len(stale)} of {len(followers)} later snapshot(s) "
                                   "follow rows this run changes")
            with ctx.steps.step("write", "published") as line:
                late = [*skipped, *stale,
                        *groups_without_lag(named[LAG_UNKNOWN],
                                            scope.missing_from.get("offsets", set())),
                        *groups_assigned_by_rack(named[RACK_AWARE]),
                        *groups_with_empty_topics(named[EMPTY_TOPICS]),
                        *groups_without_members(named[MEMBERLESS])]
                writes = _write(ctx, scope, tables, run_rejects, counts, times, captured,
                                baselines, prior,
                                landed=partial(_published_meanwhile, ctx, held, captured, late))
                line.detail = published_detail(len(writes), scope.audited)
            with ctx.steps.step("summary", point=None) as line:
                # stored by the worst groups' job, read again by the tally (1M, warm: 1.2-1.6
                # s for both, 1.7-1.9 s with a window each, 1.4-1.8 s stored first)
                latest = attempt_persist(latest_group_rows(tables["group_balance"]),
                                         eager=False)
                worst, findings = worst_groups(latest), finding_counts(latest)
                short, gone, queues_short = FirstGroups(), FirstGroups(), FirstGroups()
                if scope.members_rejected:  # 13 small jobs more at 10M; none without rejects
                    short = groups_missing_members(latest)
                    gone = groups_all_rejected(rejects, inputs.members, scope.audited)
                if scope.queues_rejected:  # the same, of queues rows
                    queues_short = groups_missing_queues(latest)
                churn_top = top_churn(tables["rebalance_churn"])
                for note in late:
                    log.warning("warning: %s", note.text())
                scope.notes.extend(late)
                line.detail = (f"{findings.with_any:,} of {findings.groups:,} group(s) with "
                               "findings")
            break
        except StalePrior as exc:
            if attempt == PRIOR_ATTEMPTS:
                raise
            log.warning("%s: computing again", exc)
        finally:
            attempt_persist.release()
    totals = {name: sum(c.values()) for name, c in counts.items()}
    tables_written = {name: f"{ctx.output}/{name}" for name in [*tables, "rejects", RUNS]}
    return RunResult(ctx.run_id, ctx.output, ctx.store.engine, scope.audited, tables_written,
                     ctx.steps.timings, totals, worst, churn_top, writes,
                     [n.text() for n in scope.notes],
                     [(n.snapshot_id, n.cluster) for n in scope.notes], scope.not_audited,
                     cleaned,
                     finding_counts=findings, members_short=short, members_gone=gone,
                     queues_short=queues_short)


def prior_line(previous: list[str], requested: bool) -> str:
    """The `read prior` step's detail: what the first audited snapshots' churn compares
    with. A `--snapshot` run compares only with the output, never with the inputs'
    snapshots it leaves out: said where that leaves the first without churn."""
    if previous:
        return (f"churn of the first snapshot(s) compared with {', '.join(previous)} from "
                "the output")
    if requested:
        return ("no earlier snapshot in the output: the first snapshot gets no churn rows "
                "(churn compares with the output, not with the snapshots --snapshot leaves "
                "out; audit those first)")
    return "no earlier snapshot in the output"


def _input_paths(ctx: _Run) -> InputPaths:
    config = ctx.config
    if not config.is_demo:
        return InputPaths.of(config)
    with ctx.steps.step("demo_inputs", "demo inputs") as line:
        root = f"{ctx.output}/{DEMO_INPUTS}"
        demo = write_demo_inputs(ctx.store, root, config.demo_groups, config.demo_seed)
        line.detail = f"generated the demo cluster under {root}"
    return InputPaths(demo["queues"], demo["members"], demo["offsets"])


def _read_and_validate(ctx: _Run, paths: InputPaths):
    """The usable rows of the audited snapshots, the scope, this run's rejects, the
    snapshots' capture times (as a frame, and collected: a few rows per snapshot and
    cluster), whether any group runs a sticky assignor, the output's complete runs
    (`held`) and the snapshots this run replaces that a later one in the output still
    follows (`jobs.held.followers_of_replaced`)."""
    with ctx.steps.step("size", "read", point=None) as line:
        counted = input_rows(ctx.store, paths, ctx.config.snapshots)
        total = sum(n for n in counted.values() if n) or None
        _size(ctx, total)
        known = row_counts({k: v for k, v in counted.items() if v is not None})
        line.detail = (f"{known or 'input rows not counted'} → "
                       f"{ctx.config.buckets or _partitions(ctx.spark)} partitions")
    with ctx.steps.step("read", "validate") as line:
        read = read_inputs(ctx.store, paths, ctx.config.snapshots, ctx.persist)
        scope = find_scope(read, ctx.config.snapshots)
        _refuse_requested_absent(scope)
        held = held_runs(ctx.store, ctx.output)
        scope.notes.extend(clusters_left_out(held, scope))
        if ctx.config.strict and scope.notes:
            raise InputError(f"strict mode: {len(scope.notes)} input problem(s), nothing "
                             "written: " + "; ".join(n.text() for n in scope.notes))
        inputs = read.limited_to(scope.audited, scope.partial)
        # what the inputs hold that the audit does not read: warnings, not input problems
        scope.notes.extend([*lookalike_columns(read.lookalikes), *scope.unread_params])
        if (note := idle_buckets(ctx.config.buckets, scope.subscriptions)) is not None:
            scope.notes.append(note)
        spread = ctx.persist(snapshot_time_spread(inputs.queues))
        times = spread.select(*SNAPSHOT_KEYS, "captured_at")
        spans = spread.collect()
        captured = _capture_times(spans)
        scope.notes.extend([*capture_time_spread(spans), *implausible_capture_times(spans)])
        if scope.not_audited:  # their runs rows say when they were captured too
            scope.not_audited_times = _capture_times(snapshot_times(
                read.queues.where(F.col("snapshot_id").isin(*scope.not_audited))).collect())
        off = [table for table, on in (("drift", paths.observed is not None),
                                       ("what_if", ctx.config.what_if != "off"),
                                       ("strategy_comparison",
                                        ctx.config.compares_strategies)) if not on]
        scope.notes.extend(replaced_by_none(held, scope, off))
        if ctx.config.compares_strategies:
            scope.notes.extend(comparison_without_predecessor(held, captured))
        if paths.offsets is None:
            scope.notes.extend(lag_replaced_by_none(lag_known(ctx.store, ctx.output, held,
                                                              scope)))
        if inputs.observed is not None:
            scope.notes.extend(groups_not_observed(inputs.members, inputs.observed))
        # one job over the members: is any group on a sticky assignor, any member on
        # CONFIG (the Kafka groups their clients would assign by rack are found by the
        # pass, `rebalance_udfs.racks`: nine jobs here cost about a second at 1M)
        runs = inputs.members.select(*[F.max(cond.cast("int")).alias(name) for name, cond in (
            ("sticky", F.col("strategy").isin(*STICKY_STRATEGIES)),
            ("config", (F.col("strategy") == "CONFIG") & F.col("config_queues").isNotNull()),
        )]).first()
        has_sticky = bool(runs.sticky)
        if runs.config:
            scope.notes.extend(config_queues_not_readable(inputs.members, inputs.queues))
        compared = churn_previous(ctx.store, ctx.output, held, captured)
        scope.notes.extend(outdated_followers(held, captured, compared))
        # the snapshots this run replaces that a later one in the output still follows
        followers = followers_of_replaced(held, captured, compared)
        for text in (n.text() for n in scope.notes):
            log.warning("warning: %s", text)
        rejects = _rejects(ctx.spark, read, scope.notes, ctx.run_id)
        line.detail = scope.summary()
    return inputs, scope, rejects, times, captured, has_sticky, held, followers


def _refuse_requested_absent(scope: Scope) -> None:
    """Exit 2 when no snapshot `--snapshot` names has a single row in the inputs (a typo, or
    a capture that never ran): the run would audit nothing and say so with exit 0, and a
    scheduler would see success. With some of them there, the others are warnings
    (`--strict`: failures)."""
    if scope.requested and scope.absent == scope.requested:
        asked = scope.requested
        raise InputError(
            f"--snapshot {', '.join(asked)}: no row of {'it' if len(asked) == 1 else 'them'} "
            "in any input (queues, members, offsets, observed); nothing to audit, nothing "
            "written. Check the snapshot id against the inputs' snapshot_id values")


def _size(ctx: _Run, input_rows_total: int | None) -> None:
    """Shuffle partitions and buckets from the inputs' size (`jobs.sizing`), unless the
    session was started with a value (config, spark-submit --conf, spark-defaults).

    The partition count is also the least number of splits the input files are read in
    (`spark.sql.files.minPartitionNum`): left to Spark, the splits are 128 MB each, and
    the 10M benchmark's offsets (222 MB in 32 files) were read, materialized and
    checked for duplicates in 3 tasks on 2 cores, one core idle for a third of each
    stage."""
    conf = ctx.spark.sparkContext.getConf()
    if not conf.contains("spark.sql.shuffle.partitions"):
        cores = ctx.spark.sparkContext.defaultParallelism
        ctx.spark.conf.set("spark.sql.shuffle.partitions",
                           str(partitions_for(input_rows_total, cores)))
    if not conf.contains("spark.sql.files.minPartitionNum"):
        ctx.spark.conf.set("spark.sql.files.minPartitionNum", str(_partitions(ctx.spark)))


def _partitions(spark: SparkSession) -> int:
    return int(spark.conf.get("spark.sql.shuffle.partitions"))


def _assign_and_report(ctx: _Run, inputs: Inputs, times: DataFrame, prior: Prior,
                       has_sticky: bool, existing: tuple[str, ...], persist: Persisted,
                       scope: Scope):
    """The assign-and-report pass (materialized once), then every table, each counted per
    (snapshot, cluster) for the `runs` table; the tables come back stamped with run_id,
    beside the pass's count of groups whose lag is unknown per (snapshot, cluster)
    (`groups_without_lag`).

    The offsets rows no queue row took come back as `rejects` rows (None when there are
    none): the pass counted them, so a run without any pays no job for them.

    The pass's tables are counted by the pass itself and read from its packed rows when
    written (a decode per bucket); those the summary reads again (SUMMARIZED) are stored
    by the scan that writes them. The other tables are materialized and counted here.
    `scope`: its estimate of the members' (group, topic)s decides whether the queue rows'
    join broadcasts them (`jobs.sizing`); whether members rows were rejected, whether
    group_balance looks for their groups."""
    config = ctx.config
    buckets = config.buckets or _partitions(ctx.spark)
    compare = config.compares_strategies
    with ctx.steps.step("assign") as line:
        # the kernels and every per-group report in one call per bucket of groups
        history, pairs = churn_history(member_snapshots(inputs.members, times),
                                       prior.assignments, prior.consumer_load)
        comparison = comparison_plan(times, DEFAULT_CANDIDATES) if compare else None
        packed = persist(assign_and_report_all(inputs, times, buckets, prior, has_sticky,
                                               config.what_if, history, comparison,
                                               scope.subscriptions))
        # the side tables' rows apart: each table read from them scans a few rows per
        # bucket, not the assignment rows too; stored by the scan that counts the tables
        # (one scan of the packed rows, not two: 10M, 4.9 + 3.0 s)
        side = persist(side_rows(packed), eager=False)
        counts, named = pass_counts(side)
        pass_rows = {name: sum(c.values()) for name, c in counts.items()}
        counts["rebalance_churn"] = counts.pop("churn")
        compared = counts.pop(COMPARISON)  # counted only if written (below)
        unmatched, left = None, sum(counts.pop(UNMATCHED_OFFSETS).values())
        if left:
            cores = ctx.spark.sparkContext.defaultParallelism
            offsets_left = unpack(side, UNMATCHED_OFFSETS, waves_for(left, cores))
            unmatched = reject_rows(offsets_left, "offsets", F.col("reason"))
        if simulates_more(inputs, config.what_if):
            counts.pop("what_if")  # filtered by the groups' findings after the pass
        line.detail = ("kernels and per-group reports, "
                       + row_counts({"assignments": sum(counts["assignments"].values())}))
        assignments = assignments_report(assignment_rows(packed), times)
    with ctx.steps.step("reports", "plan reports", point=None) as line:
        # Spark analyses each table's plan here (1M: 0.3-0.5 s); what another table reads
        # is materialized first (with observed holders: drift, group_balance), each with a
        # `compute` line inside this one; their `report` lines follow with the others
        reports = compute_reports(
            inputs, side, assignments, times, pairs, buckets, persist, config.what_if,
            compare, "strategy_comparison" in existing, scope.members_rejected,
            scope.queues_rejected,
            step=lambda label: ctx.steps.step("reports", f"compute {label}", point=None),
            pass_rows=pass_rows)
        line.detail = ", ".join(n for n in OUTPUT_TABLES if n in reports)
    if "strategy_comparison" in reports:
        counts["strategy_comparison"] = compared  # after churn, as runs have always listed it
    tables = {"assignments": _stamp(reports.pop("assignments"), ctx.run_id)}
    for name in (n for n in OUTPUT_TABLES if n in reports):
        with ctx.steps.step("reports", f"report {name}", point=None) as line:
            if name in counts:
                # the pass's, counted there: read from its rows when written, and those
                # the summary reads again stored by that write's own scan
                table = reports[name]
                if name in SUMMARIZED:
                    table = persist(table, eager=False)
                tables[name] = _stamp(table, ctx.run_id)
            else:
                tables[name] = _stamp(persist(reports[name]), ctx.run_id)
                counts[name] = count_rows(tables[name])
            line.detail = row_counts({name: sum(counts[name].values())})
    return tables, counts, named, unmatched


def _write(ctx: _Run, scope: Scope, tables: dict[str, DataFrame], rejects: DataFrame,
           counts: dict, times: DataFrame, captured: dict, baselines: dict,
           prior: Prior, landed: Callable[[], None]) -> list[WriteResult]:
    def still_current() -> None:
        landed = prior.landed_since(prior_keys(ctx.store, ctx.output, captured,
                                               scope.audited))
        if landed:
            raise StalePrior(
                f"while this run computed, another run published snapshot(s) "
                f"{', '.join(landed)} before this run's first one; churn must be compared "
                "with them")

    still_current()
    # the not-audited snapshots are none of the audited ones: their keys never meet
    pub = Publication(ctx.run_id, ctx.started_at, scope, tables, rejects, counts,
                      {**scope.not_audited_times, **captured})

    def hook(point: str) -> None:
        if point == "retracted":
            ctx.withdrawn = list(scope.audited)
        ctx.steps.hook(point)

    return publish(ctx.spark, ctx.store, ctx.output, pub, baselines, hook, still_current,
                   ctx.steps.describe, landed)


def published_detail(commits: int, audited: Sequence[str]) -> str:
    """The `published` step's line: the commits, and the snapshots they audited (a run of
    rejects only audits none)."""
    said = f"snapshot(s) {', '.join(audited)}" if audited else "no snapshot audited"
    return f"{commits} commit(s), {said}"


def _published_meanwhile(ctx: _Run, held: Held, captured: dict, into: list[Note]) -> None:
    """A later snapshot another run published while this one ran compared its churn with
    the snapshot before this run's, which cannot change it now: named, as a backfill's
    follower is. Called in this run's turn under the publish lock (`jobs.write`), so no
    run lands unseen by both."""
    into.extend(published_meanwhile(held_runs(ctx.store, ctx.output), held, captured))


def _record_warnings(output: str, result: RunResult) -> None:
    """Keep the landed run's warnings beside its tables, for every page that shows its
    snapshots (`reports.html.run_warnings`; a run that audited none has no page to be on),
    and drop those of runs no snapshot names any more. Local roots only, as report.html;
    never fails the run."""
    if not is_local(output):
        return
    from reports.html import run_warnings

    root = without_file_scheme(output)
    try:
        if result.snapshots:
            run_warnings.save(root, result.run_id, result.warnings, result.warned_about)
    except Exception as exc:
        log.warning("warning: the run's warnings are not kept for report.html: %s: %s",
                    type(exc).__name__, exc)
        return
    try:
        for name in run_warnings.prune(root):
            log.info("removed the warnings of a run no snapshot names: %s", name)
    except Exception as exc:
        log.warning("warning: the warnings of earlier runs were not cleaned up: %s: %s",
                    type(exc).__name__, exc)


def _write_report(output: str, snapshots: list[str]) -> tuple[str | None, str]:
    """report.html is a view of the published tables and their runs' warnings: it never
    fails the run. The page's path (None when not written) and the step's line."""
    from vocabulary.errors import NoOutputError

    try:
        from reports.html import write_report

        path = write_report(output, snapshots=snapshots or None)
        return path, path
    except Exception as exc:
        if isinstance(exc, NoOutputError) and not snapshots:
            # nothing audited, and no earlier run to show: nothing went wrong
            return None, "not written: the output holds no audited snapshot yet"
        log.warning("warning: report.html not written: %s: %s", type(exc).__name__, exc)
        return None, "not written (see the warning)"


def _stamp(df: DataFrame, run_id: str) -> DataFrame:
    return df.withColumn("run_id", F.lit(run_id))


def _rejects(spark: SparkSession, inputs: Inputs, notes: list[Note], run_id: str) -> DataFrame:
    """Row rejects of the inputs (materialized by `read_inputs`), the usable rows the run
    leaves out (a snapshot or cluster missing from another input: `Note.unused`), and a
    row per note of a table (written in as many tasks as their rows need: `jobs.write`)."""
    rows = [n.reject_row() for n in notes if n.table is not None]
    rejects = inputs.rejects.select(*REJECTS_SCHEMA.fieldNames())
    if rows:
        rejects = rejects.unionByName(spark.createDataFrame(rows, REJECTS_SCHEMA))
    for table in dict.fromkeys(n.unused for n in notes if n.unused is not None):
        rejects = rejects.unionByName(_unused_rows(spark, getattr(inputs, table), table, [
            (n.snapshot_id, n.cluster, n.reason) for n in notes if n.unused == table]))
    # a row rejected for its snapshot id is kept in the null partition (`validate`)
    return _stamp(rejects.withColumn("snapshot_id", writable_snapshot_id(
        F.col("snapshot_id"))), run_id)


def _unused_rows(spark: SparkSession, rows: DataFrame, table: str,
                 keys: list[tuple[str, str | None, str]]) -> DataFrame:
    """`table`'s usable rows of these (snapshot_id, cluster, reason)s as rejects, each with
    its key's reason (a few keys: broadcast, no shuffle of the rows)."""
    wanted = spark.createDataFrame(keys, "_snapshot string, _cluster string, _reason string")
    left_out = rows.join(F.broadcast(wanted), (F.col("snapshot_id") == F.col("_snapshot"))
                         & F.col("cluster").eqNullSafe(F.col("_cluster")))
    return reject_rows(left_out, table, F.col("_reason"))


def _capture_times(rows: list[Row]) -> dict:
    """(snapshot_id, cluster) -> captured_at of rows holding the three."""
    return {(r.snapshot_id, r.cluster): r.captured_at for r in rows}
