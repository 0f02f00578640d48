"""RocketMQ mqadmin and rocketmq-dashboard files that are cut, of the wrong shape, or that
disagree with each other: a rejects row, a warning or exit 2, never a traceback."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from capture.errors import CaptureError
from capture.importers import import_files

DATA = Path(__file__).parent.parent / "data" / "capture"
AT = datetime(2026, 11, 23, 10, 16, tzinfo=UTC)
STATUS_HEADER = ("#Broker Name                      #QID  #Min Offset           #Max Offset     "
                 "        #Last Updated")
PROGRESS_HEADER = ("#Topic        #Broker Name  #QID  #Broker Offset  #Consumer Offset  "
                   "#Client IP  #Diff  #LastTime")
CONNECTION = (DATA / "consumerConnection_OrderGroup.txt").read_text()
# what consumerProgress prints after its rows: a file without it was cut
PROGRESS_TOTALS = "\n\nConsume TPS: 0.00\nConsume Diff Total: 0\n"


def status_row(broker: str, qid: int, max_offset: int, time: str = "2026-11-23 10:15:40,123"):
    return f"{broker:<32}  {qid:<4}  {0:<20}  {max_offset:<20}    {time}"


def progress_row(broker: str, qid: int, broker_offset: int, consumer_offset: int, ip: str):
    return (f"TopicOrder  {broker}  {qid}  {broker_offset}  {consumer_offset}  {ip}  "
            f"{broker_offset - consumer_offset}  2026-11-23 10:15:42")


def write(tmp_path: Path, name: str, text: str) -> str:
    """`text` as file `name`; a consumerProgress with the totals the tool prints after its
    rows (`cut` writes one without)."""
    if "consumerProgress" in name and "Diff Total:" not in text:
        text += PROGRESS_TOTALS
    return cut(tmp_path, name, text)


def cut(tmp_path: Path, name: str, text: str) -> str:
    """`text` as file `name`, as it is."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def run(*paths: str, fmt: str | None = None):
    return import_files(list(paths), cluster="c1", snapshot_id="s1", captured_at=AT, fmt=fmt)


def rows(snap, table: str, *cols: str) -> list[tuple]:
    """The table's rows as tuples, null as None (pyarrow, not pandas' NaN)."""
    table = snap.table(table).select(list(cols)).to_pylist()
    return [tuple(r[c] for c in cols) for r in table]


def rejects(snap) -> list[tuple]:
    return rows(snap, "rejects", "file", "line", "reason", "raw")


# 1 ------------------------------------------------------------------------------------
def test_a_topic_status_row_cut_inside_max_offset_is_a_reject(tmp_path):
    cut = status_row("broker-b", 3, 1030).split("1030")[0] + "10"  # the file ends there
    assert cut.split() == ["broker-b", "3", "0", "10"]
    empty_time = status_row("broker-b", 2, 0, time="")  # a queue never written: no time
    # the same, copied from a terminal that trimmed the padding: 0 cannot be a cut number
    trimmed = status_row("broker-b", 4, 0, time="").rstrip()
    path = write(tmp_path, "topicStatus_T.txt", "\n".join(
        [STATUS_HEADER, status_row("broker-b", 1, 500), empty_time, trimmed, cut]) + "\n")
    snap = run(path)
    assert rows(snap, "queues", "broker_name", "queue_id", "max_offset") == [
        ("broker-b", 1, 500), ("broker-b", 2, 0), ("broker-b", 4, 0)]
    assert rejects(snap) == [(path, 5, "row cut short: no #Last Updated column after "
                              "#Max Offset", cut)]


def test_an_expired_queue_trimmed_by_a_terminal_is_whole_when_a_row_follows(tmp_path):
    """The tool prints no time for a queue whose last message expired; a terminal's copy
    trims the padding. A file cut short loses its end: only its last row can be cut."""
    expired = [status_row("broker-b", q, 800 + q, time="").rstrip() for q in range(3)]
    path = write(tmp_path, "topicStatus_T.txt", "\n".join([STATUS_HEADER, *expired]) + "\n")
    snap = run(path)
    assert rows(snap, "queues", "queue_id", "max_offset") == [(0, 800), (1, 801)]
    assert rejects(snap) == [(path, 4, "row cut short: no #Last Updated column after "
                              "#Max Offset", expired[2])]


# 2 ------------------------------------------------------------------------------------
def test_bad_dashboard_queue_records_are_rejects_of_that_record(tmp_path):
    path = write(tmp_path, "queryTopicByConsumer_G.json", (
        '{"status":0,"errMsg":null,"data":[{"topic":"T","queueStatInfoList":[null,'
        '{"brokerName":"b","queueId":0,"brokerOffset":1e400,"consumerOffset":5},'
        '{"brokerName":"b","queueId":1,"brokerOffset":10.9,"consumerOffset":5},'
        '{"brokerName":null,"queueId":2,"brokerOffset":10,"consumerOffset":5},'
        '{"brokerName":"b","queueId":3,"brokerOffset":10,"consumerOffset":5}]}, 7]}'))
    snap = run(path)
    assert rows(snap, "offsets", "topic", "broker_name", "queue_id", "committed_offset") == [
        ("T", "b", 3, 5)]
    got = [(line, reason, raw) for _, line, reason, raw in rejects(snap)]
    assert [r[0] for r in got] == [None] * 5
    assert got[0][1:] == ("data[0].queueStatInfoList[0]: not an object: null", "null")
    assert got[1][1] == "data[0].queueStatInfoList[1]: brokerOffset inf is not a whole number"
    assert got[2][1] == "data[0].queueStatInfoList[2]: brokerOffset 10.9 is not a whole number"
    assert got[3][1] == "data[0].queueStatInfoList[3]: brokerName None is not a name"
    assert got[4][1:] == ("data[1] is not a topic with a queueStatInfoList array", "7")


