"""Importers of what operators already have: admin-tool output, one module per source.

`import_files` detects each file's format (or takes --format), lets every file add its
facts to one `ImportState`, then builds one snapshot from all of them, so a topicRoute,
a consumerConnection and a consumerProgress together give queues, members, offsets and
observed.
"""

from __future__ import annotations

import codecs
from datetime import datetime
from pathlib import Path

from capture.errors import CaptureError
from capture.importers import dashboard, mqadmin
from capture.importers.detect import (
    FORMATS,
    SAID,
    detect_json,
    detect_text,
    java_exception,
    kafka_errors,
    kafka_notices,
    not_online,
    wrong_format,
)
from capture.importers.kafka_consumer_groups import import_kafka_consumer_groups
from capture.importers.rocketmq_json import JsonError, loads
from capture.importers.state import ImportState, KafkaGroup, UnnamedFile, command_in_name
from capture.static_members import static_order_warning
from capture.tables import Snapshot

__all__ = ["FORMATS", "import_files"]
KAFKA_DEFAULT_STRATEGY = "range"  # the first assignor of the Java and librdkafka defaults
ROCKETMQ_DEFAULT_STRATEGY = "AVG"  # DefaultMQPushConsumer's default


# byte-order marks of what Windows tools write: PowerShell 5's `>` writes UTF-16 LE,
# Notepad and `Out-File -Encoding utf8` UTF-8 with a BOM; each with the codec of the text
# after it
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))


def _read(path: str) -> str:
    """The file's text, whatever its line ends, in UTF-8 or, after a byte-order mark,
    UTF-16 (a BOM was read as text: a reject row, or the file unrecognised). Bytes that
    are not of that encoding stop the import (CaptureError naming the file and line)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CaptureError(f"cannot read {path}: {exc}") from exc
    bom, encoding = next(((bom, name) for bom, name in _BOMS if data.startswith(bom)),
                         (b"", "utf-8"))
    body = data[len(bom):]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        # decoded with replacement, gé and gè would both read g\ufffd: one group of two
        if encoding != "utf-8":  # a UTF-16 file cut at an odd byte, or half a pair
            raise CaptureError(f"{path}: not whole UTF-16 text (byte {len(bom) + exc.start} "
                               f"of {len(data)}: {exc.reason}); the file was cut short or "
                               "damaged: save the tool's output again") from exc
        if (packed := _compressed(data)) is not None:
            raise CaptureError(f"{path} is {packed}-compressed, not text: {_UNPACK[packed]} "
                               "it first") from exc
        line = _text_line(body, exc.start)
        raise CaptureError(
            f"{path}: not UTF-8 text (byte 0x{body[exc.start]:02x} on line {line}); names in "
            f"it would be garbled. Convert it first, e.g. `iconv -f GBK -t UTF-8 "
            f"{Path(path).name} > utf8-{Path(path).name}` (the encoding the tool wrote it "
            "in: GBK, Latin-1, ...)") from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


# the first bytes of a compressed file (a saved output gzipped by log rotation or for
# transfer), and how to unpack it; each holds a byte that is not UTF-8 text early on
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"),
          (b"PK\x03\x04", "zip"), (b"BZh", "bzip2"))
_UNPACK = {"gzip": "gunzip", "xz": "unxz", "zstd": "unzstd", "zip": "unzip",
           "bzip2": "bunzip2"}


def _compressed(data: bytes) -> str | None:
    """The compression a file that is not UTF-8 starts with, if any: its bytes are no
    encoding to convert from (iconv would garble them), but an archive to unpack."""
    return next((name for magic, name in _MAGIC if data.startswith(magic)), None)


def _text_line(data: bytes, offset: int) -> int:
    """The line of the byte at `offset`, as an editor counts lines (a lone CR ends one too,
    as `_read` reads it)."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def import_files(paths: list[str], *, cluster: str, snapshot_id: str, captured_at: datetime,
                 fmt: str | None = None) -> Snapshot:
    """Read every file into one snapshot. Raises CaptureError for an unreadable or
    unrecognised file (naming it)."""
    state = ImportState(Snapshot(snapshot_id, cluster), captured_at)
    for path in paths:
        text = _read(path)
        logged = mqadmin.log_lines_before_json(text)
        body, doc = mqadmin.without_lines(text, logged), None
        if body.lstrip().startswith(("{", "[")):
            try:
                doc = loads(body)
            except JsonError as exc:
                # a text output may open with a bracket too: a log line of the tool
                # (`[2026-11-23 10:15:42,123] WARN ...`, saved with `2>&1`) before its rows
                if fmt in JSON_FORMATS or (fmt is None and detect_text(text) is None):
                    raise CaptureError(f"{path}: not valid JSON ({exc})") from exc
        for number, line in logged if doc is not None else []:
            state.snapshot.reject(path, number, "a log line the tool printed before its JSON "
                                  "(saved with 2>&1)", line)
        kind = fmt or (detect_json(doc) if doc is not None else detect_text(text))
        if kind is None and not_online(exception := java_exception(text)):
            # as the dashboard's failed answer is: a rejects row, and the other files go on
            state.snapshot.reject(path, None, f"mqadmin failed: {exception} (no client of "
                                  "the group is online: none of its members is captured)")
            continue
        if kind is None:
            raise _unrecognised(path, text)
        if fmt is not None and (wrong := wrong_format(path, fmt, doc, text)):
            raise CaptureError(wrong)
        try:
            _dispatch(state, path, kind, text, doc, forced=fmt is not None)
        except UnnamedFile as exc:
            said = command_in_name(path)
            if fmt is not None or said is None or said in exc.prefixes:
                raise
            # the name says one command, the content is another's: a rename alone is no cure
            raise CaptureError(
                f"{path}: the file's name says {said}, but its content is not {said} output: "
                f"it reads as {SAID[kind]}, which does not print the {exc.what} it is about. "
                f"If that is the file meant, name it {exc.example}") from None
    mqadmin.restore_cut_brokers(state)
    mqadmin.resolve_progress_ips(state)
    state.warn_differences()
    _build_kafka(state)
    _build_rocketmq(state)
    return state.snapshot


