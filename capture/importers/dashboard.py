"""rocketmq-dashboard REST responses, saved as files: `{status, data, errMsg}` wrappers of
queryTopicByConsumer, consumerConnection, consumerRunningInfo and topic/route.

As with mqadmin, the group (queryTopicByConsumer, consumerConnection) or topic (route) the
request named is not in the response: the file name carries it
(`queryTopicByConsumer_<group>.json`); consumerRunningInfo files are named by client id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capture.errors import CaptureError
from capture.importers import mqadmin
from capture.importers.detect import detect_json
from capture.importers.rocketmq_json import raw_text
from capture.importers.state import COMMANDS, ImportState, QueueKey, name_from_file
from capture.importers.values import offset_value, queue_id_value


def unwrap(state: ImportState, path: str, doc: Any, kind: str) -> Any | None:
    """The `data` of an ok response; a failed one (status != 0), or one without data,
    becomes a rejects row. A document that is no `{status, data}` wrapper is the wrong
    file (exit 2)."""
    if not isinstance(doc, dict) or "status" not in doc or not ("data" in doc
                                                                 or "errMsg" in doc):
        found = detect_json(doc)
        hint = f" (it reads as {found}: use --format {found})" if found else ""
        has = (f"an object with keys {', '.join(map(str, doc)) or 'none'}"
               if isinstance(doc, dict)
               else mqadmin.json_type(doc))
        raise CaptureError(f"{path}: format {kind} needs a rocketmq-dashboard response "
                           f"{{status, data, errMsg}}; the document is {has}{hint}")
    if doc["status"] != 0:
        state.snapshot.reject(path, None, f"dashboard answered status {doc.get('status')}: "
                              f"{doc.get('errMsg')}", raw_text(doc))
        return None
    if doc.get("data") is None:
        state.snapshot.reject(path, None, "the dashboard answered with no data (errMsg: "
                              f"{doc.get('errMsg')}): nothing of this file is imported",
                              raw_text(doc))
        return None
    return doc["data"]


def import_query_topic_by_consumer(state: ImportState, path: str, data: Any) -> None:
    group_name = name_from_file(path, COMMANDS["queryTopicByConsumer"], "group")
    group = state.rocket_group(group_name)
    if isinstance(data, dict):
        topics = list(data.values())
    elif isinstance(data, list):
        topics = data
    else:
        raise CaptureError(f"{path}: data is {mqadmin.json_type(data)}, expected the "
                           "group's topics (an array)")
    if not topics:
        state.snapshot.warn(f"{path}: the dashboard lists no topic for group {group_name}")
    for i, info in enumerate(topics):
        queues = info.get("queueStatInfoList") if isinstance(info, dict) else None
        if not isinstance(queues, list):
            state.snapshot.reject(path, None, f"data[{i}] is not a topic with a "
                                  "queueStatInfoList array", raw_text(info))
            continue
        for j, q in enumerate(queues):
            try:
                key, broker_offset, consumer_offset, holder = _queue_stat(q, info.get("topic"))
            except ValueError as exc:
                state.snapshot.reject(path, None, f"data[{i}].queueStatInfoList[{j}]: {exc}",
                                      raw_text(q))
                continue
            mqadmin.record_offsets(state, group_name, key, broker_offset, consumer_offset,
                                   f"{path} data[{i}].queueStatInfoList[{j}]")
            if holder:
                group.holders.setdefault(key, set()).add(
                    (holder, "dashboard-queryTopicByConsumer"))


def _queue_stat(q: Any, topic: Any) -> tuple[QueueKey, int, int, str | None]:
    """One queueStatInfoList entry; ValueError saying what is wrong with it."""
    q = mqadmin.json_record(q)
    if q.get("topic"):
        topic = q["topic"]
    if not isinstance(topic, str) or not topic:
        raise ValueError(f"topic {topic!r} is not a name")
    holder = q.get("clientInfo")
    if holder is not None and not isinstance(holder, str):
        raise ValueError(f"clientInfo {holder!r} is not a client id")
    key = (topic, mqadmin.text_field(q, "brokerName"),
           queue_id_value(q.get("queueId"), "queueId"))
    return (key, offset_value(q.get("brokerOffset"), "brokerOffset"),
            offset_value(q.get("consumerOffset"), "consumerOffset"), holder)


def import_consumer_connection(state: ImportState, path: str, data: Any) -> None:
    group_name = name_from_file(path, COMMANDS["consumerConnection"], "group")
    data = mqadmin.document(path, data, "ConsumerConnection")
    subscription = mqadmin.json_object(path, data, "subscriptionTable")
    group = state.rocket_group(group_name)
    group.connection = True
    for i, conn in enumerate(mqadmin.json_list(path, data, "connectionSet")):
        try:
            conn = mqadmin.json_record(conn)
            cid, addr = mqadmin.text_field(conn, "clientId"), conn.get("clientAddr")
            if addr is not None and not isinstance(addr, str):
                raise ValueError(f"clientAddr {addr!r} is not an address")
        except ValueError as exc:
            state.snapshot.reject(path, None, f"connectionSet[{i}]: {exc}", raw_text(conn))
            continue
        group.connected(cid, addr)
    if not any(c.listed for c in group.clients.values()):
        state.snapshot.warn(f"{path}: group {group_name} has no connected clients")
    for topic in subscription:
        if isinstance(topic, str) and topic:
            group.subscription.add(topic)
        else:
            state.snapshot.reject(path, None, f"subscriptionTable key {topic!r} is not a "
                                  "topic", raw_text(topic))
    model = data.get("messageModel")
    if model is not None and not isinstance(model, str):
        state.snapshot.reject(path, None, f"messageModel {model!r} is not a name", raw_text(model))
        model = None
    group.message_model = model or group.message_model


def import_consumer_running_info(state: ImportState, path: str, data: Any) -> None:
    stem = Path(path).name.rsplit(".json", 1)[0]
    client_id = None
    for prefix in ("consumerRunningInfo_", "consumerRunningInfo-"):
        if stem.startswith(prefix):
            client_id = stem[len(prefix):]
    mqadmin.import_running_info_json(state, path, data, client_id)


def import_topic_route(state: ImportState, path: str, data: Any) -> None:
    # named `route_<topic>.json` (docs/capture.md), as the dashboard's request is
    mqadmin.import_topic_route(state, path, data, ("route", "topicRoute", "topic"))
