"""Throughput of `allocate_bucket` per strategy on one large synthetic bucket (no Spark).

    python benchmarks/kernel_throughput.py [--groups 5000] [--repeat 2] [--seed 7]

Builds one synthetic bucket once (default 5,000 groups of 1-64 clients, 1-2 topics of
4-256 queues each, about 1M queue rows), then for each strategy runs every member with
that strategy and reports queue rows per second of the whole `allocate_bucket` call
(batch building, kernel, status, output frame), the kernel alone on a prebuilt batch, and
the ratio to AVG, the cheapest strategy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.batch import build_batch
from rebalance_udfs.strategies import KERNELS

STRATEGIES = ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "MACHINE_ROOM", "CONFIG",
              "MACHINE_ROOM_NEARBY-AVG", "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE",
              "MACHINE_ROOM_NEARBY-CONSISTENT_HASH", "range", "roundrobin"]
ROOMS = ["IDC1", "IDC2", "IDC3"]


def synthetic_bucket(groups: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queue and member rows of `groups` consistent consumer groups (strategy column unset)."""
    rng = np.random.default_rng(seed)
    q_cols: dict[str, list] = {c: [] for c in QUEUE_COLUMNS}
    m_cols: dict[str, list] = {c: [] for c in MEMBER_COLUMNS}
    for g in range(groups):
        group = f"GID_{g:05d}"
        n_clients = int(rng.integers(1, 65))
        topics = [f"topic-{g}-{t}" for t in range(int(rng.integers(1, 3)))]
        clients = [f"{ROOMS[int(rng.integers(0, 3))]}-10.{g % 250}.{k}.{int(rng.integers(256))}"
                   f"@{int(rng.integers(1, 65536))}" for k in range(n_clients)]
        config: dict[str, list[str]] = {c: [] for c in clients}
        for topic in topics:
            n_queues = int(rng.integers(4, 257))
            n_brokers = int(rng.integers(1, 5))
            for q in range(n_queues):
                room = ROOMS[(q % n_brokers) % 3]
                broker = f"{room}@broker-{q % n_brokers}"
                q_cols["snapshot_id"].append("bench")
                q_cols["cluster"].append("c1")
                q_cols["consumer_group"].append(group)
                q_cols["topic"].append(topic)
                q_cols["broker_name"].append(broker)
                q_cols["queue_id"].append(q // n_brokers)
                q_cols["broker_room"].append(room)
                config[clients[q % n_clients]].append(f"{topic}@{broker}:{q // n_brokers}")
        for k, client in enumerate(clients):
            for topic in topics:
                row = {"snapshot_id": "bench", "cluster": "c1", "consumer_group": group,
                       "client_id": client, "client_addr": f"10.0.0.{k}:1", "topic": topic,
                       "strategy": None, "message_model": None,
                       "client_room": client.split("-")[0], "virtual_nodes": None,
                       "rooms": "IDC1,IDC2", "config_queues": ",".join(config[client])}
                for c in MEMBER_COLUMNS:
                    m_cols[c].append(row[c])
    queues = pd.DataFrame(q_cols)
    queues["queue_id"] = queues["queue_id"].astype(np.int64)
    return queues, pd.DataFrame(m_cols)


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--strategies", nargs="*", default=STRATEGIES)
    args = parser.parse_args()

    start = time.perf_counter()
    queues, members = synthetic_bucket(args.groups, args.seed)
    print(f"synthetic bucket: {args.groups} groups, {len(queues):,} queue rows, "
          f"{len(members):,} member rows, {members['client_id'].nunique():,} clients "
          f"(built in {time.perf_counter() - start:.1f}s)")
    header = f"{'strategy':<38}{'bucket s':>9}{'rows/s':>12}{'kernel s':>10}{'vs AVG':>8}"
    print(header)
    print("-" * len(header))
    base = None
    for name in ["AVG", *(s for s in args.strategies if s != "AVG")]:
        frame = members.assign(strategy=name)
        seconds = best_of(args.repeat, lambda frame=frame: allocate_bucket(queues, frame))
        batch, _ = build_batch(queues, frame)
        calls = np.arange(batch.n_calls)
        kernel = best_of(args.repeat, lambda batch=batch, calls=calls, name=name:
                         KERNELS[name](batch, calls))
        base = base or seconds  # AVG runs first
        print(f"{name:<38}{seconds:>9.2f}{len(queues) / seconds:>12,.0f}{kernel:>10.2f}"
              f"{seconds / base:>8.2f}")


if __name__ == "__main__":
    main()