def _unrecognised(path: str, text: str) -> CaptureError:
    """Why a file is none of the formats, as precisely as its text tells."""
    if not text.strip():
        return CaptureError(f"{path} is empty: the tool printed nothing on stdout (an error "
                            "goes to stderr: save both with `2>&1` to see it)")
    errors = kafka_errors(kafka_notices(text))
    if errors:
        return CaptureError(f"{path}: kafka-consumer-groups.sh printed an error, not a "
                            f"group's state: {errors[0]}")
    exception = java_exception(text)
    if exception:
        return CaptureError(f"{path}: the tool printed a Java exception, not its output: "
                            f"{exception}")
    return CaptureError(f"{path}: unrecognised file (not a kafka-consumer-groups, mqadmin or "
                        f"rocketmq-dashboard output); pass --format, one of "
                        f"{', '.join(FORMATS)}")


JSON_FORMATS = ("mqadmin-topicRoute", "rocketmq-runningInfo-json",
                *(k for k in FORMATS if k.startswith("dashboard-")))


def _dispatch(state: ImportState, path: str, kind: str, text: str, doc: object,
              forced: bool = False) -> None:
    """One file into `state`. Every JSON format is an object: another document (an array,
    a plain value, text) is the wrong file for the format, said before any importer reads
    it. `forced`: `kind` is the --format given, which a kafka file's headers must match."""
    if kind.startswith("kafka-"):
        import_kafka_consumer_groups(state, path, text,
                                     kind.removeprefix("kafka-") if forced else None)
        return
    if kind in JSON_FORMATS and doc is None:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        raise CaptureError(f"{path}: format {kind} needs a JSON file; its first line is no "
                           f"JSON: {first[:120]!r}")
    if kind in JSON_FORMATS and not isinstance(doc, dict):
        raise CaptureError(f"{path}: format {kind} needs a JSON object, the file holds "
                           f"{mqadmin.json_type(doc)}")
    if kind.startswith("dashboard-"):
        data = dashboard.unwrap(state, path, doc, kind)
        if data is None:
            return
        {"dashboard-queryTopicByConsumer": dashboard.import_query_topic_by_consumer,
         "dashboard-consumerConnection": dashboard.import_consumer_connection,
         "dashboard-consumerRunningInfo": dashboard.import_consumer_running_info,
         "dashboard-topicRoute": dashboard.import_topic_route}[kind](state, path, data)
    elif kind == "mqadmin-topicRoute":
        mqadmin.import_topic_route(state, path, doc)
    elif kind == "rocketmq-runningInfo-json":
        mqadmin.import_running_info_json(state, path, doc, _client_from_name(path))
    elif kind == "mqadmin-topicStatus":
        mqadmin.import_topic_status(state, path, text)
    elif kind == "mqadmin-consumerConnection":
        mqadmin.import_consumer_connection(state, path, text)
    elif kind == "mqadmin-consumerProgress":
        mqadmin.import_consumer_progress(state, path, text)
    elif kind == "mqadmin-consumerStatus":
        mqadmin.import_running_info_text(state, path, text, _client_from_name(path))
    else:  # pragma: no cover - argparse limits the choices
        raise CaptureError(f"{path}: unknown format {kind}")