def test_a_route_queue_count_that_is_no_whole_number_is_a_reject(tmp_path):
    path = write(tmp_path, "topicRoute_T.json", (
        '{"brokerDatas":[{"brokerName":"a","zoneName":"z1"},null],"queueDatas":['
        '{"brokerName":"a","perm":6,"readQueueNums":1e400},'
        '{"brokerName":"a","perm":"rw","readQueueNums":1},'
        '{"brokerName":"b","perm":6,"readQueueNums":2000000000},'
        '{"brokerName":"a","perm":6,"readQueueNums":1}]}'))
    snap = run(path)
    assert rows(snap, "queues", "broker_name", "queue_id", "readable", "broker_room") == [
        ("a", 0, True, "z1")]
    assert [reason for _, _, reason, _ in rejects(snap)] == [
        "brokerDatas[1]: not an object: null",
        "queueDatas[0]: readQueueNums inf is not a whole number",
        "queueDatas[1]: perm 'rw' is not a whole number",
        "queueDatas[2]: readQueueNums 2000000000 is not a queue count (0..65536)"]


@pytest.mark.parametrize(("name", "text", "fmt", "message"), [
    ("queryTopicByConsumer_G.json", '{"status":0,"data":[5]}', None, "unrecognised file"),
    ("topicRoute_T.json", '[{"brokerName":"b"}]', "mqadmin-topicRoute",
     "format mqadmin-topicRoute needs a JSON object, the file holds an array"),
    ("topicRoute_T.json", '{"queueDatas":{"brokerName":"b"}}', None,
     "queueDatas is an object, expected an array"),
    ("consumerConnection_G.json", '{"status":0,"data":[1]}', "dashboard-consumerConnection",
     "expected a JSON object (ConsumerConnection), found an array"),
    ("queryTopicByConsumer_G.json", '{"status":0,"data":"x"}',
     "dashboard-queryTopicByConsumer", "data is a string, expected the group's topics"),
    ("consumerRunningInfo_1.2.3.4@1.json", '{"status":0,"data":{"mqTable":[]}}', None,
     "mqTable is an array, expected an object"),
])
def test_a_document_of_the_wrong_shape_is_exit_2(tmp_path, name, text, fmt, message):
    path = write(tmp_path, name, text)
    with pytest.raises(CaptureError, match=f"^{re.escape(path)}: .*{re.escape(message)}"):
        run(path, fmt=fmt)


# 3 ------------------------------------------------------------------------------------
def test_two_readings_of_a_queue_keep_the_larger_offsets_whatever_the_order(tmp_path):
    route = str(DATA / "topicRoute_TopicOrder.json")
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", CONNECTION)
    first = write(tmp_path, "a/consumerProgress_OrderGroup.txt", "\n".join([
        PROGRESS_HEADER, progress_row("broker-a", 0, 1000, 990, "10.0.1.22"),
        progress_row("broker-a", 1, 1010, 1000, "10.0.1.21")]))
    second = write(tmp_path, "b/consumerProgress_OrderGroup.txt", "\n".join([
        PROGRESS_HEADER, progress_row("broker-a", 0, 1005, 999, "10.0.1.21"),
        progress_row("broker-a", 1, 1010, 1000, "10.0.1.21")]))
    results = []
    for a, b in itertools.permutations([first, second]):
        snap = run(route, conn, a, b)
        results.append((rows(snap, "offsets", "broker_name", "queue_id", "committed_offset"),
                        rows(snap, "observed", "broker_name", "queue_id", "client_id"),
                        sorted(w for w in snap.warnings if "OrderGroup" in w)))
    assert results[0] == results[1]
    offsets, observed, warnings = results[0]
    assert offsets == [("broker-a", 0, 999), ("broker-a", 1, 1000)]
    assert observed == [("broker-a", 0, "10.0.1.21@21345"), ("broker-a", 1, "10.0.1.21@21345")]
    assert warnings == [
        "group OrderGroup: queue TopicOrder broker-a:0 is held by 10.0.1.21@21345 and "
        "10.0.1.22@22456 in different readings (a rebalance between them?); 10.0.1.21@21345 "
        "is written to observed",
        f"group OrderGroup: queue TopicOrder broker-a:0 read twice, broker offset 1000 "
        f"({first} line 2) and 1005 ({second} line 2); the larger (a later reading) is kept",
        f"group OrderGroup: queue TopicOrder broker-a:0 read twice, consumer offset 990 "
        f"({first} line 2) and 999 ({second} line 2); the larger (a later reading) is "
        "kept"]  # queue 1, read alike, is silent


