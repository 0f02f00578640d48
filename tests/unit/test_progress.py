"""The run's progress lines (`jobs.progress`): one per step, and every second counted once,
so the steps add up to the run's time."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from jobs.progress import Steps


def test_a_step_inside_another_logs_its_line_and_counts_once() -> None:
    clock = [0.0]
    points: list[str] = []
    described: list[str | None] = []
    steps = Steps(points.append, described.append, clock=lambda: clock[0])
    with steps.step("reports", "plan reports", point=None):
        clock[0] += 2.0
        with steps.step("reports", "compute drift", point=None) as inner:
            clock[0] += 5.0
            inner.detail = "drift 0"
    with steps.step("write"):
        clock[0] += 1.0
    # the outer step holds the inner one's time: 7 s, not 12
    assert steps.timings == {"reports": 7.0, "write": 1.0}
    assert points == ["write"]
    # Spark's jobs are named for the step that runs them, the outer one again after
    assert described == ["audit: plan reports", "audit: compute drift", "audit: plan reports",
                         "audit: write"]


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def logged(monkeypatch) -> Iterator[list[str]]:
    """The lines the run's logger prints, at its command-line level (INFO)."""
    logger, got = logging.getLogger("rebalance_audit"), _Lines()
    monkeypatch.setattr(logger, "handlers", [got])
    monkeypatch.setattr(logger, "propagate", False)
    previous = logger.level
    logger.setLevel(logging.INFO)
    yield got.lines
    logger.setLevel(previous)


def test_each_step_logs_one_line_with_its_label_and_detail(logged) -> None:
    steps = Steps(lambda _point: None)
    with steps.step("read", "validate") as line:
        line.detail = "2 snapshot(s) audited"
    with (steps.step("reports", "plan reports", point=None),
          steps.step("reports", "compute drift", point=None) as inner):
        inner.detail = "drift 0"
    # each printed when it ends: the inner step's line before the outer's
    assert [m.split("  ")[0].strip() for m in logged] == ["validate", "compute drift",
                                                          "plan reports"]
    assert logged[0].endswith("s  2 snapshot(s) audited")
    assert logged[1].endswith("s  drift 0")


def test_a_failed_step_counts_nothing_and_leaves_no_step_open() -> None:
    steps = Steps(lambda _point: None)
    with pytest.raises(RuntimeError), steps.step("assign"):
        raise RuntimeError("boom")
    with steps.step("write"):
        pass
    assert "assign" not in steps.timings and "write" in steps.timings


def test_the_published_line_names_the_audited_snapshots_or_says_there_were_none():
    """A run of rejects only printed `snapshot(s) ` with nothing after it."""
    from jobs.audit import published_detail

    assert published_detail(8, ["s1", "s2"]) == "8 commit(s), snapshot(s) s1, s2"
    assert published_detail(2, []) == "2 commit(s), no snapshot audited"
