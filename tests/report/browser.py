"""Headless Chromium (Debian's package) as a person's browser: render a page, keep its
DOM after the scripts ran, a screenshot, and every console message."""

from __future__ import annotations

import html
import json
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


# Measures the page once it has drawn: how wide its content is against the window, which
# chart legends cover a chart's own text (tick labels, axis titles, the title), and which
# charts are wider than their box.
_LAYOUT_PROBE = """<script>
window.addEventListener('load', () => setTimeout(() => {
  const root = document.documentElement;
  const covers = (a, b) => a.left < b.right && b.left < a.right
                           && a.top < b.bottom && b.top < a.bottom;
  const overlaps = [];
  document.querySelectorAll('.js-plotly-plot').forEach(plot => {
    const legend = plot.querySelector('.legend');
    if (!legend) return;
    const box = legend.getBoundingClientRect();
    plot.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, '
                          + '.gtitle').forEach(text => {
      if (covers(box, text.getBoundingClientRect()))
        overlaps.push(plot.id + ': ' + text.textContent);
    });
  });
  // a chart drawn wider than the box it sits in (drawn before its neighbours were laid
  // out); by less than a scrollbar is the page's scrollbar, which came after the charts
  const wider = [...document.querySelectorAll('.js-plotly-plot')].filter(plot => {
    const svg = plot.querySelector('.main-svg');
    return svg && svg.getBoundingClientRect().width
                  > plot.parentElement.getBoundingClientRect().width + 20;
  }).map(plot => plot.id);
  const out = document.createElement('pre');
  out.id = 'layout-probe';
  out.textContent = JSON.stringify({content: root.scrollWidth, window: root.clientWidth,
                                    overlaps: overlaps, wider: wider});
  document.body.appendChild(out);
}, 300));
</script>"""


@dataclass
class Layout:
    content_width: int  # the page's scroll width: more than the window means it scrolls
    window_width: int
    overlaps: list[str]  # "<chart id>: <text>" for each chart text a legend covers
    wider: list[str]  # ids of the charts drawn wider than the box they sit in


def layout(path: str, width: int) -> Layout:
    """How `path` lays out in a window `width` pixels wide (a copy of the page with a probe
    script appended is rendered; the page itself is not changed)."""
    page = Path(path).read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="layout-") as folder:
        probed = Path(folder) / "page.html"
        probed.write_text(page.replace("</body>", _LAYOUT_PROBE + "</body>"),
                          encoding="utf-8")
        dom = render(str(probed), window=f"{width},2400").dom
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', dom, re.S)
    if not found:
        raise AssertionError(f"the layout probe did not run in {path}")
    measured = json.loads(html.unescape(found.group(1)))
    return Layout(measured["content"], measured["window"], measured["overlaps"],
                  measured["wider"])
