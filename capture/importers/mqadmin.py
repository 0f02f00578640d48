"""RocketMQ `mqadmin` output: topicRoute (JSON), topicStatus, consumerConnection,
consumerProgress (with `-s true`: the client that holds each queue), and consumerStatus
running-info files (text `formatString` layout, or the object-keyed JSON).

The tools do not print the topic (topicRoute, topicStatus) or group (consumerConnection,
consumerProgress) they were asked about: the file name says it, `topicRoute_<topic>.json`,
`consumerProgress_<group>.txt` (see `state.name_from_file`). consumerStatus writes one file
per client named by the client id; its properties name the group.
"""

from __future__ import annotations

import re
from typing import Any

from capture.importers.state import ImportState, QueueKey, name_from_file

PERM_READ = 4
RETRY_PREFIX = "%RETRY%"
# AllocateMessageQueueStrategy class → the name the client logs (SPEC §3)
STRATEGIES = {
    "AllocateMessageQueueAveragely": "AVG",
    "AllocateMessageQueueAveragelyByCircle": "AVG_BY_CIRCLE",
    "AllocateMessageQueueConsistentHash": "CONSISTENT_HASH",
    "AllocateMessageQueueByConfig": "CONFIG",
    "AllocateMessageQueueByMachineRoom": "MACHINE_ROOM",
    "AllocateMachineRoomNearby": "MACHINE_ROOM_NEARBY",
}
SPEC_NAMES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONFIG", "MACHINE_ROOM")


def strategy_name(value: str) -> str | None:
    """`org.apache...AllocateMessageQueueAveragely@1b2c3d` (a toString) or a logged name
    (`AVG`) → the SPEC name; None when unknown."""
    value = value.strip()
    if value in SPEC_NAMES or value.startswith("MACHINE_ROOM_NEARBY-"):
        return value
    cls = value.split("@")[0].rsplit(".", 1)[-1]
    return STRATEGIES.get(cls)


# ---------------------------------------------------------------- topicRoute / topicStatus
def import_topic_route(state: ImportState, path: str, data: Any) -> None:
    """TopicRouteData: readable queue ids 0..readQueueNums-1 per broker (perm & 4)."""
    topic = name_from_file(path, ("topicRoute", "route", "topic"), "topic")
    zones = {b.get("brokerName"): b.get("zoneName") for b in data.get("brokerDatas") or []
             if isinstance(b, dict)}
    routes = state.routes.setdefault(topic, [])
    for i, q in enumerate(data.get("queueDatas") or []):
        try:
            broker, read, perm = str(q["brokerName"]), int(q["readQueueNums"]), int(q["perm"])
        except (KeyError, TypeError, ValueError) as exc:
            state.snapshot.reject(path, None, f"queueDatas[{i}]: missing or bad {exc}", str(q))
            continue
        routes.append((broker, read, perm, zones.get(broker)))


TOPIC_STATUS_HEADER = re.compile(r"^#Broker Name\s+#QID\s+#Min Offset\s+#Max Offset")


def import_topic_status(state: ImportState, path: str, text: str) -> None:
    topic = name_from_file(path, ("topicStatus", "status"), "topic")
    header = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("Topic Put TPS:"):
            continue
        if TOPIC_STATUS_HEADER.match(line):
            header = True
            continue
        parts = line.split()
        if not header or len(parts) < 4:
            state.snapshot.reject(path, number, "not a topicStatus row", line)
            continue
        try:
            broker, qid, max_offset = parts[0], int(parts[1]), int(parts[3])
        except ValueError:
            state.snapshot.reject(path, number, "QID / Max Offset is not a number", line)
            continue
        state.max_offset[(topic, broker, qid)] = max_offset


