"""Which tool printed a file, from its content (where that is unambiguous)."""

from __future__ import annotations

from typing import Any

KAFKA = ("kafka-offsets", "kafka-members", "kafka-state")
MQADMIN = ("mqadmin-topicRoute", "mqadmin-topicStatus", "mqadmin-consumerConnection",
           "mqadmin-consumerProgress", "mqadmin-consumerStatus", "rocketmq-runningInfo-json")
DASHBOARD = ("dashboard-queryTopicByConsumer", "dashboard-consumerConnection",
             "dashboard-consumerRunningInfo", "dashboard-topicRoute")
FORMATS = (*KAFKA, *MQADMIN, *DASHBOARD)


def detect_json(doc: Any) -> str | None:
    if isinstance(doc, dict) and "status" in doc and ("data" in doc or "errMsg" in doc):
        data = doc.get("data")
        if isinstance(data, list) and (not data or "queueStatInfoList" in (data[0] or {})):
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


def detect_text(text: str) -> str | None:
    """The first known header within the first lines decides (a stray line before it, e.g.
    a log line, becomes a reject of the importer)."""
    for line in text.splitlines()[:20]:
        s = line.strip()
        if not s:
            continue
        if s.startswith("GROUP "):
            tokens = s.split()
            if "PARTITION" in tokens:
                return "kafka-offsets"
            if "#PARTITIONS" in tokens:
                return "kafka-members"
            if "ASSIGNMENT-STRATEGY" in tokens:
                return "kafka-state"
            return None
        if s.startswith("#Topic") and "#Broker Offset" in s and "#Consumer Offset" in s:
            return "mqadmin-consumerProgress"
        if s.startswith("#Broker Name") and "#Max Offset" in s:
            return "mqadmin-topicStatus"
        if s.startswith("#ClientId") and "#ClientAddr" in s:
            return "mqadmin-consumerConnection"
        if s == "#Consumer Properties#":
            return "mqadmin-consumerStatus"
    return None
