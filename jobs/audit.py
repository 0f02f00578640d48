"""The audit job: read → validate → assign → report → publish.

Each step is a function a test can call on its own; `run` strings them together and
times them. Spark is lazy, so each timed step materializes what the next one reuses.
Publishing is one unit per run (`jobs.publish`): a `runs` row per snapshot, committed
after every other table.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs import demo, faults
from jobs.cache import Persisted
from jobs.config import AuditConfig
from jobs.inputs import (
    REJECTS_SCHEMA,
    InputError,
    Persist,
    conform,
    validate_members,
    validate_observed,
    validate_offsets,
    validate_queues,
)
from jobs.preflight import check_output_root, check_tables
from jobs.publish import (
    PARTITION_BY,
    RUNS,
    Hook,
    Publication,
    complete_runs,
    count_rows,
    publish,
)
from jobs.scope import Note, find_scope
from jobs.session import build_session
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.sticky import assign_sticky
from reports.assignments import COLUMNS as ASSIGNMENT_COLUMNS
from reports.assignments import assignments_report, snapshot_times
from reports.consumer_load import consumer_load_report
from reports.drift import drift_by_group, drift_report
from reports.facts import client_topic_facts, member_client_facts, member_topic_facts
from reports.group_balance import group_balance_report
from reports.rebalance_churn import rebalance_churn_report
from reports.strategy_comparison import strategy_comparison_report
from reports.what_if import best_sentence, what_if_report, with_what_if
from storage.base import TableError
from storage.delta import DeltaStore, Store, WriteResult
from vocabulary.columns import GROUP_KEYS, STICKY_STRATEGIES

OUTPUT_TABLES = ("assignments", "consumer_load", "group_balance", "rebalance_churn",
                 "strategy_comparison", "drift", "what_if", "rejects")
# written when asked for, and then always replaced: a re-run without them must not leave
# an earlier run's rows beside this run's other tables
OPTIONAL_TABLES = ("strategy_comparison",)
DEMO_INPUTS = "demo_inputs"
PRIOR_ATTEMPTS = 2


class StalePrior(TableError):
    """The snapshot this run compared against changed while it computed (another run
    published an earlier snapshot of the same cluster)."""


@dataclass
class Inputs:
    queues: DataFrame
    members: DataFrame
    offsets: DataFrame | None
    rejects: DataFrame
    observed: DataFrame | None = None

    def limited_to(self, snapshots: list[str]) -> Inputs:
        """The usable rows of these snapshots (rejects stay whole: they are all written)."""
        def keep(df: DataFrame) -> DataFrame:
            return df.where(F.col("snapshot_id").isin(snapshots))

        def maybe(df: DataFrame | None) -> DataFrame | None:
            return keep(df) if df is not None else None

        return Inputs(keep(self.queues), keep(self.members), maybe(self.offsets), self.rejects,
                      maybe(self.observed))


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
    not_audited: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)
    report: str | None = None  # report.html, when it could be written


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


def write_demo_inputs(store: Store, root: str, groups: int, seed: int) -> dict[str, str]:
    """Generate the embedded sample cluster as Delta tables under `root`."""
    tables = demo.generate(groups, seed)
    spark = store.spark
    paths = {}
    for name in ("queues", "members", "offsets"):
        frame = getattr(tables, name)
        df = spark.createDataFrame(frame, schema=_demo_schema(name))
        path = f"{root}/{name}"
        store.write(df, path, name, PARTITION_BY, replace=[s for s, _ in demo.SNAPSHOTS])
        paths[name] = path
    return paths


def _demo_schema(name: str) -> str:
    from jobs.inputs import CONTRACTS

    return ", ".join(f"{c.name} {c.type.simpleString()}" for c in CONTRACTS[name])


def read_inputs(store: Store, queues: str, members: str, offsets: str | None,
                snapshots: tuple[str, ...] = (), persist: Persist | None = None,
                observed: str | None = None) -> Inputs:
    """Read, conform and validate the inputs; limit them to `snapshots` when given."""
    persist = persist or Persisted()

    def load(path: str, name: str) -> DataFrame:
        df = conform(store.read(path, name), name)
        return df.where(F.col("snapshot_id").isin(list(snapshots))) if snapshots else df

    q_good, q_bad = validate_queues(load(queues, "queues"), persist)
    m_good, m_bad = validate_members(load(members, "members"), persist)
    rejects = q_bad.unionByName(m_bad)
    o_good = None
    if offsets:
        o_good, o_bad = validate_offsets(load(offsets, "offsets"), persist)
        rejects = rejects.unionByName(o_bad)
    seen = None
    if observed:
        seen, s_bad = validate_observed(load(observed, "observed"), persist)
        rejects = rejects.unionByName(s_bad)
    return Inputs(q_good, m_good, o_good, rejects, seen)


@dataclass
class Prior:
    """Rows of the snapshot that precedes this run's first one, per cluster, already in the
    output: what churn and the sticky assignors compare against (no history recomputed)."""

    snapshots: list[str]
    assignments: DataFrame | None = None
    consumer_load: DataFrame | None = None


def _prior_keys(store: Store, output: str, times: DataFrame, current: list[str]) -> list:
    """Per cluster, the latest complete snapshot in the output before this run's earliest
    one (by captured_at, then snapshot_id): [(snapshot_id, run_id)], sorted.

    Complete = named by `runs`. An output written before `runs` existed falls back to the
    snapshots of consumer_load."""
    runs = complete_runs(store, output)
    if runs is not None:
        seen = runs.select("snapshot_id", "cluster", "captured_at", "run_id")
    elif store.exists(f"{output}/consumer_load") and store.exists(f"{output}/assignments"):
        seen = (store.read(f"{output}/consumer_load", "consumer_load")
                .select("snapshot_id", "cluster", "captured_at", "run_id").distinct())
    else:
        return []
    key = F.struct(F.col("captured_at"), F.col("snapshot_id"))
    first = times.groupBy("cluster").agg(F.min(key).alias("_first"))
    previous = (seen.where(~F.col("snapshot_id").isin(current))
                .join(first, "cluster").where(key < F.col("_first"))
                .groupBy("cluster")
                .agg(F.max(F.struct("captured_at", "snapshot_id", "run_id")).alias("_prev"))
                .select("_prev.snapshot_id", "_prev.run_id").collect())
    return sorted({(r.snapshot_id, r.run_id) for r in previous})


def read_prior(store: Store, output: str, times: DataFrame, current: list[str]) -> Prior:
    """The previous complete snapshot's assignment and load rows (of the run `runs` names)."""
    keys = _prior_keys(store, output, times, current)
    if not keys:
        return Prior([])
    ids = sorted({s for s, _ in keys})
    runs = sorted({r for _, r in keys})

    def rows(name: str) -> DataFrame:
        return (store.read(f"{output}/{name}", name, snapshots=ids)
                .where(F.col("run_id").isin(runs)))

    return Prior(ids, rows("assignments"), rows("consumer_load"))


