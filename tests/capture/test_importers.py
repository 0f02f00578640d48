"""Importers on fixture files laid out as the upstream tools print them."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import re
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from capture.errors import CaptureError
from capture.importers import import_files
from capture.importers.rocketmq_json import loads, message_queue
from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket
from rebalance_udfs.drift import drift_rows

DATA = Path(__file__).parent.parent / "data" / "capture"
AT = datetime(2026, 11, 23, 10, 16, tzinfo=UTC)
M1 = "consumer-1-0f6f6c7e-2b1a-4a8e-9a57-3d3c1b2a9e01"
M2 = "consumer-2-7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e02"
KAFKA_HELD = {("orders", 0): M1, ("orders", 1): M1, ("orders", 2): M2,
              ("payments", 0): M1, ("payments", 1): M2}


def run(*names: str, fmt: str | None = None):
    return import_files([str(DATA / n) for n in names], cluster="c1", snapshot_id="s1",
                        captured_at=AT, fmt=fmt)


def frame(snap, table: str) -> pd.DataFrame:
    return snap.table(table).to_pandas()


def observed_map(snap) -> dict:
    return {(r.topic, r.queue_id): r.client_id for r in frame(snap, "observed").itertuples()}


def recomputed(snap) -> pd.DataFrame:
    """What the audit recomputes for the imported tables: the project's allocation kernel
    (rebalance_udfs.allocate_bucket, the pandas body of the audit's UDF) on them."""
    members = frame(snap, "members").dropna(subset=["topic"])
    members = members.assign(virtual_nodes=None, rooms=None, config_queues=None)
    queues = frame(snap, "queues")
    queues = queues[queues["readable"].ne(False)]
    units = members[["snapshot_id", "cluster", "consumer_group", "topic"]].drop_duplicates()
    queues = units.merge(queues[["snapshot_id", "cluster", "topic", "broker_name", "queue_id",
                                 "broker_room"]], on=["snapshot_id", "cluster", "topic"])
    return allocate_bucket(queues[QUEUE_COLUMNS], members[MEMBER_COLUMNS])


@pytest.mark.parametrize("members_file", ["kcg_members_3.7.txt", "kcg_members_4.0.txt"])
def test_kafka_members_and_offsets_give_all_tables(members_file):
    snap = run(members_file, "kcg_offsets.txt", "kcg_state.txt")
    assert observed_map(snap) == KAFKA_HELD
    q = frame(snap, "queues")
    assert dict(zip(zip(q.topic, q.queue_id, strict=False), q.max_offset, strict=True)) == {
        ("orders", 0): 120, ("orders", 1): 110, ("orders", 2): 130, ("payments", 0): 9,
        ("payments", 1): 12}
    assert q.broker_name.isna().all() and str(q.captured_at.dt.tz) == "UTC"
    o = frame(snap, "offsets")
    assert sorted(zip(o.topic, o.queue_id, o.committed_offset, strict=False)) == [
        ("orders", 0, 100), ("orders", 1, 95), ("orders", 2, 130), ("payments", 0, 7),
        ("payments", 1, 12)]
    m = frame(snap, "members")
    assert set(m.strategy) == {"range"}
    assert sorted(set(zip(m.client_id, m.topic, strict=False))) == sorted(
        (c, t) for c in (M1, M2) for t in ("orders", "payments"))
    assert set(m.client_name) == {"consumer-1", "consumer-2"}
    assert set(m.client_host) == {"10.0.0.11", "10.0.0.12"}
    assert frame(snap, "rejects").empty


def test_range_group_import_gives_empty_drift():
    snap = run("kcg_members_3.7.txt", "kcg_offsets.txt")
    expected = recomputed(snap)
    observed = frame(snap, "observed")
    assert drift_rows(expected, observed).empty
    assert any("assignor unknown" in w for w in snap.warnings)


def test_offsets_alone_and_verbose_layout():
    for name in ("kcg_offsets.txt", "kcg_offsets_verbose.txt"):
        snap = run(name)
        assert observed_map(snap) == KAFKA_HELD
        assert len(frame(snap, "offsets")) == 5


def test_kafka_38_layout_keeps_membership_and_rejects_topicless_partitions():
    snap = run("kcg_members_3.8.txt")
    rejects = frame(snap, "rejects")
    assert len(rejects) == 5 and set(rejects.line) == {3, 4}
    assert rejects.reason.str.contains("without a topic name").all()
    assert frame(snap, "observed").empty
    assert set(frame(snap, "members").client_id) == {M1, M2}
    assert any("3.8-3.9" in w for w in snap.warnings)
    # with the offsets output of the same group, the topics are known again
    both = run("kcg_members_3.8.txt", "kcg_offsets.txt")
    assert observed_map(both) == KAFKA_HELD


def test_kafka_damaged_files_give_rejects_with_line_numbers():
    snap = run("kcg_members_3.7_damaged.txt")
    rejects = frame(snap, "rejects").sort_values("line")
    assert list(rejects.line) == [2, 6, 7]
    assert "before any" in rejects.reason.iloc[0]
    assert "bad assignment" in rejects.reason.iloc[1]
    assert "#PARTITIONS 5" in rejects.reason.iloc[2]
    # two members unread: the group is written whole or not at all, as the live capture's
    assert frame(snap, "members").empty and observed_map(snap) == KAFKA_HELD
    assert any(w.startswith("group orders-range: 2 members line(s) could not be read") and
               "none of its members is written" in w for w in snap.warnings)
    snap = run("kcg_offsets_damaged.txt")
    rejects = frame(snap, "rejects")
    assert list(rejects.line) == [9] and "not a whole number" in rejects.reason.iloc[0]
    assert any("is rebalancing" in w for w in snap.warnings)


def rocket_files(*extra: str) -> list[str]:
    return ["topicRoute_TopicOrder.json", "topicStatus_TopicOrder.txt",
            "consumerConnection_OrderGroup.txt", *extra]


def test_mqadmin_set_gives_all_tables_and_no_drift():
    snap = run(*rocket_files("consumerProgress_OrderGroup.txt"))
    q = frame(snap, "queues")
    main = q[q.topic == "TopicOrder"]
    assert len(main) == 8 and main.readable.all()
    assert set(main.broker_room) == {"room-1", "room-2"}
    keys = list(zip(main.broker_name, main.queue_id, strict=True))
    assert dict(zip(keys, main.max_offset, strict=True))[("broker-b", 3)] == 1030
    m = frame(snap, "members")
    assert set(m.strategy) == {"AVG"} and set(m.message_model) == {"CLUSTERING"}
    assert set(m.topic) == {"TopicOrder", "%RETRY%OrderGroup"}
    assert len(frame(snap, "offsets")) == 9
    obs = frame(snap, "observed")
    assert set(obs.source) == {"mqadmin-consumerProgress"} and len(obs) == 9
    assert drift_rows(recomputed(snap), obs).empty
    assert frame(snap, "rejects").empty


def test_changed_progress_client_gives_exactly_one_drift_row():
    files = [str(DATA / n) for n in rocket_files()] + [
        str(DATA / "drift" / "consumerProgress_OrderGroup.txt")]
    snap = import_files(files, cluster="c1", snapshot_id="s1", captured_at=AT)
    out = drift_rows(recomputed(snap), frame(snap, "observed"))
    assert out[["topic", "broker_name", "queue_id", "kind"]].values.tolist() == [
        ["TopicOrder", "broker-b", 2, "HELD_BY_OTHER"]]
    assert out.loc[0, "observed_clients"] == ["10.0.1.21@21345"]


def test_damaged_progress_and_shared_ip():
    files = [str(DATA / n) for n in rocket_files()] + [
        str(DATA / "damaged" / "consumerProgress_OrderGroup.txt")]
    snap = import_files(files, cluster="c1", snapshot_id="s1", captured_at=AT)
    rejects = frame(snap, "rejects").sort_values("line")
    assert list(rejects.line) == [4, 6]
    assert "not numbers" in rejects.reason.iloc[0] or "columns" in rejects.reason.iloc[0]
    assert "matches no client" in rejects.reason.iloc[1]


def test_consumer_status_files_give_strategy_and_held_queues():
    snap = run(*rocket_files("status/10.0.1.21@21345", "status/10.0.1.22@22456.json"))
    m = frame(snap, "members")
    strategies = dict(zip(m.client_id, m.strategy, strict=False))
    assert strategies == {"10.0.1.21@21345": "AVG_BY_CIRCLE", "10.0.1.22@22456": "AVG"}
    obs = frame(snap, "observed")
    assert sorted(zip(obs.client_id, obs.broker_name, obs.queue_id, strict=False)) == [
        ("10.0.1.21@21345", "broker-a", 0), ("10.0.1.21@21345", "broker-a", 2),
        ("10.0.1.22@22456", "broker-b", 0), ("10.0.1.22@22456", "broker-b", 1)]
    assert set(obs.source) == {"mqadmin-consumerStatus"}
    sub22 = set(m[m.client_id == "10.0.1.22@22456"].topic)
    assert sub22 == {"TopicOrder"}  # its own subscription, not the merged one


def test_dashboard_responses():
    d = "dashboard/"
    snap = run(d + "route_TopicOrder.json", d + "consumerConnection_OrderGroup.json",
               d + "queryTopicByConsumer_OrderGroup.json",
               d + "consumerRunningInfo_10.0.1.22@22456.json",
               d + "consumerConnection_GoneGroup.json")
    obs = frame(snap, "observed")
    assert len(obs) == 8
    assert set(obs.source) == {"dashboard-queryTopicByConsumer", "mqadmin-consumerStatus"}
    assert len(frame(snap, "queues")) == 8 and len(frame(snap, "offsets")) == 8
    rejects = frame(snap, "rejects")
    assert list(rejects.reason.str.contains("not online")) == [True]


def test_object_keyed_json():
    doc = loads('{"mqTable":{{"brokerName":"b","queueId":3,"topic":"t"}:{"commitOffset":5}}}')
    (key, value), = doc["mqTable"].items()
    assert message_queue(key) == ("t", "b", 3) and value == {"commitOffset": 5}
    assert message_queue("MessageQueue [topic=t, brokerName=b, queueId=4]") == ("t", "b", 4)
    with pytest.raises(ValueError, match="line 2"):
        loads('{"a":\n  {1:}}')


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be-bom"])
def test_files_saved_by_windows_tools_import_alike(tmp_path, encoding):
    # PowerShell 5's `>` writes UTF-16 LE, Notepad UTF-8 with a BOM, both with CRLF: the
    # BOM was a reject row (text) or made the file unrecognised (UTF-16, JSON)
    names = ("kcg_members_3.7.txt", "kcg_offsets.txt", "kcg_state.txt",
             "topicRoute_TopicOrder.json", "consumerConnection_OrderGroup.txt")
    for name in names:
        text = (DATA / name).read_text(encoding="utf-8").replace("\n", "\r\n")
        data = (codecs.BOM_UTF16_BE + text.encode("utf-16-be")
                if encoding == "utf-16-be-bom" else text.encode(encoding))
        (tmp_path / name).write_bytes(data)
    for files in (names[:3], names[3:]):
        saved = import_files([str(tmp_path / n) for n in files], cluster="c1",
                             snapshot_id="s1", captured_at=AT)
        plain = run(*files)
        for table in ("queues", "members", "offsets", "observed", "rejects"):
            assert frame(saved, table).equals(frame(plain, table)), (encoding, table)


def test_an_inactive_groups_notice_imports_and_an_error_is_named(tmp_path):
    # an inactive group's --members or --state output is the notice alone: it was an
    # unrecognised file (exit 2), so a script capturing every group stopped at the first
    # idle one; a file holding only the tool's error now says so
    notice = tmp_path / "members.txt"
    notice.write_text("\nConsumer group 'orders' has no active members.\n")
    snap = import_files([str(notice), str(DATA / "kcg_offsets.txt")], cluster="c1",
                        snapshot_id="s1", captured_at=AT)
    plain = run("kcg_offsets.txt")
    assert frame(snap, "queues").equals(frame(plain, "queues"))
    assert frame(snap, "rejects").empty
    assert any("has no active members" in w for w in snap.warnings)
    for text in ("Error: Consumer group 'nope' does not exist.\n",
                 "Error: Executing consumer group command failed due to Timed out.\n"):
        error = tmp_path / "error.txt"
        error.write_text(text)
        with pytest.raises(CaptureError, match=r"error.txt: kafka-consumer-groups.sh printed "
                                               r"an error, not a group's state: Error: "):
            import_files([str(error)], cluster="c1", snapshot_id="s1", captured_at=AT)


NOT_ONLINE = (
    "org.apache.rocketmq.tools.command.SubCommandException: ConsumerConnectionSubCommand "
    "command failed\n\tat org.apache.rocketmq.tools.command.consumer.ConsumerConnection"
    "SubCommand.execute(ConsumerConnectionSubCommand.java:86)\nCaused by: org.apache."
    "rocketmq.client.exception.MQBrokerException: CODE: 206  DESC: the consumer group[G] "
    "not online\n")


@pytest.mark.parametrize(("text", "message"), [
    ("\n", r"f\.txt is empty: the tool printed nothing on stdout"),
    (NOT_ONLINE.replace("CODE: 206  DESC: the consumer group[G] not online",
                        "CODE: 17  DESC: topic[T] not exist"),
     r"f\.txt: the tool printed a Java exception, not its output: org\.apache\.rocketmq\."
     r"client\.exception\.MQBrokerException: CODE: 17  DESC: topic\[T\] not exist$"),
])
def test_an_empty_file_or_a_stack_trace_says_so(tmp_path, text, message):
    # both were "unrecognised file ... pass --format", which no format would have read
    bad = tmp_path / "f.txt"
    bad.write_text(text)
    with pytest.raises(CaptureError, match=message):
        import_files([str(bad)], cluster="c", snapshot_id="s", captured_at=AT)


def test_a_group_not_online_is_a_reject_and_the_other_files_go_on(tmp_path):
    """mqadmin's CODE 206 (no client of the group online) is a state of the group, as the
    dashboard's failed answer and Kafka's "has no active members" are: the rest imports."""
    offline = tmp_path / "consumerConnection_G.txt"
    offline.write_text(NOT_ONLINE)
    files = ("topicRoute_TopicOrder.json", "consumerConnection_OrderGroup.txt",
             "consumerProgress_OrderGroup.txt")
    alone = run(*files)
    snap = import_files([*(str(DATA / n) for n in files), str(offline)], cluster="c1",
                        snapshot_id="s1", captured_at=AT)
    for table in ("queues", "members", "offsets", "observed"):
        pd.testing.assert_frame_equal(frame(snap, table), frame(alone, table))
    assert frame(alone, "rejects").empty
    [reject] = frame(snap, "rejects").itertuples()
    assert reject.file == str(offline) and reject.reason == (
        "mqadmin failed: org.apache.rocketmq.client.exception.MQBrokerException: CODE: 206  "
        "DESC: the consumer group[G] not online (no client of the group is online: none of "
        "its members is captured)")


def test_unrecognised_file_and_missing_name(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    with pytest.raises(CaptureError, match=r"notes\.txt: unrecognised"):
        import_files([str(bad)], cluster="c", snapshot_id="s", captured_at=AT)
    nameless = tmp_path / "out.txt"
    nameless.write_text((DATA / "consumerConnection_OrderGroup.txt").read_text())
    with pytest.raises(CaptureError, match=r"which group.*consumerConnection_MyName\.txt\)"):
        import_files([str(nameless)], cluster="c", snapshot_id="s", captured_at=AT)
    # a dashboard's JSON response: the example keeps its extension
    response = tmp_path / "response.json"
    response.write_text('{"status": 0, "data": {}}')
    with pytest.raises(CaptureError, match=r"which topic.*file route_<topic>\.json \(e\.g\. "
                       r"route_MyName\.json\)"):
        import_files([str(response)], cluster="c", snapshot_id="s", captured_at=AT,
                     fmt="dashboard-topicRoute")


def test_consumer_progress_4_8_layout():
    """RocketMQ 4.x: 32-wide topic column, no #Inflight, `NA` for no holder, `Diff Total:`."""
    files = [str(DATA / n) for n in rocket_files()] + [
        str(DATA / "v4_8" / "consumerProgress_OrderGroup.txt")]
    snap = import_files(files, cluster="c1", snapshot_id="s1", captured_at=AT)
    assert len(frame(snap, "offsets")) == 8 and frame(snap, "rejects").empty
    out = drift_rows(recomputed(snap), frame(snap, "observed"))
    main = out[out.topic == "TopicOrder"]
    assert main[["broker_name", "queue_id", "kind"]].values.tolist() == [
        ["broker-b", 3, "NOT_HELD"]]


def test_json_a_writer_never_wrote_is_refused_not_a_traceback(tmp_path):
    """Half a UTF-16 pair (`\\ud800`) is no text a table can hold (pyarrow raised
    UnicodeEncodeError); an object key keyed by a number and a name could not be sorted
    (TypeError)."""
    lone = tmp_path / "topicRoute_T.json"
    lone.write_text('{"queueDatas":[{"brokerName":"b\\ud800","readQueueNums":1,"perm":6}]}')
    with pytest.raises(CaptureError, match=r"topicRoute_T.json: not valid JSON \(bad string: "
                       r"a \\u escape of half a UTF-16 surrogate pair at line 1\)"):
        import_files([str(lone)], cluster="c1", snapshot_id="s1", captured_at=AT)
    assert loads('"\\ud83d\\ude00"') == "\U0001F600"  # a whole pair is a character
    assert loads('{{"a":1, 2:3}: 4}') == {((2, 3), ("a", 1)): 4}


def test_a_json_error_names_the_line_of_the_file(tmp_path):
    route = tmp_path / "topicRoute_T.json"
    route.write_text('\n\n{"queueDatas":[\n  {"brokerName":"b"\n  "perm":6}]}\n')
    with pytest.raises(CaptureError, match="expected ',' or '}' at line 5"):
        import_files([str(route)], cluster="c1", snapshot_id="s1", captured_at=AT)


@pytest.mark.parametrize(("data", "message"), [
    # the BOM's 3 bytes were left out of the offset: the byte and line named were wrong
    (codecs.BOM_UTF8 + b"GROUP TOPIC\r\nx\r\n-\xe9\n", "not UTF-8 text (byte 0xe9 on line 3)"),
    (codecs.BOM_UTF8 + b"GROUP TOPIC\rx\r-\xe9\n", "not UTF-8 text (byte 0xe9 on line 3)"),
    # a UTF-16 file cut at an odd byte is damaged, not another encoding to convert from
    (codecs.BOM_UTF16_LE + "GROUP".encode("utf-16-le") + b"\x00",
     "not whole UTF-16 text (byte 12 of 13: truncated data); the file was cut short"),
])
def test_an_encoding_error_names_the_byte_where_it_is(tmp_path, data, message):
    path = tmp_path / "offsets.txt"
    path.write_bytes(data)
    with pytest.raises(CaptureError, match=re.escape(message)):
        import_files([str(path)], cluster="c1", snapshot_id="s1", captured_at=AT)


@pytest.mark.parametrize(("pack", "name", "unpack"), [
    (gzip.compress, "gzip", "gunzip"), (lzma.compress, "xz", "unxz"),
    (bz2.compress, "bzip2", "bunzip2")])
def test_a_compressed_file_is_said_to_be_one(tmp_path, pack, name, unpack):
    """A gzipped output was 'not UTF-8 text (byte 0x8b on line 1)', told to use iconv."""
    text = (DATA / "kcg_offsets.txt").read_bytes()
    path = tmp_path / "offsets.txt.gz"
    path.write_bytes(pack(text))
    with pytest.raises(CaptureError, match=re.escape(
            f"{path} is {name}-compressed, not text: {unpack} it first")):
        import_files([str(path)], cluster="c1", snapshot_id="s1", captured_at=AT)


def test_consumer_connection_4_9_2_layout_reads_as_the_newer_one():
    """Up to RocketMQ 4.9.2 consumerConnection prints numbered rows without headers and its
    first subscription row on the "Below is subscription:" line: it was an unrecognised
    file, and with --format its clients were rejects and that subscription lost."""
    old = run("topicRoute_TopicOrder.json", "v4_9_2/consumerConnection_OrderGroup.txt",
              "consumerProgress_OrderGroup.txt")
    new = run("topicRoute_TopicOrder.json", "consumerConnection_OrderGroup.txt",
              "consumerProgress_OrderGroup.txt")
    for table in ("members", "observed", "offsets", "queues"):
        assert frame(old, table).equals(frame(new, table)), table
    assert frame(old, "rejects").empty and old.warnings == new.warnings
    assert set(frame(old, "members").topic) == {"TopicOrder", "%RETRY%OrderGroup"}


LONG_BROKER = "broker-a-prod-shanghai-az1-rmq-001"  # 34 characters


def test_a_broker_name_cut_at_32_is_read_as_the_route_broker_it_begins():
    """consumerProgress and topicStatus print a broker name's first 32 characters: its
    queues were doubled (offsets on the cut name, readability on the route's), its holders
    on queues the audit never recomputed, and the audit reported false drift."""
    long_files = ["longbroker/topicRoute_TopicOrder.json", "longbroker/topicStatus_TopicOrder.txt",
                  "consumerConnection_OrderGroup.txt",
                  "longbroker/consumerProgress_OrderGroup.txt"]
    snap = run(*long_files)
    plain = run(*rocket_files("consumerProgress_OrderGroup.txt"))
    whole = {"broker-a": LONG_BROKER, "broker-b": "broker-b"}
    for table in ("queues", "offsets", "observed"):
        keys = ["topic", "broker_name", "queue_id"]
        expected = frame(plain, table).assign(broker_name=lambda f: f.broker_name.map(whole))
        assert frame(snap, table).sort_values(keys, ignore_index=True).equals(
            expected.sort_values(keys, ignore_index=True)), table
    assert drift_rows(recomputed(snap), frame(snap, "observed")).empty
    assert frame(snap, "rejects").empty
    # the %RETRY% topic has no route: its cut name is read as the one broker routes give
    assert [w for w in snap.warnings if "cut" in w] == [
        f"topic %RETRY%OrderGroup: broker name {LONG_BROKER[:32]} is 32 characters, where "
        f"consumerProgress and topicStatus cut longer names; read as {LONG_BROKER}, the one "
        "broker of the route files it begins (the topic has no route file)"]


def test_a_cut_broker_name_several_brokers_begin_or_no_route_names_is_said(tmp_path):
    route = (DATA / "longbroker" / "topicRoute_TopicOrder.json").read_text()
    twin = tmp_path / "topicRoute_TopicOrder.json"
    twin.write_text(route.replace('"broker-b"', f'"{LONG_BROKER[:-1]}2"'))
    progress = str(DATA / "longbroker" / "consumerProgress_OrderGroup.txt")
    connection = str(DATA / "consumerConnection_OrderGroup.txt")
    cut = LONG_BROKER[:32]
    for files, said in (
            ([str(twin)], f"and it begins brokers {LONG_BROKER} and {LONG_BROKER[:-1]}2 of "
             "the routes: which one it is is unknown, so its queues, offsets and holders "
             "are written under the cut name, the readings of queues both brokers number "
             "alike taken as one queue's"),
            ([], "it may be cut (add the topic's topicRoute file, whose whole broker names "
             "it is matched to)")):
        snap = import_files([*files, connection, progress], cluster="c1", snapshot_id="s1",
                            captured_at=AT)
        assert f"topic TopicOrder: broker name {cut} is 32 characters, where consumerProgress "\
               f"and topicStatus cut longer names{',' if files else ':'} {said}" \
               in snap.warnings
        assert set(frame(snap, "offsets").broker_name) == {cut, "broker-b"}


def test_a_broker_of_exactly_32_characters_that_begins_a_longer_one_is_said():
    """A broker named with exactly 32 characters is printed whole, and a longer one that
    begins with it prints the same: az-1's and az-10's queues were taken for az-1's (its
    max offsets from az-10's readings) with no word of the cut, and a topic without a
    route had a queue of the 32-character broker renamed to the longer one."""
    az = "rmq-broker-prod-cn-shanghai-az-1"
    snap = run(*(f"cutbroker_az/{f}" for f in ("topicRoute_TopicOrder.json",
                                                "consumerConnection_OrderGroup.txt",
                                                "consumerProgress_OrderGroup.txt")))
    assert (f"topic TopicOrder: broker name {az} is 32 characters, where consumerProgress "
            f"and topicStatus cut longer names, and it begins brokers {az} and {az}0 of the "
            "routes: which one it is is unknown") in " ".join(snap.warnings)
    exact = "broker-a-prod-shanghai-az1-rmq-0"
    snap = run(*(f"cutbroker_exact32/{f}" for f in ("topicRoute_TopicOrder.json",
                                                     "topicRoute_TopicPay.json",
                                                     "consumerConnection_OrderGroup.txt",
                                                     "consumerProgress_OrderGroup.txt")))
    retry = frame(snap, "offsets")[lambda f: f.topic.str.startswith("%RETRY%")]
    assert set(retry.broker_name) == {exact}
    assert any(f"broker name {exact} is 32 characters" in w and f"{exact}01" in w
               for w in snap.warnings)
