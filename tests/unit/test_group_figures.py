"""The group-figures kernel without Spark: the buckets Spark can hand it that the oracle
tests (tests/spark/test_group_figures.py) do not build, and one hand-checked group."""

from __future__ import annotations

import random
from decimal import Decimal

import numpy as np
import pyarrow as pa

from rebalance_udfs.exact import RATE_TYPE
from rebalance_udfs.group_figures import (
    FACT_COLUMNS,
    FACT_RATES,
    MEMBER_COLUMNS,
    _max_string,
    _sorted_sets,
    group_figures,
)
from vocabulary.schemas import BALANCE_FIGURES_ARROW_SCHEMA, LOAD_FIGURES_ARROW_SCHEMA


def _members(rows: list[dict]) -> pa.Table:
    return pa.table({c: pa.array([r.get(c) for r in rows], pa.string())
                     for c in MEMBER_COLUMNS})


def _facts(rows: list[dict]) -> pa.Table:
    def column(name: str) -> pa.Array:
        values = [r.get(name) for r in rows]
        if name in FACT_RATES:
            return pa.array([None if v is None else Decimal(v) for v in values], RATE_TYPE)
        if name in FACT_COLUMNS[:5]:
            return pa.array(values, pa.string())
        return pa.array(values, pa.int64() if "lag" in name else pa.int32())
    return pa.table({c: column(c) for c in FACT_COLUMNS})


def _member(client: str, topic: str | None, **extra) -> dict:
    return {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "client_id": client,
            "topic": topic, "strategy": "AVG", "variant": "AVG|[]", **extra}


def _split(out: tuple[pa.Table, pa.Table]) -> tuple[list[dict], list[dict]]:
    load, balance = out
    assert load.schema == LOAD_FIGURES_ARROW_SCHEMA
    assert balance.schema == BALANCE_FIGURES_ARROW_SCHEMA
    return load.to_pylist(), balance.to_pylist()


def test_an_empty_bucket_gives_no_rows() -> None:
    load, balance = _split(group_figures(_facts([]), _members([])))
    assert load == [] and balance == []


def test_members_without_claims_idle_and_their_topic_is_empty() -> None:
    members = _members([_member("b", "T"), _member("a", "T"), _member("a", None)])
    load, balance = _split(group_figures(_facts([]), members))
    assert [(r["client_id"], r["queues"], r["idle"], r["topics"]) for r in load] == \
        [("b", 0, True, ["T"]), ("a", 0, True, ["T"])]
    by_topic = {r["topic"]: r for r in balance}
    assert by_topic["T"]["_empty_topics"] == ["T"] and by_topic["T"]["queues"] == 0
    whole = by_topic[None]
    assert (whole["clients"], whole["idle_clients"], whole["queues"]) == (2, 2, 0)
    assert whole["_empty_topics"] == ["T"]
    assert whole["findings"] == ["IDLE_CLIENTS"]


def test_one_group_by_hand() -> None:
    """Two clients, topic T with 3 queues: a holds 2 (rates 0.1 and 0.2), b holds 1 (0.3);
    the exact rate sums are 0.3 and 0.6, and the mean 0.3 (not 0.30000000000000004)."""
    members = _members([_member("a", "T", client_addr="h1"),
                        _member("a", "T", client_addr="h2"), _member("b", "T")])
    fact = {"snapshot_id": "s", "cluster": "c", "consumer_group": "g", "topic": "T",
            "lag_all_known": 0, "contended": 0, "claim_lag": None, "queue_lag_known": 0,
            "unconsumed_queues": 0, "contended_queues": 0}
    facts = _facts([
        {**fact, "client_id": "a", "rows": 2, "claims": 2, "queues": 2, "rate_all": "0.3",
         "rate_all_known": 2, "claim_rate": "0.3", "queue_rate": "0.3",
         "queue_rate_known": 2},
        {**fact, "client_id": "b", "rows": 1, "claims": 1, "queues": 1, "rate_all": "0.3",
         "rate_all_known": 1, "claim_rate": "0.3", "queue_rate": "0.3",
         "queue_rate_known": 1},
    ])
    load, balance = _split(group_figures(facts, members))
    assert {r["client_id"]: (r["queues"], r["in_rate"], r["connections"]) for r in load} == \
        {"a": (2, Decimal("0.3"), 2), "b": (1, Decimal("0.3"), 1)}
    whole = next(r for r in balance if r["topic"] is None)
    assert whole["in_rate_total"] == Decimal("0.6")
    assert whole["mean_in_rate"] == Decimal("0.3")
    assert (whole["max_queues"], whole["ideal_max"], whole["pooled_max"], whole["skew"]) == \
        (2, 2, 2, 0)
    assert whole["duplicate_ids"] == ["a"]
    assert whole["findings"] == ["DUPLICATE_CLIENT_ID"]


def test_sorted_sets_and_max_strings_follow_code_point_order() -> None:
    """The string reductions against Python's own: distinct non-null values per code in
    code-point order (Spark's order of UTF-8 strings), numpy or Arrow input alike."""
    rng = random.Random(5)
    words = ["a", "B", "b", "", "é", "ÿ", "z", "Ω", "中", "a b", None]
    codes = np.array([rng.randrange(6) for _ in range(400)], np.int64)
    values = [rng.choice(words) for _ in range(400)]
    keep = np.array([rng.random() < 0.8 for _ in range(400)])
    expected = [sorted({v for c, v, k in zip(codes, values, keep, strict=True)
                        if c == g and k and v is not None}) for g in range(7)]
    for given in (np.array(values, dtype=object), pa.array(values, pa.string())):
        assert _sorted_sets(codes, given, 7, keep).to_pylist() == expected
        assert _max_string(codes, given, 7).tolist() == [
            max((v for c, v in zip(codes, values, strict=True) if c == g and v is not None),
                default=None) for g in range(7)]
    assert _sorted_sets(codes, np.array(values, dtype=object), 7,
                        np.zeros(400, bool)).to_pylist() == [[]] * 7


def test_pop_members_on_a_strategy_the_broker_does_not_pop_with_idle_as_broker_ones() -> None:
    """POP on CONSISTENT_HASH is allocated as under BROKER (one owner per queue): its idle
    clients are idle, as a BROKER group's are; POP on AVG shares the queues (no idle
    findings). Topic T has 1 queue, held by a; b and c hold none."""
    fact = {"snapshot_id": "s", "cluster": "c", "topic": "T", "client_id": "a",
            "lag_all_known": 0, "contended": 0, "claim_lag": None, "queue_lag_known": 0,
            "unconsumed_queues": 0, "contended_queues": 0, "rows": 1, "claims": 1,
            "queues": 1, "rate_all_known": 0, "queue_rate_known": 0}
    findings = {}
    for group, strategy, mode in (("pop_hash", "CONSISTENT_HASH", "POP"),
                                  ("broker_hash", "CONSISTENT_HASH", "BROKER"),
                                  ("pop_avg", "AVG", "POP")):
        members = _members([_member(c, "T", consumer_group=group, strategy=strategy,
                                    variant=f"{strategy}|[]", allocation_mode=mode)
                            for c in "abc"])
        _, balance = _split(group_figures(_facts([{**fact, "consumer_group": group}]),
                                          members))
        findings[group] = {r["topic"]: r["findings"] for r in balance}
    unsupported = ["IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES", "BROKER_UNSUPPORTED_STRATEGY"]
    assert findings["broker_hash"] == {"T": unsupported, None: unsupported}
    assert findings["pop_hash"] == findings["broker_hash"]
    assert findings["pop_avg"] == {"T": [], None: []}
