"""The run's own progress: one line per step, with its rows and elapsed time.

Spark's console progress bars are noise to an operator (hundreds of stages interleaved), so
the session turns them off unless asked (`--spark-progress`); these lines say instead what
the run did: `read`, `validate`, `assign`, `report <table>`, `write <table>`, `summary`,
`report.html`. Every part of a run is in a step, so the steps add up to its time. They go to
the `rebalance_audit` logger (stderr from the command line); the fault-injection tests hook
into the same named points.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

log = logging.getLogger("rebalance_audit")

Hook = Callable[[str], None]


@dataclass
class Step:
    """What a step reports once it ends: a short account of its rows."""

    name: str
    detail: str = ""


@dataclass
class Steps:
    """Times the run's named steps, logs one line per step, and tells the fault hook where
    the run is. `describe` names the Spark jobs of a step in the Spark UI."""

    hook: Hook
    describe: Callable[[str | None], None] = lambda _name: None
    timings: dict[str, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.perf_counter
    _open: list[str] = field(default_factory=list)  # labels of the steps running, outer first

    @contextmanager
    def step(self, name: str, label: str | None = None,
             point: str | None = "") -> Iterator[Step]:
        """Time a step under `name` (steps of one name add up), log its line as `label`,
        then call the hook with `point` (default: `name`; None: no hook). A step inside
        another logs its own line, and its time counts once: in the outer step's."""
        label = label or name
        self.describe(f"audit: {label}")
        started = self.clock()
        line = Step(label)
        self._open.append(label)
        try:
            yield line
        finally:
            self._open.pop()
            if self._open:  # the outer step's Spark jobs are named for it again
                self.describe(f"audit: {self._open[-1]}")
        elapsed = self.clock() - started
        if not self._open:
            self.timings[name] = self.timings.get(name, 0.0) + elapsed
        progress_line(label, elapsed, line.detail)
        if point is not None:
            self.hook(point or name)


def progress_line(label: str, seconds: float, detail: str) -> None:
    """One step's line: its label, seconds and detail, in columns (the longest label,
    `report strategy_comparison`, fits)."""
    log.info("%-26s %7.1f s  %s", label, seconds, detail)


def row_counts(counts: dict[str, int]) -> str:
    """'queues 533,572 · members 270,517' (the order given)."""
    return " · ".join(f"{name} {n:,}" for name, n in counts.items())


def configure_logging(level: int = logging.INFO) -> None:
    """Progress and warnings to stderr as plain lines (the command line's setting)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger("rebalance_audit")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
