"""Headless Chromium (Debian's package) as a person's browser: render a page, keep its
DOM after the scripts ran, a screenshot, and every console message."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = os.environ.get("REBALANCE_AUDIT_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000"]
# Chromium logs every console message (log, warn, error, uncaught exceptions) at INFO as
# `INFO:CONSOLE:<line>] "<text>", source: ...`: any such line is a message the page printed.
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(.*)")


@dataclass
class Rendered:
    dom: str
    console: list[str]  # every console message, uncaught errors included
    stderr: str


def available() -> bool:
    return os.access(CHROMIUM, os.X_OK)


def _chromium(url: str, *args: str, window: str = "1400,2400") -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                               f"--window-size={window}", *args, url],
                              capture_output=True, text=True, timeout=180)


def render(path: str, screenshot: str | None = None, window: str = "1400,2400") -> Rendered:
    """The page's DOM after load (scripts ran) and its console; a PNG when asked."""
    url = Path(path).resolve().as_uri()
    dumped = _chromium(url, "--dump-dom", window=window)
    stderr = dumped.stderr
    if screenshot:
        shot = _chromium(url, f"--screenshot={screenshot}", window=window)
        stderr += shot.stderr
    console = [m.group(1) for m in map(CONSOLE.search, stderr.splitlines()) if m]
    return Rendered(dumped.stdout, console, stderr)
