"""Named points of a run where the fault-injection tests stop it the hard way.

`REBALANCE_AUDIT_KILL_AT=<point>` makes the process SIGKILL itself when the run reaches
that point (e.g. `committed:assignments`), exactly as an operator's `kill -9` or a lost
node would: no finally blocks, no cleanup; `REBALANCE_AUDIT_INTERRUPT_AT=<point>` sends it
SIGINT there, as Ctrl-C would. Unset (always, outside tests) they do nothing.
"""

from __future__ import annotations

import os
import signal

KILL_AT = "REBALANCE_AUDIT_KILL_AT"
# the same point, an operator's Ctrl-C instead: SIGINT to the process itself
INTERRUPT_AT = "REBALANCE_AUDIT_INTERRUPT_AT"


def reached(point: str) -> None:
    if os.environ.get(KILL_AT) == point:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get(INTERRUPT_AT) == point:
        os.kill(os.getpid(), signal.SIGINT)
