"""report.html in a real browser: headless Chromium renders every chart with no console
message, and a screenshot is taken (skipped with a message where Chromium is absent)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from reports.html import write_report
from tests.report import browser, frames

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not browser.available(),
                       reason=f"no browser at {browser.CHROMIUM}: `apt-get install -y "
                              "chromium` (Debian) to run the report's browser test"),
]
PNG = b"\x89PNG\r\n\x1a\n"


def test_console_check_catches_a_broken_page(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>console.error('boom');nope();</script></body></html>")
    seen = browser.render(str(page)).console
    assert any("boom" in m for m in seen)
    assert any("Uncaught ReferenceError" in m for m in seen)


def test_report_renders_every_chart_without_console_messages(tmp_path):
    path = write_report(frames.write_outputs(str(tmp_path / "out")))
    shot = tmp_path / "report.png"
    rendered = browser.render(path, screenshot=str(shot))
    assert rendered.console == [], rendered.console
    assert "Uncaught" not in rendered.stderr
    plots = re.findall(r'<div[^>]*class="[^"]*js-plotly-plot', rendered.dom)
    assert len(plots) == 5  # 3 groups needing attention, skew histogram, churn timeline
    assert rendered.dom.count('class="main-svg"') >= 2 * len(plots)
    assert rendered.dom.count('class="point"') >= 3  # bars drawn, not only axes
    assert "<script>alert" not in rendered.dom.split("</head>")[1]
    data = shot.read_bytes()
    assert data.startswith(PNG) and len(data) > 20_000


@pytest.mark.parametrize("width", [1400, 700])
def test_the_page_fits_its_window_and_no_legend_covers_a_charts_text(tmp_path, monkeypatch,
                                                                     width):
    """A wide table scrolls inside its card rather than widening the page, a group name of
    200 characters without a space wraps in its card's title and is cut short in the
    findings table, and a chart's legend stays clear of its labels however long the client
    ids are (12 clients named as RocketMQ names them, whose labels the chart turns on their
    side)."""
    long_name = "GID_" + "very_long_consumer_group_name_segment_" * 5 + "end"
    few = frames.consumer_load().replace({"consumer_group": {"g-idle": long_name}})
    many = pd.DataFrame([{**few.iloc[0].to_dict(), "client_id": f"10.138.0.{i}@10138#{i}",
                          "queues": i % 4, "queues_by_topic": [("t1", i % 4)]}
                         for i in range(12)])
    balance = frames.group_balance().replace({"consumer_group": {"g-idle": long_name}})
    monkeypatch.setattr(frames, "consumer_load", lambda: pd.concat([few, many]))
    monkeypatch.setattr(frames, "group_balance", lambda: balance)
    path = write_report(frames.write_outputs(str(tmp_path / "out")))
    seen = browser.layout(path, width)
    assert seen.content_width <= seen.window_width, seen
    assert seen.overlaps == []
    # the skew and churn charts side by side, or one above the other, each inside its box
    assert seen.wider == [], seen