def test_three_readings_of_a_queue_are_one_warning_whatever_the_order(tmp_path):
    paths = [write(tmp_path, f"{i}/topicStatus_T.txt",
                   "\n".join([STATUS_HEADER, status_row("a", 0, offset)]) + "\n")
             for i, offset in enumerate((500, 700, 600))]
    said = {tuple(run(*order).warnings) for order in itertools.permutations(paths)}
    read = [f"{offset} ({paths[i]} line 2)" for i, offset in ((0, 500), (2, 600), (1, 700))]
    assert said == {(f"topic T: queue T a:0 read with 3 different max offsets, {read[0]}, "
                     f"{read[1]} and {read[2]}; the largest (the latest reading) is kept",
                     "topic T: 1 queue(s) of its topicStatus have no topicRoute of their "
                     "broker (add topicRoute_T.json): written with readable unknown")}


# 4 ------------------------------------------------------------------------------------
STATUS_99 = """#Consumer Properties#
consumerGroup                           : OrderGroup
messageModel                            : CLUSTERING

#Consumer Subscription#
001 Topic: TopicOrder                               ClassFilter: false    SubExpression: *

#Consumer Offset#
#Topic                            #Broker Name                      #QID  #Consumer Offset
TopicOrder                        broker-a                          0     995


#Consumer MQ Detail#
#Topic                            #Broker Name                      #QID  #ProcessQueueInfo
TopicOrder                        broker-a                          0     ProcessQueueInfo []


#Consumer RT&TPS#
#Topic                            #Pull RT      #Pull TPS    #Consume RT #ConsumeOK TPS
"""


@pytest.mark.parametrize("cut", ["995", "99", "broker-", "#Consumer MQ Detail#",
                                 "#Consumer RT&TPS"])
def test_a_consumer_status_cut_short_is_not_used(tmp_path, cut):
    """A consumerStatus cut inside its last #Consumer Offset# value (a copy that stopped)
    was read: the shortened offset was written as the client's consumed offset, and the
    queues after the cut were missing from what it holds."""
    text = STATUS_99[:STATUS_99.index(cut) + len(cut)]
    status = write(tmp_path, "10.0.1.21@21345", text)
    snap = run(str(DATA / "topicRoute_TopicOrder.json"), status)
    for table in ("offsets", "observed"):
        assert rows(snap, table, "queue_id") == [], table
    last = text.splitlines()[-1]
    # (a line cut short is also a reject of its own section's, before this one)
    assert rejects(snap)[-1] == (status, len(text.splitlines()), (
        "the file ends before #Consumer RT&TPS#, which every consumerStatus prints after the "
        "queues: it was cut, so the queues its client holds are unknown (its last value may "
        "be cut short too); the file is not used"), last)


@pytest.mark.parametrize("kept", [3, 7, 10])
def test_a_consumer_connection_cut_at_a_line_end_is_not_used(tmp_path, kept):
    """Cut after 3 lines (the subscriptions gone: members with no topic), 7 (%RETRY%'s
    subscription gone) or 10 (MessageModel gone: a BROADCASTING group read as
    CLUSTERING): each was imported whole, exit 0, no word."""
    lines = CONNECTION.splitlines()[:kept]
    path = cut(tmp_path, "consumerConnection_OrderGroup.txt", "\n".join(lines) + "\n")
    snap = run(str(DATA / "topicRoute_TopicOrder.json"), path)
    assert rows(snap, "members", "client_id") == []
    assert rejects(snap) == [(path, kept, (
        "the file ends before its ConsumeFromWhere line, which the command prints last, "
        "after the clients, the subscriptions and the message model: it was cut, so what "
        "followed is unknown; the file is not used"), lines[-1])]


@pytest.mark.parametrize("name", ["consumerProgress_OrderGroup.txt",
                                  "v4_8/consumerProgress_OrderGroup.txt"])
def test_a_consumer_progress_cut_at_a_line_end_is_not_used(tmp_path, name):
    """Cut after 6 lines: broker-b's queues went from the offsets and, without a route
    file, from the queues table, with exit 0 and no word. Whole files of either layout
    (4.8's "Diff Total:", later "Consume Diff Total:") are read as before."""
    whole = (DATA / name).read_text()
    assert len(rows(run(write(tmp_path / "whole", "consumerProgress_OrderGroup.txt", whole)),
                    "offsets", "queue_id")) >= 8
    lines = whole.splitlines()[:6]
    snap = run(cut(tmp_path, "consumerProgress_OrderGroup.txt", "\n".join(lines) + "\n"))
    assert rows(snap, "offsets", "queue_id") == [] and rows(snap, "queues", "queue_id") == []
    assert [r[1:3] for r in rejects(snap)] == [(6, (
        "the file ends before its Consume Diff Total line, which the command prints after "
        "the queues' rows: it was cut, so what followed is unknown; the file is not used"))]


@pytest.mark.parametrize(("java", "strategy", "param", "what"), [
    ("AllocateMessageQueueByConfig", "CONFIG", "queues", "configured queue list"),
    ("AllocateMessageQueueByMachineRoom", "MACHINE_ROOM", "rooms",
     "consume-from machine rooms")])
