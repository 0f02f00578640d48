"""How bad a group's state is, as one number: the order of "groups that need attention" in
the console summary and in report.html."""

from __future__ import annotations

from collections.abc import Mapping

# One contended queue (two clients consume it: duplicates) outweighs any number of
# unconsumed queues (lag grows, nothing lost), which outweigh skew, which outweighs an
# idle client (wasted, harmless). Columns of group_balance; null counts 0.
SEVERITY_WEIGHTS: Mapping[str, int] = {
    "contended_queues": 1000,
    "unconsumed_queues": 100,
    "skew": 10,
    "idle_clients": 1,
}
