"""The audit job: read → validate → assign → report → write.

Each step is a function a test can call on its own; `run` strings them together and
times them. Spark is lazy, so each timed step materializes what the next one reuses.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs import demo
from jobs.cache import cache, release
from jobs.config import AuditConfig
from jobs.inputs import (
    REJECTS_SCHEMA,
    conform,
    validate_members,
    validate_offsets,
    validate_queues,
)
from jobs.session import build_session
from rebalance_udfs.sticky_udf import assign_sticky
from rebalance_udfs.strategies import STICKY_STRATEGIES
from rebalance_udfs.udfs import assign
from reports.assignments import COLUMNS as ASSIGNMENT_COLUMNS
from reports.assignments import assignments_report, snapshot_times
from reports.consumer_load import consumer_load_report
from reports.facts import client_topic_facts, member_client_facts, member_topic_facts
from reports.group_balance import group_balance_report
from reports.rebalance_churn import rebalance_churn_report
from reports.strategy_comparison import strategy_comparison_report
from storage.delta import DeltaStore, WriteResult

OUTPUT_TABLES = ("assignments", "consumer_load", "group_balance", "rebalance_churn",
                 "strategy_comparison", "rejects")
PARTITION_BY = ["snapshot_id"]
DEMO_INPUTS = "demo_inputs"


@dataclass
class Inputs:
    queues: DataFrame
    members: DataFrame
    offsets: DataFrame | None
    rejects: DataFrame


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


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]


def write_demo_inputs(store: DeltaStore, root: str, groups: int, seed: int) -> dict[str, str]:
    """Generate the embedded sample cluster as Delta tables under `root`."""
    tables = demo.generate(groups, seed)
    spark = store.spark
    paths = {}
    for name in ("queues", "members", "offsets"):
        frame = getattr(tables, name)
        df = spark.createDataFrame(frame, schema=_demo_schema(name))
        path = f"{root}/{name}"
        store.write(df, path, name, PARTITION_BY,
                    replace={"snapshot_id": [s for s, _ in demo.SNAPSHOTS]})
        paths[name] = path
    return paths


def _demo_schema(name: str) -> str:
    from jobs.inputs import CONTRACTS

    return ", ".join(f"{c.name} {c.type.simpleString()}" for c in CONTRACTS[name])


def read_inputs(store: DeltaStore, queues: str, members: str, offsets: str | None,
                snapshots: tuple[str, ...] = ()) -> Inputs:
    """Read, conform and validate the inputs; limit them to `snapshots` when given."""

    def load(path: str, name: str) -> DataFrame:
        df = conform(store.read(path, name), name)
        return df.where(F.col("snapshot_id").isin(list(snapshots))) if snapshots else df

    q_good, q_bad = validate_queues(load(queues, "queues"))
    m_good, m_bad = validate_members(load(members, "members"))
    rejects = q_bad.unionByName(m_bad)
    o_good = None
    if offsets:
        o_good, o_bad = validate_offsets(load(offsets, "offsets"))
        rejects = rejects.unionByName(o_bad)
    return Inputs(q_good, m_good, o_good, rejects)


@dataclass
class Prior:
    """Rows of the snapshot that precedes this run's first one, per cluster, already in the
    output: what churn and the sticky assignors compare against (no history recomputed)."""

    snapshots: list[str]
    assignments: DataFrame | None = None
    consumer_load: DataFrame | None = None


def read_prior(store: DeltaStore, output: str, times: DataFrame, current: list[str]) -> Prior:
    """Find, per cluster, the latest snapshot in the output before this run's earliest one
    (by captured_at, then snapshot_id) and read its assignment and load rows."""
    load_path, assign_path = f"{output}/consumer_load", f"{output}/assignments"
    if not (store.exists(load_path) and store.exists(assign_path)):
        return Prior([])
    key = F.struct(F.col("captured_at"), F.col("snapshot_id"))
    seen = (store.read(load_path, "consumer_load")
            .where(~F.col("snapshot_id").isin(current))
            .select("snapshot_id", "cluster", "captured_at").distinct())
    first = times.groupBy("cluster").agg(F.min(key).alias("_first"))
    previous = (seen.join(first, "cluster").where(key < F.col("_first"))
                .groupBy("cluster").agg(F.max(key).alias("_prev"))
                .select(F.col("_prev.snapshot_id").alias("snapshot_id")).collect())
    ids = sorted({r.snapshot_id for r in previous})
    if not ids:
        return Prior([])
    return Prior(ids, store.read(assign_path, "assignments", snapshots=ids),
                 store.read(load_path, "consumer_load", snapshots=ids))


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
                    times: DataFrame | None = None) -> dict[str, DataFrame]:
    """All output tables as DataFrames (without run_id).

    `times`: `snapshot_times(inputs.queues)` when the caller has it already. The assignment
    rows and the shared aggregates (`reports.facts`) are persisted (`jobs.cache`): several
    reports read each, and the kernels must not run twice."""
    prior = prior or Prior([])
    times = times if times is not None else cache(snapshot_times(inputs.queues))
    assigned = cache(assignments_report(assign_all(inputs, buckets, prior, has_sticky), times))
    assignments = assigned.select(*ASSIGNMENT_COLUMNS)
    facts = cache(client_topic_facts(assigned))
    member_topics = cache(member_topic_facts(inputs.members))
    member_clients = cache(member_client_facts(member_topics))
    consumer_load = consumer_load_report(facts, member_clients, times)
    reports = {
        "assignments": assignments,
        "consumer_load": consumer_load,
        "group_balance": group_balance_report(facts, member_topics, member_clients, times),
        "rebalance_churn": rebalance_churn_report(assignments, consumer_load,
                                                  prior.assignments, prior.consumer_load),
        "rejects": inputs.rejects,
    }
    if compare_strategies:
        reports["strategy_comparison"] = strategy_comparison_report(
            inputs.queues, inputs.members, inputs.offsets, buckets)
    return reports


def _stamp(df: DataFrame, run_id: str) -> DataFrame:
    return df.withColumn("run_id", F.lit(run_id))


def snapshot_ids(inputs: Inputs, requested: tuple[str, ...]) -> list[str]:
    """The snapshots this run writes (re-running one replaces its rows)."""
    if requested:
        return sorted(set(requested))
    ids = (inputs.queues.select("snapshot_id").union(inputs.members.select("snapshot_id"))
           .distinct().collect())
    return sorted(r[0] for r in ids if r[0] is not None)


def run(config: AuditConfig, spark: SparkSession | None = None,
        log=print) -> RunResult:
    run_id = config.run_id or new_run_id()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    spark = spark or build_session(master=config.master, conf=config.spark_conf)
    store = DeltaStore(spark, config.engine)
    timings["session"] = time.perf_counter() - t0
    output = config.output.rstrip("/")
    log(f"run {run_id}: storage engine {store.engine}, output {output}")

    queues, members, offsets = config.queues, config.members, config.offsets
    if config.is_demo:
        t = time.perf_counter()
        paths = write_demo_inputs(store, f"{output}/{DEMO_INPUTS}", config.demo_groups,
                                  config.demo_seed)
        queues, members, offsets = paths["queues"], paths["members"], paths["offsets"]
        timings["demo_inputs"] = time.perf_counter() - t
        log(f"no inputs given: generated the demo cluster under {output}/{DEMO_INPUTS}")

    t = time.perf_counter()
    inputs = read_inputs(store, queues, members, offsets, config.snapshots)
    snapshots = snapshot_ids(inputs, config.snapshots)
    times = cache(snapshot_times(inputs.queues))
    prior = read_prior(store, output, times, snapshots)
    if prior.snapshots:
        log(f"churn of the first snapshot(s) compared with {', '.join(prior.snapshots)} "
            "from the output")
    has_sticky = inputs.members.where(F.col("strategy").isin(*STICKY_STRATEGIES)).limit(1) \
        .count() > 0
    timings["read"] = time.perf_counter() - t
    if not snapshots:
        log("no snapshot to audit in the inputs" + (f" (asked for {', '.join(config.snapshots)})"
                                                    if config.snapshots else ""))

    buckets = config.buckets or int(spark.conf.get("spark.sql.shuffle.partitions"))
    t = time.perf_counter()
    compare = config.compare_strategies or config.is_demo
    reports = compute_reports(inputs, buckets, prior, has_sticky, compare, times)
    assignments = reports["assignments"]  # a projection of the persisted rows
    describe = spark.sparkContext.setJobDescription  # names the jobs in the Spark UI
    describe("audit: assign")
    rows = {"assignments": assignments.count()}
    timings["assign"] = time.perf_counter() - t

    t = time.perf_counter()
    small = {}
    for name in reports:
        if name == "assignments":
            continue
        small[name] = cache(reports[name])
        describe(f"audit: report {name}")
        rows[name] = small[name].count()
    timings["reports"] = time.perf_counter() - t

    t = time.perf_counter()
    tables, writes = {}, []
    # replace exactly this run's snapshots; with none (nothing valid) only append rejects
    replace = {"snapshot_id": snapshots} if snapshots else None
    for name in (n for n in OUTPUT_TABLES if n in reports):
        df = _stamp(assignments if name == "assignments" else small[name], run_id)
        path = f"{output}/{name}"
        if name == "rejects":
            df = df.select(*REJECTS_SCHEMA.fieldNames(), "run_id")
        describe(f"audit: write {name}")
        writes.append(store.write(df, path, name, PARTITION_BY, replace=replace))
        tables[name] = path
    timings["write"] = time.perf_counter() - t

    describe(None)
    worst = _worst_groups(small["group_balance"])
    churn_top = _top_churn(small["rebalance_churn"])
    release()
    timings["total"] = time.perf_counter() - t0
    return RunResult(run_id, output, store.engine, snapshots, tables, timings, rows, worst,
                     churn_top, writes)


def _top_churn(churn: DataFrame, limit: int = 5) -> list[dict]:
    """The rebalances that moved the most queues (a handful of rows to the driver)."""
    rows = (churn.where(F.col("queues_moved") > 0)
            .orderBy(F.desc("queues_moved"), "snapshot_id", "cluster", "consumer_group")
            .select("snapshot_id", "previous_snapshot_id", "cluster", "consumer_group",
                    "queues_moved", "estimated_duplicates", "triggers")
            .limit(limit).collect())
    return [r.asDict() for r in rows]


def _worst_groups(balance: DataFrame, limit: int = 10) -> list[dict]:
    """The groups most in need of attention, each at its latest snapshot (a handful of
    rows to the driver)."""
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
            .limit(limit).collect())
    return [r.asDict() for r in rows]
