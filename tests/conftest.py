"""One SparkSession for the whole test session (Spark starts slowly)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("SPARK_TESTING", "1")


@pytest.fixture(scope="session")
def spark():
    from jobs.session import build_session

    session = build_session(app_name="rebalance-audit-tests", master="local[2]",
                            conf={"spark.sql.shuffle.partitions": "4",
                                  "spark.default.parallelism": "4",
                                  # hundreds of audits in one JVM: keep the UI's history of
                                  # jobs and query plans from filling the heap
                                  "spark.driver.memory": "4g",
                                  "spark.ui.enabled": "false",
                                  "spark.ui.retainedJobs": "50",
                                  "spark.ui.retainedStages": "50",
                                  "spark.sql.ui.retainedExecutions": "20"})
    yield session
    session.stop()
