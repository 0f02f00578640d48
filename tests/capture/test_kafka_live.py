"""`capture kafka` against a real Kafka-protocol broker (Tansu) with real librdkafka
consumer groups. What Tansu 0.6 answers (found here, see docs/capture.md): topics,
partitions, high watermarks and committed offsets exactly; DescribeGroups lists members by
member id only (empty client id, host, protocol, metadata and assignment bytes), and
librdkafka's describe lists no members at all. So the capture writes queues and offsets
exactly, and says (warnings + rejects) that members and observed are unknown."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
from deltalake import DeltaTable

from capture.kafka_live import (
    KafkaCaptureOptions,
    _broker_racks,
    _warn_rack_aware,
    capture_kafka,
)
from capture.kafka_racks import RackedGroup
from capture.tables import Snapshot
from jobs import cli as jobs_cli
from tests.capture.conftest import PARTITIONS, RECORDS

pytestmark = pytest.mark.broker


def cli(*argv: str) -> int:
    """`capture ...` through the real entry point (exit codes, messages)."""
    return jobs_cli.main(["capture", *argv])


def table(out, name: str, snapshot: str | None = None):
    df = DeltaTable(str(out / name)).to_pandas()
    return df if snapshot is None else df[df.snapshot_id == snapshot]


def test_capture_writes_every_partition_and_committed_offset(live, tmp_path, capsys):
    out = tmp_path / "capture"
    assert cli("kafka", "--bootstrap-servers", live["bootstrap"], "--output", str(out),
               "--cluster", "tansu", "--snapshot", "s1", "--timeout", "10") == 0
    printed = capsys.readouterr()
    assert "queues" in printed.out and "offsets" in printed.out
    queues = table(out, "queues")
    assert {(r.topic, r.queue_id): r.max_offset for r in queues.itertuples()} == {
        (t, p): RECORDS[(t, p)] for t, n in PARTITIONS.items() for p in range(n)}
    assert queues.broker_name.isna().all() and set(queues.cluster) == {"tansu"}
    offsets = table(out, "offsets")
    assert {(r.consumer_group, r.topic, r.queue_id): r.committed_offset
            for r in offsets.itertuples()} == live["committed"]
    # what the broker gives about members decides members/observed; compare with the
    # consumers' own assignments where it gives them, else it must say why
    observed = table(out, "observed")
    rejects = table(out, "rejects")
    if observed.empty:
        for member_id in live["assignments"]:
            assert rejects.reason.str.contains(f"member {member_id}: the broker returned no "
                                               "member metadata", regex=False).any()
        assert "no member metadata" in printed.err
        # no members row: the audit would audit nothing, said by the capture itself
        assert ("warning: snapshot s1 of cluster tansu has no members row (" in printed.err
                and "An audit of it has no group to assign: it audits nothing and sends its "
                    "queues and offsets rows to rejects" in printed.err)
    else:
        held = {}
        for r in observed.itertuples():
            held.setdefault(r.client_id, []).append((r.topic, r.queue_id))
        assert {k: sorted(v) for k, v in held.items()} == live["assignments"]


def test_capture_group_filter_replaces_the_snapshot(live, tmp_path):
    out = tmp_path / "capture"
    base = ["kafka", "--bootstrap-servers", live["bootstrap"], "--output", str(out),
            "--timeout", "10"]
    assert cli(*base, "--snapshot", "a") == 0
    assert cli(*base, "--snapshot", "a", "--group", "g-range") == 0
    assert cli(*base, "--snapshot", "b", "--group", "g-rr") == 0
    offsets = table(out, "offsets")
    assert set(offsets[offsets.snapshot_id == "a"].consumer_group) == {"g-range"}
    assert set(offsets[offsets.snapshot_id == "b"].consumer_group) == {"g-rr"}
    expected_a = {k for k in live["committed"] if k[0] == "g-range"}
    got_a = {(r.consumer_group, r.topic, r.queue_id)
             for r in offsets[offsets.snapshot_id == "a"].itertuples()}
    assert got_a == expected_a  # replaced, not appended
    queues = table(out, "queues", "a")
    assert set(queues.topic) == {"alpha", "beta"}


def test_client_config_file(live, tmp_path, capsys):
    conf = tmp_path / "client.properties"
    conf.write_text("# librdkafka properties\nclient.id=audit-capture\nsocket.timeout.ms=5000\n")
    assert cli("kafka", "--bootstrap-servers", live["bootstrap"], "--output",
               str(tmp_path / "o"), "--client-config", str(conf), "--group", "g-rr") == 0
    bad = tmp_path / "bad.properties"
    bad.write_text("no.such.property=1\n")
    assert cli("kafka", "--bootstrap-servers", live["bootstrap"], "--output",
               str(tmp_path / "o2"), "--client-config", str(bad)) == 2
    assert "no.such.property" in capsys.readouterr().err


def test_unreachable_broker_is_exit_2(tmp_path, capsys):
    from tests.support.tansu import free_port

    port = free_port()
    assert cli("kafka", "--bootstrap-servers", f"127.0.0.1:{port}", "--output",
               str(tmp_path / "o"), "--timeout", "2") == 2
    err = capsys.readouterr().err
    assert f"cannot reach 127.0.0.1:{port}" in err and "Traceback" not in err


def test_a_refused_connection_fails_at_once_naming_each_address(tmp_path, capsys):
    # librdkafka retried it until --timeout ran out (30 s by default) and named no address
    import time

    from tests.support.tansu import free_port

    ports = [free_port(), free_port()]
    servers = f"127.0.0.1:{ports[0]},PLAINTEXT://127.0.0.1:{ports[1]}"
    started = time.monotonic()
    assert cli("kafka", "--bootstrap-servers", servers, "--output", str(tmp_path / "o"),
               "--timeout", "20") == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert (f"cannot reach {servers}: 127.0.0.1:{ports[0]} refused the connection; "
            f"127.0.0.1:{ports[1]} refused the connection") in err
    assert not (tmp_path / "o").exists()
    # a port past 65,535 was said to refuse: the resolver took it modulo 65,536
    assert cli("kafka", "--bootstrap-servers", "127.0.0.1:99999", "--output",
               str(tmp_path / "o"), "--timeout", "20") == 2
    assert ("cannot reach 127.0.0.1:99999: 127.0.0.1:99999 names no TCP port (1 to 65,535)"
            in capsys.readouterr().err)


def test_a_group_with_nothing_on_the_broker_is_named_and_alone_writes_nothing(
        live, tmp_path, capsys):
    # a mistyped --group read as "no active members; only its committed offsets are
    # captured" (it has none) and wrote an empty snapshot over the earlier one, exit 0
    out = tmp_path / "capture"
    base = ["kafka", "--bootstrap-servers", live["bootstrap"], "--output", str(out),
            "--timeout", "10", "--snapshot", "s1"]
    assert cli(*base, "--group", "g-range") == 0
    capsys.readouterr()
    assert cli(*base, "--group", "g-rnage") == 2
    err = capsys.readouterr().err
    assert ("--group g-rnage: no active member and no committed offset on "
            f"{live['bootstrap']}") in err and "nothing was written" in err
    offsets = table(out, "offsets", "s1")
    assert set(offsets.consumer_group) == {"g-range"}  # the earlier capture kept
    # beside a group that is there: captured, and the other named
    assert cli(*base, "--group", "g-range", "--group", "g-rnage") == 0
    err = capsys.readouterr().err
    assert ("1 group(s) have no active member and no committed offset, so nothing of them "
            "is captured (g-rnage; check the --group names)") in err
    assert set(table(out, "offsets", "s1").consumer_group) == {"g-range"}


def test_capture_api_tansu_answers(live):
    """The library call states exactly what this broker leaves out."""
    snap = capture_kafka(KafkaCaptureOptions(
        bootstrap_servers=live["bootstrap"], cluster="c", snapshot_id="x",
        captured_at=datetime.now(UTC), groups=["g-range"], timeout=10))
    assert snap.rows["members"] == []
    assert any("does not say which assignor" in w for w in snap.warnings)


def test_rack_check_reads_the_brokers_racks_and_replicas_from_the_broker(live, caplog):
    """DescribeCluster and the metadata's replicas, from the real broker: Tansu's broker has
    no rack, so a group whose members set racks is assigned without racks (no warning)."""
    from confluent_kafka.admin import AdminClient

    opts = KafkaCaptureOptions(bootstrap_servers=live["bootstrap"], cluster="c",
                               snapshot_id="x", captured_at=datetime.now(UTC), timeout=10)
    admin = AdminClient({"bootstrap.servers": live["bootstrap"]})
    brokers = _broker_racks(admin, opts)
    assert isinstance(brokers, dict) and brokers and set(brokers.values()) == {None}
    snap = Snapshot("x", "c")
    group = RackedGroup("g", "range", {"m-a": "az1"}, {"m-a": ["alpha"], "m-b": ["alpha"]})
    caplog.set_level(logging.INFO, logger="capture.kafka_live")
    _warn_rack_aware(snap, [group], admin.list_topics(timeout=10), brokers)
    assert snap.warnings == []
    assert any("is assigned without racks" in r.getMessage() for r in caplog.records)


@pytest.mark.spark
def test_capture_then_audit_and_real_clients_as_the_oracle(spark, live, tmp_path):
    """`capture kafka` then `audit` exit 0. Tansu hides the members' subscriptions, so
    members are written from what each consumer subscribed (GROUPS) with the member ids the
    broker gave them; the audit's recomputed range / roundrobin assignment must equal what
    every librdkafka consumer reports holding."""
    import pandas as pd

    from jobs.cli import main
    from tests.capture.conftest import GROUPS
    from tests.support.delta_inputs import write_inputs

    out = tmp_path / "capture"
    assert cli("kafka", "--bootstrap-servers", live["bootstrap"], "--output", str(out),
               "--cluster", "tansu", "--snapshot", "s1", "--timeout", "10") == 0
    tables = {n: str(out / n) for n in ("queues", "members", "offsets", "observed")}
    assert main(["audit", *[f"--{n}={p}" for n, p in tables.items()],
                 "--output", str(tmp_path / "audit"), "--engine", "offline"]) == 0

    members = pd.DataFrame([
        {"snapshot_id": "s1", "cluster": "tansu", "consumer_group": group,
         "client_id": c.memberid(), "topic": topic, "strategy": GROUPS[group][0]}
        for group, consumers in live["consumers"].items() for c in consumers
        for topic in GROUPS[group][1]])
    paths = write_inputs(spark, tmp_path / "known", members=members)
    audited = tmp_path / "audit-known"
    assert main(["audit", "--queues", tables["queues"], "--members", paths["members"],
                 "--offsets", tables["offsets"], "--output", str(audited),
                 "--engine", "offline"]) == 0
    rows = DeltaTable(str(audited / "assignments")).to_pandas()
    assert set(rows.status) == {"OK"}
    recomputed: dict[str, list] = {}
    for r in rows.itertuples():
        recomputed.setdefault(r.client_id, []).append((r.topic, r.queue_id))
    assert {k: sorted(v) for k, v in recomputed.items()} == live["assignments"]


def test_without_cluster_the_brokers_cluster_id_names_it_however_they_are_listed(
        live, tmp_path, capsys):
    """Two spellings of the brokers (one lists a broker that is down) name one cluster:
    the bootstrap string named them apart, and churn took them for two clusters."""
    from confluent_kafka.admin import AdminClient

    reported = AdminClient({"bootstrap.servers": live["bootstrap"]}).list_topics(
        timeout=10).cluster_id
    assert reported
    out = tmp_path / "capture"
    spellings = (("s1", live["bootstrap"]), ("s2", f"127.0.0.1:1,{live['bootstrap']}"))
    for snapshot, brokers in spellings:
        assert cli("kafka", "--bootstrap-servers", brokers, "--output", str(out),
                   "--group", "g-range", "--snapshot", snapshot, "--timeout", "10") == 0
        assert f"snapshot {snapshot} of cluster {reported}\n" in capsys.readouterr().out
    for name in ("queues", "offsets"):
        assert set(table(out, name).cluster) == {reported}, name