# ------------------------------------------------------------------- consumerConnection
def import_consumer_connection(state: ImportState, path: str, text: str) -> None:
    group_name = name_from_file(path, ("consumerConnection", "connection"), "group")
    group = state.rocket_group(group_name)
    section = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#ClientId"):
            section = "clients"
        elif stripped.startswith("Below is subscription"):
            section = None
        elif stripped.startswith("#Topic"):
            section = "subscription"
        elif ":" in stripped and stripped.split(":", 1)[0] in (
                "ConsumeType", "MessageModel", "ConsumeFromWhere"):
            key, value = (s.strip() for s in stripped.split(":", 1))
            if key == "MessageModel":
                group.message_model = value or None
            section = None
        elif section == "clients":
            parts = stripped.split()
            if len(parts) < 2 or "@" not in parts[0]:
                state.snapshot.reject(path, number, "not a #ClientId #ClientAddr row", line)
                continue
            group.client(parts[0]).addr = parts[1]
        elif section == "subscription":
            group.subscription.add(stripped.split()[0])
        else:
            state.snapshot.reject(path, number, "unexpected line in consumerConnection", line)
    if not group.clients:
        state.snapshot.warn(f"{path}: group {group_name} has no connected clients")


# --------------------------------------------------------------------- consumerProgress
PROGRESS_FOOTERS = ("Consume TPS:", "Consume Diff Total:", "Diff Total:",
                    "Consume Inflight Total:")


def import_consumer_progress(state: ImportState, path: str, text: str) -> None:
    """Rows `#Topic #Broker Name #QID #Broker Offset #Consumer Offset [#Client IP] #Diff
    [#Inflight] #LastTime`; LastTime holds a space, so it is the rest of the line."""
    lines = text.splitlines()
    try:
        group_name = name_from_file(path, ("consumerProgress", "progress"), "group")
    except Exception:
        retry = {ln.split()[0][len(RETRY_PREFIX):] for ln in lines
                 if ln.startswith(RETRY_PREFIX)}
        if len(retry) != 1:
            raise
        group_name = retry.pop()
        state.snapshot.warn(f"{path}: group {group_name} taken from its %RETRY% topic")
    group = state.rocket_group(group_name)
    cols: list[str] | None = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith(PROGRESS_FOOTERS):
            continue
        if stripped.startswith("#Topic"):
            cols = re.findall(r"#[A-Za-z]+(?: [A-Za-z]+)?", stripped)
            continue
        if cols is None:
            state.snapshot.reject(path, number, "row before the consumerProgress header", line)
            continue
        fixed = len(cols) - 1  # everything but #LastTime
        parts = stripped.split(None, fixed)
        if len(parts) < fixed:
            state.snapshot.reject(path, number, f"expected {len(cols)} columns", line)
            continue
        row = dict(zip(cols, parts, strict=False))
        try:
            key: QueueKey = (row["#Topic"], row["#Broker Name"], int(row["#QID"]))
            broker_offset = int(row["#Broker Offset"])
            consumer_offset = int(row["#Consumer Offset"])
        except (KeyError, ValueError):
            state.snapshot.reject(path, number, "QID / offsets are not numbers", line)
            continue
        if len(key[0]) in (32, 64):
            state.snapshot.warn(f"{path}: topic {key[0]} is exactly {len(key[0])} characters: "
                                "mqadmin cuts longer names there, it may be truncated")
        group.broker_offset[key] = broker_offset
        group.consumer_offset[key] = consumer_offset
        ip = row.get("#Client IP")
        if ip is not None and ip not in ("N/A", "NA", "null"):
            state.progress_ips.append((group_name, key, ip, path, number))


def resolve_progress_ips(state: ImportState) -> None:
    """consumerProgress prints the holder's IP (client id cut at '@', or the connection's
    address); map it back to one client id through consumerConnection."""
    for group_name, key, ip, path, number in state.progress_ips:
        group = state.rocket_group(group_name)
        matches = sorted(cid for cid, c in group.clients.items()
                         if cid.split("@")[0] == ip or (c.addr or "").rsplit(":", 1)[0] == ip)
        if len(matches) == 1:
            group.holders.setdefault(key, (matches[0], "mqadmin-consumerProgress"))
        elif not matches:
            state.snapshot.reject(path, number, f"client IP {ip} matches no client of group "
                                  f"{group_name} (add its consumerConnection file)")
        else:
            state.snapshot.warn(f"group {group_name}: clients {', '.join(matches)} share IP "
                                f"{ip}; consumerProgress cannot tell which holds its queues "
                                "(consumerStatus files can)")
            state.snapshot.reject(path, number, f"client IP {ip} is shared by "
                                  f"{', '.join(matches)}: holder ambiguous")