def _client_from_name(path: str) -> str | None:
    """consumerStatus names each file by the client id (`ip@instance`)."""
    name = Path(path).name
    for suffix in (".txt", ".json"):
        name = name.removesuffix(suffix)
    for prefix in ("consumerStatus_", "consumerRunningInfo_", "runningInfo_"):
        name = name.removeprefix(prefix)
    return name if "@" in name else None


def _build_kafka(state: ImportState) -> None:
    snap, at = state.snapshot, state.captured_at
    queues: dict[tuple[str, int], int | None] = {}
    for name in sorted(state.kafka):
        g = state.kafka[name]
        for key in g.partitions:
            end = g.log_end.get(key)
            queues[key] = max(filter(lambda v: v is not None, (queues.get(key), end)),
                              default=None)
        for (topic, p), offset in sorted(g.committed.items()):
            snap.add("offsets", consumer_group=name, topic=topic, broker_name=None, queue_id=p,
                     committed_offset=offset, consumed_offset=None)
        if g.unread_members:
            # as the live capture does: the audit recomputes a group over the members it
            # is given, so one left out would move its partitions (drift that is not there)
            snap.warn(f"group {name}: {len(g.unread_members)} members line(s) could not be "
                      f"read ({', '.join(g.unread_members[:3])}"
                      f"{', ...' if len(g.unread_members) > 3 else ''}; see rejects): none "
                      "of its members is written, as a group without one of its members "
                      "would be audited as a smaller group; its offsets and the holders "
                      "read are")
            _kafka_holders(state, name, g)
            continue
        topics = sorted({t for t, _ in g.partitions})
        strategy = min(g.strategies, default=None)
        if len(g.strategies) > 1:
            snap.warn(f"group {name}: the --state files name the assignors "
                      f"{' and '.join(sorted(g.strategies))} (captures on either side of a "
                      f"change?); members written with {strategy}, the first by name")
        if strategy is None and g.members:
            strategy = KAFKA_DEFAULT_STRATEGY
            snap.warn(f"group {name}: assignor unknown (add `--describe --state` output); "
                      f"members written with {KAFKA_DEFAULT_STRATEGY}, the clients' default")
        if g.members and topics:
            snap.warn(f"group {name}: kafka-consumer-groups does not print subscriptions; "
                      "every member is taken to subscribe every topic the group consumes")
        instances = {m: member.instance_id for m, member in g.members.items()}
        if strategy is not None and (warning := static_order_warning(name, instances,
                                                                     strategy)):
            snap.warn(warning)
        for member_id in sorted(g.members):
            m = g.members[member_id]
            for topic in topics or [None]:
                snap.add("members", consumer_group=name, client_id=member_id, topic=topic,
                         strategy=strategy, message_model=None, client_room=None,
                         client_addr=m.host, strategy_params=None, client_name=m.client_name,
                         client_host=m.host)
        _kafka_holders(state, name, g)
    for (topic, p), end in sorted(queues.items()):
        snap.add("queues", captured_at=at, topic=topic, broker_name=None, queue_id=p,
                 readable=True, broker_room=None, max_offset=end, in_rate=None)


