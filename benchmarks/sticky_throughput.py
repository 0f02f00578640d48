"""Throughput of the Kafka sticky chain (`sticky_bucket`) on one synthetic bucket (no Spark).

    python benchmarks/sticky_throughput.py [--groups 2000] [--snapshots 3] [--repeat 3]

Builds one bucket of Kafka groups once (1-4 topics of 8-64 partitions, 4-16 members, one
member replaced in each later snapshot, every other group on cooperative-sticky), then
reports queue rows per second of the whole `sticky_bucket` call (sorting, the chain of
snapshots, claims, the output frame) against its baseline, measured in the same run: the
assignor alone (`sticky_owners`, the integer form the chain calls, per group snapshot on
prebuilt inputs, each snapshot from the previous one's result), which no bookkeeping
around it can beat.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rebalance_udfs.ordering import java_key
from rebalance_udfs.sticky import sticky_owners
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


def assignor_inputs(calls: list[tuple[dict, dict, bool]], snapshots: int) -> list[tuple]:
    """Each group snapshot's `sticky_owners` arguments (counts, member topics, claims,
    constrained, cooperative), its claims from the previous snapshot's result of its
    group (computed here, untimed)."""
    inputs: list[tuple] = []
    before: dict[int, str] = {}  # partition id -> owner after the group's last snapshot
    for i, (subs, partitions, cooperative) in enumerate(calls):
        clients = sorted(subs, key=java_key)
        topics = sorted(partitions, key=java_key)
        index = {t: k for k, t in enumerate(topics)}
        member = {c: k for k, c in enumerate(clients)}
        claims: list[set[int]] = [set() for _ in clients]
        for pid, owner in (before.items() if i % snapshots else ()):
            if owner in member:
                claims[member[owner]].add(pid)
        args = ([partitions[t] for t in topics],
                [frozenset(index[t] for t in subs[c]) for c in clients], claims,
                len({frozenset(subs[c]) for c in clients}) <= 1, cooperative)
        owners = sticky_owners(args[0], args[1], args[2], constrained=args[3],
                               cooperative=args[4])
        before = {pid: clients[k] for pid, k in enumerate(owners) if k >= 0}
        inputs.append(args)
    return inputs


def assignor_alone(inputs: list[tuple]) -> float:
    """Seconds of `sticky_owners` alone over every group snapshot."""
    t = time.perf_counter()
    for counts, member_topics, claims, constrained, cooperative in inputs:
        sticky_owners(counts, member_topics, claims, constrained=constrained,
                      cooperative=cooperative)
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
    inputs = assignor_inputs(calls, args.snapshots)
    chain, alone = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        out = sticky_bucket(queues, members)
        chain.append(time.perf_counter() - t)
        alone.append(assignor_alone(inputs))
    assert len(out) == rows, "every queue has one clustering owner or is unconsumed"
    best_chain, best_alone = min(chain), min(alone)
    print(f"sticky_bucket      {best_chain:7.3f} s  {rows / best_chain:12,.0f} rows/s  "
          f"(runs: {', '.join(f'{s:.3f}' for s in chain)})")
    print(f"assignor alone     {best_alone:7.3f} s  {rows / best_alone:12,.0f} rows/s  "
          f"(runs: {', '.join(f'{s:.3f}' for s in alone)})")
    print(f"ratio chain / assignor alone: {best_chain / best_alone:.2f}")


if __name__ == "__main__":
    main()
