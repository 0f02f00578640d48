"""A tolerant reader of RocketMQ's JSON (fastjson `RemotingSerializable.toJson`).

RocketMQ serializes maps keyed by objects (e.g. `Map<MessageQueue, ...>`) with object keys:
`{{"brokerName":"b","queueId":3,"topic":"t"}:{...}}`, which `json.loads` rejects. This
reader accepts any JSON value as an object key; object keys come back as `MQKey`-like
frozen tuples of sorted (name, value) pairs. Everything else is plain JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

from capture.importers.values import queue_id_value

_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_WS = re.compile(r"\s*")
# half of a UTF-16 pair that `\ud800`-style escapes left alone: no UTF-8 text holds it
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]


class JsonError(ValueError):
    def __init__(self, message: str, text: str, pos: int) -> None:
        line = text.count("\n", 0, pos) + 1
        super().__init__(f"{message} at line {line}")
        self.line = line


def freeze(value: Any) -> Any:
    """A hashable form of a parsed value (for object keys). An object's pairs are sorted by
    name; an object keyed by other values too (no writer's) by each key's type and text."""
    if isinstance(value, dict):
        pairs = [(k, freeze(v)) for k, v in value.items()]
        if all(isinstance(k, str) for k in value):
            return tuple(sorted(pairs))
        return tuple(sorted(pairs, key=lambda p: (type(p[0]).__name__, repr(p[0]))))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def loads(text: str) -> Any:
    """Parse `text`; raises JsonError (with a line number) on anything malformed."""
    try:
        value, pos = _value(text, _WS.match(text, 0).end())
    except RecursionError:
        raise JsonError("values nested too deep", text, 0) from None
    pos = _WS.match(text, pos).end()
    if pos != len(text):
        raise JsonError("extra data after the JSON value", text, pos)
    return value


def _value(text: str, pos: int) -> tuple[Any, int]:
    if pos >= len(text):
        raise JsonError("unexpected end of data", text, pos)
    ch = text[pos]
    if ch == "{":
        return _object(text, pos + 1)
    if ch == "[":
        return _array(text, pos + 1)
    if ch == '"':
        try:
            string, end = _scanstring(text, pos + 1)
        except ValueError as exc:
            raise JsonError(f"bad string: {exc}", text, pos) from exc
        if _LONE_SURROGATE.search(string):
            raise JsonError("bad string: a \\u escape of half a UTF-16 surrogate pair",
                            text, pos)
        return string, end
    for word, val in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, pos):
            return val, pos + len(word)
    m = _NUMBER.match(text, pos)
    if m and m.end() > pos:
        num = m.group(0)
        try:
            return (float(num) if m.group(2) or m.group(3) else int(num)), m.end()
        except ValueError as exc:  # an integer of more digits than Python converts
            raise JsonError(f"bad number: {exc}", text, pos) from None
    raise JsonError(f"unexpected character {ch!r}", text, pos)


def _object(text: str, pos: int) -> tuple[dict[Any, Any], int]:
    out: dict[Any, Any] = {}
    pos = _WS.match(text, pos).end()
    if text.startswith("}", pos):
        return out, pos + 1
    while True:
        key, pos = _value(text, _WS.match(text, pos).end())
        pos = _WS.match(text, pos).end()
        if not text.startswith(":", pos):
            raise JsonError("expected ':'", text, pos)
        value, pos = _value(text, _WS.match(text, pos + 1).end())
        out[freeze(key)] = value
        pos = _WS.match(text, pos).end()
        if text.startswith(",", pos):
            pos += 1
            continue
        if text.startswith("}", pos):
            return out, pos + 1
        raise JsonError("expected ',' or '}'", text, pos)


def _array(text: str, pos: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    pos = _WS.match(text, pos).end()
    if text.startswith("]", pos):
        return out, pos + 1
    while True:
        value, pos = _value(text, _WS.match(text, pos).end())
        out.append(value)
        pos = _WS.match(text, pos).end()
        if text.startswith(",", pos):
            pos += 1
            continue
        if text.startswith("]", pos):
            return out, pos + 1
        raise JsonError("expected ',' or ']'", text, pos)


_MQ_STRING = re.compile(r"MessageQueue \[topic=(.*), brokerName=(.*), queueId=(\d+)\]")


def message_queue(key: Any) -> tuple[str, str, int] | None:
    """(topic, broker_name, queue_id) of a MessageQueue map key: an object key, or the
    `MessageQueue [topic=T, brokerName=B, queueId=N]` string other JSON writers emit."""
    try:
        if isinstance(key, tuple):
            fields = dict(key)
            topic, broker = fields["topic"], fields["brokerName"]
            if isinstance(topic, str) and isinstance(broker, str) and topic and broker:
                return topic, broker, queue_id_value(fields["queueId"], "queueId")
        elif isinstance(key, str) and (m := _MQ_STRING.fullmatch(key.strip())):
            return m.group(1), m.group(2), queue_id_value(m.group(3), "queueId")
    except (KeyError, TypeError, ValueError):  # not (name, value) pairs, or a bad id
        pass
    return None


def raw_text(value: Any) -> str:
    """A rejected JSON record as JSON text (its `raw`); object keys as Python shows them."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
