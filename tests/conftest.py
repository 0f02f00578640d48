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
                                  "spark.default.parallelism": "4"})
    yield session
    session.stop()
