"""The embedded demo: a realistic sample cluster written as local Delta input tables.

It holds the textbook seed scenarios (5 queues / 2 clients; 4 queues with 2, 3 and 5
clients; 4 clients on two topics of 2 queues each: the multi-topic skew), a split-brain
group, a Kafka cluster for comparison and a few hundred ordinary groups, over two
snapshots so that history has something to show. Deterministic for a given seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from jobs.write import PARTITION_BY
from rebalance_udfs.strategies import supported_strategies
from vocabulary.contracts import contract_schema

SNAPSHOTS = [("demo-0001", datetime(2026, 11, 1, 8, 0, tzinfo=UTC)),
             ("demo-0002", datetime(2026, 11, 1, 8, 5, tzinfo=UTC)),
             ("demo-0003", datetime(2026, 11, 1, 8, 10, tzinfo=UTC))]
ROCKETMQ = "rmq-prod"
KAFKA = "kafka-prod"


@dataclass
class DemoTables:
    queues: pd.DataFrame
    members: pd.DataFrame
    offsets: pd.DataFrame


@dataclass
class _Builder:
    queues: list[dict] = field(default_factory=list)
    members: list[dict] = field(default_factory=list)
    topics: set[tuple[str, str, str]] = field(default_factory=set)  # (snapshot, cluster, topic)

    def topic(self, snapshot: str, at: datetime, cluster: str, topic: str,
              brokers: list[str | None], per_broker: int, rng: np.random.Generator,
              rooms: dict[str, str] | None = None) -> None:
        if (snapshot, cluster, topic) in self.topics:
            return
        self.topics.add((snapshot, cluster, topic))
        for broker in brokers:
            for qid in range(per_broker):
                self.queues.append({
                    "snapshot_id": snapshot, "cluster": cluster, "captured_at": at,
                    "topic": topic, "broker_name": broker, "queue_id": qid, "readable": True,
                    "broker_room": (rooms or {}).get(broker or ""),
                    "max_offset": int(rng.integers(10_000, 5_000_000)),
                    "in_rate": float(np.round(rng.gamma(2.0, 40.0), 2)),
                })

    def member(self, snapshot: str, cluster: str, group: str, client: str,
               topics: list[str | None], strategy: str, addr: str | None = None,
               model: str | None = None, room: str | None = None,
               params: dict[str, str] | None = None, mode: str | None = None) -> None:
        for topic in topics:
            self.members.append({
                "snapshot_id": snapshot, "cluster": cluster, "consumer_group": group,
                "client_id": client, "topic": topic, "strategy": strategy,
                "message_model": model, "client_room": room,
                "client_addr": addr or f"{client.split('@')[0]}:{30000 + len(client)}",
                "strategy_params": params, "allocation_mode": mode,
            })


def _seed_groups(b: _Builder, snapshot: str, at: datetime, rng: np.random.Generator) -> None:
    """The seed articles' textbook examples, as in ../shared/examples (seed_*)."""
    brokers = ["broker-a"]
    for name, queues, clients in [("seed_5q_2c", 5, 2), ("seed_4q_2c", 4, 2),
                                  ("seed_4q_3c", 4, 3), ("seed_4q_5c", 4, 5)]:
        topic = f"Topic_{name}"
        b.topic(snapshot, at, ROCKETMQ, topic, brokers, queues, rng)
        for i in range(1, clients + 1):
            b.member(snapshot, ROCKETMQ, f"GID_{name}", f"consumer-{i}", [topic], "AVG")
    for t in ("TopicA", "TopicB"):
        b.topic(snapshot, at, ROCKETMQ, t, brokers, 2, rng)
    for i in range(1, 5):
        b.member(snapshot, ROCKETMQ, "GID_seed_multitopic_skew_2x2q_4c", f"consumer-{i}",
                 ["TopicA", "TopicB"], "AVG")


def _split_brain_group(b: _Builder, snapshot: str, at: datetime,
                       rng: np.random.Generator) -> None:
    """Members that disagree: mixed strategies, a missing subscription, a shared id."""
    strategies = supported_strategies()
    other = "AVG_BY_CIRCLE" if "AVG_BY_CIRCLE" in strategies else "AVG"
    topics = ["order_events", "order_audit"]
    for t in topics:
        b.topic(snapshot, at, ROCKETMQ, t, ["broker-a", "broker-b"], 4, rng)
    group = "GID_order_split_brain"
    b.member(snapshot, ROCKETMQ, group, "10.0.4.11@7001", topics, "AVG")
    b.member(snapshot, ROCKETMQ, group, "10.0.4.12@7001", topics, other)
    b.member(snapshot, ROCKETMQ, group, "10.0.4.13@7001", topics[:1], "AVG")
    b.member(snapshot, ROCKETMQ, group, "10.0.4.14@7001", topics, "AVG", addr="10.0.4.14:41001")
    b.member(snapshot, ROCKETMQ, group, "10.0.4.14@7001", topics, "AVG", addr="10.0.4.15:41002")


