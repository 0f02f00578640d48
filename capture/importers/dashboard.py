"""rocketmq-dashboard REST responses, saved as files: `{status, data, errMsg}` wrappers of
queryTopicByConsumer, consumerConnection, consumerRunningInfo and topic/route.

As with mqadmin, the group (queryTopicByConsumer, consumerConnection) or topic (route) the
request named is not in the response: the file name carries it
(`queryTopicByConsumer_<group>.json`); consumerRunningInfo files are named by client id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capture.importers import mqadmin
from capture.importers.state import ImportState, name_from_file


def unwrap(state: ImportState, path: str, doc: Any) -> Any | None:
    """The `data` of an ok response; a failed one (status != 0) becomes a rejects row."""
    if doc.get("status", 0) != 0:
        state.snapshot.reject(path, None, f"dashboard answered status {doc.get('status')}: "
                              f"{doc.get('errMsg')}")
        return None
    return doc.get("data")


def import_query_topic_by_consumer(state: ImportState, path: str, data: Any) -> None:
    group_name = name_from_file(path, ("queryTopicByConsumer", "topicByConsumer"), "group")
    group = state.rocket_group(group_name)
    topics = data if isinstance(data, list) else list((data or {}).values())
    for i, info in enumerate(topics):
        topic = info.get("topic") if isinstance(info, dict) else None
        for j, q in enumerate((info or {}).get("queueStatInfoList") or []):
            try:
                key = (str(q.get("topic") or topic), str(q["brokerName"]), int(q["queueId"]))
                if key[0] == "None":
                    raise KeyError("topic")
                group.broker_offset[key] = int(q["brokerOffset"])
                group.consumer_offset[key] = int(q["consumerOffset"])
            except (KeyError, TypeError, ValueError) as exc:
                state.snapshot.reject(path, None, f"data[{i}].queueStatInfoList[{j}]: missing "
                                      f"or bad {exc}", str(q))
                continue
            holder = q.get("clientInfo")
            if holder:
                group.holders[key] = (str(holder), "dashboard-queryTopicByConsumer")


def import_consumer_connection(state: ImportState, path: str, data: Any) -> None:
    group_name = name_from_file(path, ("consumerConnection", "connection"), "group")
    group = state.rocket_group(group_name)
    for i, conn in enumerate(data.get("connectionSet") or []):
        cid = conn.get("clientId") if isinstance(conn, dict) else None
        if not cid:
            state.snapshot.reject(path, None, f"connectionSet[{i}] has no clientId", str(conn))
            continue
        group.client(str(cid)).addr = conn.get("clientAddr")
    group.subscription.update(str(t) for t in (data.get("subscriptionTable") or {}))
    group.message_model = data.get("messageModel") or group.message_model


def import_consumer_running_info(state: ImportState, path: str, data: Any) -> None:
    stem = Path(path).name.rsplit(".json", 1)[0]
    client_id = None
    for prefix in ("consumerRunningInfo_", "consumerRunningInfo-"):
        if stem.startswith(prefix):
            client_id = stem[len(prefix):]
    mqadmin.import_running_info_json(state, path, data, client_id)


def import_topic_route(state: ImportState, path: str, data: Any) -> None:
    mqadmin.import_topic_route(state, path, data)
