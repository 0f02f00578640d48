"""Checks that fail a run in seconds instead of after minutes of computation.

The output root must be a writable folder before any Spark work; every output table that
already exists must open as Delta, and debris of killed runs is swept (see
`storage.offline.OfflineStore.sweep`). Storage problems are `TableError`s: exit 2 with the
path and the cause.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from storage.base import TableError

log = logging.getLogger(__name__)


def is_local(path: str) -> bool:
    return path.startswith("file:") or "://" not in path


def check_output_root(output: str) -> None:
    """A local output root must be (or become) a folder this process can write in. Remote
    roots (s3a://, abfss://, hdfs://) are left to the native engine's first access."""
    if not is_local(output):
        return
    root = Path(output.removeprefix("file://").removeprefix("file:")).absolute()
    ancestor = root
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise TableError(f"output root {output}: {ancestor} is a file, not a folder; point "
                         "--output at a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix="._write_check"):
            pass
    except FileExistsError as exc:
        raise TableError(f"output root {output} is a file, not a folder; point --output at "
                         "a folder") from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if not os.access(ancestor, os.W_OK):
            reason = f"{ancestor} is not writable by this user"
        raise TableError(f"output root {output} cannot be written: {reason}") from exc


def check_tables(store, output: str, names: list[str], started: float) -> list[str]:
    """Each existing output table opens as Delta; debris older than `started` is removed.
    Returns what was removed (the run reports it)."""
    cleaned: list[str] = []
    for name in names:
        cleaned += store.check(f"{output}/{name}", name, started)
    return cleaned