def _kafka_holders(state: ImportState, name: str, g: KafkaGroup) -> None:
    """The group's `observed` rows: who the files say holds each partition. A Kafka
    partition has one owner per generation: two names are two readings a rebalance fell
    between (the --offsets and the --members output taken apart)."""
    holders: dict[tuple[str, int], list[str]] = {}
    for member_id in sorted(g.members):
        for key in g.members[member_id].assigned:
            holders.setdefault(key, []).append(member_id)
    for (topic, p), named in sorted(holders.items()):
        state.snapshot.add("observed", consumer_group=name, topic=topic, broker_name=None,
                           queue_id=p, client_id=_first_holder(state, name,
                                                               f"partition {topic}-{p}", named),
                           source="kafka-consumer-groups")


def _build_rocketmq(state: ImportState) -> None:
    snap, at = state.snapshot, state.captured_at
    queues: dict[tuple[str, str | None, int], dict] = {}
    routes = mqadmin.broker_routes(state)
    for (topic, broker), route in routes.items():
        for qid in range(route.listed):
            queues[(topic, broker, qid)] = {"readable": qid < route.readable,
                                            "broker_room": route.zone}
    _add_status_queues(state, queues, routes)
    default_used = False
    for name in sorted(state.rocket):
        g = state.rocket[name]
        for key, offset in g.broker_offset.items():
            if key not in queues:
                queues[key] = _beyond_routes(key, routes)
            state.max_offset.setdefault(key, offset)
        for key in sorted(g.consumer_offset):
            snap.add("offsets", consumer_group=name, topic=key[0], broker_name=key[1],
                     queue_id=key[2], committed_offset=g.consumer_offset[key],
                     consumed_offset=_consumed(g, key))
        for cid, client in g.clients.items():
            for key in sorted(client.held):
                snap.add("observed", consumer_group=name, topic=key[0], broker_name=key[1],
                         queue_id=key[2], client_id=cid, source="mqadmin-consumerStatus")
        for key in sorted(g.holders):
            if any(key in c.held for c in g.clients.values()):
                continue  # the running info of the clients is the better witness
            cid, source = _holder(state, name, key, g.holders[key])
            snap.add("observed", consumer_group=name, topic=key[0], broker_name=key[1],
                     queue_id=key[2], client_id=cid, source=source)
        clients = _members(state, name, g)
        if not clients:
            if g.consumer_offset and not g.connection:
                snap.warn(f"group {name}: no client list (add its consumerConnection); "
                          "members are not written")
            continue
        for cid in sorted(clients):
            c = g.clients[cid]
            topics = sorted(c.subscriptions if c.subscriptions is not None else g.subscription)
            strategy = c.strategy or ROCKETMQ_DEFAULT_STRATEGY
            default_used = default_used or c.strategy is None
            # one row per connection: an id two processes share is listed twice, and the
            # audit gives it a slot per address (DUPLICATE_CLIENT_ID)
            for addr in sorted(c.addrs, key=lambda a: a or "") or [None]:
                for topic in topics or [None]:
                    snap.add("members", consumer_group=name, client_id=cid, topic=topic,
                             strategy=strategy,
                             message_model=c.message_model or g.message_model,
                             client_room=None, client_addr=addr, strategy_params=None,
                             client_name=None,
                             client_host=(addr or "").rsplit(":", 1)[0] or None)
    if default_used:
        snap.warn("RocketMQ allocation strategy not in the files (only consumerStatus shows "
                  f"it): members written with {ROCKETMQ_DEFAULT_STRATEGY}, the client default")
    for key in sorted(queues, key=lambda k: (k[0], k[1] or "", k[2])):
        q = queues[key]
        snap.add("queues", captured_at=at, topic=key[0], broker_name=key[1], queue_id=key[2],
                 readable=q["readable"], broker_room=q["broker_room"],
                 max_offset=state.max_offset.get(key), in_rate=None)