def assign_all(inputs: Inputs, buckets: int, prior: Prior, has_sticky: bool) -> DataFrame:
    """Batch kernels for every strategy but Kafka's sticky assignors, which run snapshot
    after snapshot per group from the previous assignment."""
    if not has_sticky:
        return assign(inputs.queues, inputs.members, inputs.offsets, buckets)
    sticky = F.col("strategy").isin(*STICKY_STRATEGIES)
    regular = assign(inputs.queues, inputs.members.where(~sticky), inputs.offsets, buckets)
    return regular.unionByName(assign_sticky(inputs.queues, inputs.members.where(sticky),
                                             inputs.offsets, buckets, prior.assignments))


def compute_reports(inputs: Inputs, buckets: int, prior: Prior | None = None,
                    has_sticky: bool = True, compare_strategies: bool = False,
                    times: DataFrame | None = None,
                    persist: Persist | None = None,
                    replace_empty: tuple[str, ...] = (),
                    what_if: str = "findings") -> dict[str, DataFrame]:
    """Every output table but rejects, as DataFrames (without run_id). Optional tables
    named in `replace_empty` come back empty when not computed (an earlier run wrote them:
    their rows of this run's snapshots must go).

    `times`: `snapshot_times(inputs.queues)` when the caller has it already. The assignment
    rows and the shared aggregates (`reports.facts`) are persisted through `persist`:
    several reports read each, and the kernels must not run twice. `what_if`: which groups
    get what-if candidates (all, findings, off); their best change is quoted in the
    group_balance recommendation."""
    persist = persist or Persisted()
    prior = prior or Prior([])
    times = times if times is not None else persist(snapshot_times(inputs.queues))
    assigned = persist(assignments_report(assign_all(inputs, buckets, prior, has_sticky), times))
    assignments = assigned.select(*ASSIGNMENT_COLUMNS)
    facts = persist(client_topic_facts(assigned))
    member_topics = persist(member_topic_facts(inputs.members))
    member_clients = persist(member_client_facts(member_topics))
    consumer_load = consumer_load_report(facts, member_clients, times)
    drift = drift_report(assignments, inputs.observed, buckets)
    if inputs.observed is not None:
        drift = persist(drift)
    by_group = drift_by_group(drift) if inputs.observed is not None else None
    balance = group_balance_report(facts, member_topics, member_clients, times, by_group)
    if what_if != "off":
        balance = persist(balance)
    candidates = what_if_report(assigned, inputs.members, balance, times, buckets, what_if)
    if what_if != "off":
        candidates = persist(candidates)
        balance = with_what_if(balance, candidates)
    reports = {
        "assignments": assignments,
        "consumer_load": consumer_load,
        "group_balance": balance,
        "rebalance_churn": rebalance_churn_report(assignments, consumer_load,
                                                  prior.assignments, prior.consumer_load),
        "drift": drift,
        "what_if": candidates,
    }
    if compare_strategies or "strategy_comparison" in replace_empty:
        comparison = strategy_comparison_report(inputs.queues, inputs.members, inputs.offsets,
                                                buckets)
        reports["strategy_comparison"] = comparison if compare_strategies else comparison.limit(0)
    return reports


