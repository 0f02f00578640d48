"""Members the audit allocates other than their clients do, said in a warning: CONFIG
lists naming queues the snapshot has no readable queue for, and Kafka groups their
clients would assign by rack."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from deltalake import write_deltalake

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs
from tests.support.outputs import table
from tests.support.rack_cases import RACK_GROUPS, TOPIC_RACKS


def _warnings(spark, tmp_path, queues: pd.DataFrame, members: pd.DataFrame,
              about: str) -> tuple[list[str], Path]:
    """The run's warnings holding `about`, of an audit of `queues` and `members` (no
    what-if), and its output root."""
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members)
    out = Path(tmp_path) / "out"
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(out), engine="offline", what_if="off"), spark=spark)
    return [w for w in result.warnings if about in w], out


def test_a_config_list_naming_no_readable_queue_is_a_warning(spark, tmp_path) -> None:
    """AllocateMessageQueueByConfig hands a client its list unchecked: a's names T@b1:7
    (T has 2 queues on b1), T@b2:0 (b2 is not readable) and T@B1:1 (broker names are
    case-sensitive). The audit claimed none of them and said nothing."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": b, "queue_id": q, "readable": b == "b1"}
                           for b in ("b1", "b2") for q in range(2)])
    lists = {"a": "T@b1:0, T@b1:7, T@b2:0, T@B1:1", "b": "T@b1:1"}
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": "T", "strategy": "CONFIG",
                             "strategy_params": {"queues": lists[c]}} for c in lists])
    said, out = _warnings(spark, tmp_path, queues, members, "CONFIG")
    assert said == [
        "snapshot s1 (cluster c): strategy_params.queues of 1 CONFIG member(s) name 3 "
        "queue(s) this snapshot has no readable queue for (group G client a: T@B1:1; "
        "group G client a: T@b1:7; group G client a: T@b2:0): the client pulls from "
        "queues that do not exist or cannot be read, and the audit assigns it none of "
        "them"], said
    claims = table(out, "assignments")
    assert sorted(zip(claims["client_id"], claims["queue_id"], strict=True)) == [
        ("a", 0), ("b", 1)]


def test_groups_kafka_would_assign_by_rack_are_a_warning(spark, tmp_path) -> None:
    """The inputs can describe one rack per partition (broker_room) and the members'
    client.rack (client_room); the audit recomputed such groups without racks and said
    nothing. Kafka's rule (`capture.kafka_racks`), over the cases of
    `tests.support.rack_cases`."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": t,
                            "broker_name": None, "queue_id": q, "readable": True,
                            "broker_room": room}
                           for t, rooms in TOPIC_RACKS.items()
                           for q, room in enumerate(rooms)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": g,
                             "client_id": c, "topic": t, "strategy": strategy,
                             "client_room": room}
                            for g, (strategy, rows) in RACK_GROUPS.items()
                            for c, room, t in rows])
    said, _ = _warnings(spark, tmp_path, queues, members, "KIP-881")
    assert said == [
        "snapshot s1 (cluster c): 2 Kafka group(s) (by-rack-range, by-rack-sticky) have "
        "members with a client_room (client.rack) where some partition's broker_room is, "
        "over partitions on more than one rack: Kafka 3.5+ clients assign range and the "
        "sticky assignors by rack there (KIP-881), which the audit does not recompute, so "
        "their assignments, churn and drift may differ from the clients'"], said


def test_groups_assigned_by_rack_are_counted_over_buckets(spark, tmp_path) -> None:
    """The pass finds them bucket by bucket (`rebalance_udfs.racks`): seven racked range
    groups of s1 in three buckets are one note, counted whole and named in order, the first
    five; s2's one group a note of its own."""
    queues = pd.DataFrame([{"snapshot_id": s, "cluster": "c", "topic": "T",
                            "broker_name": None, "queue_id": q, "readable": True,
                            "broker_room": f"r{q}"} for s in ("s1", "s2") for q in range(2)])
    members = pd.DataFrame([{"snapshot_id": s, "cluster": "c", "consumer_group": g,
                             "client_id": "a", "topic": "T", "strategy": "range",
                             "client_room": "r1"}
                            for s, groups in (("s1", [f"G{i}" for i in range(7)]), ("s2", ["H"]))
                            for g in groups])
    paths = write_inputs(spark, Path(tmp_path) / "in", queues=queues, members=members)
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(tmp_path / "out"), engine="offline", what_if="off",
                             buckets=3), spark=spark)
    said = [w.split(" have members")[0] for w in result.warnings if "KIP-881" in w]
    assert said == ["snapshot s1 (cluster c): 7 Kafka group(s) (G0, G1, G2, G3, G4 and 2 more)",
                    "snapshot s2 (cluster c): 1 Kafka group(s) (H)"], said


