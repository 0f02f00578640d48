"""The session's settings: the job's defaults, the user's settings over them, and the
Python workers' Arrow memory pool as the workers really see it."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from jobs.session import REQUIRED_CONF, WORKER_DEFAULTS, session_conf

POOL = "spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL"


def test_the_workers_default_to_glibcs_malloc_unless_the_user_says_otherwise() -> None:
    assert WORKER_DEFAULTS == {POOL: "system"}
    conf = session_conf(None, False, submitted=False)
    assert conf[POOL] == "system" and conf["spark.ui.showConsoleProgress"] == "false"
    assert all(conf[k] == v for k, v in REQUIRED_CONF.items())
    assert session_conf({POOL: "jemalloc"}, True, submitted=False)[POOL] == "jemalloc"


def test_under_spark_submit_the_launcher_passes_the_worker_defaults() -> None:
    # a setting given to the builder would replace the user's --conf of the same key
    conf = session_conf({"spark.sql.shuffle.partitions": "4"}, False, submitted=True)
    assert POOL not in conf and conf["spark.sql.shuffle.partitions"] == "4"


def _pool(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield pa.RecordBatch.from_pydict(
            {"pool": [pa.default_memory_pool().backend_name] * batch.num_rows})


def test_the_python_workers_allocate_arrow_buffers_from_glibc(spark) -> None:
    pools = spark.range(4).repartition(2).mapInArrow(_pool, "pool string").distinct().collect()
    assert [r.pool for r in pools] == ["system"]


def test_the_benchmarks_bare_pass_runs_with_the_workers_environment() -> None:
    from benchmarks.run import worker_env

    assert worker_env([]) == {"ARROW_DEFAULT_MEMORY_POOL": "system"}
    assert worker_env([f"{POOL}=jemalloc", "spark.sql.shuffle.partitions=8"]) == {
        "ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}