def test_a_strategy_whose_parameter_no_tool_prints_is_a_warning(tmp_path, java, strategy,
                                                                param, what):
    """CONFIG and MACHINE_ROOM clients were written without their parameter and no word
    at run time: the audit had them claim nothing, a false idle client and unheld queues."""
    text = STATUS_99.replace("messageModel", f"allocateMessageQueueStrategy            : "
                             f"org.apache.rocketmq.client.consumer.rebalance.{java}@1f\n"
                             "messageModel", 1)
    status = write(tmp_path, "10.0.1.21@21345", text)
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", CONNECTION)
    snap = run(str(DATA / "topicRoute_TopicOrder.json"), conn, status)
    assert ("10.0.1.21@21345", strategy) in rows(snap, "members", "client_id", "strategy")
    assert (f"{status}: client 10.0.1.21@21345 of group OrderGroup runs "
            f"{java}, whose {what} the "
            f"running info does not hold: it is written without strategy_params.{param}, "
            "and the audit has it claim no queue until its members rows are given one"
            ) in snap.warnings


def test_a_running_info_client_missing_from_consumer_connection_is_no_member(tmp_path):
    status = write(tmp_path, "1795430000000/10.0.1.99@99999", STATUS_99)
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", CONNECTION)
    snap = run(str(DATA / "topicRoute_TopicOrder.json"), conn, status)
    assert sorted(set(rows(snap, "members", "client_id"))) == [
        ("10.0.1.21@21345",), ("10.0.1.22@22456",)]
    assert rows(snap, "observed", "queue_id", "client_id", "source") == [
        (0, "10.0.1.99@99999", "mqadmin-consumerStatus")]
    assert ("group OrderGroup: client 10.0.1.99@99999 (from its running info) is not in "
            "consumerConnection: it left or joined between the two commands; its held queues "
            "are written to observed, it is not written as a member") in snap.warnings
    # without a consumerConnection of the group, the running info is the member list
    alone = run(str(DATA / "topicRoute_TopicOrder.json"), status)
    assert set(rows(alone, "members", "client_id")) == {("10.0.1.99@99999",)}
    assert not any("not in consumerConnection" in w for w in alone.warnings)


def test_a_progress_ip_is_resolved_among_the_connection_clients_first(tmp_path):
    """A client restarted on the same host: its old id only in a running info file. The
    broker's consumerProgress IP names the client its consumerConnection lists."""
    old = write(tmp_path, "1795430000000/10.0.1.21@99999", STATUS_99)
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", CONNECTION)
    progress = write(tmp_path, "consumerProgress_OrderGroup.txt", "\n".join([
        PROGRESS_HEADER, progress_row("broker-a", 0, 1000, 995, "10.0.1.21"),
        progress_row("broker-a", 1, 1010, 1000, "10.0.1.21")]))
    snap = run(str(DATA / "topicRoute_TopicOrder.json"), conn, old, progress)
    assert rows(snap, "observed", "queue_id", "client_id", "source") == [
        (0, "10.0.1.21@99999", "mqadmin-consumerStatus"),
        (1, "10.0.1.21@21345", "mqadmin-consumerProgress")]
    assert rejects(snap) == []
    assert not any("share IP" in w for w in snap.warnings)


# 5 ------------------------------------------------------------------------------------
def test_log_lines_before_the_first_consumer_status_section_are_rejects(tmp_path):
    log = ["RocketMQLog:WARN No appenders could be found for logger (io.netty).",
           "RocketMQLog:WARN Please initialize the logger system properly."]
    status = write(tmp_path, "10.0.1.21@21345", "\n".join(log) + "\n" + STATUS_99)
    snap = run(status)
    reason = "line outside any consumerStatus section (before #Consumer Properties#)"
    assert rejects(snap) == [(status, 1, reason, log[0]), (status, 2, reason, log[1])]
    assert rows(snap, "observed", "queue_id", "client_id") == [(0, "10.0.1.21@21345")]


# 6 ------------------------------------------------------------------------------------
def test_topic_status_rows_without_a_route_are_queues(tmp_path):
    status = write(tmp_path, "topicStatus_T.txt", "\n".join(
        [STATUS_HEADER, status_row("broker-a", 0, 1000)]) + "\n")
    snap = run(status)
    assert rows(snap, "queues", "topic", "broker_name", "queue_id", "readable",
                "max_offset") == [("T", "broker-a", 0, None, 1000)]
    assert snap.warnings == ["topic T: 1 queue(s) of its topicStatus have no topicRoute of "
                             "their broker (add topicRoute_T.json): written with readable "
                             "unknown"]


def test_topic_status_queues_beyond_read_queue_nums_are_write_only(tmp_path):
    route = write(tmp_path, "topicRoute_T.json", (
        '{"brokerDatas":[{"brokerName":"a","zoneName":"z1"}],"queueDatas":['
        '{"brokerName":"a","perm":6,"readQueueNums":1,"writeQueueNums":2}]}'))
    status = write(tmp_path, "topicStatus_T.txt", "\n".join(
        [STATUS_HEADER, status_row("a", 0, 10), status_row("a", 1, 20)]) + "\n")
    snap = run(route, status)
    assert rows(snap, "queues", "queue_id", "readable", "broker_room", "max_offset") == [
        (0, True, "z1", 10), (1, False, "z1", 20)]
    assert snap.warnings == []


