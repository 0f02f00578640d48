"""MD5 of many short messages at once, in numpy: the first digest word of each.

The consistent-hash ring hashes tens of `<clientId>-<k>` node keys per client, and the
what-if ring sweeps hash about a million of them per bucket. Hashed one call at a time
the interpreter's loop costs as much as the digests; here the 64 MD5 steps (RFC 1321)
run as uint32 array operations over thousands of messages at once, in slices small
enough to stay in the CPU cache. Messages are given as a head and a tail (a client id
and a `-<k>` suffix), each a row of a byte matrix, so a ring's keys are never formatted
as strings. Messages longer than `MAX_VECTOR_BYTES` are hashed one by one (`hashlib`).
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np

# messages up to this many bytes are hashed as arrays (4 MD5 blocks); longer ones, rare
# in practice (ids and queue names are short), one at a time
MAX_VECTOR_BYTES = 4 * 64 - 9
# messages per slice: 16 uint32 words and a few state arrays of this length stay in cache
_SLICE = 16_384

_SHIFTS = [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4
_CONSTANTS = (np.floor(np.abs(np.sin(np.arange(1, 65, dtype=np.float64))) * 2.0**32)
              .astype(np.uint64).astype(np.uint32))
_WORD = ([i for i in range(16)] + [(5 * i + 1) % 16 for i in range(16, 32)]
         + [(3 * i + 5) % 16 for i in range(32, 48)] + [(7 * i) % 16 for i in range(48, 64)])
_INITIAL = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476)


class Encoded(NamedTuple):
    """Strings as UTF-8: `matrix` rows hold the bytes, zero-padded (cut at
    MAX_VECTOR_BYTES: longer messages are hashed from `raw`), `lengths` their lengths."""

    matrix: np.ndarray
    lengths: np.ndarray
    raw: list[bytes]


def encode(strings: list[str]) -> Encoded:
    """UTF-8 bytes of each string; an unpaired surrogate becomes '?' (errors="replace"),
    as Java's `getBytes()` does."""
    raw = [s.encode("utf-8", "replace") for s in strings]
    lengths = np.fromiter(map(len, raw), np.int64, len(raw))
    width = int(min(lengths.max(initial=0), MAX_VECTOR_BYTES))
    if width == 0:
        return Encoded(np.zeros((len(raw), 0), np.uint8), lengths, raw)
    # numpy's fixed-width bytes pad with zeros (and cut what is longer) in C
    matrix = np.array(raw, dtype=f"S{width}").view(np.uint8).reshape(len(raw), width)
    return Encoded(matrix, lengths, raw)


def first_words(head: Encoded, head_row: np.ndarray, tail: Encoded,
                tail_row: np.ndarray) -> np.ndarray:
    """For every j: the first 4 bytes of MD5(head[head_row[j]] + tail[tail_row[j]]) as an
    unsigned big-endian number (int64). `head`, `tail`: `encode` results."""
    head_row = np.asarray(head_row, np.int64)
    tail_row = np.asarray(tail_row, np.int64)
    lengths = head.lengths[head_row] + tail.lengths[tail_row]
    out = np.empty(len(lengths), np.int64)
    blocks = (lengths + 8) // 64 + 1
    long = lengths > MAX_VECTOR_BYTES
    for j in np.flatnonzero(long).tolist():
        message = head.raw[head_row[j]] + tail.raw[tail_row[j]]
        out[j] = int.from_bytes(hashlib.md5(message).digest()[:4], "big")
    counts = np.flatnonzero(np.bincount(blocks[~long]))  # the block counts present, 1..4
    for count in counts.tolist():
        rows = (np.arange(len(out)) if len(counts) == 1 and not long.any()
                else np.flatnonzero((blocks == count) & ~long))
        for lo in range(0, len(rows), _SLICE):
            part = rows[lo:lo + _SLICE]
            out[part] = _digest_words(_padded(head, head_row[part], tail, tail_row[part],
                                              lengths[part], count), count)
    return out


def _padded(head: Encoded, head_row: np.ndarray, tail: Encoded, tail_row: np.ndarray,
            lengths: np.ndarray, blocks: int) -> np.ndarray:
    """The messages with MD5's padding: a 0x80 byte, zeros, the bit length (little-endian
    64-bit) in the last 8 bytes of `blocks` 64-byte blocks. Shape (n, 64 * blocks)."""
    n = len(lengths)
    work = np.zeros((n, 64 * blocks), np.uint8)
    width = min(head.matrix.shape[1], 64 * blocks)
    work[:, :width] = head.matrix[head_row, :width]
    start = head.lengths[head_row]
    tail_lengths = tail.lengths[tail_row]
    for j in range(tail.matrix.shape[1]):
        has = np.flatnonzero(tail_lengths > j)
        work[has, start[has] + j] = tail.matrix[tail_row[has], j]
    rows = np.arange(n)
    work[rows, lengths] = 0x80
    bits = (lengths * 8).astype("<u8").view(np.uint8).reshape(n, 8)
    work[:, 64 * blocks - 8:] = bits
    return work


def _digest_words(work: np.ndarray, blocks: int) -> np.ndarray:
    """First digest word (big-endian, int64) of each padded message row."""
    words = work.view("<u4").reshape(len(work), 16 * blocks)
    state = [np.full(len(work), v, np.uint32) for v in _INITIAL]
    for b in range(blocks):
        _compress(state, np.ascontiguousarray(words[:, 16 * b:16 * (b + 1)].T))
    return state[0].byteswap().astype(np.int64)


def _compress(state: list[np.ndarray], words: np.ndarray) -> None:
    """One MD5 block for every message: `state` (4 uint32 arrays) updated in place,
    `words` (16, n). The arrays are reused step to step: no allocation per step."""
    a, b, c, d = (s.copy() for s in state)
    f, t = np.empty_like(a), np.empty_like(a)
    with np.errstate(over="ignore"):
        for i in range(64):
            if i < 16:  # F = (b & c) | (~b & d)
                np.bitwise_and(b, c, out=f)
                np.invert(b, out=t)
                t &= d
                f |= t
            elif i < 32:  # G = (d & b) | (~d & c)
                np.bitwise_and(d, b, out=f)
                np.invert(d, out=t)
                t &= c
                f |= t
            elif i < 48:  # H = b ^ c ^ d
                np.bitwise_xor(b, c, out=f)
                f ^= d
            else:  # I = c ^ (b | ~d)
                np.invert(d, out=t)
                np.bitwise_or(b, t, out=f)
                f ^= c
            f += a
            f += _CONSTANTS[i]
            f += words[_WORD[i]]
            shift = _SHIFTS[i]
            np.left_shift(f, shift, out=t)
            f >>= 32 - shift
            f |= t
            f += b
            # the new b is f; the old a's array is free and becomes the next scratch
            a, b, c, d, f = d, f, b, c, a
    for s, v in zip(state, (a, b, c, d), strict=True):
        s += v
