"""What the imported files say, gathered across files before one snapshot is built.

Each importer adds facts here (and rejects / warnings to the snapshot); `build` turns the
facts into the input tables once every file has been read, so the order of the files on
the command line does not matter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from capture.errors import CaptureError
from capture.tables import Snapshot

QueueKey = tuple[str, str | None, int]  # topic, broker_name, queue_id
Reading = tuple[int, str | None]  # a value read, and where it was read (file, line) if said
# the warning about one queue's different readings, given them ascending by value
ReadingsWarning = Callable[[list[Reading]], str]


@dataclass
class KafkaMember:
    client_name: str | None = None
    host: str | None = None
    instance_id: str | None = None  # group.instance.id of a static member (--members)
    assigned: set[tuple[str, int]] = field(default_factory=set)


@dataclass
class KafkaGroup:
    members: dict[str, KafkaMember] = field(default_factory=dict)
    committed: dict[tuple[str, int], int] = field(default_factory=dict)
    log_end: dict[tuple[str, int], int] = field(default_factory=dict)
    partitions: set[tuple[str, int]] = field(default_factory=set)
    strategies: set[str] = field(default_factory=set)  # every assignor a --state file named
    # members-layout lines of the group that could not be read ("<file> line <n>")
    unread_members: list[str] = field(default_factory=list)

    def member(self, member_id: str) -> KafkaMember:
        return self.members.setdefault(member_id, KafkaMember())


@dataclass
class RocketClient:
    # the addresses of its connections (consumerConnection): two processes that share a
    # client id (Docker's `ip@1`) are one id the broker lists twice, one row per address
    addrs: set[str | None] = field(default_factory=set)
    subscriptions: set[str] | None = None  # per client (running info); None = unknown
    strategy: str | None = None
    message_model: str | None = None
    held: dict[QueueKey, int | None] = field(default_factory=dict)  # running info
    listed: bool = False  # in a consumerConnection of its group


@dataclass
class RocketGroup:
    clients: dict[str, RocketClient] = field(default_factory=dict)
    subscription: set[str] = field(default_factory=set)  # consumerConnection (merged)
    message_model: str | None = None
    broker_offset: dict[QueueKey, int] = field(default_factory=dict)
    consumer_offset: dict[QueueKey, int] = field(default_factory=dict)
    # every (client, source) a file names as a queue's holder; two readings may differ
    holders: dict[QueueKey, set[tuple[str, str]]] = field(default_factory=dict)
    connection: bool = False  # a consumerConnection of the group was imported

    def client(self, client_id: str) -> RocketClient:
        return self.clients.setdefault(client_id, RocketClient())

    def connected(self, client_id: str, addr: str | None) -> None:
        """A connection of `client_id` a consumerConnection lists."""
        client = self.client(client_id)
        client.addrs.add(addr)
        client.listed = True


@dataclass
class ImportState:
    snapshot: Snapshot
    captured_at: datetime
    kafka: dict[str, KafkaGroup] = field(default_factory=dict)
    rocket: dict[str, RocketGroup] = field(default_factory=dict)
    # topic -> [(broker, read queue count, perm, zone)]
    routes: dict[str, list[tuple[str, int, int, str | None]]] = field(default_factory=dict)
    max_offset: dict[QueueKey, int] = field(default_factory=dict)
    # (group, queue, holder IP, file, line number, line): resolved once every file is read
    progress_ips: list[tuple[str, QueueKey, str, str, int, str]] = field(default_factory=list)
    # `keep_larger`, per readings dict (each lives as long as the state, so its id names
    # it) and key: where a value was read while all readings agree (the first by name) ...
    read_at: dict[int, dict[Hashable, str | None]] = field(default_factory=dict)
    # ... and, once they differ, each value → where (the first by name), and the warning
    differing: dict[tuple[int, Hashable], tuple[ReadingsWarning, dict[int, str | None]]] = \
        field(default_factory=dict)

    def kafka_group(self, name: str) -> KafkaGroup:
        return self.kafka.setdefault(name, KafkaGroup())

    def rocket_group(self, name: str) -> RocketGroup:
        return self.rocket.setdefault(name, RocketGroup())

    def keep_larger(self, readings: dict[Any, int], key: Hashable, value: int,
                    warning: ReadingsWarning, where: str | None = None) -> None:
        """Store an offset read for a queue or partition that may be read again (the same
        file twice, or two captures): offsets only grow, so the larger is the later reading
        and is kept whatever the file order. Different values are said once every file is
        read (`warn_differences`); an identical repeat is not. `where`: the file and line,
        named in the warning (kept per key only while the readings agree)."""
        at, old = (id(readings), key), readings.get(key)
        values = self.differing.get(at)
        if values is None and old is not None and old != value:
            agreed = self.read_at.get(id(readings), {}).pop(key, None)
            values = self.differing[at] = (warning, {old: agreed})
        if values is not None:
            values[1][value] = _first(values[1].get(value), where)
        elif where is not None:
            known = self.read_at.setdefault(id(readings), {})
            known[key] = _first(known.get(key), where)
        readings[key] = value if old is None else max(old, value)

    def warn_differences(self) -> None:
        """One warning per queue or partition read with different values, each value said
        once, ascending, in the warnings' order: the same whatever the order of the files."""
        said = [warning(sorted(seen.items())) for warning, seen in self.differing.values()]
        for text in sorted(said):
            self.snapshot.warn(text)


