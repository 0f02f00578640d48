"""The upstream stability scenarios (32 queues, 8 clients; the first removed / one added) as
input tables and assignment rows over two clusters.

Cluster `k-removed` captures `stability_8c` as snapshot `snap-1` and
`stability_7c_removed_first` as `snap-2`; cluster `k-added` captures `stability_8c` as
`snap-1` and `stability_9c_added` as `snap-2`. The same snapshot ids in both clusters check
that snapshots pair within a cluster only. One consumer group per strategy
(`GID_<strategy>`), all reading the same topic.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from rebalance_udfs.allocate import MEMBER_COLUMNS, allocate_bucket
from tests.support.examples import load

FILES = {
    "AVG": ("rocketmq_averagely.json", ""),
    "AVG_BY_CIRCLE": ("rocketmq_averagely_by_circle.json", ""),
    "CONSISTENT_HASH": ("rocketmq_consistent_hash.json", "chash_"),
}
BASE = "stability_8c"
CLUSTERS = {"k-removed": "stability_7c_removed_first", "k-added": "stability_9c_added"}
SNAPSHOTS = ("snap-1", "snap-2")
TIMES = (datetime(2024, 5, 1, 10, 0), datetime(2024, 5, 1, 10, 5))
# upstream facts (examples/README.md, CONSISTENT_HASH "Stability")
EXPECTED_MOVES = {
    "k-removed": {"AVG": 10, "AVG_BY_CIRCLE": 32, "CONSISTENT_HASH": 4},
    "k-added": {"AVG": 6, "AVG_BY_CIRCLE": 24, "CONSISTENT_HASH": 5},
}


def vector(strategy: str, scenario: str) -> dict:
    file_name, prefix = FILES[strategy]
    return next(v for v in load(file_name) if v["name"] == prefix + scenario)


def group_of(strategy: str) -> str:
    return f"GID_{strategy}"


def steps() -> list[tuple[str, str, datetime, str]]:
    """(cluster, snapshot_id, captured_at, scenario) in capture order per cluster."""
    return [(cluster, snap, at, scenario)
            for cluster, changed in CLUSTERS.items()
            for snap, at, scenario in zip(SNAPSHOTS, TIMES, (BASE, changed), strict=True)]


def input_tables(strategies: tuple[str, ...] = tuple(FILES)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validated-input-shaped (queues, members) pandas frames for the given groups."""
    queues, members = [], []
    for cluster, snap, at, scenario in steps():
        v = vector("AVG", scenario)
        for topic, qs in v["topics"].items():
            for q in qs:
                queues.append({
                    "snapshot_id": snap, "cluster": cluster, "captured_at": at, "topic": topic,
                    "broker_name": q["broker"], "queue_id": q["queue_id"], "readable": True,
                    "broker_room": None, "max_offset": None, "in_rate": None,
                })
        for strategy in strategies:
            for n, cid in enumerate(v["consumers"]):
                for topic in v["topics"]:
                    members.append({
                        "snapshot_id": snap, "cluster": cluster,
                        "consumer_group": group_of(strategy), "client_id": cid,
                        "client_addr": f"10.9.0.{n}:1", "topic": topic, "strategy": strategy,
                        "message_model": None, "client_room": None, "strategy_params": None,
                        "virtual_nodes": None, "rooms": None, "config_queues": None,
                    })
    return pd.DataFrame(queues), pd.DataFrame(members)


def assignment_rows() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(assignments, consumer_load) report-shaped rows computed by the allocation kernel."""
    queues, members = input_tables()
    units = queues.merge(members[["snapshot_id", "cluster", "consumer_group", "topic"]]
                         .drop_duplicates(), on=["snapshot_id", "cluster", "topic"])
    out = allocate_bucket(
        units[["snapshot_id", "cluster", "consumer_group", "topic", "broker_name", "queue_id",
               "broker_room"]],
        members[MEMBER_COLUMNS],
    )
    times = queues[["snapshot_id", "cluster", "captured_at"]].drop_duplicates()
    out = out.merge(times, on=["snapshot_id", "cluster"])
    for col in ("lag", "in_rate", "max_offset", "committed_offset", "consumed_offset"):
        out[col] = None
    load_rows = (members.groupby(["snapshot_id", "cluster", "consumer_group", "client_id"])
                 .agg(strategies=("strategy", lambda s: sorted(set(s))),
                      topics=("topic", lambda s: sorted(set(s))))
                 .reset_index().merge(times, on=["snapshot_id", "cluster"]))
    return out, load_rows


ASSIGNMENTS_SCHEMA = (
    "snapshot_id string, cluster string, captured_at timestamp, consumer_group string, "
    "topic string, broker_name string, queue_id int, client_id string, strategy string, "
    "status string, lag long, in_rate double, max_offset long, committed_offset long, "
    "consumed_offset long, broker_room string"
)
LOAD_SCHEMA = (
    "snapshot_id string, cluster string, captured_at timestamp, consumer_group string, "
    "client_id string, strategies array<string>, topics array<string>"
)
QUEUES_SCHEMA = (
    "snapshot_id string, cluster string, captured_at timestamp, topic string, "
    "broker_name string, queue_id int, readable boolean, broker_room string, "
    "max_offset long, in_rate double"
)
MEMBERS_SCHEMA = (
    "snapshot_id string, cluster string, consumer_group string, client_id string, "
    "client_addr string, topic string, strategy string, message_model string, "
    "client_room string, strategy_params map<string,string>, virtual_nodes int, "
    "rooms string, config_queues string"
)


def _names(schema: str) -> list[str]:
    return [part.split()[0] for part in schema.split(", ")]


ASSIGNMENTS_SCHEMA_COLUMNS = _names(ASSIGNMENTS_SCHEMA)
LOAD_SCHEMA_COLUMNS = _names(LOAD_SCHEMA)
QUEUES_SCHEMA_COLUMNS = _names(QUEUES_SCHEMA)
MEMBERS_SCHEMA_COLUMNS = _names(MEMBERS_SCHEMA)
