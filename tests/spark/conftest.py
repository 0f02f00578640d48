"""Fixtures of the Spark tests that change the shared session's configuration."""

from __future__ import annotations

import pytest

from tests.support.hadoop import hadoop_settings


@pytest.fixture
def default_fs_elsewhere(spark):
    """The session's default filesystem set to a scheme no filesystem serves, as HDFS is
    on a Hadoop gateway (HADOOP_CONF_DIR), whatever the master: any bare path Spark
    resolved against it would fail here, and go to HDFS there."""
    with hadoop_settings(spark, {"fs.defaultFS": "nosuchfs://cluster/"}):
        yield
