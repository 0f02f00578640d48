"""Whole numbers read from admin-tool output, checked against the column that keeps them.

The tables store queue ids as 32-bit and offsets as 64-bit integers (`capture.tables`);
a value beyond them (a cut or garbled line, a JSON `1e400`) is the line's fault, so it
raises ValueError, which the importers turn into a `rejects` row naming the line.
"""

from __future__ import annotations

import math
import re

INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
# as the tools print a number: ASCII digits, a minus at most (Python's int() also takes
# "1_000", "+5" and other scripts' digits, which no tool prints: a garbled line)
_DIGITS = re.compile(r"-?[0-9]+")


def whole_number(value: object, what: str, *, bits: int = 64) -> int:
    """`value` (text, int or an integral float from JSON) as an int that a signed `bits`
    column holds; ValueError naming `what` otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{what} {value!r} is not a whole number")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"{what} {value!r} is not a whole number")
        number = int(value)
    elif isinstance(value, int):
        number = value
    else:
        text = str(value).strip()
        if not _DIGITS.fullmatch(text):
            raise ValueError(f"{what} {text!r} is not a whole number")
        if len(text) > 40:  # beyond any column (and int() refuses 4,300 digits)
            raise ValueError(f"{what} {text[:20]}... ({len(text):,} characters) is beyond a "
                             f"{bits}-bit integer")
        number = int(text)
    limit = INT32_MAX if bits == 32 else INT64_MAX
    if not -limit - 1 <= number <= limit:
        raise ValueError(f"{what} {number} is beyond a {bits}-bit integer")
    return number


def offset_value(value: object, what: str) -> int:
    """A broker-side offset (a max, min, broker or committed offset): a whole number, never
    negative (the broker prints 0 for a queue or group with none); ValueError otherwise."""
    number = whole_number(value, what)
    if number < 0:
        raise ValueError(f"{what} {number} is negative")
    return number


def queue_id_value(value: object, what: str) -> int:
    """A RocketMQ queue id: a whole number a 32-bit column holds, never negative (the
    queues table's contract); ValueError otherwise."""
    number = whole_number(value, what, bits=32)
    if number < 0:
        raise ValueError(f"{what} {number} is negative")
    return number
