"""The array MD5 (`rebalance_udfs.md5`) against hashlib, on every length it treats apart."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rebalance_udfs import md5
from rebalance_udfs.hashring import md5_prefix, message_queue_hashes


def _first_word(message: bytes) -> int:
    return int.from_bytes(hashlib.md5(message).digest()[:4], "big")


def test_every_length_up_to_five_blocks_and_every_tail() -> None:
    # one to five 64-byte blocks, the padding's edges (55/56 bytes), and past the array cut
    heads = ["", *("x" * n for n in range(0, 330)), "é" * 40, "中" * 90]
    tails = ["", "-0", "-9", "-10", "-12345"]
    head_row = np.repeat(np.arange(len(heads)), len(tails))
    tail_row = np.tile(np.arange(len(tails)), len(heads))
    got = md5.first_words(md5.encode(heads), head_row, md5.encode(tails), tail_row)
    want = [_first_word((heads[h] + tails[t]).encode()) for h, t in zip(head_row, tail_row,
                                                                        strict=True)]
    assert got.tolist() == want


@given(st.lists(st.text(max_size=120), min_size=1, max_size=60))
def test_any_text_hashes_as_java_bytes(keys: list[str]) -> None:
    # unpaired surrogates become '?' as in Java's getBytes()
    assert md5_prefix(keys).tolist() == [_first_word(k.encode("utf-8", "replace"))
                                         for k in keys]


def test_keys_that_differ_after_a_nul_hash_apart() -> None:
    # found by the property above: pandas' string table had '' and '\x00' as one key
    keys = ["", "\x00", "t\x00a", "t\x00b", "\ud800", "?"]
    assert md5_prefix(keys).tolist() == [_first_word(k.encode("utf-8", "replace"))
                                         for k in keys]


@given(st.lists(st.tuples(st.text(max_size=30), st.one_of(st.none(), st.text(max_size=12)),
                          st.integers(0, 2**31 - 1)), max_size=40))
def test_message_queue_keys_hash_as_their_whole_strings(queues: list) -> None:
    # the key from a shared topic/broker head and queue-id tail, as upstream's toString();
    # a null broker name ("" in the batch: the audit reads "" as null) is Java's "null"
    topics, brokers, ids = ([q[i] for q in queues] for i in range(3))
    want = [_first_word(f"MessageQueue [topic={t}, brokerName={b or 'null'}, queueId={q}]"
                        .encode("utf-8", "replace")) for t, b, q in queues]
    assert message_queue_hashes(topics, brokers, np.array(ids, np.int64)).tolist() == want
