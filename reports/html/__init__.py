"""report.html: the run's Delta outputs as one page a person can open (see page.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence

REPORT_FILE = "report.html"


def write_report(output: str, html_path: str | None = None,
                 snapshots: Sequence[str] | None = None,
                 groups: Sequence[str] | None = None, top: int | None = None) -> str:
    """Render `output`'s tables to `html_path` (default OUTPUT/report.html); its path.

    Raises NoOutputError when `output` holds no complete run. Written to a temporary
    file first, then renamed: a reader never sees half a page."""
    from reports.html.data import load
    from reports.html.page import render
    from reports.html.select import DEFAULT_TOP
    from vocabulary.errors import NoOutputError

    if "://" in output and not output.startswith("file:"):
        raise NoOutputError(f"{output}: report.html is rendered from local output roots only")
    output = output.removeprefix("file://").removeprefix("file:")
    data = load(output, snapshots, groups, top or DEFAULT_TOP)
    page = render(data, top or DEFAULT_TOP)
    target = html_path or os.path.join(output, REPORT_FILE)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    partial = f"{target}.tmp-{os.getpid()}"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(partial, target)
    return os.path.abspath(target)
