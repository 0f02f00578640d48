"""The run's progress lines: one per step, its seconds including work done for it early."""

from __future__ import annotations

import logging
import time

import pytest

from jobs.progress import Steps


def _seconds(caplog: pytest.LogCaptureFixture) -> dict[str, float]:
    """Each progress line's label and seconds."""
    out = {}
    for record in caplog.records:
        label, seconds = record.getMessage().rsplit(" s  ", 1)[0].rsplit(None, 1)
        out[label.strip()] = float(seconds)
    return out


def test_work_done_ahead_of_a_step_is_timed_in_its_line(caplog: pytest.LogCaptureFixture
                                                        ) -> None:
    hooked: list[str] = []
    steps = Steps(hooked.append)
    with caplog.at_level(logging.INFO, logger="rebalance_audit"):
        with steps.ahead("report slow"):
            time.sleep(0.3)
        with steps.step("reports", "report quick", point=None):
            pass
        with steps.step("reports", "report slow", point=None) as line:
            line.detail = "slow 3"
        with steps.step("write"):
            pass
    seconds = _seconds(caplog)
    assert seconds["report quick"] < 0.1  # the early work is not in another step's line
    assert seconds["report slow"] >= 0.3
    assert 0.3 <= steps.timings["reports"] < 1.0
    assert hooked == ["write"]  # the report steps were asked for no hook
    assert any(r.getMessage().endswith("slow 3") for r in caplog.records)