def route_json(*entries: tuple[str, int, int], zones: dict[str, str] | None = None) -> str:
    brokers = ",".join(f'{{"brokerName":"{b}","zoneName":"{z}"}}'
                       for b, z in (zones or {}).items())
    queues = ",".join(f'{{"brokerName":"{b}","perm":{perm},"readQueueNums":{read}}}'
                      for b, read, perm in entries)
    return f'{{"brokerDatas":[{brokers}],"queueDatas":[{queues}]}}'


def test_two_routes_of_a_broker_merge_as_the_client_merges_whatever_the_file_order(tmp_path):
    """Two captures of one topic's route that disagree: a queue either counts readable is
    readable (the client adds each readable entry's queues to one set), the same in any
    order, and the difference is said."""
    wide = write(tmp_path, "a/topicRoute_T.json",
                 route_json(("a", 4, 6), ("b", 1, 6), zones={"a": "z2"}))
    cut = write(tmp_path, "b/topicRoute_T.json",
                route_json(("a", 6, 2), ("b", 1, 6), zones={"a": "z1"}))
    expected = [("a", q, q < 4, "z1") for q in range(6)] + [("b", 0, True, None)]
    warning = ("topic T: the routes of broker a differ (readQueueNums 4 perm 6 zone z2; "
               "readQueueNums 6 perm 2 zone z1); as the client merges one route's entries, a "
               "queue any readable one counts is readable: 4 queue(s) written readable, 2 not,"
               " zone z1 (the first by name)")
    for order in ((wide, cut), (cut, wide)):
        snap = run(*order)
        assert rows(snap, "queues", "broker_name", "queue_id", "readable",
                    "broker_room") == expected
        assert snap.warnings == [warning]


def test_a_route_listing_a_broker_twice_counts_its_readable_entry(tmp_path):
    """One document, the broker listed readable then write-only: its queues stay readable,
    as the client reads it (a write-only entry adds no queue and removes none)."""
    path = write(tmp_path, "topicRoute_T.json", route_json(("a", 2, 6), ("a", 2, 2)))
    snap = run(path)
    assert rows(snap, "queues", "queue_id", "readable") == [(0, True), (1, True)]
    assert snap.warnings == [
        "topic T: the routes of broker a differ (readQueueNums 2 perm 2; readQueueNums 2 "
        "perm 6); as the client merges one route's entries, a queue any readable one counts "
        "is readable: 2 queue(s) written readable, 0 not"]


def test_a_static_topic_route_is_said_to_be_allocated_otherwise(tmp_path):
    """RocketMQ 5's static topics: the clients allocate logical queues the importer does
    not build; the queues are written, with a warning, never silently."""
    path = write(tmp_path, "topicRoute_T.json", route_json(("a", 2, 6))[:-1]
                 + ',"topicQueueMappingByBroker":{"a":{"topic":"T","totalQueues":2}}}')
    snap = run(path)
    assert rows(snap, "queues", "queue_id", "readable") == [(0, True), (1, True)]
    assert snap.warnings == [
        f"{path}: topic T is a static topic (its route has a topicQueueMappingByBroker): "
        "its clients allocate its logical queues, which are not imported; the queues written "
        "are the brokers' own, so its recomputed assignment is not the clients'"]
    plain = run(write(tmp_path, "b/topicRoute_T.json", route_json(("a", 2, 6))[:-1]
                      + ',"topicQueueMappingByBroker":{}}'))
    assert plain.warnings == []


def test_a_route_imported_twice_is_no_difference(tmp_path):
    text = route_json(("a", 2, 6), zones={"a": "z1"})
    snap = run(write(tmp_path, "a/topicRoute_T.json", text),
               write(tmp_path, "b/topicRoute_T.json", text))
    assert rows(snap, "queues", "queue_id", "readable", "broker_room") == [
        (0, True, "z1"), (1, True, "z1")]
    assert snap.warnings == []


# 7 ------------------------------------------------------------------------------------
def test_a_dashboard_answer_without_data_is_a_reject(tmp_path):
    path = write(tmp_path, "consumerConnection_G.json", '{"status":0,"data":null,"errMsg":null}')
    snap = run(path)
    assert rejects(snap) == [(path, None, "the dashboard answered with no data (errMsg: None):"
                              " nothing of this file is imported",
                              '{"status": 0, "data": null, "errMsg": null}')]


def test_a_route_forced_into_the_other_routes_format_is_exit_2(tmp_path):
    mqadmin = write(tmp_path, "topicRoute_TopicOrder.json",
                    (DATA / "topicRoute_TopicOrder.json").read_text())
    with pytest.raises(CaptureError, match=r"does not look like a rocketmq-dashboard topic "
                                           r"route response .* pass --format "
                                           r"mqadmin-topicRoute$"):
        run(mqadmin, fmt="dashboard-topicRoute")
    dashboard = str(DATA / "dashboard" / "route_TopicOrder.json")
    with pytest.raises(CaptureError, match=r"does not look like `mqadmin topicRoute` output "
                                           r"\(JSON\) .* pass --format dashboard-topicRoute$"):
        run(dashboard, fmt="mqadmin-topicRoute")


# 8 ------------------------------------------------------------------------------------
def test_a_truncated_json_file_with_a_format_names_the_parse_error(tmp_path):
    path = write(tmp_path, "route_T.json", '{"status":0,"data":{"queueDatas":[{"brokerN')
    with pytest.raises(CaptureError, match=r"route_T\.json: not valid JSON \(bad string"):
        run(path, fmt="dashboard-topicRoute")


