"""Table locations: a local path, a `file:` URL naming one, or a remote URL (`s3a://`,
`abfss://`, `hdfs://`). No pyspark here: the capture command and the report use these
without starting a JVM."""

from __future__ import annotations


def is_local(location: str) -> bool:
    """Whether `location` names this machine's filesystem."""
    return location.startswith("file:") or "://" not in location


def without_file_scheme(location: str) -> str:
    """The path a `file://` or `file:` URL names; any other location unchanged."""
    return location.removeprefix("file://").removeprefix("file:")
