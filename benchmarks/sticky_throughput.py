"""Throughput of the Kafka sticky chain (`sticky_bucket`) on one synthetic bucket (no Spark).

    python benchmarks/sticky_throughput.py [--groups 2000] [--snapshots 3] [--repeat 3]

Builds one bucket of Kafka groups once (1-4 topics of 8-64 partitions, 4-16 members, one
member replaced in each later snapshot, every other group on cooperative-sticky), then
reports queue rows per second of the whole `sticky_bucket` call (sorting, the chain of
snapshots, claims, the output frame) against its baseline, measured in the same run: the
assignor alone (`sticky_assign` per group snapshot on prebuilt inputs, each snapshot from
the previous one's result), which no bookkeeping around it can beat.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rebalance_udfs.sticky import sticky_assign
from rebalance_udfs.sticky_chain import MEMBER_SIDE, sticky_bucket
from vocabulary.columns import COOPERATIVE_STICKY

QUEUE_SIDE = ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name", "queue_id",
              "_position", "_previous", "_previous_in_run"]


def build(groups: int, snapshots: int, seed: int
          ) -> tuple[pd.DataFrame, pd.DataFrame, list[tuple[dict, dict, bool]]]:
    """The bucket's queue and member frames, and each group snapshot's assignor inputs
    (subscriptions, partitions, cooperative) in chain order."""
    rng = np.random.default_rng(seed)
    queues, members, calls = [], [], []
    for g in range(groups):
        group = f"group-{g:05d}"
        topics = [f"{group}-topic-{t}" for t in range(int(rng.integers(1, 5)))]
        partitions = {t: int(rng.integers(8, 65)) for t in topics}
        clients = [f"{group}-consumer-{c}" for c in range(int(rng.integers(4, 17)))]
        strategy = COOPERATIVE_STICKY if g % 2 else "sticky"
        for position in range(1, snapshots + 1):
            snapshot = f"s{position}"
            previous = f"s{position - 1}" if position > 1 else None
            queues += [(snapshot, "kafka", group, t, None, q, position, previous,
                        position > 1) for t in topics for q in range(partitions[t])]
            members += [(snapshot, "kafka", group, c, t, strategy, None, None, None, False)
                        for c in clients for t in topics]
            calls.append(({c: sorted(topics) for c in clients}, partitions,
                          strategy == COOPERATIVE_STICKY))
            clients = [*clients[1:], f"{group}-consumer-new-{position}"]
    q = pd.DataFrame(queues, columns=QUEUE_SIDE).astype({"queue_id": "int32"})
    q["_row"] = np.arange(len(q), dtype=np.int64)
    m = pd.DataFrame(members, columns=MEMBER_SIDE).astype({"queue_id": "float64"})
    return q, m, calls


def assignor_alone(calls: list[tuple[dict, dict, bool]], snapshots: int) -> float:
    """Seconds of `sticky_assign` alone over every group snapshot, each from the previous
    snapshot's result of its group (computed first, untimed)."""
    results: list[dict] = []
    for i, (subs, partitions, cooperative) in enumerate(calls):
        before = results[i - 1] if i % snapshots else None
        results.append(sticky_assign(subs, partitions, before, cooperative))
    starts = [results[i - 1] if i % snapshots else None for i in range(len(calls))]
    t = time.perf_counter()
    for (subs, partitions, cooperative), before in zip(calls, starts, strict=True):
        sticky_assign(subs, partitions, before, cooperative)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--snapshots", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    queues, members, calls = build(args.groups, args.snapshots, args.seed)
    rows = len(queues)
    print(f"bucket: {args.groups:,} groups × {args.snapshots} snapshots, {rows:,} queue rows, "
          f"{len(members):,} member rows")
    chain, alone = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        out = sticky_bucket(queues, members)
        chain.append(time.perf_counter() - t)
        alone.append(assignor_alone(calls, args.snapshots))
    assert len(out) == rows, "every queue has one clustering owner or is unconsumed"
    best_chain, best_alone = min(chain), min(alone)
    print(f"sticky_bucket      {best_chain:7.3f} s  {rows / best_chain:12,.0f} rows/s  "
          f"(runs: {', '.join(f'{s:.3f}' for s in chain)})")
    print(f"assignor alone     {best_alone:7.3f} s  {rows / best_alone:12,.0f} rows/s  "
          f"(runs: {', '.join(f'{s:.3f}' for s in alone)})")
    print(f"ratio chain / assignor alone: {best_chain / best_alone:.2f}")


if __name__ == "__main__":
    main()
