"""Table locations: a local path, a `file:` URL naming one, or a remote URL (`s3a://`,
`abfss://`, `hdfs://`). No pyspark here: the capture command and the report use these
without starting a JVM."""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import urlsplit

# schemes that name the same store by another connector: one place for `place_of`
SAME_STORE = {"s3a": "s3", "s3n": "s3", "abfss": "abfs", "wasbs": "wasb"}


def existing_ancestor(path: Path) -> Path:
    """`path` itself when it exists, else its nearest parent that does (the root, or a
    relative path's `.` when even that is gone): where a folder to be made would hang
    from, and what may stand in its way as a file."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def is_local(location: str) -> bool:
    """Whether `location` names this machine's filesystem."""
    return location.startswith("file:") or "://" not in location


def is_bare(location: str) -> bool:
    """Whether `location` is a path with no scheme at all (`/audit`, `out/x`): local to
    this module, but resolved by Spark against its session's default filesystem."""
    return is_local(location) and not location.startswith("file:")


def spark_path(path: str) -> str:
    """A local absolute path as Spark must be given it, a `file:` URL: a bare path resolves
    against the session's default filesystem (`fs.defaultFS`, HDFS on a Hadoop gateway
    whatever the master), not this machine's disk."""
    return "file://" + path


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


def place_of(location: str) -> tuple[str, ...]:
    """`location` as comparable parts: the store (scheme and authority, lower case, one
    name for connectors of the same store) and the path's segments ("." and ".." resolved,
    no empty ones). `file:` URLs and local paths give the same parts; no filesystem access,
    so remote locations compare too."""
    if is_local(location):
        path = posixpath.normpath(posixpath.abspath(without_file_scheme(location)))
        return ("file", *(part for part in path.split("/") if part))
    url = urlsplit(location)
    scheme = url.scheme.lower()
    path = posixpath.normpath("/" + url.path) if url.path else "/"
    return (f"{SAME_STORE.get(scheme, scheme)}://{url.netloc.lower()}",
            *(part for part in path.split("/") if part))


def lies_within(inner: str, outer: str) -> bool:
    """Whether location `inner` is `outer` or lies inside it (`place_of`)."""
    a, b = place_of(inner), place_of(outer)
    return a[:len(b)] == b