def test_progress_ip_rejects_carry_the_line(tmp_path):
    unknown = progress_row("broker-a", 0, 1000, 990, "10.9.9.9")
    progress = write(tmp_path, "consumerProgress_OrderGroup.txt",
                     f"{PROGRESS_HEADER}\n{unknown}\n")
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", CONNECTION)
    snap = run(conn, progress)
    assert rejects(snap) == [(progress, 2, "client IP 10.9.9.9 matches no client of group "
                              "OrderGroup (add its consumerConnection file)", unknown)]


def test_running_info_entries_that_are_not_objects_are_rejects_naming_their_type(tmp_path):
    """A subscriptionSet entry or a ProcessQueueInfo of the wrong JSON type is a reject
    saying what it is; the rest of the running info is read."""
    path = write(tmp_path, "status/10.0.1.22@22456.json", (
        '{"mqTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"commitOffset":7},'
        '{"brokerName":"b","queueId":1,"topic":"T"}:[1]},'
        '"properties":{"consumerGroup":"G","messageModel":"CLUSTERING"},'
        '"subscriptionSet":[{"topic":"T"},"T2"]}'))
    snap = run(path)
    assert [reason for _, _, reason, _ in rejects(snap)] == [
        "subscriptionSet[1]: not an object: a string",
        "mqTable T b:1: its ProcessQueueInfo is not an object: an array"]
    assert rows(snap, "members", "client_id", "topic") == [("10.0.1.22@22456", "T")]


def test_a_negative_broker_side_offset_is_a_reject(tmp_path):
    """The broker prints 0 for a queue or group with no offset (its consumeStats clamps
    -1 to 0): a negative max, broker or consumer offset is a garbled line, not an offset
    the audit would reject later with the rest of its offsets row."""
    status = write(tmp_path, "topicStatus_T.txt", "\n".join(
        [STATUS_HEADER, status_row("broker-b", 0, 500), status_row("broker-b", 1, -5)]))
    negative = progress_row("broker-a", 1, 1010, -1, "10.0.1.21")
    progress = write(tmp_path, "consumerProgress_OrderGroup.txt", "\n".join(
        [PROGRESS_HEADER, progress_row("broker-a", 0, 1000, 990, "10.0.1.21"), negative]))
    dashboard = write(tmp_path, "queryTopicByConsumer_G.json", (
        '{"status":0,"data":[{"topic":"T","queueStatInfoList":['
        '{"brokerName":"b","queueId":0,"brokerOffset":-3,"consumerOffset":0}]}]}'))
    snap = run(status, progress, dashboard)
    assert rows(snap, "queues", "topic", "broker_name", "queue_id", "max_offset") == [
        ("T", "broker-b", 0, 500), ("TopicOrder", "broker-a", 0, 1000)]
    assert rows(snap, "offsets", "broker_name", "queue_id", "committed_offset") == [
        ("broker-a", 0, 990)]
    assert [(line, reason) for _, line, reason, _ in rejects(snap)
            if "client IP" not in reason] == [
        (3, "#Max Offset -5 is negative"), (3, "#Consumer Offset -1 is negative"),
        (None, "data[0].queueStatInfoList[0]: brokerOffset -3 is negative")]


def test_a_negative_commit_offset_in_running_info_is_an_unknown_consumed_offset(tmp_path):
    """A client's offset store answers -1 (no offset) or -2 (could not read it): the
    queue's consumed offset is unknown (null), its committed offset is kept."""
    info = (DATA / "status" / "10.0.1.22@22456.json").read_text()
    info = info.replace('"commitOffset":1000', '"commitOffset":-1')
    status = write(tmp_path, "status/10.0.1.22@22456.json", info)
    snap = run(str(DATA / "topicRoute_TopicOrder.json"),
               write(tmp_path, "consumerConnection_OrderGroup.txt", CONNECTION),
               str(DATA / "consumerProgress_OrderGroup.txt"), status)
    offsets = rows(snap, "offsets", "broker_name", "queue_id", "committed_offset",
                   "consumed_offset")
    assert [r for r in offsets if r[0] == "broker-b" and r[1] < 2] == [
        ("broker-b", 0, 990, None), ("broker-b", 1, 1000, 1008)]
    assert rejects(snap) == []
    assert (f"{status}: client 10.0.1.22@22456 holds 1 queue(s) with a negative commit "
            "offset, the client's 'no offset known' (TopicOrder broker-b:0): their consumed "
            "offset is left unknown") in snap.warnings


def test_a_consumer_progress_header_without_an_offset_column_rejects_its_rows(tmp_path):
    header = PROGRESS_HEADER.replace("#Broker Offset  ", "")
    row = "TopicOrder  broker-a  0  990  10.0.1.21  10  2026-11-23 10:15:42"
    progress = write(tmp_path, "consumerProgress_OrderGroup.txt", f"{header}\n{row}")
    snap = run(progress, fmt="mqadmin-consumerProgress")
    assert [(line, reason) for _, line, reason, _ in rejects(snap)] == [
        (2, "the header has no #Broker Offset column")]