def _beyond_routes(key: tuple[str, str | None, int],
                   routes: dict[tuple[str, str], mqadmin.BrokerRoute]) -> dict:
    """A queue the broker lists (topicStatus, consumerProgress, the dashboard's progress)
    that no route counts: beyond its broker's readQueueNums it is write-only (readable
    false; the broker lists a topic's writeQueueNums queues, the client reads the route's
    readQueueNums); without a route of the topic and broker, readability is unknown."""
    route = routes.get((key[0], key[1] or ""))
    return {"readable": False if route else None, "broker_room": route.zone if route else None}


def _add_status_queues(state: ImportState, queues: dict,
                       routes: dict[tuple[str, str], mqadmin.BrokerRoute]) -> None:
    """topicStatus rows no route gives (`_beyond_routes`); those of a topic and broker no
    route gives are said in a warning."""
    unknown: dict[str, int] = {}
    for key in state.max_offset:
        if key in queues:
            continue
        topic, broker, _ = key
        queues[key] = _beyond_routes(key, routes)
        if (topic, broker) not in routes:
            unknown[topic] = unknown.get(topic, 0) + 1
    for topic in sorted(unknown):
        state.snapshot.warn(f"topic {topic}: {unknown[topic]} queue(s) of its topicStatus have "
                            "no topicRoute of their broker (add topicRoute_"
                            f"{topic}.json): written with readable unknown")


def _holder(state: ImportState, group: str, key: tuple, claims: set) -> tuple[str, str]:
    """A RocketMQ queue's holder among its (client, source) claims (`_first_holder`)."""
    cid, source = min(claims)
    _first_holder(state, group, f"queue {mqadmin.queue_name(key)}",
                  sorted({c for c, _ in claims}))
    return cid, source


def _first_holder(state: ImportState, group: str, place: str, named: list[str]) -> str:
    """Of the holders readings name for one queue or partition (`named`, ascending), the
    smaller id, whatever the order of the files; two or more (a rebalance between the
    readings) are said in a warning."""
    if len(named) > 1:
        state.snapshot.warn(f"group {group}: {place} is held by {' and '.join(named)} in "
                            f"different readings (a rebalance between them?); {named[0]} "
                            "is written to observed")
    return named[0]


def _members(state: ImportState, name: str, g: object) -> list[str]:
    """The clients written as members. With a consumerConnection of the group, it gives the
    member list: a client only a running info names left or joined in between."""
    clients = g.clients  # type: ignore[attr-defined]
    if not g.connection:  # type: ignore[attr-defined]
        return list(clients)
    for cid in sorted(c for c in clients if not clients[c].listed):
        state.snapshot.warn(f"group {name}: client {cid} (from its running info) is not in "
                            "consumerConnection: it left or joined between the two commands; "
                            "its held queues are written to observed, it is not written as a "
                            "member")
    return [c for c in clients if clients[c].listed]


def _consumed(g: object, key: tuple[str, str | None, int]) -> int | None:
    for client in g.clients.values():  # type: ignore[attr-defined]
        if client.held.get(key) is not None:
            return client.held[key]
    return None