# ------------------------------------------------------- consumerStatus running info
SECTION = re.compile(r"^#([A-Za-z &]+)#$")


def import_running_info_text(state: ImportState, path: str, text: str,
                             client_id: str | None) -> None:
    """A consumerStatus file (`ConsumerRunningInfo.formatString`)."""
    props: dict[str, str] = {}
    subs: list[str] = []
    held: dict[QueueKey, int | None] = {}
    section = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if m := SECTION.match(stripped):
            section = m.group(1)
            continue
        if section == "Consumer Properties":
            key, sep, value = line.partition(":")
            if sep:
                props[key.strip()] = value.strip()
            else:
                state.snapshot.reject(path, number, "property line without ':'", line)
        elif section == "Consumer Subscription":
            m2 = re.match(r"^\d+\s+Topic:\s+(\S+)", stripped)
            if m2:
                subs.append(m2.group(1))
            else:
                state.snapshot.reject(path, number, "not a subscription line", line)
        elif section == "Consumer Offset":
            if stripped.startswith("#Topic"):
                continue
            parts = stripped.split()
            try:
                held[(parts[0], parts[1], int(parts[2]))] = int(parts[3])
            except (IndexError, ValueError):
                state.snapshot.reject(path, number, "not a #Topic #Broker Name #QID "
                                      "#Consumer Offset row", line)
        elif section == "Consumer MQ Detail":
            if stripped.startswith("#Topic"):
                continue
            parts = stripped.split()
            try:
                held.setdefault((parts[0], parts[1], int(parts[2])), None)
            except (IndexError, ValueError):
                state.snapshot.reject(path, number, "not a Consumer MQ Detail row", line)
    apply_running_info(state, path, client_id, props, subs, held)


def import_running_info_json(state: ImportState, path: str, data: Any,
                             client_id: str | None) -> None:
    """ConsumerRunningInfo as JSON (mqTable keyed by MessageQueue objects)."""
    from capture.importers.rocketmq_json import message_queue

    props = {str(k): str(v) for k, v in (data.get("properties") or {}).items()}
    subs = [str(s.get("topic")) for s in data.get("subscriptionSet") or []
            if isinstance(s, dict) and s.get("topic")]
    held: dict[QueueKey, int | None] = {}
    for key, info in (data.get("mqTable") or {}).items():
        mq = message_queue(key)
        if mq is None:
            state.snapshot.reject(path, None, "mqTable key is not a MessageQueue", str(key))
            continue
        offset = info.get("commitOffset") if isinstance(info, dict) else None
        held[mq] = int(offset) if isinstance(offset, int) else None
    apply_running_info(state, path, client_id, props, subs, held)


def apply_running_info(state: ImportState, path: str, client_id: str | None,
                       props: dict[str, str], subs: list[str],
                       held: dict[QueueKey, int | None]) -> None:
    group_name = props.get("consumerGroup")
    if not group_name:
        state.snapshot.reject(path, None, "running info without a consumerGroup property")
        return
    if not client_id:
        ip, instance = props.get("clientIP"), props.get("instanceName")
        if not (ip and instance):
            state.snapshot.reject(path, None, "cannot tell the client id (name the file by "
                                  "the client id, as consumerStatus does)")
            return
        client_id = f"{ip}@{instance}"
        state.snapshot.warn(f"{path}: client id {client_id} built from clientIP@instanceName")
    group = state.rocket_group(group_name)
    client = group.client(client_id)
    client.subscriptions = set(subs)
    client.message_model = props.get("messageModel") or client.message_model
    raw_strategy = props.get("allocateMessageQueueStrategy")
    if raw_strategy:
        client.strategy = strategy_name(raw_strategy)
        if client.strategy is None:
            state.snapshot.reject(path, None, f"unknown allocateMessageQueueStrategy "
                                  f"{raw_strategy!r}; the client is written with AVG")
        elif client.strategy == "MACHINE_ROOM_NEARBY":
            state.snapshot.warn(f"{path}: AllocateMachineRoomNearby's inner strategy is not "
                                "in the running info; written as MACHINE_ROOM_NEARBY-AVG")
            client.strategy = "MACHINE_ROOM_NEARBY-AVG"
    client.held.update(held)