# 9 ------------------------------------------------------------------------------------
TWICE = CONNECTION.replace(
    "10.0.1.22@22456                      10.0.1.22:49876",
    "10.0.1.21@21345                      10.0.1.31:40001        JAVA       V4_9_7\n"
    "10.0.1.22@22456                      10.0.1.22:49876")


def test_a_client_id_the_broker_lists_twice_is_two_members_rows(tmp_path):
    """Two processes sharing one id (Docker's `ip@1`): the broker lists the id once per
    connection, and the audit gives it a slot per address (DUPLICATE_CLIENT_ID). Read
    into one member, the capture hid the finding and the audit's cidAll had one slot too
    few. The same file read twice is still one row per address."""
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", TWICE)
    for files in ([conn], [conn, conn]):
        snap = run(*files)
        members = rows(snap, "members", "client_id", "client_addr", "client_host", "topic")
        assert [m[:3] for m in members if m[3] == "TopicOrder"] == [
            ("10.0.1.21@21345", "10.0.1.21:53012", "10.0.1.21"),
            ("10.0.1.21@21345", "10.0.1.31:40001", "10.0.1.31"),
            ("10.0.1.22@22456", "10.0.1.22:49876", "10.0.1.22")]
    dashboard = write(tmp_path, "dashboard/consumerConnection_OrderGroup.json", (
        '{"status":0,"data":{"connectionSet":['
        '{"clientId":"172.17.0.2@1","clientAddr":"10.1.0.6:50002"},'
        '{"clientId":"172.17.0.2@1","clientAddr":"10.1.0.5:50001"}],'
        '"subscriptionTable":{"TopicOrder":{}},"messageModel":"CLUSTERING"}}'))
    assert rows(run(dashboard), "members", "client_id", "client_addr") == [
        ("172.17.0.2@1", "10.1.0.5:50001"), ("172.17.0.2@1", "10.1.0.6:50002")]


def test_a_progress_ip_matches_any_connection_of_a_client(tmp_path):
    conn = write(tmp_path, "consumerConnection_OrderGroup.txt", TWICE)
    progress = write(tmp_path, "consumerProgress_OrderGroup.txt", "\n".join([
        PROGRESS_HEADER, progress_row("broker-a", 0, 1000, 995, "10.0.1.31")]))
    snap = run(conn, progress)
    assert rows(snap, "observed", "queue_id", "client_id") == [(0, "10.0.1.21@21345")]


def test_progress_queues_beyond_read_queue_nums_are_write_only(tmp_path):
    """The broker's consumeStats lists a topic's writeQueueNums queues, the client reads
    the route's readQueueNums: a queue beyond them (a topic mid-resize) was written
    readable (null), so the audit allocated a queue no client sees."""
    route = write(tmp_path, "topicRoute_T.json", (
        '{"brokerDatas":[{"brokerName":"a","zoneName":"z1"}],"queueDatas":['
        '{"brokerName":"a","perm":6,"readQueueNums":1,"writeQueueNums":2}]}'))
    progress = write(tmp_path, "consumerProgress_OrderGroup.txt", "\n".join([
        PROGRESS_HEADER.replace("#Topic        ", "#Topic "),
        progress_row("broker-a", 0, 10, 5, "10.0.1.21").replace("TopicOrder  broker-a", "T a"),
        progress_row("broker-a", 1, 20, 5, "10.0.1.21").replace("TopicOrder  broker-a", "T a"),
        progress_row("broker-a", 0, 7, 7, "10.0.1.21").replace("TopicOrder  broker-a", "U a"),
    ]))
    snap = run(route, progress, write(tmp_path, "consumerConnection_OrderGroup.txt",
                                      CONNECTION))
    assert rows(snap, "queues", "topic", "queue_id", "readable", "broker_room",
                "max_offset") == [("T", 0, True, "z1", 10), ("T", 1, False, "z1", 20),
                                  ("U", 0, None, None, 7)]


@pytest.mark.parametrize(("name", "text", "reason"), [
    ("topicStatus_TopicOrder.txt", f"{STATUS_HEADER}\n{status_row('broker-a', -3, 10)}\n",
     "#QID -3 is negative"),
    ("consumerProgress_OrderGroup.txt",
     f"{PROGRESS_HEADER}\n{progress_row('broker-a', -1, 10, 5, '10.0.1.21')}\n",
     "#QID -1 is negative"),
    ("10.0.1.21@21345", STATUS_99.replace("#Consumer MQ Detail#", "#Consumer Pop Detail#")
     .replace("broker-a                          0     995",
              "broker-a                          -2    995"),
     "not a #Topic #Broker Name #QID #Consumer Offset row (#QID -2 is negative)"),
    ("dashboard/queryTopicByConsumer_OrderGroup.json",
     '{"status":0,"data":[{"topic":"TopicOrder","queueStatInfoList":[{"brokerName":"b",'
     '"queueId":-4,"brokerOffset":1,"consumerOffset":1}]}]}',
     "data[0].queueStatInfoList[0]: queueId -4 is negative"),
])
def test_a_negative_queue_id_is_a_reject(tmp_path, name, text, reason):
    """The queues table's contract is queue_id >= 0: a negative id was written, and the
    audit only refused it later, away from the file and line that held it."""
    snap = run(write(tmp_path, name, text))
    for table in ("queues", "offsets", "observed"):
        assert rows(snap, table, "queue_id") == [], table
    assert [r for _, _, r, _ in rejects(snap)] == [reason]


