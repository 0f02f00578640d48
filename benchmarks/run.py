"""Scale benchmark: how close is the audit job to Spark's own limits on this machine?

    python -m benchmarks.run --sizes 1M,10M [--seed 7] [--master local[2]]

For each size (target queue-assignment rows) it generates or reuses a realistic cluster
(`benchmarks/generate.py`, cached under `benchmarks/data/<size>/`) and measures, each size
in fresh subprocesses so that peak memory is clean:

* io_floor — a Spark job through the same storage layer (DeltaStore offline) that reads
  the same inputs and writes outputs of the same size and shape with no assignment work:
  queues joined to the subscribed (group, topic)s and their offsets (assignments-shaped
  rows), per-client rows (consumer_load-shaped), per (group, topic) and per group
  aggregates of the written assignments (group_balance-shaped), and the bad member rows
  (rejects-shaped). It runs before the audit (cold JVM) and after it (JIT as warm as the
  audit's); the faster run is the floor;
* audit — `jobs.audit.run` end to end, with its stage timings (read, assign, reports,
  write), Spark jobs / stages / tasks / shuffle bytes per phase from the Spark UI's REST
  API, and CPU seconds split into JVM, Python workers (UDFs) and driver Python. It runs
  after the first IO floor run and again after the second, as warm (`--audit-runs`); the
  faster run is the audit, as the faster floor run is the floor, and the first run's
  ratio to the floor is printed beside it (`1st/floor`);
* kernel — `rebalance_udfs.allocate.allocate_bucket` in one process without Spark on the
  same rows, over as many hash buckets of groups as the job uses (kernel calls timed
  only), plus the whole UDF body (`allocate_arrow`: Arrow -> pandas -> kernel -> Arrow),
  and the bare pass: the report pass's body as the job's assign step runs it (the
  kernels, claim facts, figures, what-if and churn; Arrow in, packed Arrow out) per
  bucket of (cluster, group), with the Python workers' environment (their Arrow memory
  pool) and the audit's what-if setting (`--what-if off` measures both without it);
* row_baseline — a plain (non-Arrow, non-pandas) Python UDF doing the textbook
  per-client AVG loop, on a sample of groups, scaled to the full size; the estimate of
  a row-at-a-time job is the IO floor plus that scaled UDF time;
* memory — peak RSS (VmHWM) of the driver Python, the driver JVM and the Python workers
  during the first audit run. In `local` mode the driver's JVM runs the tasks too, so
  its peak holds the executor's heap; with `--master 'local-cluster[2,1,3072]' --conf
  spark.executor.memory=2g` the executors are JVMs of their own, measured apart (their
  CPU and largest peak), and the driver's figure is the driver's alone.

It prints a table and writes `benchmarks/results/<timestamp>.json` with every figure,
the ratios (job / IO floor in wall and CPU seconds, assign stage / bare pass and / bare
kernel, the UDF's
Python CPU / the bare UDF body, row UDF / bare kernel, row-at-a-time job / job, driver peak
memory of the largest size / the smallest) and the load average. The machine is shared:
CPU seconds (JVM by thread kind: tasks, JIT, GC, driver; Python workers; driver Python)
are steadier than wall time under load. `--report FILE` re-prints a results file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TICKS = os.sysconf("SC_CLK_TCK")


# =========================================================================== /proc helpers
def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def proc_status_kb(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()  # fields from `state` on


def process_tree(root: int) -> list[int]:
    """Descendants of `root` (not root itself)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))):
            parent[int(entry.name)] = int(fields[1])
    out, frontier = [], [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.extend(kids)
        frontier.extend(kids)
    return out


def _is_python(pid: int) -> bool:
    """A Python worker (not a process the JVM is still spawning: Java starts children with
    posix_spawn, whose child runs in the JVM's own memory, and its VmHWM, until it execs)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().startswith("python")
    except OSError:
        return False


def _is_executor_jvm(pid: int) -> bool:
    """An executor's JVM: a `local-cluster` master starts them as children of the driver's
    (in `local` mode the driver's JVM runs the tasks itself). A child one of them is still
    spawning carries its command line until it execs: its CPU is nil and its VmHWM the
    parent's, so neither sum nor peak moves."""
    try:
        return (b"CoarseGrainedExecutorBackend" in Path(f"/proc/{pid}/cmdline").read_bytes()
                and not _is_python(pid))
    except OSError:
        return False


def executor_jvms(driver_jvm: int) -> list[int]:
    """The executors' JVMs under the driver's (none in `local` mode)."""
    return [p for p in process_tree(driver_jvm) if _is_executor_jvm(p)]


def cpu_seconds(pid: int, children: bool = False) -> float:
    """utime + stime (plus reaped children's when `children`) of a process."""
    fields = _stat_fields(pid)
    if not fields:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / TICKS


def _thread_kind(comm: str) -> str:
    """A JVM thread's name (15 chars in /proc) without its number."""
    return re.sub(r"[\s#\-_:]*\d+$", "", comm.strip()) or comm


class CpuMeter:
    """CPU seconds of the driver JVM (per thread name), of the Python workers and of the
    driver Python while the block runs, and with a `local-cluster` master the executors'
    JVMs' CPU and peak RSS apart. A thread samples /proc every `interval` seconds
    and keeps the last value seen per process / thread, so Python workers and JVM threads
    that exit before the end still count (minus at most one interval each)."""

    def __init__(self, jvm_pid: int, interval: float = 1.0) -> None:
        self.jvm_pid, self.interval = jvm_pid, interval
        self.result: dict = {}

    def _jvm_threads(self) -> dict[int, tuple[str, float]]:
        out = {}
        task_dir = Path(f"/proc/{self.jvm_pid}/task")
        for entry in task_dir.iterdir():
            try:
                comm = (entry / "comm").read_text()
                raw = (entry / "stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2:].split()
            out[int(entry.name)] = (_thread_kind(comm), (int(fields[11]) + int(fields[12])) / TICKS)
        return out

    def _sample(self) -> None:
        for pid in process_tree(self.jvm_pid):
            if _is_executor_jvm(pid):
                self.executors[pid] = max(self.executors.get(pid, 0.0), cpu_seconds(pid))
                hwm = proc_status_kb(pid, "VmHWM") or 0
                self.executor_hwm_kb = max(self.executor_hwm_kb, hwm)
                continue
            self.executors.pop(pid, None)  # a worker an executor spawned, now exec'd
            self.workers[pid] = max(self.workers.get(pid, 0.0), cpu_seconds(pid))
            if _is_python(pid):  # a child the JVM is spawning shares its memory until exec
                hwm = proc_status_kb(pid, "VmHWM") or 0
                self.worker_hwm_kb = max(self.worker_hwm_kb, hwm)
        self.threads.update(self._jvm_threads())

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()
        self.own_cpu = time.thread_time()

    def __enter__(self) -> CpuMeter:
        import threading

        self.cpu0 = {p: cpu_seconds(p) for p in process_tree(self.jvm_pid)}
        self.threads0 = self._jvm_threads()
        self.workers, self.threads, self.worker_hwm_kb = {}, {}, 0
        self.executors, self.executor_hwm_kb = {}, 0
        self.driver0, self.wall0 = sum(os.times()[:2]), time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        by_kind: dict[str, float] = {}
        for tid, (kind, cpu) in self.threads.items():
            spent = cpu - self.threads0.get(tid, (kind, 0.0))[1]
            by_kind[kind] = by_kind.get(kind, 0.0) + spent
        new_workers = [p for p in self.workers if p not in self.cpu0]
        executors = ({"executor_jvms_cpu_s": round(sum(v - self.cpu0.get(p, 0.0)
                                                       for p, v in self.executors.items()), 1),
                      "executor_jvm_peak_rss_mb": round(self.executor_hwm_kb / 1024, 1)}
                     if self.executors else {})
        self.result = {
            "wall_s": round(time.perf_counter() - self.wall0, 2),
            "jvm_cpu_s": round(sum(by_kind.values()), 1),
            "python_workers_cpu_s": round(sum(v - self.cpu0.get(p, 0.0)
                                              for p, v in self.workers.items()), 1),
            # the driver Python's own CPU, without this meter's sampling thread
            "driver_python_cpu_s": round(sum(os.times()[:2]) - self.driver0 - self.own_cpu, 1),
            "meter_cpu_s": round(self.own_cpu, 2),
            "python_worker_processes_started": len(new_workers),
            "python_worker_peak_rss_mb": round(self.worker_hwm_kb / 1024, 1),
            "jvm_threads_cpu_s": {k: round(v, 1) for k, v in
                                  sorted(by_kind.items(), key=lambda kv: -kv[1]) if v >= 0.3},
            **executors,
        }


# =========================================================================== Spark UI
# Spark renders a duration as "12 ms", "1.5 s", "2.3 m" (minutes) or "1.02 h"
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0,
          "B": 1 / 2**20, "KiB": 1 / 2**10, "MiB": 1.0, "GiB": 2**10, "TiB": 2**20}
PYTHON_NODES = ("FlatMapCoGroupsInArrow", "FlatMapGroupsInArrow", "FlatMapCoGroupsInPandas",
                "FlatMapGroupsInPandas", "ArrowEvalPython", "BatchEvalPython", "MapInArrow",
                "MapInPandas")


def _metric_total(text: str) -> float | None:
    """'total (min, med, max ...)\n24.0 s (2.2 s, ...)' or '1,234' -> seconds / MiB / count."""
    line = text.split("\n")[1] if "\n" in text else text
    parts = line.split("(")[0].split()
    try:
        value = float(parts[0].replace(",", ""))
    except (IndexError, ValueError):
        return None
    return value * _UNITS.get(parts[1], 1.0) if len(parts) > 1 else value


def _parse_time(text: str) -> float:
    return datetime.strptime(text.replace("GMT", "+0000"),
                             "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


class SparkUI:
    """Per job group (and per step within it, by job submission time): Spark jobs, stages,
    tasks, task run / CPU time, shuffle and spill, from the Spark UI's REST API; plus the
    Python-UDF node metrics of the SQL executions."""

    def __init__(self, spark) -> None:
        sc = spark.sparkContext
        self.base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}"

    def _get(self, path: str):
        with urllib.request.urlopen(self.base + path, timeout=60) as resp:
            return json.loads(resp.read())

    def summary(self, group: str, steps: list[tuple[str, float, float]] | None = None,
                top: int = 8) -> dict:
        try:
            jobs = sorted((j for j in self._get("/jobs") if j.get("jobGroup") == group),
                          key=lambda j: j["jobId"])
            stages = {s["stageId"]: s for s in self._get("/stages")}
            sql = self._get("/sql?details=true&planDescription=false")
        except Exception as exc:  # the UI is a nice-to-have
            return {"error": str(exc)}

        def step_of(job: dict) -> str:
            at = _parse_time(job["submissionTime"])
            for name, a, b in steps or []:
                if a - 0.05 <= at < b + 0.05:
                    return name
            return "other"

        # every completed stage once, attributed to the first job that lists it
        owned: dict[int, tuple[dict, str, str]] = {}
        for job in jobs:
            for sid in job["stageIds"]:
                if sid not in owned and stages.get(sid, {}).get("status") == "COMPLETE":
                    owned[sid] = (stages[sid], step_of(job), job_description(job))
        per_step: dict[str, dict] = {}
        per_description: dict[str, dict] = {}
        for job in jobs:
            per_step.setdefault(step_of(job), {"jobs": 0})["jobs"] += 1
            per_description.setdefault(job_description(job), {"jobs": 0})["jobs"] += 1
        for stage, name, description in owned.values():
            for agg in (per_step.setdefault(name, {"jobs": 0}),
                        per_description.setdefault(description, {"jobs": 0})):
                for key, value in _stage_figures(stage).items():
                    agg[key] = round(agg.get(key, 0) + value, 1)
        job_ids = {j["jobId"] for j in jobs}
        python: dict[str, float] = {}
        sql_count = 0
        for execution in sql:
            ids = set(execution.get("successJobIds", [])) | set(execution.get("failedJobIds", []))
            if not ids & job_ids:
                continue
            sql_count += 1
            for node in execution.get("nodes", []):
                if node["nodeName"] in PYTHON_NODES:
                    for m in node.get("metrics", []):
                        if (v := _metric_total(m["value"])) is not None:
                            python[m["name"]] = round(python.get(m["name"], 0) + v, 1)
        totals: dict = {"jobs": len(jobs), "sql_executions": sql_count,
                        "stages_run": len(owned),
                        "stages_skipped": len({s for j in jobs for s in j["stageIds"]}
                                              - set(owned))}
        for stage, _, _ in owned.values():
            for key, value in _stage_figures(stage).items():
                totals[key] = round(totals.get(key, 0) + value, 1)
        slowest = sorted(owned.values(), key=lambda x: _stage_seconds(x[0]), reverse=True)
        totals["python_udf_nodes"] = python
        totals["per_step"] = per_step
        totals["per_job_description"] = per_description
        totals["slowest_stages"] = [
            {"stage": s["stageId"], "step": name, "job": description,
             "wall_s": round(_stage_seconds(s), 1), **_stage_figures(s),
             "name": s.get("name", "")[:70]}
            for s, name, description in slowest[:top]
        ]
        return totals


def job_description(job: dict) -> str:
    """What the job did, as the run named it (`jobs.progress`: "audit: write assignments",
    one per table written), else Spark's call site: a stage's table without guessing it
    from commit order and task counts."""
    return job.get("description") or job.get("name", "")


def _stage_seconds(stage: dict) -> float:
    try:
        return _parse_time(stage["completionTime"]) - _parse_time(stage["submissionTime"])
    except (KeyError, ValueError):
        return 0.0


def _stage_figures(stage: dict) -> dict:
    mb = 2**20
    return {"stages": 1, "tasks": stage.get("numCompleteTasks", 0),
            "task_s": round(stage.get("executorRunTime", 0) / 1000, 2),
            "task_cpu_s": round(stage.get("executorCpuTime", 0) / 1e9, 2),
            "gc_s": round(stage.get("jvmGcTime", 0) / 1000, 2),
            "input_mb": round(stage.get("inputBytes", 0) / mb, 2),
            "output_mb": round(stage.get("outputBytes", 0) / mb, 2),
            "shuffle_write_mb": round(stage.get("shuffleWriteBytes", 0) / mb, 2),
            "shuffle_read_mb": round(stage.get("shuffleReadBytes", 0) / mb, 2),
            "spill_disk_mb": round(stage.get("diskBytesSpilled", 0) / mb, 2)}


# =========================================================================== Spark child
def io_floor(store, paths: dict, out: str, run_id: str) -> dict:
    """Read the inputs, write outputs of the audit's size and shape, no assignment work."""
    from pyspark.sql import functions as F

    from jobs.write import PARTITION_BY
    from reports.assignments import COLUMNS as ASSIGNMENT_COLUMNS
    group_keys = ["snapshot_id", "cluster", "consumer_group"]
    timings = {}
    t = time.perf_counter()
    queues = store.read(paths["queues"], "queues")
    members = store.read(paths["members"], "members")
    offsets = store.read(paths["offsets"], "offsets")
    timings["read"] = time.perf_counter() - t

    # assignments-shaped: each readable queue of each subscribed unit, with a client
    t = time.perf_counter()
    units = members.groupBy(*group_keys, "topic").agg(
        F.min("client_id").alias("client_id"), F.min("strategy").alias("strategy"))
    offset_cols = offsets.select(*group_keys, "topic", "queue_id",
                                 F.col("broker_name").alias("_ob"), "committed_offset",
                                 "consumed_offset")
    u = (queues.where(F.coalesce(F.col("readable"), F.lit(True)))
         .join(units, ["snapshot_id", "cluster", "topic"]).alias("u"))
    cond = [F.col(f"u.{k}") == offset_cols[k] for k in [*group_keys, "topic", "queue_id"]]
    cond.append(F.col("u.broker_name").eqNullSafe(offset_cols["_ob"]))
    assignments = (
        u.join(offset_cols, cond, "left")
        .select("u.*", offset_cols["committed_offset"], offset_cols["consumed_offset"])
        .withColumn("status", F.lit("OK"))
        .withColumn("lag", F.col("max_offset") - F.col("committed_offset"))
        .select(*ASSIGNMENT_COLUMNS).withColumn("run_id", F.lit(run_id))
    )
    store.write(assignments, f"{out}/assignments", "assignments", PARTITION_BY)
    timings["write_assignments"] = time.perf_counter() - t

    # group_balance-shaped: per (group, topic) and per group, from the written rows
    t = time.perf_counter()
    written = store.read(f"{out}/assignments", "assignments")
    per_topic = written.groupBy(*group_keys, "topic").agg(
        F.countDistinct("client_id").cast("int").alias("clients"),
        F.count(F.lit(1)).cast("int").alias("queues"),
        F.sum("lag").alias("lag_total"), F.sum("in_rate").alias("in_rate_total"),
        F.max("lag").alias("max_lag"), F.max("in_rate").alias("max_in_rate"))
    per_group = per_topic.groupBy(*group_keys).agg(
        F.max("clients").alias("clients"), F.sum("queues").cast("int").alias("queues"),
        F.sum("lag_total").alias("lag_total"), F.sum("in_rate_total").alias("in_rate_total"),
        F.max("max_lag").alias("max_lag"), F.max("max_in_rate").alias("max_in_rate")
    ).withColumn("topic", F.lit(None).cast("string"))
    balance = (per_topic.unionByName(per_group)
               .withColumn("findings", F.array().cast("array<string>"))
               .withColumn("recommendation", F.lit("Balanced: no action needed."))
               .withColumn("run_id", F.lit(run_id)))
    store.write(balance, f"{out}/group_balance", "group_balance", PARTITION_BY)
    timings["write_group_balance"] = time.perf_counter() - t

    # consumer_load-shaped: one row per client
    t = time.perf_counter()
    load = members.groupBy(*group_keys, "client_id").agg(
        F.array_sort(F.collect_set("strategy")).alias("strategies"),
        F.max("client_room").alias("client_room"),
        F.countDistinct("client_addr").alias("connections"),
        F.array_sort(F.collect_set("topic")).alias("topics"),
    ).withColumn("queues", F.lit(0)).withColumn("run_id", F.lit(run_id))
    store.write(load, f"{out}/consumer_load", "consumer_load", PARTITION_BY)
    timings["write_consumer_load"] = time.perf_counter() - t

    # rejects-shaped: the member rows with an unknown strategy
    t = time.perf_counter()
    from rebalance_udfs.strategies import supported_strategies

    rejects = members.where(~F.col("strategy").isin(supported_strategies())).select(
        "snapshot_id", "cluster", F.lit("members").alias("source_table"),
        F.to_json(F.struct(*members.columns)).alias("row_json"),
        F.lit("unknown strategy").alias("reason"), F.lit(run_id).alias("run_id"))
    store.write(rejects, f"{out}/rejects", "rejects", PARTITION_BY)
    timings["write_rejects"] = time.perf_counter() - t
    timings["total"] = sum(timings.values())
    return {k: round(v, 2) for k, v in timings.items()}


def _textbook_avg(client_id, cid_all, mq_all):
    """RocketMQ AllocateMessageQueueAveragely.allocate for one client, as the client does."""
    cids = sorted(cid_all)
    mqs = sorted(mq_all, key=lambda q: (q[0] or "", q[1]))
    if client_id not in cids:
        return []
    index = cids.index(client_id)
    n, c = len(mqs), len(cids)
    mod = n % c
    if n <= c:
        size = 1
    elif mod > 0 and index < mod:
        size = n // c + 1
    else:
        size = n // c
    start = index * size if (mod > 0 and index < mod) else index * size + mod
    return [mqs[(start + i) % n] for i in range(min(size, n - start))]


def row_baseline(spark, store, paths: dict, fraction: float, full_rows: int) -> dict:
    """A row-at-a-time Python UDF on a sample of groups, scaled to the full size."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from rebalance_udfs.strategies import supported_strategies

    group_keys = ["snapshot_id", "cluster", "consumer_group"]
    unit_keys = [*group_keys, "topic"]
    sampled = F.pmod(F.xxhash64(*group_keys), F.lit(10_000)) < int(fraction * 10_000)
    members = store.read(paths["members"], "members").where(
        F.col("strategy").isin(supported_strategies()) & sampled)
    queues = store.read(paths["queues"], "queues").where(
        F.coalesce(F.col("readable"), F.lit(True)))
    subscribed = members.select(*unit_keys).distinct()
    mq = (queues.join(subscribed, ["snapshot_id", "cluster", "topic"])
          .groupBy(*unit_keys)
          .agg(F.collect_list(F.struct("broker_name", "queue_id")).alias("mq_all")))
    # cidAll: the group's distinct client ids (a member row exists per subscribed topic)
    cid = members.groupBy(*group_keys).agg(F.collect_set("client_id").alias("cid_all"))
    rows = (members.select(*unit_keys, "client_id").join(mq, unit_keys).join(cid, group_keys)
            .persist(StorageLevel.MEMORY_AND_DISK))
    calls = rows.count()
    # the sample's share of the full size: its units' queue rows
    unit_rows = mq.select(F.sum(F.size("mq_all"))).first()[0] or 0
    queue_type = T.StructType([T.StructField("broker_name", T.StringType()),
                               T.StructField("queue_id", T.IntegerType())])
    claim = F.udf(_textbook_avg, T.ArrayType(queue_type), useArrow=False)

    def timed(expr) -> float:
        t = time.perf_counter()
        (rows.select(*unit_keys, "client_id", F.explode(expr).alias("mq"))
         .write.format("noop").mode("overwrite").save())
        return time.perf_counter() - t

    native = min(timed(F.slice("mq_all", 1, 1)) for _ in range(2))  # same plan, no Python
    # best of two: the first run also starts the Python workers
    udf = min(timed(claim("client_id", "cid_all", "mq_all")) for _ in range(2))
    claimed = rows.select(F.explode(claim("client_id", "cid_all", "mq_all"))).count()
    rows.unpersist()
    scale = full_rows / unit_rows if unit_rows else 0.0
    return {"fraction": fraction, "sample_calls": calls, "sample_assignment_rows": unit_rows,
            "sample_claimed_rows": claimed, "sample_udf_s": round(udf, 2),
            "sample_native_s": round(native, 2), "scale": round(scale, 1),
            "udf_scaled_s": round(max(udf - native, 0.0) * scale, 1)}


def spark_child(args) -> dict:
    """IO floor, audit, IO floor again, row baseline, in one Spark session. The result so
    far is written to `args.out` after every phase, and a phase that fails is recorded
    (`error`) instead of ending the run: a size that runs out of memory still reports."""
    # the row baseline's UDF lives in this module: let the Python workers import it
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    import shutil
    import traceback

    from jobs.audit import run as run_audit
    from jobs.config import AuditConfig
    from jobs.launch import input_size_of
    from jobs.session import build_session, heap_to_commit
    from jobs.sizing import java_options_for, launcher_heap
    from storage.delta import DeltaStore

    manifest = json.loads(Path(args.manifest).read_text())
    paths = manifest["paths"]
    out = Path(args.work) / "out"
    shutil.rmtree(out, ignore_errors=True)
    # the driver heap spark-submit.sh gives local runs (Spark's 1g default dies near 10M;
    # more when the inputs' largest file asks for it, jobs.sizing.local_heap_for); the
    # input splits as the job sizes them (jobs.audit._size), for the IO floor too
    file_rows = input_size_of(paths.values()).largest_file_rows
    conf = {"spark.sql.shuffle.partitions": str(args.shuffle_partitions),
            "spark.sql.files.minPartitionNum": str(args.shuffle_partitions),
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": launcher_heap(args.master, file_rows) or "4g"}
    users = dict(kv.split("=", 1) for kv in args.conf)
    conf.update(users)
    # the driver's options as spark-submit.sh chooses them (jobs.launch): a run that is not
    # short commits the launcher's heap at start, unless --conf names the heap
    java_options = java_options_for(input_rows(manifest["rows"]),
                                    heap_to_commit(users, args.master, file_rows))
    mem: dict = {"python_rss_start_mb": _mb(proc_status_kb(os.getpid(), "VmRSS"))}
    t = time.perf_counter()
    spark = build_session(app_name=f"benchmark-{manifest['size']}", master=args.master,
                          conf=conf, java_options=java_options)
    session_s = time.perf_counter() - t
    jvm_pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())
    sc = spark.sparkContext
    ui = SparkUI(spark)
    store = DeltaStore(spark, "offline")
    spark.range(10_000).selectExpr("sum(id)").collect()  # first-job warm-up, not timed
    result: dict = {"size": manifest["size"], "manifest": manifest, "conf": conf,
                    "java_options": java_options,
                    "session_s": round(session_s, 2), "master": args.master,
                    "jvm_pid": jvm_pid, "load_before": load_average(), "memory": mem}
    save = lambda: Path(args.out).write_text(json.dumps(result, indent=2, default=str))  # noqa: E731

    def failed(phase: str, exc: BaseException) -> None:
        lines = [ln for ln in traceback.format_exception_only(exc)[-1].splitlines() if ln]
        causes = [ln.strip() for ln in str(exc).splitlines() if "Error" in ln][:5]
        result.setdefault("errors", {})[phase] = {"error": lines[:3], "causes": causes}
        mem[f"jvm_peak_at_{phase}_failure_mb"] = _mb(proc_status_kb(jvm_pid, "VmHWM"))
        mem[f"python_peak_at_{phase}_failure_mb"] = _mb(proc_status_kb(os.getpid(), "VmHWM"))
        save()

    def floor_run(n: int) -> dict:
        group = f"io_floor_{n}"
        sc.setJobGroup(group, "IO floor")
        started = time.time()
        try:
            with CpuMeter(jvm_pid) as meter:
                run = io_floor(store, paths, str(out / group), "bench-io-floor")
        finally:
            shutil.rmtree(out / group, ignore_errors=True)
        run["cpu"] = meter.result
        run["spark"] = ui.summary(group, _steps(run, started))
        return run

    def keep_floor(floors: list[dict]) -> None:
        if floors:
            result["io_floor"] = fastest(floors, lambda f: f["total"])
        save()

    # 1. IO floor on a cold JVM (it also warms the JIT for what every job does)
    floors: list[dict] = []
    if args.floor_runs > 0:
        try:
            floors.append(floor_run(1))
        except Exception as exc:
            failed("io_floor_1", exc)
    mem["jvm_peak_after_io_floor_mb"] = _mb(proc_status_kb(jvm_pid, "VmHWM"))
    mem["python_peak_after_io_floor_mb"] = _mb(proc_status_kb(os.getpid(), "VmHWM"))
    keep_floor(floors)

    # the driver Python's peak between the first audit's named points (`jobs.progress`),
    # each reset after it is read: which step sets the driver's peak
    driver_peaks: dict[str, float] = {}

    def at_point(point: str) -> None:
        driver_peaks[point] = _mb(proc_status_kb(os.getpid(), "VmHWM"))
        reset_peak_rss(os.getpid())

    def audit_run(n: int) -> dict:
        """The audit job end to end, its n-th run, in an output of its own."""
        group, name = ("audit", "audit") if n == 1 else (f"audit_{n}", f"audit-{n}")
        sc.setJobGroup(group, "audit job")
        started = time.time()
        config = AuditConfig(queues=paths["queues"], members=paths["members"],
                             offsets=paths["offsets"], output=str(out / name),
                             engine="offline", master=args.master, spark_conf=conf,
                             run_id=f"bench-{name}", what_if=args.what_if)
        try:
            with CpuMeter(jvm_pid) as meter:
                res = run_audit(config, spark=spark, hook=at_point if n == 1 else None)
            if n == 1:
                driver_peaks["summary and report.html"] = _mb(
                    proc_status_kb(os.getpid(), "VmHWM"))
            return {"timings": {k: round(v, 2) for k, v in res.timings.items()},
                    "rows": res.rows, "snapshots": len(res.snapshots),
                    "buckets": int(spark.conf.get("spark.sql.shuffle.partitions")),
                    "cpu": meter.result, "spark": ui.summary(group, _steps(res.timings, started))}
        except Exception:
            result[f"{group}_failed_after_s"] = round(time.time() - started, 1)
            with contextlib.suppress(Exception):
                result[f"{group}_spark"] = ui.summary(group)
            raise
        finally:
            if not args.keep_output:
                shutil.rmtree(out / name, ignore_errors=True)

    # 2. the audit job, peaks reset so they are the audit's own (the memory figures are
    # this first run's)
    mem["peak_reset"] = all(reset_peak_rss(p)
                            for p in [jvm_pid, os.getpid(), *executor_jvms(jvm_pid)])
    mem["python_driver_peak_by_point_mb"] = driver_peaks
    audits: list[dict] = []
    try:
        audits.append(audit_run(1))
        mem["python_driver_peak_mb"] = max((v for v in driver_peaks.values() if v), default=None)
        mem["jvm_driver_peak_mb"] = _mb(proc_status_kb(jvm_pid, "VmHWM"))
        mem["python_workers_peak_mb"] = audits[0]["cpu"]["python_worker_peak_rss_mb"]
        if "executor_jvm_peak_rss_mb" in audits[0]["cpu"]:
            mem["executor_jvm_peak_mb"] = audits[0]["cpu"]["executor_jvm_peak_rss_mb"]
    except Exception as exc:
        failed("audit", exc)

    def keep_audit() -> None:
        if audits:
            kept = fastest(audits, lambda a: a["timings"]["total"])
            result["audit"] = {**kept, "run": kept["runs_s"].index(min(kept["runs_s"])) + 1}
        save()

    keep_audit()

    # 3. IO floor again on a JVM as warm as the audit's; the faster run is the floor
    if args.floor_runs > 1:
        try:
            floors.append(floor_run(2))
        except Exception as exc:
            failed("io_floor_2", exc)
        keep_floor(floors)

    # 4. the audit again on a JVM as warm as the second floor's; the faster run is the
    # audit, as the faster floor is the floor (both sides the best of a cold and a warm run)
    if args.audit_runs > 1 and audits:
        try:
            audits.append(audit_run(2))
        except Exception as exc:
            failed("audit_2", exc)
        keep_audit()

    # 5. the row-at-a-time baseline
    if args.baseline_fraction > 0:
        sc.setJobGroup("row_baseline", "row-at-a-time baseline")
        try:
            with CpuMeter(jvm_pid) as meter:
                result["row_baseline"] = row_baseline(
                    spark, store, paths, args.baseline_fraction,
                    manifest["rows"]["expected_assignments"])
            result["row_baseline"]["cpu"] = meter.result
        except Exception as exc:
            failed("row_baseline", exc)
    result["load_after"] = load_average()
    with contextlib.suppress(Exception):
        spark.stop()
    if not args.keep_output:
        shutil.rmtree(out, ignore_errors=True)
    return result


def fastest(runs: list[dict], total) -> dict:
    """The fastest of several runs of one measurement (`total(run)`: its seconds), with
    every run's seconds (`runs_s`) and figures (`runs`, without their Spark summaries)."""
    best = min(runs, key=total)
    return {**best, "runs_s": [total(r) for r in runs],
            "runs": [{k: v for k, v in r.items() if k != "spark"} for r in runs]}


def _steps(timings: dict, started: float) -> list[tuple[str, float, float]]:
    """(step, start, end) wall-clock windows from the audit's ordered stage timings."""
    out, at = [], started
    for name, seconds in timings.items():
        if name != "total" and isinstance(seconds, (int, float)):
            out.append((name, at, at + seconds))
            at += seconds
    return out


def _mb(kb: int | None) -> float | None:
    return None if kb is None else round(kb / 1024, 1)


# =========================================================================== kernel child
def kernel_frames(paths: dict):
    """The UDF's inputs, built the way udfs.assign builds them, as Arrow tables."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    from rebalance_udfs.allocate import MEMBER_COLUMNS
    from rebalance_udfs.strategies import supported_strategies

    queues = DeltaTable(paths["queues"]).to_pyarrow_table()
    members = DeltaTable(paths["members"]).to_pyarrow_table()
    offsets = DeltaTable(paths["offsets"]).to_pyarrow_table()
    members = members.filter(pc.is_in(members["strategy"],
                                      pa.array(supported_strategies())))
    params = members["strategy_params"]
    vnodes = pc.map_lookup(params, pa.scalar("virtual_nodes"), "first")
    members = (members.append_column("virtual_nodes", pc.cast(vnodes, pa.int32()))
               .append_column("rooms", pc.map_lookup(params, pa.scalar("rooms"), "first"))
               .append_column("config_queues",
                              pc.map_lookup(params, pa.scalar("queues"), "first")))
    members = members.select(MEMBER_COLUMNS)
    readable = pc.fill_null(queues["readable"], True)
    queues = queues.filter(readable).select(
        ["snapshot_id", "cluster", "topic", "broker_name", "queue_id", "broker_room",
         "max_offset", "in_rate"])
    units = (members.filter(pc.is_valid(members["topic"]))
             .select(["snapshot_id", "cluster", "consumer_group", "topic"])
             .group_by(["snapshot_id", "cluster", "consumer_group", "topic"]).aggregate([]))
    qu = queues.join(units, ["snapshot_id", "cluster", "topic"], join_type="inner")
    o = offsets.select(["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                        "queue_id", "committed_offset", "consumed_offset"])
    # broker_name is null for Kafka: join on a non-null stand-in
    qu = qu.append_column("_b", pc.fill_null(qu["broker_name"], ""))
    o = o.append_column("_b", pc.fill_null(o["broker_name"], "")).drop(["broker_name"])
    keys = ["snapshot_id", "cluster", "consumer_group", "topic", "_b", "queue_id"]
    qu = qu.join(o, keys, join_type="left outer").drop(["_b"])
    return qu, members


def pass_frames(queues, members, raw_members):
    """The report pass's inputs beside the kernel's (`rebalance_udfs.spark.report_pass`):
    the queue rows with their rate as a decimal, the member rows with what the reports
    read, and each snapshot's predecessor. For timing: the rate and `variant` are made
    here by Arrow, not by Spark's casts (the same sizes, not always the same digits)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rebalance_udfs.report_pass import MEMBER_COLUMNS as REPORT_COLUMNS
    from rebalance_udfs.spark.report_pass import RATE

    queues = queues.append_column(
        RATE, pc.cast(queues["in_rate"], pa.decimal128(38, 9), safe=False))
    raw = raw_members.filter(pc.is_in(raw_members["strategy"], pa.array(
        members["strategy"].unique())))
    extra = {"variant": raw["strategy"],
             # as `jobs.validate.with_strategy_params` types it (the what-if reads it)
             "pop_share_queue_num": pc.cast(pc.map_lookup(
                 raw["strategy_params"], pa.scalar("pop_share_queue_num"), "first"),
                 pa.int32())}
    for name in ("allocation_mode", "message_model", "client_room", "client_addr"):
        if name not in members.column_names:
            extra[name] = (raw[name] if name in raw.column_names
                           else pa.nulls(raw.num_rows, pa.string()))
    for name, column in extra.items():
        members = members.append_column(name, column)
    members = members.select(list(dict.fromkeys([*members.column_names, *REPORT_COLUMNS])))
    times = queues.group_by(["cluster", "snapshot_id"]).aggregate([]).sort_by(
        [("cluster", "ascending"), ("snapshot_id", "ascending")])
    cluster, snapshot = times["cluster"].to_pylist(), times["snapshot_id"].to_pylist()
    pairs = [(c, s, snapshot[i - 1]) for i, (c, s) in enumerate(zip(cluster, snapshot,
                                                                      strict=True))
             if i and cluster[i - 1] == c]
    pairs = pa.table({"cluster": [p[0] for p in pairs], "snapshot_id": [p[1] for p in pairs],
                      "previous_snapshot_id": [p[2] for p in pairs],
                      "previous_in_run": [True] * len(pairs)})
    return queues, members, pairs


def kernel_child(args) -> dict:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from deltalake import DeltaTable

    from rebalance_udfs.allocate import QUEUE_COLUMNS, allocate_bucket
    from rebalance_udfs.spark.arrow import QUEUE_SIDE
    from rebalance_udfs.spark.assign import allocate_arrow
    from rebalance_udfs.spark.buckets import BUCKET_KEYS
    from rebalance_udfs.spark.churn import History
    from rebalance_udfs.spark.report_pass import _allocate, _reported
    from vocabulary.columns import GROUP_KEYS

    manifest = json.loads(Path(args.manifest).read_text())
    t = time.perf_counter()
    queues, members = kernel_frames(manifest["paths"])
    pass_queues, pass_members, pairs = pass_frames(
        queues, members, DeltaTable(manifest["paths"]["members"]).to_pyarrow_table())
    pass_body = _reported(args.what_if, History(pairs), _allocate)
    prepare_s = time.perf_counter() - t

    def bucket_ids(table: pa.Table) -> np.ndarray:
        keys = table.select(GROUP_KEYS).to_pandas()
        return (pd.util.hash_pandas_object(keys, index=False).to_numpy() % args.buckets)

    q_bucket, m_bucket = bucket_ids(queues), bucket_ids(members)
    queues = queues.select(QUEUE_SIDE)
    reset_peak_rss(os.getpid())
    kernel_s, body_s, out_rows, per_bucket = 0.0, 0.0, 0, []
    # the report pass's body per bucket of (cluster, group), as the job runs it: the
    # kernels, facts, figures, what-if (findings) and churn, Arrow in, packed Arrow out
    pass_s, pass_rows = 0.0, 0
    pq_bucket = _bucket_of(pass_queues, BUCKET_KEYS, args.buckets)
    pm_bucket = _bucket_of(pass_members, BUCKET_KEYS, args.buckets)
    for b in range(args.buckets):
        qb = _with_bucket(pass_queues.filter(pa.array(pq_bucket == b)))
        mb = _with_bucket(pass_members.filter(pa.array(pm_bucket == b)))
        t = time.perf_counter()
        pass_rows += pass_body(qb, mb).num_rows
        pass_s += time.perf_counter() - t
    del pass_queues, pass_members
    for b in range(args.buckets):
        qb = queues.filter(pa.array(q_bucket == b))
        mb = members.filter(pa.array(m_bucket == b))
        # the kernel alone, on the pandas frames allocate_arrow would build
        q_keys = qb.select(QUEUE_COLUMNS).to_pandas()
        q_keys["_row"] = np.arange(len(q_keys), dtype=np.int64)
        m_frame = mb.to_pandas()
        t = time.perf_counter()
        out = allocate_bucket(q_keys, m_frame)
        k = time.perf_counter() - t
        del out, q_keys, m_frame
        # the whole UDF body (Arrow in, Arrow out)
        t = time.perf_counter()
        arrow_out = allocate_arrow(qb, mb)
        body = time.perf_counter() - t
        kernel_s += k
        body_s += body
        out_rows += arrow_out.num_rows
        per_bucket.append({"queue_rows": qb.num_rows, "member_rows": mb.num_rows,
                           "kernel_s": round(k, 2), "udf_body_s": round(body, 2)})
    result = {"size": manifest["size"], "buckets": args.buckets,
              "prepare_s": round(prepare_s, 1), "queue_rows": queues.num_rows,
              "member_rows": members.num_rows, "output_rows": out_rows,
              "kernel_s": round(kernel_s, 2), "udf_body_s": round(body_s, 2),
              "pass_s": round(pass_s, 2), "pass_output_rows": pass_rows,
              "per_bucket": per_bucket,
              "peak_rss_mb": _mb(proc_status_kb(os.getpid(), "VmHWM"))}
    if queues.num_rows <= args.all_at_once_max:
        q_keys = queues.select(QUEUE_COLUMNS).to_pandas()
        q_keys["_row"] = np.arange(len(q_keys), dtype=np.int64)
        m_frame = members.to_pandas()
        t = time.perf_counter()
        allocate_bucket(q_keys, m_frame)
        result["all_at_once_kernel_s"] = round(time.perf_counter() - t, 2)
    return result


def _bucket_of(table, keys: list[str], buckets: int):
    import pandas as pd

    frame = table.select(keys).to_pandas()
    return pd.util.hash_pandas_object(frame, index=False).to_numpy() % buckets


def _with_bucket(table):
    import pyarrow as pa

    return table.append_column("_bucket", pa.array([0] * table.num_rows, pa.int32()))


# =========================================================================== parent
def _partitions(manifest: Path, args) -> int:
    """The job's own rule (jobs/sizing.py) unless --shuffle-partitions is given."""
    if args.shuffle_partitions:
        return args.shuffle_partitions
    from jobs.sizing import local_cores, partitions_for

    cores = local_cores(args.master) or os.cpu_count() or 1
    return partitions_for(input_rows(json.loads(manifest.read_text())["rows"]), cores)


def input_rows(rows: dict) -> int:
    """The inputs' rows, as the job counts them for its sizing rules."""
    return sum(rows[t] for t in ("queues", "members", "offsets"))


def worker_env(conf: list[str]) -> dict[str, str]:
    """The environment the job's session gives its Python workers
    (`spark.executorEnv.*`: `jobs.session.SESSION_DEFAULTS`, then `--conf KEY=VALUE`)."""
    from jobs.session import session_conf

    given = dict(kv.split("=", 1) for kv in conf)
    prefix = "spark.executorEnv."
    return {key[len(prefix):]: value
            for key, value in session_conf(given, False).items()
            if key.startswith(prefix)}


def child_command(mode: str, manifest: Path, args, tmp: Path, parts: int) -> list[str]:
    """The command line of one measuring child: the parent's settings passed on."""
    cmd = [sys.executable, "-m", "benchmarks.run", "--child", mode, "--manifest", str(manifest),
           "--out", str(tmp), "--master", args.master,
           "--shuffle-partitions", str(parts),
           "--buckets", str(args.buckets or parts),
           "--baseline-fraction", str(args.baseline_fraction),
           "--all-at-once-max", str(args.all_at_once_max), "--work", str(manifest.parent)]
    cmd += [f"--conf={kv}" for kv in args.conf]
    cmd += ["--floor-runs", str(args.floor_runs), "--audit-runs", str(args.audit_runs),
            "--what-if", args.what_if]
    if args.keep_output:
        cmd.append("--keep-output")
    return cmd


def _child(mode: str, size: str, manifest: Path, args, tmp: Path) -> dict:
    cmd = child_command(mode, manifest, args, tmp, _partitions(manifest, args))
    print(f"[{size}] {mode} ...", flush=True)
    # the bare kernel and pass run as the Python workers do (their Arrow memory pool)
    env = {**os.environ, **worker_env(args.conf)} if mode == "kernel" else None
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env)
    data = json.loads(tmp.read_text()) if tmp.exists() else {}
    tmp.unlink(missing_ok=True)
    data["child_wall_s"] = round(time.perf_counter() - t, 1)
    if proc.returncode != 0 or data.get("errors"):
        log = tmp.with_suffix(".log.tmp")
        log.write_text(proc.stdout)
        data["child_exit_code"] = proc.returncode
        data["child_log_tail"] = proc.stdout.splitlines()[-30:]
        print(f"[{size}] {mode}: FAILED (exit {proc.returncode}"
              f"{', errors in ' + ', '.join(data.get('errors', {})) if data.get('errors') else ''}"
              f"); full log {log.relative_to(ROOT)}", flush=True)
    return data


def ensure_data(size: str, seed: int, master: str) -> Path:
    from benchmarks.generate import cached, data_dir, parse_size

    rows = parse_size(size)
    if not cached(rows, seed):
        print(f"[{size}] generating inputs (cached for later runs) ...", flush=True)
        subprocess.run([sys.executable, "-m", "benchmarks.generate", "--size", size,
                        "--seed", str(seed), "--master", master], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not cached(rows, seed):
        raise SystemExit(f"[{size}] generation failed; run python -m benchmarks.generate "
                         f"--size {size} to see why")
    return data_dir(rows, seed) / "manifest.json"


def _cpu(part: dict) -> float:
    c = part["cpu"]
    return (c["jvm_cpu_s"] + c.get("executor_jvms_cpu_s", 0.0) + c["python_workers_cpu_s"]
            + c["driver_python_cpu_s"])


def _job_s(timings: dict) -> float:
    """An audit run's seconds without its session's start (the ratios divide these)."""
    return timings["total"] - timings.get("session", 0.0)


def ratios(sizes: dict) -> dict:
    """The figures the targets are stated in (None where a part was not measured)."""
    out: dict = {}
    for size, r in sizes.items():
        spark, kernel = r.get("spark", {}), r.get("kernel", {})
        audit, floor, base = spark.get("audit"), spark.get("io_floor"), spark.get("row_baseline")
        row: dict = {}
        if audit:
            t = audit["timings"]
            job = _job_s(t)
            if floor:
                row["job_over_io_floor"] = round(job / floor["total"], 2)
                if len(audit.get("runs", [])) > 1:
                    first = audit["runs"][0]["timings"]
                    row["first_audit_over_io_floor"] = round(
                        _job_s(first) / floor["total"], 2)
                row["job_over_io_floor_cpu"] = round(_cpu(audit) / _cpu(floor), 2)
            if kernel.get("pass_s"):
                # the assign step runs the kernels and every per-group report in one call
                row["assign_over_bare_pass"] = round(t["assign"] / kernel["pass_s"], 2)
            if kernel.get("kernel_s"):
                row["assign_over_bare_kernel"] = round(t["assign"] / kernel["kernel_s"], 1)
                row["assign_over_udf_body"] = round(t["assign"] / kernel["udf_body_s"], 1)
                row["udf_python_cpu_over_udf_body"] = round(
                    audit["cpu"]["python_workers_cpu_s"] / kernel["udf_body_s"], 2)
            if base and base.get("udf_scaled_s"):
                if kernel.get("kernel_s"):
                    row["row_udf_over_bare_kernel"] = round(
                        base["udf_scaled_s"] / kernel["kernel_s"], 1)
                if floor:
                    est = floor["total"] + base["udf_scaled_s"]
                    row["row_baseline_job_est_s"] = round(est, 1)
                    row["row_baseline_over_job"] = round(est / job, 2)
        out[size] = row
    floor_jvm = {n: _floor_jvm_mb(r) for n, r in sizes.items()}
    for size, r in sizes.items():
        audit_jvm = r.get("spark", {}).get("memory", {}).get("jvm_driver_peak_mb")
        if floor_jvm[size] and audit_jvm:
            out[size]["audit_jvm_over_io_floor_jvm"] = round(audit_jvm / floor_jvm[size], 2)
    measured = [n for n in sizes if sizes[n].get("spark", {}).get("memory", {})
                .get("python_driver_peak_mb")]
    if len(measured) >= 2:
        small, large = (sizes[n]["spark"]["memory"] for n in (measured[0], measured[-1]))
        key = f"{measured[-1]}_over_{measured[0]}"
        out["driver_memory"] = {
            f"python_{key}": round(large["python_driver_peak_mb"]
                                   / small["python_driver_peak_mb"], 2),
            f"jvm_{key}": round(large["jvm_driver_peak_mb"] / small["jvm_driver_peak_mb"], 2),
        }
        if large.get("executor_jvm_peak_mb") and small.get("executor_jvm_peak_mb"):
            out["driver_memory"][f"executor_jvm_{key}"] = round(
                large["executor_jvm_peak_mb"] / small["executor_jvm_peak_mb"], 2)
        if floor_jvm[measured[0]] and floor_jvm[measured[-1]]:
            out["driver_memory"][f"io_floor_jvm_{key}"] = round(
                floor_jvm[measured[-1]] / floor_jvm[measured[0]], 2)
    return out


def _floor_jvm_mb(size: dict) -> float | None:
    """The driver JVM's peak RSS after the IO floor's first run (JVM start, session and
    Spark's own read and write of the size's data), when the floor ran: in `local` mode
    the JVM that then runs the audit, which starts on the heap the floor grew (RSS does
    not shrink), so the audit's peak over this one is what the job adds to Spark's own."""
    spark = size.get("spark", {})
    if not spark.get("io_floor") or "io_floor_1" in spark.get("errors", {}):
        return None
    return spark.get("memory", {}).get("jvm_peak_after_io_floor_mb")


def _fmt(value, width: int = 10, digits: int = 1) -> str:
    if value is None:
        return f"{'-':>{width}}"
    if isinstance(value, float):
        return f"{value:>{width}.{digits}f}"
    return f"{value!s:>{width}}"


def table(results: dict) -> str:
    """Seconds (wall), peak memory (MB) and ratios, one line per size."""
    cols = ["size", "asg rows", "IO floor", "audit", "read", "assign", "reports", "write",
            "kernel", "UDF body", "bare pass", "row UDF", "py drv MB", "JVM MB", "worker MB",
            "exec MB"]
    lines = ["seconds (wall clock) and peak RSS",
             " ".join(_fmt(c) for c in cols)]
    for size, r in results["sizes"].items():
        s, k = r.get("spark", {}), r.get("kernel", {})
        t = s.get("audit", {}).get("timings", {})
        mem = s.get("memory", {})
        rows = s.get("audit", {}).get("rows", {}).get("assignments")
        vals = [size, f"{rows:,}" if rows else None, s.get("io_floor", {}).get("total"),
                _job_s(t) if t else None, t.get("read"),
                t.get("assign"), t.get("reports"), t.get("write"), k.get("kernel_s"),
                k.get("udf_body_s"), k.get("pass_s"),
                s.get("row_baseline", {}).get("udf_scaled_s"),
                mem.get("python_driver_peak_mb"), mem.get("jvm_driver_peak_mb"),
                mem.get("python_workers_peak_mb"), mem.get("executor_jvm_peak_mb")]
        lines.append(" ".join(_fmt(v) for v in vals))
    rcols = [("job_over_io_floor", "job/floor"), ("first_audit_over_io_floor", "1st/floor"),
             ("job_over_io_floor_cpu", "(CPU)"),
             ("assign_over_bare_pass", "asg/pass"),
             ("audit_jvm_over_io_floor_jvm", "JVM/floor"),
             ("assign_over_bare_kernel", "asg/kernel"), ("udf_python_cpu_over_udf_body",
                                                         "UDF CPU/bd"),
             ("row_udf_over_bare_kernel", "rowUDF/krn"), ("row_baseline_over_job",
                                                           "rowjob/job")]
    lines += ["ratios", " ".join(_fmt(c) for c in ["size", *(c for _, c in rcols)])]
    for size, ra in results["ratios"].items():
        if size != "driver_memory":
            # two decimals: a target is a ratio like 2.0, and one decimal prints 2.04 as 2.0
            lines.append(" ".join(_fmt(v, digits=2)
                                  for v in [size, *(ra.get(k) for k, _ in rcols)]))
    for size, r in results["sizes"].items():
        for part in ("spark", "kernel"):
            for phase, err in (r.get(part) or {}).get("errors", {}).items():
                detail = err.get("causes") or err.get("error") if isinstance(err, dict) else err
                mem = (r.get(part) or {}).get("memory", {})
                peak = mem.get(f"jvm_peak_at_{phase}_failure_mb")
                after = r.get(part, {}).get(f"{phase}_failed_after_s")
                lines.append(f"{size} {phase} FAILED" + (f" after {after} s" if after else "")
                             + (f" (JVM peak {peak} MB)" if peak else "") + ": "
                             + " | ".join(str(d) for d in (detail or []))[:300])
    if "driver_memory" in results["ratios"]:
        lines.append("driver peak memory: " + ", ".join(
            f"{k} {v}" for k, v in results["ratios"]["driver_memory"].items()))
    lines.append(f"load average before/after: {results['load_before']} / "
                 f"{results['load_after']}  (cores: {results.get('cores')})")
    return "\n".join(lines)


def arguments() -> argparse.ArgumentParser:
    """The command line, the children's included (`child_command`)."""
    from jobs.config import AuditConfig
    from vocabulary.columns import WHAT_IF_MODES

    what_if_default = AuditConfig().what_if
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,10M")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--shuffle-partitions", type=int, default=0,
                        help="spark.sql.shuffle.partitions (default: the job's own rule, "
                             "jobs/sizing.py, from the inputs' rows)")
    parser.add_argument("--buckets", type=int, default=0,
                        help="kernel buckets (default: the job's, = shuffle partitions)")
    parser.add_argument("--baseline-fraction", type=float, default=0.02,
                        help="share of groups the row-at-a-time baseline runs on (0 = skip)")
    parser.add_argument("--all-at-once-max", type=int, default=2_500_000,
                        help="also time one kernel call over everything up to this many rows")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark setting for every measured job (repeatable), "
                             "e.g. spark.driver.memory=8g (default: spark-submit.sh's, "
                             "jobs.sizing.launcher_heap: 2g on local[2])")
    parser.add_argument("--floor-runs", type=int, default=2, choices=[0, 1, 2],
                        help="IO floor runs: before the audit (cold JVM) and after it (warm); "
                             "the faster one is the floor")
    parser.add_argument("--audit-runs", type=int, default=2, choices=[1, 2],
                        help="audit runs: after the first IO floor run and after the second "
                             "(as warm); the faster one is the audit, the first's memory "
                             "peaks are the memory figures")
    parser.add_argument("--what-if", choices=WHAT_IF_MODES, default=what_if_default,
                        help=f"the audit's what_if setting (default: the job's, "
                             f"{what_if_default}); the bare pass runs the same")
    parser.add_argument("--skip-kernel", action="store_true", help="no bare-kernel run")
    parser.add_argument("--keep-output", action="store_true",
                        help="keep the audit's output tables (benchmarks/data/SIZE/out/audit)")
    parser.add_argument("--report", type=Path, help="re-print the table of a results file")
    parser.add_argument("--child", choices=["spark", "kernel"], help=argparse.SUPPRESS)
    parser.add_argument("--manifest", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    return parser


def main() -> None:
    args = arguments().parse_args()

    if args.child:
        try:
            result = spark_child(args) if args.child == "spark" else kernel_child(args)
        except Exception as exc:  # a kernel run out of memory still reports
            result = {"errors": {args.child: [repr(exc)[:500]]},
                      "peak_rss_mb": _mb(proc_status_kb(os.getpid(), "VmHWM"))}
            if args.child == "spark" and Path(args.out).exists():
                result = {**json.loads(Path(args.out).read_text()), **result}
        Path(args.out).write_text(json.dumps(result, indent=2, default=str))
        return

    if args.report:
        problem = unreadable_results(args.report)
        if problem:
            sys.exit(f"--report {args.report}: {problem}")
        report(args.report.resolve())
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    results: dict = {"timestamp": stamp, "command": " ".join(sys.argv),
                     "cores": os.cpu_count(), "load_before": load_average(),
                     "settings": {k: v for k, v in vars(args).items()
                                  if k not in ("child", "manifest", "out", "work")},
                     "sizes": {}}
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        manifest = ensure_data(size, args.seed, args.master)
        entry = {"load_before": load_average()}
        entry["spark"] = _child("spark", size, manifest, args,
                                RESULTS / f"{stamp}-{size}-spark.tmp")
        sp = entry["spark"]
        print(f"[{size}] audit {sp.get('audit', {}).get('timings', {}).get('total', '-')} s, "
              f"IO floor {sp.get('io_floor', {}).get('total', '-')} s, load {load_average()}",
              flush=True)
        if not args.skip_kernel:
            entry["kernel"] = _child("kernel", size, manifest, args,
                                     RESULTS / f"{stamp}-{size}-kernel.tmp")
        entry["load_after"] = load_average()
        results["sizes"][size] = entry
    results["load_after"] = load_average()
    results["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    path = RESULTS / f"{stamp}.json"
    path.write_text(json.dumps(results, indent=2, default=str))  # raw figures first
    report(path)


def unreadable_results(path: Path) -> str | None:
    """Why `path` is not a results file to re-print, or None. The results folder is not
    in the repository: a run's file exists only where that run was made."""
    if not path.is_file():
        return ("no such file (benchmarks/results/ holds the runs made on this machine; "
                "run `python -m benchmarks.run` to make one)")
    try:
        results = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"not a results file of this benchmark ({exc})"
    if not isinstance(results, dict):
        return "not a results file of this benchmark (not a JSON object)"
    missing = [key for key in ("sizes", "load_before", "load_after") if key not in results]
    if missing:
        return f"not a results file of this benchmark (no {', '.join(map(repr, missing))})"
    return None


def report(path: Path) -> None:
    """Add the ratios to a results file and print its table."""
    results = json.loads(path.read_text())
    results["ratios"] = ratios(results["sizes"])
    path.write_text(json.dumps(results, indent=2, default=str))
    print(table(results))
    print(f"written {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
