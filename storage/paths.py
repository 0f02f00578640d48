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


def delta_table_holding(location: str) -> str | None:
    """The local Delta table folder (one with a `_delta_log`) that `location` is or lies
    inside, or None. Output written there is lost to that table's VACUUM, which deletes
    every file its log does not name."""
    from pathlib import Path

    if not is_local(location):
        return None
    path = Path(without_file_scheme(location)).absolute()
    for folder in (path, *path.parents):
        if (folder / "_delta_log").is_dir():
            return str(folder)
    return None
