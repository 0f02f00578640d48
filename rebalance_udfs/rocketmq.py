"""RocketMQ client-side allocation strategies (`AllocateMessageQueueStrategy`), vectorized.

Every share function maps arrays (n = |mqAll|, c = |cidAll|, i = indexOf(currentCID)), one
entry per call, to (call row, position in the sorted mqAll) pairs. CONFIG, which ignores
mqAll and cidAll altogether, is a batch kernel at the end. CONSISTENT_HASH lives in
`hashring`, MACHINE_ROOM in `machine_room`, MACHINE_ROOM_NEARBY-* in `nearby`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rebalance_udfs.batch import AllocationBatch
from rebalance_udfs.positional import EMPTY_CLAIMS, Claims, expand_blocks, expand_strided
from vocabulary.columns import MAX_QUEUE_ID


def averagely_share(n: np.ndarray, c: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`AllocateMessageQueueAveragely`: contiguous blocks, the first n % c clients one larger.

    A caller absent from cidAll (i < 0), an empty mqAll or cidAll claims nothing.
    """
    n = n.astype(np.int64)
    c = np.maximum(c.astype(np.int64), 1)
    i = i.astype(np.int64)
    mod = n % c
    bigger = (mod > 0) & (i < mod)
    size = np.where(n <= c, 1, np.where(bigger, n // c + 1, n // c))
    start = np.where(bigger, i * size, i * size + mod)
    take = np.minimum(size, n - start)
    take[(i < 0) | (n <= 0)] = 0
    return expand_blocks(start, take)


def averagely_by_circle_share(
    n: np.ndarray, c: np.ndarray, i: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`AllocateMessageQueueAveragelyByCircle`: the client at index i takes i, i+c, i+2c, ...

    Unlike AVG the remainder is spread one by one, so a client's share is strided; a caller
    absent from cidAll (i < 0) or an empty mqAll claims nothing.
    """
    n = n.astype(np.int64)
    c = np.maximum(c.astype(np.int64), 1)
    i = i.astype(np.int64)
    count = np.where((i >= 0) & (i < n), (n - i + c - 1) // c, 0)
    return expand_strided(i, c, count)


def machine_room_share(
    m: np.ndarray, c: np.ndarray, i: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`AllocateMessageQueueByMachineRoom` over the m queues of the configured rooms.

    Every client slot gets a block of m // c; the m % c left over go one each to the first
    clients, taken from the *end* of the list (queue i + (m // c) * c), not appended to the
    blocks as AVG does.
    """
    m = m.astype(np.int64)
    c = np.maximum(c.astype(np.int64), 1)
    i = i.astype(np.int64)
    valid = i >= 0
    block = m // c
    rows, pos = expand_blocks(i * block, np.where(valid, block, 0))
    extra = np.flatnonzero(valid & (i < m % c))
    rows = np.concatenate([rows, extra])
    pos = np.concatenate([pos, i[extra] + block[extra] * c[extra]])
    return rows, pos


# --- CONFIG -------------------------------------------------------------------------------

def _config_entry(entry: str) -> tuple[str, str, int]:
    """One `topic@broker:queue_id` entry; ValueError saying what is wrong with it."""
    topic, at, rest = entry.partition("@")
    broker, colon, qid = rest.rpartition(":")
    if not at or not topic:
        raise ValueError(f"config queue {entry!r}: expected topic@broker:queue_id (no topic)")
    if not colon or not broker:
        raise ValueError(f"config queue {entry!r}: expected topic@broker:queue_id (no broker)")
    if not (qid.isascii() and qid.isdigit()) or int(qid) > MAX_QUEUE_ID:
        raise ValueError(
            f"config queue {entry!r}: queue id {qid!r} is not an integer in 0..{MAX_QUEUE_ID}"
        )
    return topic, broker, int(qid)


def parse_config_queues(
    text: str, *, skip_malformed: bool = False
) -> list[tuple[str, str, int]]:
    """The CONFIG `queues` param: comma list of `topic@broker:queue_id` -> (topic, broker, id).

    The one Python parser of the format (its Spark twin, for input validation, is
    `jobs.validate._malformed_config_queues`). The topic ends at the first '@' (topic names
    cannot hold one), the queue id starts after the last ':' (broker names may hold '@' or
    ':'). Blanks around entries are ignored; an empty text is the empty list. Raises
    ValueError on the first malformed entry (an empty one too); with `skip_malformed` such
    entries are left out instead (the kernel: validation has reported them already).
    """
    if not text.strip():
        return []
    out = []
    for entry in text.split(","):
        entry = entry.strip()
        try:
            if not entry:
                raise ValueError(f"config queues {text!r}: empty entry")
            out.append(_config_entry(entry))
        except ValueError:
            if not skip_malformed:
                raise
    return out


def config_kernel(batch: AllocationBatch, calls: np.ndarray) -> Claims:
    """`AllocateMessageQueueByConfig`: the client claims exactly its configured queues.

    Upstream returns the whole list on every topic's pass, with no check at all (so even for
    a caller missing from cidAll). In this flattened model the claims of one call are the
    listed queues of its own unit; entries of another subscribed topic are claimed by the
    same client's call in that topic's unit, and entries naming no readable queue claim
    nothing. A null list claims nothing (the client treats upstream's null as empty).
    """
    text = batch.call_config_queues[calls]
    calls = calls[pd.notna(text)]
    if len(calls) == 0:
        return EMPTY_CLAIMS
    code, values = pd.factorize(pd.Series(batch.call_config_queues[calls], dtype=object))
    entries = [(k, t, b, q) for k, value in enumerate(values)
               for t, b, q in parse_config_queues(str(value), skip_malformed=True)]
    if not entries:
        return EMPTY_CLAIMS
    listed = pd.DataFrame(entries, columns=["code", "topic", "broker", "qid"])
    units = batch.call_unit[calls]
    wanted = pd.DataFrame({"call": calls, "code": code, "unit": units,
                           "topic": batch.unit_topic[units]})
    wanted = wanted.merge(listed, on=["code", "topic"], how="inner", sort=False)
    if wanted.empty:
        return EMPTY_CLAIMS
    rel_units = np.unique(wanted["unit"].to_numpy(np.int64))
    owner, pos = expand_blocks(batch.unit_queue_start[rel_units],
                               batch.unit_queue_count[rel_units])
    queues = pd.DataFrame({"unit": rel_units[owner], "broker": batch.queue_broker[pos],
                           "qid": batch.queue_id[pos], "pos": pos})
    claims = wanted.merge(queues, on=["unit", "broker", "qid"], how="inner", sort=False)
    return claims["call"].to_numpy(np.int64), claims["pos"].to_numpy(np.int64)
