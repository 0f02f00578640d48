"""Decoder of the classic consumer protocol's member metadata and assignment bytes.

DescribeGroups returns them opaque; the client library does not decode them. Layouts
(Kafka clients/src/main/resources/common/message/ConsumerProtocol*.json), big-endian,
non-flexible (no tagged fields) in every version:

* Subscription v0: version int16, topics [string], user_data bytes;
  v1 adds owned_partitions [topic string, partitions [int32]]; v2 adds generation_id int32;
  v3 adds rack_id nullable string.
* Assignment v0+: version int16, assigned_partitions [topic string, partitions [int32]],
  user_data bytes.

Newer versions than we know are read as far as we know (Kafka's own rule: a reader reads
the fields of its version and ignores the rest).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field


class ProtocolError(ValueError):
    """The bytes are not a consumer-protocol structure (truncated or garbage)."""


@dataclass(frozen=True)
class Subscription:
    version: int
    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: list[tuple[str, int]] = field(default_factory=list)
    generation_id: int | None = None
    rack_id: str | None = None


@dataclass(frozen=True)
class Assignment:
    version: int
    partitions: list[tuple[str, int]]
    user_data: bytes | None = None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = memoryview(data), 0

    def _take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolError(f"truncated at byte {self.pos} (wanted {n} more)")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def string(self) -> str | None:
        n = self.int16()
        if n == -1:
            return None
        try:
            return bytes(self._take(n)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"string is not UTF-8 at byte {self.pos}") from exc

    def bytes_(self) -> bytes | None:
        n = self.int32()
        return None if n == -1 else bytes(self._take(n))

    def array(self, read):  # type: ignore[no-untyped-def]
        n = self.int32()
        if n == -1:
            return []
        if n > len(self.data):  # every element takes at least one byte
            raise ProtocolError(f"array length {n} exceeds the data")
        return [read() for _ in range(n)]

    def at_end(self) -> bool:
        return self.pos >= len(self.data)


def _topic_partitions(r: _Reader) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for topic, parts in r.array(lambda: (r.string(), r.array(r.int32))):
        if topic is None:
            raise ProtocolError("null topic name")
        out.extend((topic, p) for p in parts)
    return out


def decode_subscription(data: bytes) -> Subscription:
    """Member metadata (JoinGroup protocol metadata) → Subscription."""
    if not data:
        raise ProtocolError("empty member metadata")
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise ProtocolError(f"negative version {version}")
    topics = [t for t in r.array(r.string) if t is not None]
    user_data = r.bytes_()
    owned: list[tuple[str, int]] = []
    generation, rack = None, None
    if version >= 1 and not r.at_end():
        owned = _topic_partitions(r)
    if version >= 2 and not r.at_end():
        generation = r.int32()
    if version >= 3 and not r.at_end():
        rack = r.string()
    return Subscription(version, topics, user_data, owned, generation, rack)


def decode_assignment(data: bytes) -> Assignment:
    """Member assignment (SyncGroup) → Assignment. Empty bytes = assigned nothing (a
    member that joined after the last sync), which Kafka itself treats the same way."""
    if not data:
        return Assignment(0, [], None)
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise ProtocolError(f"negative version {version}")
    partitions = _topic_partitions(r)
    user_data = r.bytes_() if not r.at_end() else None
    return Assignment(version, partitions, user_data)
