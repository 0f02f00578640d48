"""File locks (local paths only) for the offline engine and the capture folders.

Three kinds, all released by the kernel when their process dies, even by SIGKILL, so a
killed run never leaves a lock behind:

* the *commit lock* of a table, held while a writer checks for conflicts, moves its
  files into the table and commits: whoever holds it knows no other writer of this tool
  is half-way through a commit, so unreferenced files it finds are debris;
* a *staging lock* beside each staging folder, held while Spark writes into it: a sweeper
  that can take it knows the writer is gone;
* the *capture lock* of a capture folder, held exclusively while a capture rewrites a
  snapshot table by table, and shared by the audits that resolve their inputs there;
* the *publish lock* of an output root, held by a run from its last check of the output
  through its `runs` commit and its read of what others published meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

COMMIT_LOCK = "_commit.lock"
CAPTURE_LOCK = "_capture.lock"  # beside a capture folder's tables
PUBLISH_LOCK = "_publish.lock"  # beside an output root's tables


class LockTimeout(Exception):
    """The lock stayed taken for longer than the caller would wait."""


@contextlib.contextmanager
def exclusive(file: Path, wait_seconds: float = 300.0,
              on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `file` (created if absent), waiting up to `wait_seconds`
    (`on_wait` is called once if it must wait)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _take(fd, fcntl.LOCK_EX, file, wait_seconds, on_wait)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def shared_if_present(file: Path, wait_seconds: float = 300.0,
                      on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold a shared lock on `file` (many readers at once, never beside the exclusive
    holder), waiting up to `wait_seconds` (`on_wait` is called once if it must wait);
    yields False, holding nothing, when there is no such file: a reader creates no files
    where it reads."""
    try:
        fd = os.open(file, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        yield False
        return
    try:
        _take(fd, fcntl.LOCK_SH, file, wait_seconds, on_wait)
        yield True
    finally:
        os.close(fd)


def _take(fd: int, mode: int, file: Path, wait_seconds: float,
          on_wait: Callable[[], None] | None = None) -> None:
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise LockTimeout(f"{file} stayed locked for {wait_seconds:.0f} s") from None
            if on_wait is not None:
                on_wait()
                on_wait = None
            time.sleep(0.05)


def is_free(file: Path) -> bool:
    """True when nobody holds `file`'s lock (its owner finished or died)."""
    try:
        fd = os.open(file, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def commit_lock(table_root: Path) -> Path:
    return table_root / COMMIT_LOCK