@pytest.mark.parametrize("name", ["topicRoute_TopicOrder (1).json",
                                  "consumerConnection_OrderGroup.txt.bak"])
def test_a_file_name_giving_no_rocketmq_name_is_exit_2(tmp_path, name):
    """A browser's second download or a backup copy: its name gave the topic
    `TopicOrder (1)` or the group `OrderGroup.txt.bak`, which join nothing."""
    source = DATA / ("topicRoute_TopicOrder.json" if "Route" in name
                     else "consumerConnection_OrderGroup.txt")
    path = write(tmp_path, name, source.read_text())
    what = "topic" if "Route" in name else "group"
    with pytest.raises(CaptureError, match=re.escape(
            f"which is no RocketMQ {what} name (letters, digits, %, |, _ and - only)")):
        run(path)


def old_connection_row(number: int, client_id: str, addr: str) -> str:
    """A client row as consumerConnection printed it up to RocketMQ 4.9.2."""
    return f"{number:03d}  {client_id:<32} {addr:<22} {'JAVA':<8} V4_9_2"


def test_a_4_9_2_consumer_connection_without_subscriptions_or_with_a_stray_line(tmp_path):
    """No subscription row: "ConsumeType:" follows "Below is subscription:" on its line.
    A client id wider than its 32-character column still reads; a line of no layout is a
    reject."""
    long_id = "10.0.1.23@order-service-instance-0042"
    text = "\n".join([old_connection_row(1, "10.0.1.21@21345", "10.0.1.21:53012"),
                      old_connection_row(2, long_id, "10.0.1.23:40001"),
                      "garbage", "", "Below is subscription:ConsumeType: CONSUME_PASSIVELY",
                      "MessageModel: BROADCASTING", "ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET",
                      ""])
    path = write(tmp_path, "consumerConnection_G.txt", text)
    snap = run(path)
    assert rows(snap, "members", "client_id", "topic", "message_model", "client_addr") == [
        ("10.0.1.21@21345", None, "BROADCASTING", "10.0.1.21:53012"),
        (long_id, None, "BROADCASTING", "10.0.1.23:40001")]
    assert rejects(snap) == [(path, 3, "unexpected line in consumerConnection", "garbage")]


ROCKETMQ_LOG = ["RocketMQLog:WARN No appenders could be found for logger "
                "(io.netty.util.internal.InternalThreadLocalMap).",
                "RocketMQLog:WARN Please initialize the logger system properly."]


@pytest.mark.parametrize("fmt", [None, "mqadmin-topicRoute"])
def test_a_topic_route_saved_with_its_log_lines_is_read(tmp_path, fmt):
    """mqadmin's logger without a configuration prints its warnings on stderr: a topicRoute
    saved with `2>&1` opens with them and was an unrecognised file ("needs a JSON file"
    with --format). Each is a reject, as in the text outputs, and the JSON is read."""
    route = (DATA / "topicRoute_TopicOrder.json").read_text()
    path = write(tmp_path, "topicRoute_TopicOrder.json", "\n".join([*ROCKETMQ_LOG, route]))
    snap = run(path, fmt=fmt)
    assert len(rows(snap, "queues", "queue_id")) == 8
    reason = "a log line the tool printed before its JSON (saved with 2>&1)"
    assert rejects(snap) == [(path, 1, reason, ROCKETMQ_LOG[0]),
                             (path, 2, reason, ROCKETMQ_LOG[1])]


def test_a_json_error_after_log_lines_names_the_files_line(tmp_path):
    path = write(tmp_path, "topicRoute_T.json", "\n".join(
        [*ROCKETMQ_LOG, '{"queueDatas":[', '  {"brokerName":"b"', '  "perm":6}]}']))
    with pytest.raises(CaptureError, match="expected ',' or '}' at line 5"):
        run(path)
    other = write(tmp_path, "topicRoute_U.json", "some note\n{}\n")
    with pytest.raises(CaptureError, match="needs a JSON file; its first line is no JSON: "
                       "'some note'"):
        run(other, fmt="mqadmin-topicRoute")


def test_a_pop_group_is_said_not_silently_written_as_client_allocated(tmp_path):
    """ConsumeType CONSUME_POP: the broker hands out the queues, which the members table
    cannot say (no allocation_mode column); it was written as AVG with no warning."""
    path = write(tmp_path, "consumerConnection_PopGroup.txt",
                 CONNECTION.replace("CONSUME_PASSIVELY", "CONSUME_POP"))
    snap = run(path)
    assert len(rows(snap, "members", "client_id")) == 4
    assert f"{path}: group PopGroup is ConsumeType CONSUME_POP: its clients pop, the broker " \
           "hands out its queues (POP mode, a queue shared by design); the capture writes no " \
           "allocation_mode column, so they are written as clients that allocate " \
           "themselves (set allocation_mode POP in the members table to audit them as " \
           "POP): the audit's assignment, findings and drift of this group are not the " \
           "broker's. Its popShareQueueNum is in no file either" in snap.warnings
    assert not [w for w in run(write(tmp_path, "consumerConnection_G.txt", CONNECTION))
                .warnings if "CONSUME_POP" in w]
