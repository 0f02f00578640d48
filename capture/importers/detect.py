"""Which tool printed a file, from its content (where that is unambiguous)."""

from __future__ import annotations

import re
from typing import Any

from capture.importers.kafka_consumer_groups import STATE_LINE, header_kind

KAFKA = ("kafka-offsets", "kafka-members", "kafka-state")
MQADMIN = ("mqadmin-topicRoute", "mqadmin-topicStatus", "mqadmin-consumerConnection",
           "mqadmin-consumerProgress", "mqadmin-consumerStatus", "rocketmq-runningInfo-json")
DASHBOARD = ("dashboard-queryTopicByConsumer", "dashboard-consumerConnection",
             "dashboard-consumerRunningInfo", "dashboard-topicRoute")
FORMATS = (*KAFKA, *MQADMIN, *DASHBOARD)
# consumerConnection up to RocketMQ 4.9.2 prints no header: each client is a numbered row
# `%03d  clientId addr language version` (the #ClientId header came with 4.9.3)
OLD_CONNECTION_ROW = re.compile(r"^\d{3,}\s+(\S+@\S*)\s+(\S+:\d+)\s+\S+\s+\S+$")


def detect_json(doc: Any) -> str | None:
    if isinstance(doc, dict) and "status" in doc and ("data" in doc or "errMsg" in doc):
        data = doc.get("data")
        if isinstance(data, list) and (not data or any(
                isinstance(d, dict) and "queueStatInfoList" in d for d in data)):
            return "dashboard-queryTopicByConsumer"
        if isinstance(data, dict):
            if "connectionSet" in data:
                return "dashboard-consumerConnection"
            if "queueDatas" in data:
                return "dashboard-topicRoute"
            if "mqTable" in data or "properties" in data:
                return "dashboard-consumerRunningInfo"
        return "dashboard-queryTopicByConsumer" if data is None else None
    if isinstance(doc, dict):
        if "queueDatas" in doc:
            return "mqadmin-topicRoute"
        if "mqTable" in doc or "subscriptionSet" in doc:
            return "rocketmq-runningInfo-json"
    return None


def kafka_notices(text: str) -> list[str]:
    """The lines of a file that holds nothing but kafka-consumer-groups.sh's group notices
    (an inactive group's `--members` or `--state` is just "Consumer group 'g' has no
    active members."; an unknown group's is an "Error: ..." line); [] for any other."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines if lines and all(STATE_LINE.match(line) for line in lines) else []


def detect_text(text: str) -> str | None:
    """The first known header within the first lines decides (a stray line before it, e.g.
    a log line, becomes a reject of the importer)."""
    for line in text.splitlines()[:20]:
        s = line.strip()
        if not s:
            continue
        kind = header_kind(s)  # with a GROUP column (Kafka 2.3+) or before it
        if kind is not None:
            return None if kind == "unknown" else f"kafka-{kind}"
        if s.startswith("#Topic") and "#Broker Offset" in s and "#Consumer Offset" in s:
            return "mqadmin-consumerProgress"
        if s.startswith("#Broker Name") and "#Max Offset" in s:
            return "mqadmin-topicStatus"
        if (s.startswith("#ClientId") and "#ClientAddr" in s) or OLD_CONNECTION_ROW.match(s) \
                or s.startswith("Below is subscription:"):
            return "mqadmin-consumerConnection"
        if s == "#Consumer Properties#":
            return "mqadmin-consumerStatus"
    notices = kafka_notices(text)
    if notices and not kafka_errors(notices):
        return "kafka-members"  # the notices are warnings, whichever layout it would be
    return None


def kafka_errors(notices: list[str]) -> list[str]:
    """The notices that say the tool failed or found no such group."""
    return [n for n in notices if n.startswith("Error:") or n.endswith("does not exist.")]


# `org.apache.rocketmq.client.exception.MQBrokerException: CODE: 206 DESC: ...`, as mqadmin
# prints a failed command's stack trace (into the file with `2>&1`)
JAVA_EXCEPTION = re.compile(r"^(?:Caused by: )?(?:[A-Za-z_$][\w$]*\.)+[\w$]*(?:Exception|Error)"
                            r"(?:: .*)?$")


# the broker's answer for a group no client is connected to (ResponseCode
# CONSUMER_NOT_ONLINE): a state of the group, as Kafka's "has no active members" is
NOT_ONLINE = re.compile(r"\bCODE:\s*206\b")


def not_online(exception: str | None) -> bool:
    """Whether mqadmin failed because the group has no client online (CODE 206)."""
    return exception is not None and NOT_ONLINE.search(exception) is not None


def java_exception(text: str) -> str | None:
    """The innermost exception of a Java stack trace in the file (its last `Caused by`,
    else its first exception line), or None."""
    found = [line.strip() for line in text.splitlines() if JAVA_EXCEPTION.match(line.strip())]
    if not found:
        return None
    causes = [line for line in found if line.startswith("Caused by: ")]
    return (causes[-1] if causes else found[0]).removeprefix("Caused by: ")


# what each format is, as a message names it
SAID = {
    "kafka-offsets": "`kafka-consumer-groups.sh --describe --offsets` output",
    "kafka-members": "`kafka-consumer-groups.sh --describe --members` output",
    "kafka-state": "`kafka-consumer-groups.sh --describe --state` output",
    "mqadmin-topicRoute": "`mqadmin topicRoute` output (JSON)",
    "mqadmin-topicStatus": "`mqadmin topicStatus` output",
    "mqadmin-consumerConnection": "`mqadmin consumerConnection` output",
    "mqadmin-consumerProgress": "`mqadmin consumerProgress` output",
    "mqadmin-consumerStatus": "a client's `mqadmin consumerStatus` text file",
    "rocketmq-runningInfo-json": "a client's running info in RocketMQ's JSON",
    "dashboard-queryTopicByConsumer": "a rocketmq-dashboard queryTopicByConsumer response",
    "dashboard-consumerConnection": "a rocketmq-dashboard consumerConnection response",
    "dashboard-consumerRunningInfo": "a rocketmq-dashboard consumerRunningInfo response",
    "dashboard-topicRoute": "a rocketmq-dashboard topic route response",
}
# the formats read as text, not JSON
TEXT_FORMATS = ("mqadmin-topicStatus", "mqadmin-consumerConnection",
                "mqadmin-consumerProgress", "mqadmin-consumerStatus")


def content_kind(doc: Any, text: str) -> str | None:
    """The format a file's content shows beyond doubt, or None: a dashboard response that
    failed or holds no data looks alike whichever request it answered."""
    if doc is None:
        return detect_text(text)
    if isinstance(doc, dict) and "status" in doc and (doc["status"] != 0
                                                      or doc.get("data") is None):
        return None
    return detect_json(doc)


def wrong_format(path: str, fmt: str, doc: Any, text: str) -> str | None:
    """Why a file is not of the --format given, when its content says so: it reads as
    another format (a kafka-consumer-groups layout other than the kafka-* given is the
    importer's to say), or it is JSON where the format is text. None when it may be."""
    found = content_kind(doc, text)
    fits = found is None or found == fmt or (found.startswith("kafka-")
                                             and fmt.startswith("kafka-"))
    if fits and (doc is None or fmt not in TEXT_FORMATS):
        return None
    this = f"{path}: the file does not look like {SAID[fmt]} (--format {fmt})"
    if found is None or found == fmt:  # JSON no format is
        return f"{this}: it is a JSON document, not that tool's text"
    return (f"{this}: it reads as {SAID[found]}. Drop --format (each file's format is then "
            f"told from its content), or pass --format {found}")
