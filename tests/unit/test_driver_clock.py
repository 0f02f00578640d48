"""The audit's driver reads Spark's timestamps in UTC (`jobs.audit.read_times_in_utc`)."""

from __future__ import annotations

import time as clock
from datetime import UTC, datetime, timedelta

from pyspark.sql.types import TimestampType


def test_a_capture_late_in_year_9999_reads_east_of_utc(monkeypatch) -> None:
    """Spark hands a timestamp to Python as a local time: 9999-12-31T23:00Z is past year
    9999 in Kolkata, and the audit ended with a traceback (`ValueError: year 10000`)."""
    from jobs.audit import read_times_in_utc

    moment = datetime(9999, 12, 31, 23, tzinfo=UTC)
    micros = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    clock.tzset()
    try:
        read_times_in_utc()
        assert TimestampType().fromInternal(micros) == datetime(9999, 12, 31, 23)
    finally:
        monkeypatch.undo()
        clock.tzset()
