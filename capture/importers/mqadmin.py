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
from collections.abc import Callable
from typing import Any, NamedTuple

from capture.errors import CaptureError
from capture.importers.detect import OLD_CONNECTION_ROW, detect_json
from capture.importers.rocketmq_json import message_queue, raw_text
from capture.importers.state import (
    COMMANDS,
    ImportState,
    QueueKey,
    Reading,
    ReadingsWarning,
    RocketGroup,
    name_from_file,
)
from capture.importers.values import offset_value, queue_id_value, whole_number
from capture.words import spoken

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
# strategies whose parameter no admin tool prints (SPEC §3): (strategy_params key, what it is)
UNSAID_PARAMS = {"CONFIG": ("queues", "configured queue list"),
                 "MACHINE_ROOM": ("rooms", "consume-from machine rooms")}


def strategy_name(value: str) -> str | None:
    """`org.apache...AllocateMessageQueueAveragely@1b2c3d` (a toString) or a logged name
    (`AVG`) → the SPEC name; None when unknown."""
    value = value.strip()
    if value in SPEC_NAMES or value.startswith("MACHINE_ROOM_NEARBY-"):
        return value
    return STRATEGIES.get(class_name(value))


def class_name(value: str) -> str:
    """A Java object's toString (`org.apache...AllocateMessageQueueByConfig@1f`) → its
    class's simple name."""
    return value.strip().split("@")[0].rsplit(".", 1)[-1]


# ---------------------------------------------------------------- topicRoute / topicStatus
MAX_QUEUES = 65536  # per broker; more is a garbled number, not a topic (it would fill memory)


def document(path: str, data: Any, what: str) -> dict:
    """The JSON object a format needs; any other JSON value is the wrong file (exit 2)."""
    if not isinstance(data, dict):
        raise CaptureError(f"{path}: expected a JSON object ({what}), found "
                           f"{json_type(data)}")
    return data


def json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def json_list(path: str, data: dict, key: str) -> list:
    """data[key] as a list ([] when absent or null); another type is the wrong file."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise CaptureError(f"{path}: {key} is {json_type(value)}, expected an array")
    return value


def json_object(path: str, data: dict, key: str) -> dict:
    """data[key] as an object ({} when absent or null); another type is the wrong file."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CaptureError(f"{path}: {key} is {json_type(value)}, expected an object")
    return value


def json_record(value: Any, name: str | None = None) -> dict:
    """One entry of a JSON list or map as the object it must be; ValueError saying what it
    is instead (the entry becomes a reject, the rest of the file is read)."""
    if not isinstance(value, dict):
        subject = f"{name} is not" if name else "not"
        raise ValueError(f"{subject} an object: {json_type(value)}")
    return value


def text_field(record: dict, key: str) -> str:
    """A required, non-empty string of a JSON record; ValueError naming it otherwise."""
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} {value!r} is not a name")
    return value


# what a JVM tool prints on stderr before its output, saved with `2>&1`: RocketMQ's own
# logger without a configuration (SysLogger), log4j's and SLF4J's notices
LOG_LINE = re.compile(r"^(RocketMQLog:|log4j:|SLF4J:)")


