"""The shared Spark session's Hadoop configuration, changed for one test and put back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def hadoop_settings(spark, settings: dict[str, str]) -> Iterator[None]:
    """The session's Hadoop configuration with `settings`, each key put back as it was
    (or unset) afterwards: the session is shared by every test."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    before = {key: conf.get(key) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)