def test_columns_that_look_like_the_contracts_are_a_warning(spark, tmp_path) -> None:
    """`is_readable` (2 of 4 false) and `maxOffset` in queues, `messageModel`
    (BROADCASTING) in members: extra columns are ignored and the contract's are null
    everywhere, so the unreadable queues were assigned and the broadcasting group audited
    as clustering, without a word."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "b", "queue_id": q, "is_readable": q < 2,
                            "maxOffset": 10} for q in range(4)])
    members = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G",
                             "client_id": c, "topic": "T", "strategy": "AVG",
                             "messageModel": "BROADCASTING", "team": "x"} for c in "ab"])
    # written as given: `write_inputs` (the other tests' helper) conforms them to the contract
    paths = {name: str(tmp_path / name) for name in ("queues", "members")}
    for name, rows in (("queues", queues), ("members", members)):
        write_deltalake(paths[name], rows)
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(tmp_path / "out"), engine="offline", what_if="off"),
                 spark=spark)
    said = [w for w in result.warnings if "look like its own" in w]
    assert said == [
        "queues has column(s) the audit does not read, which look like its own: "
        "is_readable (is it readable?), maxOffset (is it max_offset?); their values are not "
        "used and the contract's column of that name is null everywhere: rename them to "
        "read them",
        "members has column(s) the audit does not read, which look like its own: "
        "messageModel (is it message_model?); their values are not used and the "
        "contract's column of that name is null everywhere: rename them to read them"], said


def test_strategy_params_keys_no_strategy_reads_are_a_warning(spark, tmp_path) -> None:
    """`virtual_node` for virtual_nodes: CONSISTENT_HASH ran with its default 10 virtual
    nodes, and MACHINE_ROOM's `room` left every queue unconsumed, without a word."""
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "r1@b", "queue_id": q, "readable": True}
                           for q in range(4)])
    members = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "G", "client_id": c,
          "topic": "T", "strategy": "CONSISTENT_HASH",
          "strategy_params": {"virtual_node": "100"}} for c in "ab"]
        + [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "H", "client_id": "h",
            "topic": "T", "strategy": "MACHINE_ROOM", "strategy_params": {"room": "r1"}}]
        + [{"snapshot_id": "s1", "cluster": "c", "consumer_group": "K", "client_id": "k",
            "topic": "T", "strategy": "CONSISTENT_HASH",
            "strategy_params": {"virtual_nodes": "3"}}])
    said, _ = _warnings(spark, tmp_path, queues, members, "no strategy reads")
    assert said == [
        "snapshot s1 (cluster c): strategy_params of 3 members row(s) hold key(s) no "
        "strategy reads: room (is it rooms?), virtual_node (is it virtual_nodes?); their "
        "values are not used (the keys read: virtual_nodes, rooms, queues, "
        "pop_share_queue_num)"], said
    # a key may be the user's own: a warning, not an input problem --strict fails on
    inputs = Path(tmp_path) / "in"
    strict = run(AuditConfig(queues=str(inputs / "queues"), members=str(inputs / "members"),
                             output=str(tmp_path / "strict"), engine="offline",
                             what_if="off", strict=True), spark=spark)
    assert strict.snapshots == ["s1"]


def test_queues_rows_of_two_capture_times_under_one_snapshot_are_a_warning(
        spark, tmp_path) -> None:
    """Rows of two captures under one id (08:00 and 09:30): the earliest was kept for churn
    and the outputs, the other dropped without a word. A capture stamping its rows over a
    few minutes (s2: 09:30 and 09:40) is one capture: no word."""
    at = {0: pd.Timestamp("2026-11-01 08:00:00", tz="UTC"),
          1: pd.Timestamp("2026-11-01 09:30:00", tz="UTC")}
    queues = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c", "topic": "T",
                            "broker_name": "b", "queue_id": q, "readable": True,
                            "captured_at": at[q % 2]} for q in range(4)]
                          + [{"snapshot_id": "s2", "cluster": "c", "topic": "T",
                              "broker_name": "b", "queue_id": q, "readable": True,
                              "captured_at": at[1] + pd.Timedelta(minutes=10 * q)}
                             for q in range(2)])
    members = pd.DataFrame([{"snapshot_id": s, "cluster": "c", "consumer_group": "G",
                             "client_id": "a", "topic": "T", "strategy": "AVG"}
                            for s in ("s1", "s2")])
    said, out = _warnings(spark, tmp_path, queues, members, "captured_at")
    assert said == [
        "snapshot s1 (cluster c): its queues rows hold captured_at values from 2026-11-01 "
        "08:00:00 to 2026-11-01 09:30:00 UTC, more than 15 minutes apart: the earliest "
        "orders it for churn and is the one the outputs show; a snapshot id should name one "
        "capture"], said
    runs = table(out, "runs").sort_values("snapshot_id")
    assert [str(t)[:19] for t in runs["captured_at"]] == ["2026-11-01 08:00:00",
                                                           "2026-11-01 09:30:00"]
