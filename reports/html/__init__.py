"""report.html: the run's Delta outputs as one page a person can open (see page.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress

from storage.paths import delta_table_holding, is_local, without_file_scheme

REPORT_FILE = "report.html"


def write_report(output: str, html_path: str | None = None,
                 snapshots: Sequence[str] | None = None,
                 groups: Sequence[str] | None = None, top: int | None = None) -> str:
    """Render `output`'s tables to `html_path` (default OUTPUT/report.html); its path.
    The warnings the shown runs recorded (`run_warnings`) are listed near its top, and
    those later runs gave about the shown snapshots beside them.

    Raises NoOutputError when `output` holds no complete run. Written to a temporary
    file first, then renamed: a reader never sees half a page."""
    from reports.html.data import load
    from reports.html.page import render
    from reports.html.select import DEFAULT_TOP
    from vocabulary.errors import ConfigError, NoOutputError

    if not is_local(output):
        raise NoOutputError(f"{output}: report.html is rendered from local output roots only")
    if html_path is not None and os.path.isdir(html_path):  # checked before the reading
        raise ConfigError(f"--html {html_path} is a folder: give the page's file name, e.g. "
                          f"{os.path.join(html_path, REPORT_FILE)}")
    output = without_file_scheme(output)
    if html_path is not None and (table := delta_table_holding(
            os.path.dirname(os.path.abspath(html_path)))) is not None:
        raise ConfigError(f"--html {html_path} lies in the Delta table at {table}: a VACUUM "
                          "of that table deletes every file its log does not name, the page "
                          "with them; write it outside any table, e.g. "
                          f"{os.path.join(output, REPORT_FILE)}")
    target = html_path or os.path.join(output, REPORT_FILE)
    _refuse_special(target, f"--html {target}" if html_path else target)
    with _system_allocator():
        data = load(output, snapshots, groups, top or DEFAULT_TOP)
    page = render(data, top or DEFAULT_TOP)
    try:
        write_atomically(target, page)
    except OSError as exc:
        raise ConfigError(f"cannot write the page at {target}: "
                          f"{exc.strerror or exc}") from exc
    return os.path.abspath(target)


def _refuse_special(target: str, named: str) -> None:
    """The page replaces its target by a rename, which would turn a symlink, a FIFO or a
    device (`--html /dev/stdout`) into a plain file: refused before anything is read."""
    from vocabulary.errors import ConfigError

    if os.path.islink(target) or (os.path.exists(target) and not os.path.isfile(target)):
        kind = "a symbolic link" if os.path.islink(target) else "not a regular file"
        raise ConfigError(f"{named} is {kind}: writing the page would replace it; "
                          "give a regular file's path (the page is written whole, then "
                          "renamed onto it)")


def write_atomically(target: str, text: str) -> None:
    """`text` to `target` through `<target>.tmp-<pid>` and a rename: a reader never sees
    half a file. A writer killed before its rename leaves that partial behind: the next
    writer of `target` removes it once that process is gone."""
    partial = f"{target}.tmp-{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        _remove_partials_of_dead_writers(target)
        # "backslashreplace": text that is no UTF-8 (a lone surrogate) shows as its escape
        with open(partial, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        os.replace(partial, target)
    except OSError:
        with suppress(OSError):
            os.remove(partial)
        raise


def _remove_partials_of_dead_writers(target: str) -> None:
    """`<target>.tmp-<pid>` files of writers no longer alive (a live one is writing now).
    Only `target`'s: `--html` may point into a folder of the user's own files."""
    folder, name = os.path.split(os.path.abspath(target))
    for entry in os.listdir(folder):
        if dead_writers_partial(entry, name):
            with suppress(OSError):
                os.remove(os.path.join(folder, entry))


def dead_writers_partial(entry: str, name: str) -> bool:
    """Whether the file `entry` is `write_atomically`'s partial of `name` (`<name>.tmp-<pid>`)
    whose writer is no longer alive."""
    pid = entry.removeprefix(f"{name}.tmp-")
    return pid != entry and pid.isdigit() and not process_alive(int(pid))


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists (another user's counts: it may be writing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextmanager
def _system_allocator() -> Iterator[None]:
    """Arrow allocates with the system allocator while the tables are read.

    Arrow's default pool (mimalloc or jemalloc, by build) keeps what each scan thread
    freed in that thread's arenas; malloc reuses one batch's memory for the next (the
    Python workers use it too: `jobs.session.SESSION_DEFAULTS`). The page rendered alone, two
    runs each: of the 1M benchmark's output, peak 254–268 → 224–227 MB; of the 10M
    output, 269–284 → 261–269 MB (the audit renders it in its driver, after the run).
    The previous pool comes back afterwards (buffers keep the pool they came from)."""
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)
