"""The run's materialized frames: computed once, short plans, released together."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from jobs.persist import Persisted

pytestmark = pytest.mark.spark


def _stored_rdds(spark) -> set[int]:
    return {info.id() for info in spark.sparkContext._jsc.sc().getRDDStorageInfo()}


def test_a_materialized_frame_starts_a_short_plan_and_is_released(spark) -> None:
    before = _stored_rdds(spark)
    persisted = Persisted()
    grouped = spark.range(1000).withColumn("k", F.col("id") % 7).groupBy("k").count()
    frame = persisted(grouped)
    assert _stored_rdds(spark) - before, "the rows are stored when the frame is taken"
    assert persisted(frame) is frame  # taking it again stores nothing more
    plan = frame._jdf.queryExecution().optimizedPlan().toString()
    assert "Aggregate" not in plan  # later queries do not re-plan the lineage
    assert sorted(r["count"] for r in frame.collect()) == [142, 143, 143, 143, 143, 143, 143]

    persisted.release()
    assert not (_stored_rdds(spark) - before)
