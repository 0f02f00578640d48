"""The live capture's per-group step on group descriptions a real Kafka broker returns
(member bytes encoded by kafka-python), and the table writer."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KpAssignment
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription

from capture.errors import CaptureError
from capture.kafka_live import _capture_group, _warn_rack_aware, read_client_config
from capture.kafka_wire import RawGroup, RawMember
from capture.tables import MEMBERS, OBSERVED, QUEUES, Snapshot, write_snapshot


def member(mid: str, topics: list[str], held: dict[str, list[int]]) -> RawMember:
    sub = KpSubscription(version=1, topics=topics, user_data=None, owned_partitions=[]).encode()
    parts = [KpAssignment.TopicPartition(topic=t, partitions=p) for t, p in held.items()]
    asg = KpAssignment(version=1, assigned_partitions=parts, user_data=None).encode()
    return RawMember(mid, None, f"client-{mid}", f"/10.0.0.{len(mid)}", sub, asg)


def test_full_description_gives_members_and_observed():
    raw = RawGroup("g", 0, "Stable", "consumer", "roundrobin", [
        member("m-b", ["t1", "t2"], {"t1": [1], "t2": [0]}),
        member("m-a", ["t1", "t2"], {"t1": [0, 2]})])
    snap = Snapshot("s", "c")
    topics, racked, _ = _capture_group(snap, "kafka://x", "g", None, raw)
    assert topics == {"t1", "t2"} and racked is None
    members = snap.table("members").to_pylist()
    assert [(m["client_id"], m["topic"], m["strategy"]) for m in members] == [
        ("m-a", "t1", "roundrobin"), ("m-a", "t2", "roundrobin"),
        ("m-b", "t1", "roundrobin"), ("m-b", "t2", "roundrobin")]
    assert members[0]["client_name"] == "client-m-a" and members[0]["client_host"] == "10.0.0.3"
    observed = {(r["client_id"], r["topic"], r["queue_id"]) for r in snap.rows["observed"]}
    assert observed == {("m-a", "t1", 0), ("m-a", "t1", 2), ("m-b", "t1", 1), ("m-b", "t2", 0)}
    assert {r["source"] for r in snap.rows["observed"]} == {"kafka-describe"}
    assert snap.rows["rejects"] == []


def test_tansu_like_description_writes_no_invented_rows():
    raw = RawGroup("g", 0, "Stable", "consumer", "", [RawMember("m-1", None, "", "", b"", b"")])
    described = SimpleNamespace(state="STABLE", partition_assignor="m-1", members=[])
    snap = Snapshot("s", "c")
    assert _capture_group(snap, "kafka://x", "g", described, raw) == (set(), None, None)
    assert snap.rows["members"] == [] and snap.rows["observed"] == []
    assert "the broker returned no member metadata" in snap.rows["rejects"][0]["reason"]
    assert any("unknown (the broker returned no member metadata: m-1)" in w
               for w in snap.warnings)


def test_a_capture_of_a_group_described_without_metadata_and_no_commit_replaces_nothing():
    """`capture kafka --group g` of a group whose members the broker describes without
    metadata (Tansu; undecodable bytes on Kafka) and that committed nothing read one
    rejects row and nothing else: exit 0 replaced an earlier capture of the snapshot by
    nothing. The command refuses it as it refuses import files that give no row."""
    from capture.cli import _refuse_nothing_read

    raw = RawGroup("g", 0, "Stable", "consumer", "", [RawMember("m-1", None, "", "", b"", b"")])
    described = SimpleNamespace(state="STABLE", partition_assignor="m-1", members=[])
    snap = Snapshot("s1", "c")
    _capture_group(snap, "kafka://b:9092", "g", described, raw)
    with pytest.raises(CaptureError) as refused:
        _refuse_nothing_read("b:9092 (--group g)", snap, "the broker has no topic or group")
    assert str(refused.value).startswith(
        "b:9092 (--group g): no queue, member, offset or holder row read; 1 rejected, the "
        "first: group g member m-1: the broker returned no member metadata (subscription "
        "unknown). Nothing")
    assert str(refused.value).endswith(
        "Nothing was written: no earlier capture of snapshot s1 is replaced")
    snap.add("offsets", consumer_group="g", topic="t", queue_id=0, committed_offset=3)
    _refuse_nothing_read("b:9092 (--group g)", snap)  # one row read: written


@pytest.mark.parametrize("bad, why", [
    (b"\x00\x00\x00\x00\x00\x09ab", "undecodable member metadata: m-b"),
    (b"", "the broker returned no member metadata: m-b")])
def test_one_unknown_subscription_withholds_the_whole_group(bad, why):
    # m-a was written alone: the audit recomputed the group with one client (false drift)
    good = member("m-a", ["t1"], {"t1": [0]})
    odd = RawMember("m-b", None, "client-m-b", "/h", bad, member("x", [], {"t1": [1]}).assignment)
    snap = Snapshot("s", "c")
    topics, racked, _ = _capture_group(snap, "kafka://x", "g", None,
                                    RawGroup("g", 0, "Stable", "consumer", "range", [good, odd]))
    assert snap.rows["members"] == [] and racked is None and topics == {"t1"}
    assert {(r["client_id"], r["queue_id"]) for r in snap.rows["observed"]} == {
        ("m-a", 0), ("m-b", 1)}
    [reject] = snap.rows["rejects"]
    assert reject["reason"].startswith("group g member m-b: ")
    [warning] = snap.warnings
    assert warning == (f"group g: the subscription of 1 member(s) is unknown ({why}); none "
                       "of the group's members are written (the audit would recompute the "
                       "group without them)")


def test_members_not_asked_for_are_rejects_under_the_one_protocol_warning():
    # security.protocol != PLAINTEXT: our DescribeGroups is not sent; librdkafka's members
    described = SimpleNamespace(state="STABLE", partition_assignor="range", members=[
        SimpleNamespace(member_id="m-1", client_id="c", host="/h",
                        assignment=SimpleNamespace(topic_partitions=[
                            SimpleNamespace(topic="t", partition=0)]))])
    snap = Snapshot("s", "c")
    _capture_group(snap, "kafka://x", "g", described, None, metadata_asked=False)
    assert snap.rows["members"] == [] and len(snap.rows["observed"]) == 1
    assert "subscription not captured" in snap.rows["rejects"][0]["reason"]
    assert snap.warnings == []


def test_garbled_metadata_is_a_reject_with_the_bytes():
    raw = RawGroup("g", 0, "Stable", "consumer", "range",
                   [RawMember("m-1", None, "c", "/h", b"\x00\x00\x00\x00\x00\x09ab", b"")])
    snap = Snapshot("s", "c")
    _capture_group(snap, "kafka://x", "g", None, raw)
    reject = snap.rows["rejects"][0]
    assert "undecodable member metadata" in reject["reason"] and reject["raw"]


def test_writer_replaces_exactly_one_snapshot_of_one_cluster(tmp_path):
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    # one snapshot id may hold several clusters, one capture each: a capture of cluster
    # d deleted cluster c's rows of the same snapshot id
    for sid, cluster, n in (("a", "c", 2), ("b", "c", 1), ("a", "d", 4), ("a", "c", 3)):
        snap = Snapshot(sid, cluster)
        for q in range(n):
            snap.add("queues", captured_at=at, topic="t", broker_name=None, queue_id=q,
                     readable=True, broker_room=None, max_offset=q, in_rate=None)
        assert write_snapshot(tmp_path, snap)["queues"] == n
    df = DeltaTable(str(tmp_path / "queues")).to_pandas()
    assert sorted(df.groupby(["snapshot_id", "cluster"]).size().items()) == [
        (("a", "c"), 3), (("a", "d"), 4), (("b", "c"), 1)]
    schema = DeltaTable(str(tmp_path / "queues")).schema().to_arrow()
    assert pa.schema(schema).field("captured_at").type == pa.timestamp("us", tz="UTC")
    assert DeltaTable(str(tmp_path / "queues")).metadata().partition_columns == ["snapshot_id"]
    assert {f.name for f in MEMBERS} >= {"strategy_params", "client_name", "client_host"}
    assert [f.name for f in OBSERVED][-2:] == ["client_id", "source"]
    assert QUEUES.field("queue_id").type == pa.int32()


def _one_queue(cluster: str) -> Snapshot:
    snap = Snapshot("s", cluster)
    snap.add("queues", captured_at=None, topic="t", broker_name=None, queue_id=0,
             readable=True, broker_room=None, max_offset=0, in_rate=None)
    return snap


def test_capturing_a_snapshot_again_says_what_it_replaced(tmp_path):
    # one snapshot id given to two captures by mistake replaced the first without a word
    first, other_cluster, again = _one_queue("c"), _one_queue("d"), _one_queue("c")
    write_snapshot(tmp_path, first)
    write_snapshot(tmp_path, other_cluster)
    assert first.warnings == [] and other_cluster.warnings == []  # d's rows are its own
    write_snapshot(tmp_path, again)
    assert again.warnings == [f"snapshot s of cluster c was captured under {tmp_path} "
                              "before: its earlier rows are replaced (queues 1)"]


def test_a_capture_landing_between_the_check_and_the_write_keeps_its_rows(tmp_path,
                                                                           monkeypatch):
    # two captures of a new folder at once: the one that found no table must not write
    # as if the folder were still empty (an overwrite of the whole table)
    import capture.tables as tables

    check, calls = tables._check_existing_tables, []

    def other_capture_meanwhile(output, found):
        # the check under the lock (the second), then a writer that does not take the
        # folder's lock (an older capture) creates the tables
        existing = check(output, found)
        calls.append(existing)
        if len(calls) == 2:
            monkeypatch.setattr(tables, "_check_existing_tables", check)
            other = _one_queue("other")
            tables._write_tables(output, other, {n: other.table(n) for n in tables.TABLES})
        return existing

    monkeypatch.setattr(tables, "_check_existing_tables", other_capture_meanwhile)
    write_snapshot(tmp_path, _one_queue("c"))
    assert calls == [[], []]  # the tables were made after the check under the lock
    df = DeltaTable(str(tmp_path / "queues")).to_pandas()
    assert sorted(df["cluster"]) == ["c", "other"]


def test_captures_into_one_folder_take_turns(tmp_path, monkeypatch):
    # two captures of the same snapshot and cluster interleaved table by table; now the
    # second waits for the first's lock, and one that waits too long writes nothing
    import capture.tables as tables
    from storage import locks

    snap = _one_queue("c")
    monkeypatch.setattr(tables, "LOCK_WAIT_SECONDS", 0.2)
    with locks.exclusive(tmp_path / tables.CAPTURE_LOCK), pytest.raises(
            CaptureError, match=r"stayed locked for 0 s: another capture into .* nothing "
                                r"was written"):
        write_snapshot(tmp_path, snap)
    assert not (tmp_path / "queues").exists()
    assert write_snapshot(tmp_path, snap)["queues"] == 1  # the lock is free again


def test_a_recapture_that_fails_part_way_leaves_no_mix_of_two_captures(tmp_path,
                                                                        monkeypatch):
    # the members write fails: no table may keep the earlier capture's rows beside the
    # new capture's, and queues (written last) has neither: the audit leaves it out
    import deltalake

    def snapshot(queues: int) -> Snapshot:
        snap = Snapshot("s", "c")
        for q in range(queues):
            snap.add("queues", captured_at=None, topic="t", broker_name=None, queue_id=q,
                     readable=True, broker_room=None, max_offset=0, in_rate=None)
        snap.add("members", consumer_group="g", client_id="a", topic="t", strategy="AVG",
                 message_model=None, client_room=None, client_addr=None,
                 strategy_params=None, client_name=None, client_host=None)
        return snap

    write_snapshot(tmp_path, snapshot(1))
    write = deltalake.write_deltalake

    def disk_full_at_members(path, data, **kwargs):
        if path.endswith("members"):
            raise OSError(28, "No space left on device")
        return write(path, data, **kwargs)

    monkeypatch.setattr(deltalake, "write_deltalake", disk_full_at_members)
    with pytest.raises(CaptureError, match=r"No space left.*Snapshot s of cluster c is "
                                           r"incomplete under .* \(written: rejects, observed, "
                                           r"offsets; queues, written last, is not"):
        write_snapshot(tmp_path, snapshot(2))
    # queues, removed first and written last, stays without the snapshot: the audit
    # leaves it out rather than read the earlier capture's queues beside no members
    assert DeltaTable(str(tmp_path / "queues")).to_pandas().empty
    assert DeltaTable(str(tmp_path / "members")).to_pandas().empty


def test_client_config_lines(tmp_path):
    f = tmp_path / "c.properties"
    f.write_text("# comment\n\nsecurity.protocol = SASL_SSL\nsasl.mechanism=PLAIN\n")
    assert read_client_config(f) == {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}


def test_client_config_not_utf8_is_a_capture_error(tmp_path):
    # was a UnicodeDecodeError traceback, exit 1
    f = tmp_path / "c.properties"
    f.write_bytes("sasl.password=g\xe9heim\n".encode("latin-1"))
    with pytest.raises(CaptureError, match=r"c\.properties is not UTF-8 text \(byte 15"):
        read_client_config(f)


@pytest.mark.parametrize("key", ["bootstrap.servers", "metadata.broker.list"])
def test_client_config_may_not_name_the_brokers(key):
    # librdkafka took it over --bootstrap-servers, the wire client and cluster name did not
    from capture.kafka_live import KafkaCaptureOptions, capture_kafka

    opts = KafkaCaptureOptions("127.0.0.1:1", "c", "s", datetime.now(UTC),
                               client_config={key: "127.0.0.1:2"}, timeout=0.5)
    with pytest.raises(CaptureError, match=f"--client-config sets {key}: pass the brokers "
                                           "as --bootstrap-servers instead"):
        capture_kafka(opts)


def test_timeout_beyond_librdkafka_limit_is_refused(capsys):
    # 3601 was a librdkafka ValueError traceback, larger values a false "cannot reach"
    import argparse

    from capture.cli import add_capture_parser

    parser = argparse.ArgumentParser()
    add_capture_parser(parser.add_subparsers(dest="job"))
    args = ["capture", "kafka", "--bootstrap-servers", "b:1", "--output", "o", "--timeout"]
    assert parser.parse_args([*args, "3600"]).timeout == 3600
    for value in ("3601", "1e12"):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args([*args, value])
        assert exit_.value.code == 2
        assert "at most 3600 seconds (librdkafka's request timeout limit)" in \
            capsys.readouterr().err


def test_wire_addresses_read_as_librdkafka_reads_them():
    from capture.kafka_wire import WireError, addresses

    assert addresses("PLAINTEXT://a:1, b:2,127.0.0.1,[::1]:3") == [
        ("a", 1), ("b", 2), ("127.0.0.1", 9092), ("::1", 3)]
    with pytest.raises(WireError, match="cannot read the broker address 'a:x'"):
        addresses("a:x")


def test_a_group_kafka_4_does_not_describe_is_left_out_other_errors_fail(monkeypatch):
    """DescribeGroups answers GROUP_ID_NOT_FOUND for a group of Kafka 4's consumer protocol
    (KIP-848), which it does not list: that group is left out (its members are "no member
    metadata"); any other error code of a group is a WireError (exit 2), never a group
    written without its members."""
    from capture import kafka_wire
    from capture.kafka_wire import GROUP_ID_NOT_FOUND, RawGroup, WireError

    class Conn:
        def __init__(self, *args):
            pass

        def close(self):
            pass

    answers: list[RawGroup] = []
    monkeypatch.setattr(kafka_wire, "_bootstrap", lambda *a: (Conn(), {10: (0, 2), 15: (0, 4)}))
    monkeypatch.setattr(kafka_wire, "Connection", Conn)
    monkeypatch.setattr(kafka_wire, "_find_coordinator", lambda *a: ("c", 1))
    monkeypatch.setattr(kafka_wire, "_describe", lambda *a: answers)

    def group(name: str, code: int) -> RawGroup:
        return RawGroup(name, code, "Stable", "consumer", "range", [])

    answers[:] = [group("classic", 0), group("kip848", GROUP_ID_NOT_FOUND)]
    assert list(kafka_wire.describe_groups("b:1", ["classic", "kip848"], 1.0)) == ["classic"]
    answers[:] = [group("classic", 0), group("moving", 16)]  # NOT_COORDINATOR
    with pytest.raises(WireError, match="group 'moving': error code 16"):
        kafka_wire.describe_groups("b:1", ["classic", "moving"], 1.0)


def test_kafka_errors_become_capture_errors_with_the_cause():
    from confluent_kafka import KafkaError, KafkaException

    from capture.kafka_live import _kafka_error

    denied = _kafka_error("describing group 'g'",
                          KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)))
    assert "GROUP_AUTHORIZATION_FAILED" in str(denied) and "ACLs" in str(denied)
    timeout = _kafka_error("ListGroups", KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    assert "_TIMED_OUT" in str(timeout) and "--timeout" in str(timeout)


def _metadata(replicas: dict[str, list[list[int]]]) -> SimpleNamespace:
    """What librdkafka's list_topics gives the capture: per topic, its partitions' replicas."""
    return SimpleNamespace(topics={t: SimpleNamespace(error=None, partitions={
        p: SimpleNamespace(replicas=r) for p, r in enumerate(rs)}) for t, rs in replicas.items()})


@pytest.mark.parametrize("assignor, racked", [("range", True), ("cooperative-sticky", True),
                                              ("roundrobin", False)])
def test_client_rack_is_the_members_room_and_rack_aware_groups_are_named(assignor, racked):
    def member_on(mid: str, rack: str | None) -> RawMember:
        sub = KpSubscription(version=3, topics=["t1"], user_data=None, owned_partitions=[],
                             generation_id=1, rack_id=rack).encode()
        asg = KpAssignment(version=1, assigned_partitions=[], user_data=None).encode()
        return RawMember(mid, None, f"client-{mid}", "/10.0.0.1", sub, asg)

    raw = RawGroup("g", 0, "Stable", "consumer", assignor,
                   [member_on("m-a", "use1-az1"), member_on("m-b", "use1-az2"),
                    member_on("m-c", None)])
    snap = Snapshot("s", "c")
    _, group, _ = _capture_group(snap, "kafka://x", "g", None, raw)
    assert {(m["client_id"], m["client_room"]) for m in snap.rows["members"]} == {
        ("m-a", "use1-az1"), ("m-b", "use1-az2"), ("m-c", None)}
    assert (group is not None) == racked and not snap.warnings
    if not racked:
        return
    assert group.racks == {"m-a": "use1-az1", "m-b": "use1-az2"}
    brokers = {1: "use1-az1", 2: "use1-az2"}

    def warned(replicas: dict, brokers: dict | str) -> list[str]:
        snap = Snapshot("s", "c")
        _warn_rack_aware(snap, [group], _metadata(replicas), brokers)
        return snap.warnings

    # t1's partition 1 only on az1: Kafka assigns t1 by rack
    [warning] = warned({"t1": [[1, 2], [1]], "t2": [[2]]}, brokers)
    assert warning.startswith(
        "group g: 2 member(s) set client.rack (use1-az1, use1-az2) and the replicas of "
        f"topic(s) t1 are not on every rack: Kafka 3.5+ clients running {assignor} assign "
        "them rack-aware (KIP-881); the audit recomputes")
    # every partition on both racks: assigned without racks, as the audit does
    assert warned({"t1": [[1, 2], [2, 1]]}, brokers) == []
    # the brokers' racks unknown: said, with the reason
    [unknown] = warned({"t1": [[1, 2], [1]]}, "DescribeCluster: CLUSTER_AUTHORIZATION_FAILED")
    assert "the brokers' racks could not be read (DescribeCluster: CLUSTER_AUTHORIZATION" \
        in unknown and unknown.startswith("group g: 2 member(s) set client.rack")


def test_a_name_lookup_that_never_answers_is_bounded_by_the_timeout(monkeypatch):
    """`socket.create_connection` bounded the connect, not the name lookup: a resolver
    that did not answer held the capture for as long as its own retries last. A lookup
    that blocks (fault injection: getaddrinfo waits) now ends at --timeout."""
    import socket
    import threading
    import time

    from capture.kafka_live import _every_address_refuses
    from capture.kafka_wire import Connection, WireError, connect

    release = threading.Event()
    real = socket.getaddrinfo

    def stuck(host, *args, **kwargs):
        if host == "broker.invalid":
            release.wait(30)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", stuck)
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"no address for broker\.invalid within 0\.3 s"):
            connect("broker.invalid", 9092, 0.3)
        with pytest.raises(WireError, match=r"cannot connect to broker\.invalid:9092: no "
                                             r"address .* \(name lookup\)"):
            Connection("broker.invalid", 9092, 0.3)
        assert _every_address_refuses("broker.invalid:9092", 0.3) is None  # librdkafka says
        assert time.monotonic() - started < 3
    finally:
        release.set()


def test_connect_reaches_a_listening_socket_and_names_a_refusal():
    import socket

    from capture.kafka_wire import connect

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        connect("127.0.0.1", port, 2.0).close()
        connect("localhost", port, 2.0).close()
    with pytest.raises(ConnectionRefusedError):
        connect("127.0.0.1", port, 2.0)


def test_the_default_cluster_name_is_the_reported_id_else_the_bootstrap_servers():
    from capture.kafka_live import cluster_name

    assert cluster_name("MkU3OEVBNTcwNTJENDM2Qk", "b:9092,a:9092") == "MkU3OEVBNTcwNTJENDM2Qk"
    assert cluster_name(None, "b:9092,a:9092") == "b:9092,a:9092"
    assert cluster_name("", "a:9092") == "a:9092"


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_a_group_with_static_members_is_said_to_be_ordered_otherwise(assignor):
    """Kafka's range and roundrobin put static members first, by group.instance.id; the
    audit orders by member id, so such a group's drift may be that order: the live
    capture decoded the instance id and dropped it, without a word."""
    static = RawMember("z-static", "inst-a", "client-z", "/10.0.0.9",
                       member("x", ["t1"], {}).metadata, member("x", ["t1"], {"t1": [0]})
                       .assignment)
    raw = RawGroup("g", 0, "Stable", "consumer", assignor,
                   [static, member("m-a", ["t1"], {"t1": [1]})])
    snap = Snapshot("s", "c")
    _capture_group(snap, "kafka://x", "g", None, raw)
    said = [w for w in snap.warnings if "static member" in w]
    if assignor == "cooperative-sticky":
        assert said == []
    else:
        assert said == [
            f"group g has 1 static member(s) (z-static as inst-a) and 1 dynamic; Kafka's "
            f"{assignor} assignor orders static members first, by group.instance.id, then "
            "the others by member id, while the audit recomputes the assignment ordering "
            "every member by member id: this group's drift may be that ordering, not its "
            "clients"]
    assert len(snap.table("members").to_pylist()) == 2
