"""Every upstream worked example, fed through the CLI as Delta tables, matches exactly.

All scenarios of all strategy files go into one set of input tables (one snapshot per
scenario and strategy), one `audit` run computes them, and each scenario's assignments
are compared with what the upstream clients computed.
"""

from __future__ import annotations

import pandas as pd
import pytest
from deltalake import DeltaTable

from jobs.cli import main
from tests.support.delta_inputs import write_inputs
from tests.support.examples import (
    Case,
    compare,
    config_case,
    kafka_case,
    load,
    member_params,
    rocketmq_case,
    split_dash_first,
    strategy_name,
)

pytestmark = pytest.mark.e2e

ROCKETMQ_FILES = ["rocketmq_averagely.json", "rocketmq_averagely_by_circle.json",
                  "rocketmq_consistent_hash.json", "rocketmq_by_machine_room.json",
                  "rocketmq_machine_room_nearby.json"]


def all_cases() -> list[Case]:
    cases = []
    for file in ROCKETMQ_FILES:
        for vector in load(file):
            rooms = {}
            if vector["strategy"] == "machine_room_nearby":
                rooms = {"client_room": split_dash_first, "broker_room": split_dash_first}
            cases.append(rocketmq_case(vector, strategy_name(vector),
                                       params=member_params(vector),
                                       snapshot=f"{file}:{vector['name']}", **rooms))
    for vector in load("rocketmq_by_config.json"):
        cases.append(config_case(vector, snapshot=f"by_config:{vector['name']}"))
    for assignor in ("range", "roundrobin"):
        for vector in load(f"kafka_{assignor}.json"):
            cases.append(kafka_case(vector, assignor, snapshot=f"{assignor}:{vector['name']}"))
    return cases


def _as_member_rows(members: pd.DataFrame) -> pd.DataFrame:
    """Typed parameter columns back into the contract's `strategy_params` map."""
    def params(row: pd.Series) -> dict | None:
        out = {}
        if pd.notna(row.get("virtual_nodes")):
            out["virtual_nodes"] = str(int(row["virtual_nodes"]))
        if isinstance(row.get("rooms"), str):
            out["rooms"] = row["rooms"]
        if isinstance(row.get("config_queues"), str):
            out["queues"] = row["config_queues"]
        return out or None

    members = members.copy()
    members["strategy_params"] = members.apply(params, axis=1)
    return members.drop(columns=["virtual_nodes", "rooms", "config_queues"])


@pytest.fixture(scope="module")
def audited(spark, tmp_path_factory) -> tuple[list[Case], pd.DataFrame, pd.DataFrame]:
    root = tmp_path_factory.mktemp("examples")
    cases = all_cases()
    queues = pd.concat([c.queues for c in cases], ignore_index=True)
    queues = queues.drop(columns="consumer_group").drop_duplicates()
    members = _as_member_rows(pd.concat([c.members for c in cases], ignore_index=True))
    paths = write_inputs(spark, root / "in", queues=queues, members=members)
    exit_code = main(["audit", "--queues", paths["queues"], "--members", paths["members"],
                      "--output", str(root / "out"), "--engine", "offline"])
    assert exit_code == 0
    assignments = DeltaTable(str(root / "out" / "assignments")).to_pandas()
    rejects = DeltaTable(str(root / "out" / "rejects")).to_pandas()
    return cases, assignments, rejects


def test_no_example_row_is_rejected(audited) -> None:
    """The only rejects are the rows of scenarios that have no queue or no member at all
    (e.g. an empty client list): such a snapshot is not audited, and each of the rows it
    has says why."""
    cases, _, rejects = audited
    notes = rejects["reason"].str.contains("has no usable rows")
    assert rejects[~notes].empty, rejects[["source_table", "reason"]].head().to_string()
    unused = {}
    for case in cases:
        for table, frame in (("queues", case.queues), ("members", case.members)):
            other = case.members if table == "queues" else case.queues
            if frame.empty and not other.empty:
                held = "members" if table == "queues" else "queues"
                # the queues rows written: the cases' without their group, once each
                rows = other.drop(columns="consumer_group", errors="ignore").drop_duplicates()
                unused[other["snapshot_id"].iloc[0]] = (held, len(rows))
    assert {snapshot: (tables.iloc[0], len(tables)) for snapshot, tables
            in rejects.groupby("snapshot_id")["source_table"]} == unused
    assert rejects.groupby("snapshot_id")["source_table"].nunique().eq(1).all()


def test_every_example_matches_upstream_through_the_cli(audited) -> None:
    cases, assignments, _ = audited
    by_snapshot = dict(tuple(assignments.groupby("snapshot_id")))
    problems = []
    for case in cases:
        snapshot = case.members["snapshot_id"].iloc[0] if len(case.members) else None
        rows = by_snapshot.get(snapshot, assignments.iloc[0:0])
        problems += compare(case, rows)
    assert problems == [], "\n".join(problems[:20])
    assert len(cases) > 300