def log_lines_before_json(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the log lines a JSON output (topicRoute) opens with; [] unless
    every non-blank line before the first one opening with `{` is such a line."""
    logged = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("{"):
            return logged
        if LOG_LINE.match(line.strip()):
            logged.append((number, line))
        elif line.strip():
            return []
    return []


def without_lines(text: str, lines: list[tuple[int, str]]) -> str:
    """`text` with those lines blank, so a JSON error names the file's own line."""
    numbers = {number for number, _ in lines}
    if not numbers:
        return text
    return "\n".join("" if n in numbers else line
                     for n, line in enumerate(text.split("\n"), 1))


def import_topic_route(state: ImportState, path: str, data: Any,
                       prefixes: tuple[str, ...] = COMMANDS["topicRoute"]) -> None:
    """TopicRouteData: readable queue ids 0..readQueueNums-1 per broker (perm & 4).
    `prefixes`: of the file's name, the first the one a message asks for."""
    topic = name_from_file(path, prefixes, "topic")
    data = document(path, data, "TopicRouteData")
    if "queueDatas" not in data:
        found = detect_json(data)
        hint = f"; it reads as {found}: use --format {found}" if found else ""
        raise CaptureError(f"{path}: the document has no queueDatas: not a topicRoute "
                           f"(keys: {', '.join(map(str, data)) or 'none'}{hint})")
    if data.get("topicQueueMappingByBroker"):
        # RocketMQ 5's static topic: its clients allocate logical queues (global ids under a
        # mock broker name) built from this mapping, not the brokers' queues read below
        state.snapshot.warn(f"{path}: topic {topic} is a static topic (its route has a "
                            "topicQueueMappingByBroker): its clients allocate its logical "
                            "queues, which are not imported; the queues written are the "
                            "brokers' own, so its recomputed assignment is not the clients'")
    zones: dict[str, str | None] = {}
    for i, b in enumerate(json_list(path, data, "brokerDatas")):
        try:
            b = json_record(b)
            zone = b.get("zoneName")
            if zone is not None and not isinstance(zone, str):
                raise ValueError(f"zoneName {zone!r} is not a name")
            zones[text_field(b, "brokerName")] = zone
        except ValueError as exc:
            state.snapshot.reject(path, None, f"brokerDatas[{i}]: {exc}", raw_text(b))
    routes = state.routes.setdefault(topic, [])
    for i, q in enumerate(json_list(path, data, "queueDatas")):
        try:
            q = json_record(q)
            broker = text_field(q, "brokerName")
            read = whole_number(q.get("readQueueNums"), "readQueueNums")
            perm = whole_number(q.get("perm"), "perm")
            if not 0 <= read <= MAX_QUEUES:
                raise ValueError(f"readQueueNums {read} is not a queue count (0..{MAX_QUEUES})")
        except ValueError as exc:
            state.snapshot.reject(path, None, f"queueDatas[{i}]: {exc}", raw_text(q))
            continue
        routes.append((broker, read, perm, zones.get(broker)))


class BrokerRoute(NamedTuple):
    """What the topicRoute files say of one (topic, broker): queue ids below `readable` are
    readable, those below `listed` exist; `zone` is the broker's zoneName."""

    readable: int
    listed: int
    zone: str | None


def broker_routes(state: ImportState) -> dict[tuple[str, str], BrokerRoute]:
    """(topic, broker) → BrokerRoute, the queueDatas entries of every route file merged as
    the client merges one route's (MQClientInstance.topicRouteData2TopicSubscribeInfo adds
    each readable entry's queues to a set): a queue is readable when any readable entry
    of its broker counts it. Whatever the order of the entries and files; entries of one
    broker that differ (two captures of a route, or one listing the broker twice) are said
    in a warning."""
    merged: dict[tuple[str, str], BrokerRoute] = {}
    for topic in sorted(state.routes):
        entries: dict[str, set[tuple[int, int, str | None]]] = {}
        for broker, read, perm, zone in state.routes[topic]:
            entries.setdefault(broker, set()).add((read, perm, zone))
        for broker in sorted(entries):
            found = sorted(entries[broker], key=lambda e: (e[0], e[1], e[2] or ""))
            zones = sorted({zone for _, _, zone in found if zone is not None})
            route = BrokerRoute(
                readable=max((read for read, perm, _ in found if perm & PERM_READ), default=0),
                listed=max(read for read, _, _ in found),
                zone=zones[0] if zones else None)
            if len(found) > 1:
                said = "; ".join(f"readQueueNums {read} perm {perm}"
                                 + (f" zone {zone}" if zone is not None else "")
                                 for read, perm, zone in found)
                state.snapshot.warn(
                    f"topic {topic}: the routes of broker {broker} differ ({said}); as the "
                    "client merges one route's entries, a queue any readable one counts is "
                    f"readable: {route.readable} queue(s) written readable, "
                    f"{route.listed - route.readable} not"
                    + (f", zone {route.zone} (the first by name)" if len(zones) > 1 else ""))
            merged[(topic, broker)] = route
    return merged


TOPIC_STATUS_HEADER = re.compile(r"^#Broker Name\s+#QID\s+#Min Offset\s+#Max Offset")


def import_topic_status(state: ImportState, path: str, text: str) -> None:
    """Rows `#Broker Name #QID #Min Offset #Max Offset #Last Updated`. The tool prints an
    empty time for a queue whose last message it cannot date (never written to, or
    expired); a terminal's copy may trim that padding. A row without the time is whole
    when padded to its column, when its max offset is 0, or when a row follows it (a
    file cut short loses its end); the file's last such row may be cut inside #Max
    Offset, a wrong offset, and is a reject."""
    topic = name_from_file(path, COMMANDS["topicStatus"], "topic")
    last_updated = None  # the column of #Last Updated; 0 when the header has none
    lines = text.splitlines()
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("Topic Put TPS:"):
            continue
        if TOPIC_STATUS_HEADER.match(line):
            last_updated = max(line.find("#Last Updated"), 0)
            continue
        parts = line.split()
        if last_updated is None or len(parts) < 4:
            state.snapshot.reject(path, number, "not a topicStatus row", line)
            continue
        # a max offset of 0 cannot be a longer number cut: a queue never written to, whose
        # blank time a terminal's copy may have trimmed with the padding
        if last_updated and len(parts) == 4 and len(line) < last_updated and parts[3] != "0" \
                and number == last:
            state.snapshot.reject(path, number, "row cut short: no #Last Updated column "
                                  "after #Max Offset", line)
            continue
        try:
            qid = queue_id_value(parts[1], "#QID")
            offset_value(parts[2], "#Min Offset")
            max_offset = offset_value(parts[3], "#Max Offset")
        except ValueError as exc:
            state.snapshot.reject(path, number, str(exc), line)
            continue
        key = (topic, parts[0], qid)
        state.keep_larger(state.max_offset, key, max_offset,
                          read_twice(f"topic {topic}", key, "max offset"),
                          where=f"{path} line {number}")


def read_twice(owner: str, key: QueueKey, what: str) -> ReadingsWarning:
    """The warning for a queue read again with another value of one offset."""
    def warning(readings: list[Reading]) -> str:
        values = [str(value) if where is None else f"{value} ({where})"
                  for value, where in readings]
        if len(values) == 2:
            return (f"{owner}: queue {queue_name(key)} read twice, {what} {spoken(values)}; "
                    "the larger (a later reading) is kept")
        return (f"{owner}: queue {queue_name(key)} read with {len(values)} different "
                f"{what}s, {spoken(values)}; the largest (the latest reading) is kept")
    return warning


def queue_name(key: QueueKey) -> str:
    return f"{key[0]} {key[1]}:{key[2]}"


# ------------------------------------------------------------------- consumerConnection
BELOW = "Below is subscription:"
# the subscription rows up to RocketMQ 4.9.2: `%03d  Topic: %-40s SubExpression: %s`
OLD_SUBSCRIPTION_ROW = re.compile(r"^\d+\s+Topic:\s+(\S+)\s+SubExpression:")
GROUP_LINES = ("ConsumeType", "MessageModel", "ConsumeFromWhere")
# the line every consumerConnection (3.x to 5.x) prints last
CONNECTION_LAST = ("ConsumeFromWhere:",)


def cut_before(state: ImportState, path: str, lines: list[str], header: str,
               last: tuple[str, ...], after: str) -> bool:
    """Whether a file with its table's `header` lacks the `last` line its command always
    prints after the table: a file cut at a line's end (a copy, a full disk) parsed as a
    whole one, rows and sections lost without a word. Such a file is one rejects row and
    not used, as a consumerStatus cut before its last section is."""
    if not any(line.strip().startswith(header) for line in lines) or any(
            line.strip().startswith(last) for line in lines):
        return False
    number = max((n for n, line in enumerate(lines, 1) if line.strip()), default=1)
    state.snapshot.reject(path, number, (
        f"the file ends before its {last[-1].rstrip(':')} line, which the command prints "
        f"{after}: it was cut, so what followed is unknown; the file is not used"),
        lines[number - 1] if lines else None)
    return True


def import_consumer_connection(state: ImportState, path: str, text: str) -> None:
    """Both layouts: 4.9.3+ (`#ClientId` and `#Topic` headers) and up to 4.9.2 (numbered
    rows without headers, the first subscription row printed on the "Below is
    subscription:" line, which the tool ends with no line end)."""
    group_name = name_from_file(path, COMMANDS["consumerConnection"], "group")
    group = state.rocket_group(group_name)
    lines = text.splitlines()
    if cut_before(state, path, lines, "#ClientId", CONNECTION_LAST,
                  "last, after the clients, the subscriptions and the message model"):
        return
    group.connection = True
    section: str | None = "start"
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith(BELOW):
            section, stripped = "below", stripped[len(BELOW):].strip()
        if stripped:
            section = connection_line(state, group, section, stripped,
                                      (path, number, line, group_name))
    if not group.clients:
        state.snapshot.warn(f"{path}: group {group_name} has no connected clients")


def connection_line(state: ImportState, group: RocketGroup, section: str | None, stripped: str,
                    where: tuple[str, int, str, str]) -> str | None:
    """One line of a consumerConnection read in `section` (start, clients, below,
    subscription, None after the group's lines); the section the next line is read in."""
    path, number, line, group_name = where
    key, _, value = (s.strip() for s in stripped.partition(":"))
    if stripped.startswith("#ClientId"):
        return "clients"
    if stripped.startswith("#Topic"):
        return "subscription"
    if key in GROUP_LINES:
        group_setting(state, group, key, value, (path, group_name))
        return None
    if section == "clients" or (section == "start" and OLD_CONNECTION_ROW.match(stripped)):
        parts = stripped.split()
        if section == "start":
            parts = parts[1:]  # the row's number
        if len(parts) < 2 or "@" not in parts[0]:
            state.snapshot.reject(path, number, "not a #ClientId #ClientAddr row", line)
        else:
            group.connected(parts[0], parts[1])
    elif section == "subscription":
        group.subscription.add(stripped.split()[0])
    elif section == "below" and (m := OLD_SUBSCRIPTION_ROW.match(stripped)):
        group.subscription.add(m.group(1))
    else:
        state.snapshot.reject(path, number, "unexpected line in consumerConnection", line)
    return section


def group_setting(state: ImportState, group: RocketGroup, key: str, value: str,
                  where: tuple[str, str]) -> None:
    """ConsumeType, MessageModel, ConsumeFromWhere: the group's, as the broker registered
    them from its clients' heartbeats."""
    if key == "MessageModel":
        group.message_model = value or None
    elif key == "ConsumeType" and value == "CONSUME_POP":
        path, group_name = where
        state.snapshot.warn(
            f"{path}: group {group_name} is ConsumeType CONSUME_POP: its clients pop, the "
            "broker hands out its queues (POP mode, a queue shared by design); the capture "
            "writes no allocation_mode column, so they are written as clients that "
            "allocate themselves (set allocation_mode POP in the members table to audit "
            "them as POP): the audit's assignment, findings and drift of this group are not "
            "the broker's. Its popShareQueueNum is in no file either")


# --------------------------------------------------------------------- consumerProgress
PROGRESS_FOOTERS = ("Consume TPS:", "Consume Diff Total:", "Diff Total:",
                    "Consume Inflight Total:")
# the total every consumerProgress prints after its rows: "Diff Total:" up to 4.8,
# "Consume Diff Total:" since
PROGRESS_TOTAL = ("Diff Total:", "Consume Diff Total:")


def import_consumer_progress(state: ImportState, path: str, text: str) -> None:
    """Rows `#Topic #Broker Name #QID #Broker Offset #Consumer Offset [#Client IP] #Diff
    [#Inflight] #LastTime`; LastTime holds a space, so it is the rest of the line."""
    lines = text.splitlines()
    try:
        group_name = name_from_file(path, COMMANDS["consumerProgress"], "group")
    except Exception:
        retry = {ln.split()[0][len(RETRY_PREFIX):] for ln in lines
                 if ln.startswith(RETRY_PREFIX)}
        if len(retry) != 1:
            raise
        group_name = retry.pop()
        state.snapshot.warn(f"{path}: group {group_name} taken from its %RETRY% topic")
    state.rocket_group(group_name)  # a group even when no row is usable
    if cut_before(state, path, lines, "#Topic", PROGRESS_TOTAL, "after the queues' rows"):
        return
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
            key: QueueKey = (row["#Topic"], row["#Broker Name"],
                             queue_id_value(row["#QID"], "#QID"))
            broker_offset = offset_value(row["#Broker Offset"], "#Broker Offset")
            consumer_offset = offset_value(row["#Consumer Offset"], "#Consumer Offset")
        except KeyError as exc:
            state.snapshot.reject(path, number, f"the header has no {exc.args[0]} column", line)
            continue
        except ValueError as exc:
            state.snapshot.reject(path, number, str(exc), line)
            continue
        if len(key[0]) in (32, 64):
            state.snapshot.warn(f"{path}: topic {key[0]} is exactly {len(key[0])} characters: "
                                "mqadmin cuts longer names there, it may be truncated")
        record_offsets(state, group_name, key, broker_offset, consumer_offset,
                       f"{path} line {number}")
        ip = row.get("#Client IP")
        if ip is not None and ip not in ("N/A", "NA", "null"):
            state.progress_ips.append((group_name, key, ip, path, number, line))


def record_offsets(state: ImportState, group_name: str, key: QueueKey, broker_offset: int,
                   consumer_offset: int, where: str) -> None:
    """A queue's offsets; a queue read twice (two files of the group, or a row repeated)
    keeps the larger of each, whatever the order of the files. `where`: the file (and
    line) read, named in the warning when readings differ."""
    group, owner = state.rocket_group(group_name), f"group {group_name}"
    state.keep_larger(group.broker_offset, key, broker_offset,
                      read_twice(owner, key, "broker offset"), where=where)
    state.keep_larger(group.consumer_offset, key, consumer_offset,
                      read_twice(owner, key, "consumer offset"), where=where)


def resolve_progress_ips(state: ImportState) -> None:
    """consumerProgress prints the holder's IP (client id cut at '@', or the connection's
    address); map it back to one client id through consumerConnection. Both come from
    the broker: a client only a running info names (one that left, say a restart on the
    same host) is a candidate only when no client of the consumerConnection has the IP."""
    for group_name, key, ip, path, number, line in state.progress_ips:
        group = state.rocket_group(group_name)
        matches = sorted(cid for cid, c in group.clients.items()
                         if cid.split("@")[0] == ip
                         or any((a or "").rsplit(":", 1)[0] == ip for a in c.addrs))
        listed = [cid for cid in matches if group.clients[cid].listed]
        if group.connection and listed:
            matches = listed
        if len(matches) == 1:
            group.holders.setdefault(key, set()).add((matches[0], "mqadmin-consumerProgress"))
        elif not matches:
            state.snapshot.reject(path, number, f"client IP {ip} matches no client of group "
                                  f"{group_name} (add its consumerConnection file)", line)
        else:
            state.snapshot.warn(f"group {group_name}: clients {', '.join(matches)} share IP "
                                f"{ip}; consumerProgress cannot tell which holds its queues "
                                "(consumerStatus files can)")
            state.snapshot.reject(path, number, f"client IP {ip} is shared by "
                                  f"{', '.join(matches)}: holder ambiguous", line)


# ------------------------------------------------------------- broker names cut at 32
# consumerProgress and topicStatus print UtilAll.frontStringAtLeast(brokerName, 32): the
# first 32 characters; topicRoute, the running infos and the dashboard print it whole
CUT_BROKER = 32


def restore_cut_brokers(state: ImportState) -> None:
    """Read a cut broker name as the one broker of the routes it begins, once every file
    is read: left cut, its queues doubled the route's (offsets on one name, readability
    on the other) and its holders were held on no queue the audit recomputes."""
    renames = cut_broker_renames(state)
    if not renames:
        return

    def whole(key: QueueKey) -> QueueKey:
        return key[0], renames.get((key[0], key[1] or ""), key[1]), key[2]

    rekey(state, state.max_offset, whole, lambda key: f"topic {key[0]}", "max offset")
    for name, group in state.rocket.items():
        for readings, what in ((group.broker_offset, "broker offset"),
                               (group.consumer_offset, "consumer offset")):
            rekey(state, readings, whole, lambda _, name=name: f"group {name}", what)
        for key in [k for k in group.holders if whole(k) != k]:
            group.holders.setdefault(whole(key), set()).update(group.holders.pop(key))
    state.progress_ips[:] = [(g, whole(key), *rest) for g, key, *rest in state.progress_ips]


def rekey(state: ImportState, readings: dict[QueueKey, int],
          whole: Callable[[QueueKey], QueueKey], owner: Callable[[QueueKey], str],
          what: str) -> None:
    """Move the readings of cut names to the whole ones; a queue then read under both
    names keeps the larger value, with the warning of a queue read twice."""
    for key in [k for k in readings if whole(k) != k]:
        value, new = readings.pop(key), whole(key)
        state.keep_larger(readings, new, value,
                          read_twice(owner(key), new, what))


def cut_broker_names(state: ImportState) -> set[tuple[str, str]]:
    """(topic, broker) of every queue read whose broker name may be cut: 32 characters
    (a broker of exactly 32 is printed whole, and may be cut from a longer one too)."""
    keys = [*state.max_offset, *(p[1] for p in state.progress_ips)]
    for group in state.rocket.values():
        keys += [*group.broker_offset, *group.consumer_offset, *group.holders]
    return {(t, b) for t, b, _ in keys if b is not None and len(b) == CUT_BROKER}


def cut_broker_renames(state: ImportState) -> dict[tuple[str, str], str]:
    """(topic, cut name) → the broker it was cut from: the one broker of the topic's routes
    the name begins (of every route's brokers, for a topic without one: a %RETRY% topic;
    a broker name is one broker in a cluster). Several, or none, is said in a warning."""
    renames: dict[tuple[str, str], str] = {}
    every = {e[0] for entries in state.routes.values() for e in entries}
    for topic, cut in sorted(cut_broker_names(state)):
        own = {e[0] for e in state.routes.get(topic, [])}
        found = sorted(b for b in (own or every) if b.startswith(cut))
        said = (f"topic {topic}: broker name {cut} is {CUT_BROKER} characters, where "
                "consumerProgress and topicStatus cut longer names")
        if found == [cut]:  # a broker of exactly 32 characters, and no longer one
            continue
        if len(found) == 1:
            renames[(topic, cut)] = found[0]
            if not own:
                state.snapshot.warn(f"{said}; read as {found[0]}, the one broker of the "
                                    "route files it begins (the topic has no route file)")
        elif found:
            state.snapshot.warn(f"{said}, and it begins brokers {spoken(found)} of the "
                                "routes: which one it is is unknown, so its queues, offsets "
                                "and holders are written under the cut name, the readings "
                                "of queues both brokers number alike taken as one queue's")
        elif not own:
            state.snapshot.warn(f"{said}: it may be cut (add the topic's topicRoute file, "
                                "whose whole broker names it is matched to)")
    return renames


# ------------------------------------------------------- consumerStatus running info
SECTION = re.compile(r"^#([A-Za-z &]+)#$")
# every version's consumerStatus (3.x to 5.x) prints this section after the queues it
# lists, even when it is empty: a file without it was cut (a copy or a download stopped)
CUT_UNLESS_SEEN = "Consumer RT&TPS"


def import_running_info_text(state: ImportState, path: str, text: str,
                             client_id: str | None) -> None:
    """A consumerStatus file (`ConsumerRunningInfo.formatString`). Lines of sections not
    imported (RT&TPS, Pop Detail, ...) are skipped; a line outside any section (a log
    line the tool printed first) is a reject, as in the other formats."""
    props: dict[str, str] = {}
    subs: list[str] = []
    held: dict[QueueKey, int | None] = {}
    section = None
    sections: set[str] = set()
    last = (0, "")
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        last = (number, line)
        if m := SECTION.match(stripped):
            section = m.group(1)
            sections.add(section)
            continue
        if section is None:
            state.snapshot.reject(path, number, "line outside any consumerStatus section "
                                  "(before #Consumer Properties#)", line)
        elif section == "Consumer Properties":
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
                held[(parts[0], parts[1], queue_id_value(parts[2], "#QID"))] = \
                    whole_number(parts[3], "#Consumer Offset")
            except (IndexError, ValueError) as exc:
                state.snapshot.reject(path, number, "not a #Topic #Broker Name #QID "
                                      f"#Consumer Offset row ({exc})", line)
        elif section == "Consumer MQ Detail":
            if stripped.startswith("#Topic"):
                continue
            parts = stripped.split()
            try:
                held.setdefault((parts[0], parts[1], queue_id_value(parts[2], "#QID")),
                                None)
            except (IndexError, ValueError) as exc:
                state.snapshot.reject(path, number, f"not a Consumer MQ Detail row ({exc})",
                                      line)
    if sections and CUT_UNLESS_SEEN not in sections:
        state.snapshot.reject(path, last[0], (
            f"the file ends before #{CUT_UNLESS_SEEN}#, which every consumerStatus prints "
            "after the queues: it was cut, so the queues its client holds are unknown (its "
            "last value may be cut short too); the file is not used"), last[1])
        return
    apply_running_info(state, path, client_id, props, subs, held)


def import_running_info_json(state: ImportState, path: str, data: Any,
                             client_id: str | None) -> None:
    """ConsumerRunningInfo as JSON (mqTable keyed by MessageQueue objects)."""
    data = document(path, data, "ConsumerRunningInfo")
    props_doc, table = (json_object(path, data, key) for key in ("properties", "mqTable"))
    props = {str(k): str(v) for k, v in props_doc.items() if v is not None}
    subs = []
    for i, sub in enumerate(json_list(path, data, "subscriptionSet")):
        try:
            subs.append(text_field(json_record(sub), "topic"))
        except ValueError as exc:
            state.snapshot.reject(path, None, f"subscriptionSet[{i}]: {exc}", raw_text(sub))
    held: dict[QueueKey, int | None] = {}
    for key, info in table.items():
        mq = message_queue(key)
        if mq is None:
            state.snapshot.reject(path, None, "mqTable key is not a MessageQueue", raw_text(key))
            continue
        try:
            offset = json_record(info, "its ProcessQueueInfo").get("commitOffset")
            held[mq] = None if offset is None else whole_number(offset, "commitOffset")
        except ValueError as exc:
            state.snapshot.reject(path, None, f"mqTable {queue_name(mq)}: {exc}",
                                  f"{raw_text(key)}: {raw_text(info)}")
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
        elif client.strategy in UNSAID_PARAMS:
            name, what = UNSAID_PARAMS[client.strategy]
            state.snapshot.warn(
                f"{path}: client {client_id} of group {group_name} runs "
                f"{class_name(raw_strategy)}, "
                f"whose {what} the running info does not hold: it is written without "
                f"strategy_params.{name}, and the audit has it claim no queue until its "
                f"members rows are given one")
    unknown = sorted(queue_name(k) for k, offset in held.items()
                     if offset is not None and offset < 0)
    if unknown:  # the client's offset store says -1 (none) or -2 (could not read it)
        state.snapshot.warn(
            f"{path}: client {client_id} holds {len(unknown)} queue(s) with a negative "
            f"commit offset, the client's 'no offset known' ({', '.join(unknown[:3])}"
            f"{', ...' if len(unknown) > 3 else ''}): their consumed offset is left unknown")
    client.held.update({k: None if offset is not None and offset < 0 else offset
                        for k, offset in held.items()})