def _stamp(df: DataFrame, run_id: str) -> DataFrame:
    return df.withColumn("run_id", F.lit(run_id))


def _rejects(spark: SparkSession, inputs: Inputs, notes: list[Note], run_id: str) -> DataFrame:
    """Row rejects of the inputs plus one row per missing input of a snapshot."""
    rows = [n.reject_row() for n in notes if n.table is not None]
    rejects = inputs.rejects.select(*REJECTS_SCHEMA.fieldNames())
    if rows:
        rejects = rejects.unionByName(spark.createDataFrame(rows, REJECTS_SCHEMA))
    return _stamp(rejects, run_id)


class _Steps:
    """Times the run's named steps and tells the fault hook where the run is."""

    def __init__(self, hook: Hook) -> None:
        self.timings: dict[str, float] = {}
        self.hook = hook

    def timed(self, name: str, started: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - started
        self.hook(name)


def run(config: AuditConfig, spark: SparkSession | None = None, log=print,
        hook: Hook | None = None) -> RunResult:
    """One audit run. `hook(point)` is called at each named point of the run (the
    fault-injection tests stop or interleave runs there)."""
    run_id = config.run_id or new_run_id()
    started_at, started_clock = datetime.now(UTC), time.time()
    steps = _Steps(hook or faults.reached)
    output = config.output.rstrip("/")
    check_output_root(output)
    t0 = time.perf_counter()
    spark = spark or build_session(master=config.master, conf=config.spark_conf)
    store = DeltaStore(spark, config.engine)
    steps.timed("session", t0)
    log(f"run {run_id}: storage engine {store.engine}, output {output}")
    persist = Persisted()
    try:
        result = _run(config, spark, store, output, run_id, started_at, started_clock, steps,
                      persist, log)
        result.timings["total"] = time.perf_counter() - t0
        try:  # report.html is a view of the published tables: it never fails the run
            from reports.html import write_report

            result.report = write_report(output, snapshots=result.snapshots or None)
        except Exception as exc:
            log(f"warning: report.html not written: {type(exc).__name__}: {exc}")
        return result
    finally:
        spark.sparkContext.setJobDescription(None)
        persist.release()


def _run(config: AuditConfig, spark: SparkSession, store: Store, output: str, run_id: str,
         started_at: datetime, started_clock: float, steps: _Steps, persist: Persisted,
         log) -> RunResult:
    t = time.perf_counter()
    names = [*OUTPUT_TABLES, RUNS]
    cleaned = check_tables(store, output, names, started_clock)
    for item in cleaned:
        log(f"removed debris of a killed run: {item}")
    baselines = {name: store.state(f"{output}/{name}") for name in names}
    steps.timed("preflight", t)

    queues, members, offsets = config.queues, config.members, config.offsets
    if config.is_demo:
        t = time.perf_counter()
        paths = write_demo_inputs(store, f"{output}/{DEMO_INPUTS}", config.demo_groups,
                                  config.demo_seed)
        queues, members, offsets = paths["queues"], paths["members"], paths["offsets"]
        steps.timed("demo_inputs", t)
        log(f"no inputs given: generated the demo cluster under {output}/{DEMO_INPUTS}")

    t = time.perf_counter()
    read = read_inputs(store, queues, members, offsets, config.snapshots, persist,
                       config.observed)
    scope = find_scope(read, config.snapshots)
    warnings = [n.text() for n in scope.notes]
    for text in warnings:
        log(f"warning: {text}")
    if config.strict and warnings:
        raise InputError(f"strict mode: {len(warnings)} input problem(s), nothing written: "
                         + "; ".join(warnings))
    inputs = read.limited_to(scope.audited)
    times = persist(snapshot_times(inputs.queues))
    has_sticky = inputs.members.where(F.col("strategy").isin(*STICKY_STRATEGIES)).limit(1) \
        .count() > 0
    rejects = persist(_rejects(spark, read, scope.notes, run_id))
    steps.timed("read", t)

    buckets = config.buckets or int(spark.conf.get("spark.sql.shuffle.partitions"))
    compare = config.compare_strategies or config.is_demo
    describe = spark.sparkContext.setJobDescription  # names the jobs in the Spark UI
    for attempt in range(1, PRIOR_ATTEMPTS + 1):
        t = time.perf_counter()
        prior = read_prior(store, output, times, scope.audited)
        if prior.snapshots:
            log(f"churn of the first snapshot(s) compared with {', '.join(prior.snapshots)} "
                "from the output")
        attempt_persist = Persisted()
        try:
            existing = tuple(n for n in OPTIONAL_TABLES if baselines[n].version is not None)
            reports = compute_reports(inputs, buckets, prior, has_sticky, compare, times,
                                      attempt_persist, existing, config.what_if)
            describe("audit: assign")
            counts = {"assignments": count_rows(reports["assignments"])}
            steps.timed("assign", t)

            t = time.perf_counter()
            tables = {"assignments": _stamp(reports["assignments"], run_id)}
            for name in (n for n in OUTPUT_TABLES if n in reports and n != "assignments"):
                tables[name] = _stamp(attempt_persist(reports[name]), run_id)
                describe(f"audit: report {name}")
                counts[name] = count_rows(tables[name])
            describe("audit: report rejects")
            counts["rejects"] = count_rows(rejects)
            steps.timed("reports", t)

            def still_current(prior: Prior = prior) -> None:
                now = sorted({s for s, _ in _prior_keys(store, output, times, scope.audited)})
                if now != prior.snapshots:
                    raise StalePrior(
                        f"while this run computed, another run published snapshot(s) "
                        f"{', '.join(sorted(set(now) - set(prior.snapshots))) or '(removed)'} "
                        "before this run's first one; churn must be compared with them")

            t = time.perf_counter()
            still_current()
            describe("audit: write")
            pub = Publication(run_id, started_at, scope, tables, rejects, counts,
                              _capture_times(times))
            writes = publish(spark, store, output, pub, baselines, steps.hook, still_current)
            steps.timed("write", t)
            worst = _worst_groups(tables["group_balance"], tables["what_if"])
            churn_top = _top_churn(tables["rebalance_churn"])
            break
        except StalePrior as exc:
            if attempt == PRIOR_ATTEMPTS:
                raise
            log(f"{exc}: computing again")
        finally:
            attempt_persist.release()

    rows = {name: sum(c.values()) for name, c in counts.items()}
    paths = {name: f"{output}/{name}" for name in [*tables, "rejects", RUNS]}
    return RunResult(run_id, output, store.engine, scope.audited, paths, steps.timings, rows,
                     worst, churn_top, writes, warnings, scope.not_audited, cleaned)


def _capture_times(times: DataFrame) -> dict:
    return {(r.snapshot_id, r.cluster): r.captured_at for r in times.collect()}


def _top_churn(churn: DataFrame, limit: int = 5) -> list[dict]:
    """The rebalances that moved the most queues (a handful of rows to the driver)."""
    rows = (churn.where(F.col("queues_moved") > 0)
            .orderBy(F.desc("queues_moved"), "snapshot_id", "cluster", "consumer_group")
            .select("snapshot_id", "previous_snapshot_id", "cluster", "consumer_group",
                    "queues_moved", "estimated_duplicates", "triggers")
            .limit(limit).collect())
    return [r.asDict() for r in rows]


def _worst_groups(balance: DataFrame, what_if: DataFrame | None = None,
                  limit: int = 10) -> list[dict]:
    """The groups most in need of attention, each at its latest snapshot, with their
    what-if line (a handful of rows to the driver)."""
    severity = (
        F.col("contended_queues") * 1000 + F.col("unconsumed_queues") * 100
        + F.coalesce(F.col("skew"), F.lit(0)) * 10 + F.col("idle_clients")
    )
    latest = Window.partitionBy("cluster", "consumer_group").orderBy(
        F.desc_nulls_last("captured_at"), F.desc("snapshot_id"))
    rows = (balance.where(F.col("topic").isNull() & (F.size("findings") > 0))
            .withColumn("_latest", F.row_number().over(latest)).where(F.col("_latest") == 1)
            .withColumn("_severity", severity)
            .orderBy(F.desc("_severity"), "snapshot_id", "cluster", "consumer_group")
            .limit(limit))
    if what_if is not None:
        rows = rows.join(best_sentence(what_if), GROUP_KEYS, "left").orderBy(
            F.desc("_severity"), "snapshot_id", "cluster", "consumer_group")
    return [r.asDict() for r in rows.collect()]
