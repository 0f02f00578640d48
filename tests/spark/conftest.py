"""Fixtures of the Spark tests that change the shared session's configuration."""

from __future__ import annotations

import pytest


@pytest.fixture
def default_fs_elsewhere(spark):
    """The session's default filesystem set to a scheme no filesystem serves, as HDFS is
    on a Hadoop gateway (HADOOP_CONF_DIR), whatever the master: any bare path Spark
    resolved against it would fail here, and go to HDFS there."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    before = conf.get("fs.defaultFS")
    conf.set("fs.defaultFS", "nosuchfs://cluster/")
    yield
    if before is None:
        conf.unset("fs.defaultFS")
    else:
        conf.set("fs.defaultFS", before)
