"""Kernels against the upstream worked examples, without Spark."""

from __future__ import annotations

import pytest

from rebalance_udfs.allocate import allocate_bucket
from tests.support.examples import compare, kafka_case, load, rocketmq_case

AVG_VECTORS = load("rocketmq_averagely.json")
RANGE_VECTORS = load("kafka_range.json")


@pytest.mark.parametrize("vector", AVG_VECTORS, ids=lambda v: v["name"])
def test_avg_matches_upstream(vector: dict) -> None:
    case = rocketmq_case(vector, "AVG")
    assert compare(case, allocate_bucket(case.queues, case.members)) == []


@pytest.mark.parametrize("vector", RANGE_VECTORS, ids=lambda v: v["name"])
def test_range_matches_upstream(vector: dict) -> None:
    case = kafka_case(vector, "range")
    assert compare(case, allocate_bucket(case.queues, case.members)) == []
