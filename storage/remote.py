"""Locations seen through the session's Hadoop filesystems (`s3a://`, `abfss://`,
`hdfs://`, `file:`): what `storage.paths` answers for local paths without a JVM, for the
places only a running Spark can look at."""

from __future__ import annotations

import logging

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from storage.paths import is_bare
from vocabulary.errors import first_line

log = logging.getLogger(__name__)


def delta_table_above(spark: SparkSession, location: str) -> str | None:
    """The Delta table folder (one holding `_delta_log`) that `location` is or lies inside,
    or None. Also None when the store does not answer (no filesystem for the scheme, a
    prefix this user may not list): the check stands aside rather than stop a run it
    cannot judge, and says so in the log. One existence check per folder up to the root."""
    hadoop_path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path  # type: ignore[union-attr]
    try:
        fs, folder = _filesystem_and_path(spark, location)
        while folder is not None:
            if fs.exists(hadoop_path(folder, "_delta_log")):
                return str(folder.toString())
            folder = folder.getParent()
    except Py4JError as exc:
        log.info("could not tell whether %s lies in a Delta table: %s", location,
                 first_line(exc))
    return None


def qualified(spark: SparkSession, location: str) -> str | None:
    """`location` as its session's filesystem names it, or None when the store does not
    answer (logged, as in `delta_table_above`): scheme, authority and absolute path, so
    `hdfs:///x`, `/x` on a gateway whose default filesystem is `hdfs://nn:8020` and
    `hdfs://nn:8020/x` all give `hdfs://nn:8020/x`. The authority is the filesystem's
    canonical one (`FileSystem.getCanonicalUri`), so HDFS's `hdfs://nn/x` (its default
    port left out) and another host name of the namenode give that name too; an HA
    nameservice keeps its logical name. One filesystem lookup, no listing."""
    try:
        fs, path = _filesystem_and_path(spark, location)
        canonical, uri = fs.getCanonicalUri().getAuthority(), path.toUri()
        if canonical is None or canonical == uri.getAuthority():
            return str(path.toString())
        hadoop_path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path  # type: ignore[union-attr]
        return str(hadoop_path(uri.getScheme(), canonical, uri.getPath()).toString())
    except Py4JError as exc:
        log.info("could not tell where %s is: %s", location, first_line(exc))
        return None


def _filesystem_and_path(spark: SparkSession, location: str):
    """The session's Hadoop filesystem for `location` and the location qualified by it
    (a JVM `FileSystem` and `Path`); raises Py4JError when the store does not answer."""
    context = spark.sparkContext
    path = context._jvm.org.apache.hadoop.fs.Path(location)  # type: ignore[union-attr]
    fs = path.getFileSystem(context._jsc.hadoopConfiguration())  # type: ignore[union-attr]
    return fs, fs.makeQualified(path)


def default_filesystem_for(spark: SparkSession, location: str) -> str | None:
    """The session's default filesystem (`fs.defaultFS`, e.g. `hdfs://nn:8020` on a Hadoop
    gateway) when `location` is a bare path that Spark resolves against it and it is not
    this machine's disk; else None. Reads the configuration only: no filesystem is opened."""
    if not is_bare(location):
        return None
    context = spark.sparkContext
    uri = context._jvm.org.apache.hadoop.fs.FileSystem.getDefaultUri(  # type: ignore[union-attr]
        context._jsc.hadoopConfiguration())  # type: ignore[union-attr]
    scheme = uri.getScheme()
    return None if scheme in (None, "file") else str(uri.toString())