def _first(known: str | None, where: str | None) -> str | None:
    """Of two places a value was read, the first by name: the same whatever the file order."""
    return where if known is None else known if where is None else min(known, where)


_EXTENSIONS = re.compile(r"(\.(txt|json|out|log|csv))+$", re.IGNORECASE)
# what RocketMQ takes for a topic or group name (its clients' and broker's validators)
ROCKETMQ_NAME = re.compile(r"[%|a-zA-Z0-9_-]+")


# the commands whose files the name carries the group, topic or client of, and the
# prefixes their names are read by (`<prefix>_<name>.<ext>`): the importers read names by
# these (`name_from_file`), and a name is told to say another command by them
COMMANDS = {"topicRoute": ("topicRoute", "route", "topic"),
            "topicStatus": ("topicStatus", "status"),
            "consumerConnection": ("consumerConnection", "connection"),
            "consumerProgress": ("consumerProgress", "progress"),
            "queryTopicByConsumer": ("queryTopicByConsumer", "topicByConsumer"),
            "consumerStatus": ("consumerStatus",),
            "consumerRunningInfo": ("consumerRunningInfo", "runningInfo")}
# the mark a browser or file manager adds to a second copy's name: `TopicOrder (1)`
COPY_MARK = re.compile(r"(.*?)\s*\((\d+)\)")


class UnnamedFile(CaptureError):
    """The file's name does not say the group or topic its format leaves out."""

    def __init__(self, message: str, what: str, prefixes: tuple[str, ...],
                 example: str) -> None:
        super().__init__(message)
        self.what, self.prefixes, self.example = what, prefixes, example


def command_in_name(path: str) -> str | None:
    """The command a file's name begins with (`consumerProgress_G.json`), if any."""
    stem = _EXTENSIONS.sub("", Path(path).name).lower()
    for command, prefixes in COMMANDS.items():
        for prefix in prefixes:
            if stem.startswith(prefix.lower()) and stem[len(prefix):len(prefix) + 1] in (
                    "", "_", "-", ".", "@", "="):
                return command
    return None


def name_from_file(path: str, prefixes: tuple[str, ...], what: str) -> str:
    """The group or topic a file is about, from its name `<command>_<NAME>.<ext>` (the
    admin tools do not print it). Raises CaptureError when the name does not say, or says
    no RocketMQ name (a copy's `Topic (1)`, a backup's `Group.txt.bak`: queues of such a
    topic would join no subscription)."""
    name = Path(path).name
    stem = _EXTENSIONS.sub("", name)
    # the file's own extension in the example: an mqadmin text file or a dashboard's JSON
    extension = name[len(stem):] or ".txt"
    for prefix in prefixes:
        if stem.lower().startswith(prefix.lower()) and len(stem) > len(prefix) + 1 \
                and stem[len(prefix)] in "_-.@=":
            found = stem[len(prefix) + 1:]
            if ROCKETMQ_NAME.fullmatch(found):
                return found
            said = (f"{path}: the file's name gives the {what} {found!r}, which is no "
                    f"RocketMQ {what} name (letters, digits, %, |, _ and - only)")
            head = stem[:len(prefix) + 1]  # the prefix as the file spells it
            copy = COPY_MARK.fullmatch(found)
            if copy and ROCKETMQ_NAME.fullmatch(copy.group(1)):
                # not read away: the name is all that says which topic or group the file
                # is, and a second copy may be another capture taken under the same name
                raise CaptureError(
                    f"{said}: ' ({copy.group(2)})' is what a browser or file manager adds "
                    f"to a second copy's name, and the {what} is not guessed from it. If "
                    f"this is the {what} {copy.group(1)}, rename the file "
                    f"{head}{copy.group(1)}{extension} (import one copy of one capture)")
            raise CaptureError(f"{said}: rename the file {head}<{what}>{extension}, as the "
                               f"{what} is spelled on the broker")
    example = f"{prefixes[0]}_<{what}>{extension}"
    raise UnnamedFile(
        f"{path}: cannot tell which {what} this file is about; the tool does not print it. "
        f"Name the file {example} (e.g. {prefixes[0]}_MyName{extension})",
        what, prefixes, example)