def _broker_groups(b: _Builder, snapshot: str, at: datetime,
                   rng: np.random.Generator) -> None:
    """Groups the broker allocates: POP (queues shared by design) and a broker asked for
    a strategy it does not know (the clients keep their old queues)."""
    b.topic(snapshot, at, ROCKETMQ, "pop_orders", ["broker-a"], 8, rng)
    for i in range(1, 4):
        b.member(snapshot, ROCKETMQ, "GID_pop_orders", f"10.0.7.{i}@9001", ["pop_orders"],
                 "AVG", mode="POP", params={"pop_share_queue_num": "1"})
    b.topic(snapshot, at, ROCKETMQ, "broker_hash", ["broker-a", "broker-b"], 4, rng)
    for i in range(1, 4):
        b.member(snapshot, ROCKETMQ, "GID_broker_hash", f"10.0.8.{i}@9002", ["broker_hash"],
                 "CONSISTENT_HASH", mode="BROKER")


def _ordinary_groups(b: _Builder, snapshot: str, at: datetime, n_groups: int,
                     rng: np.random.Generator, step: int) -> None:
    """Typical production groups: mostly AVG, 1-3 topics, 1-16 clients, 1-4 brokers."""
    strategies = supported_strategies()
    rocketmq = [s for s in ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH") if s in strategies]
    weights = np.array([0.8, 0.1, 0.1][: len(rocketmq)])
    for g in range(n_groups):
        grng = np.random.default_rng([g, 11])  # stable per group across snapshots
        kafka = g % 10 == 9
        cluster = KAFKA if kafka else ROCKETMQ
        n_topics = int(grng.choice([1, 1, 1, 2, 3]))
        n_brokers = int(grng.integers(1, 5))
        per_broker = int(grng.choice([2, 4, 8, 16]))
        topics = [f"t{g:04d}_{k}" for k in range(n_topics)]
        brokers = [None] if kafka else [f"broker-{c}" for c in "abcd"[:n_brokers]]
        for t in topics:
            b.topic(snapshot, at, cluster, t, brokers, per_broker * (n_brokers if kafka else 1),
                    rng)
        n_clients = int(grng.integers(1, 17))
        first = 0
        if step >= 1 and g % 7 == 0:
            n_clients += 1  # a consumer joined (scale-out) after the first snapshot
        if step >= 2 and g % 5 == 0 and n_clients > 1:
            first = 1  # ... and later the first-sorted consumer crashed
        kafka_strategy = {19: "sticky", 39: "cooperative-sticky"}.get(g % 40, "range")
        strategy = (kafka_strategy if kafka
                    else str(grng.choice(rocketmq, p=weights / weights.sum())))
        for c in range(first, n_clients):
            client = f"10.{g % 250}.{c // 250}.{c % 250 + 1}@{10000 + g}"
            b.member(snapshot, cluster, f"GID_app_{g:04d}", client, topics, strategy)


def generate(n_groups: int = 300, seed: int = 7) -> DemoTables:
    rng = np.random.default_rng(seed)
    b = _Builder()
    for i, (snapshot, at) in enumerate(SNAPSHOTS):
        _seed_groups(b, snapshot, at, rng)
        _split_brain_group(b, snapshot, at, rng)
        _broker_groups(b, snapshot, at, rng)
        _ordinary_groups(b, snapshot, at, n_groups, rng, step=i)
        # one bad row, to show rejects at work
        b.member(snapshot, ROCKETMQ, "GID_typo", "10.9.9.9@1", ["TopicA"], "AVERAGE")
    queues = pd.DataFrame(b.queues)
    members = pd.DataFrame(b.members)
    lag = rng.integers(0, 20_000, len(queues))
    backlog_gap = rng.integers(0, 500, len(queues))
    group_topics = members[["snapshot_id", "cluster", "consumer_group", "topic"]].dropna()
    offsets = group_topics.drop_duplicates().merge(
        queues.assign(committed_offset=np.maximum(queues["max_offset"] - lag, 0),
                      consumed_offset=np.maximum(queues["max_offset"] - lag, 0) + backlog_gap)
        [["snapshot_id", "cluster", "topic", "broker_name", "queue_id", "committed_offset",
          "consumed_offset"]],
        on=["snapshot_id", "cluster", "topic"],
    )
    return DemoTables(queues, members, offsets)



INPUTS = ("queues", "members", "offsets")


def write_demo_inputs(store, root: str, groups: int, seed: int) -> dict[str, str]:
    """Generate the embedded sample cluster as Delta input tables under `root`; their
    paths. A local root is written with delta-rs (no Spark job); a remote one (native
    engine) through the store."""
    from storage.paths import is_local

    tables = generate(groups, seed)
    paths = {name: f"{root}/{name}" for name in INPUTS}
    for name, path in paths.items():
        if is_local(root):
            _write_local(path, _arrow(getattr(tables, name), name))
        else:
            df = store.spark.createDataFrame(getattr(tables, name), schema=contract_schema(name))
            store.write(df, path, name, PARTITION_BY, replace=[s for s, _ in SNAPSHOTS])
    return paths


def _arrow(frame: pd.DataFrame, name: str):
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(contract_schema(name), timezone="UTC")
    frame = frame.reindex(columns=schema.names)
    if "strategy_params" in frame:  # a map column: dicts become lists of (key, value)
        frame["strategy_params"] = [None if p is None or p != p else list(p.items())
                                    for p in frame["strategy_params"]]
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def _write_local(path: str, table) -> None:
    from deltalake import write_deltalake

    from storage.offline import local_path

    write_deltalake(local_path(path), table, mode="overwrite", partition_by=PARTITION_BY,
                    schema_mode="overwrite")
