"""Ctrl-C during a run (`jobs.interrupt`), without Spark."""

from __future__ import annotations

import logging
import os
import signal
import time
from types import SimpleNamespace

import pytest

from jobs import interrupt


def test_ctrl_c_on_the_command_line_silences_py4js_loggers(monkeypatch) -> None:
    """A process-group SIGINT (a terminal's Ctrl-C) closed py4j's connection under the
    interrupted call, and py4j.clientserver logged a traceback above the run's one line
    (probe Z, one try in two). On the command line, whose process ends, py4j's loggers go
    quiet from the signal on; a notebook's (`for_command_line` not called) stay."""
    py4j, root = logging.getLogger("py4j"), logging.getLogger()
    level, filters = py4j.level, list(root.filters)
    try:
        for command_line in (False, True):
            monkeypatch.setattr(interrupt, "_silence_jvm_after", command_line)
            # no session: cancelling its jobs fails, and the interrupt stands
            with pytest.raises(KeyboardInterrupt), interrupt.interruptible(SimpleNamespace()):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the handler raises in this thread before it ends
            said = logging.getLogger("py4j.clientserver").isEnabledFor(logging.CRITICAL)
            assert said is not command_line
    finally:
        py4j.setLevel(level)
        root.filters[:] = filters


def test_what_the_output_holds_at_each_point() -> None:
    say = interrupt.RunInterrupted
    assert str(say("out", False)) == ("the run published nothing in out: it had not begun "
                                      "writing, so the output is as the earlier runs left it")
    assert str(say("out", False, ["A", "B", "C", "D", "E", "F"])).startswith(
        "the run published nothing in out: it had begun replacing snapshot(s) A, B, C, D, E "
        "and 1 more, whose runs rows it removes first")
    assert str(say("out", True, ["A"])).startswith("the run had published its snapshots")
