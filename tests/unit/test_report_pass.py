"""The report pass without Spark (`rebalance_udfs.report_pass`, `rebalance_udfs.claim_facts`):
hand-checked claim facts, the edge cases of their sums, which groups get what-if
candidates, and the packing of its tables (`rebalance_udfs.spark.report_pass.pack`).
The Spark tests hold the pass equal to the aggregations it replaced on random groups
(tests/spark/test_group_figures.py, tests/spark/test_what_if_paths.py)."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rebalance_udfs.claim_facts import claim_facts, lag_of
from rebalance_udfs.exact import RATE_TYPE
from rebalance_udfs.report_pass import OBSERVED, report_bucket
from rebalance_udfs.spark.arrow import GROUP_NOT_AUDITED, OFFSETS_NOT_READ, UNMATCHED_SCHEMA
from rebalance_udfs.spark.report_pass import (
    CODES,
    COUNTS,
    EMPTY_NAMED,
    EMPTY_TOPICS,
    LAG_NAMED,
    LAG_UNKNOWN,
    MEMBERLESS,
    MEMBERLESS_NAMED,
    RACK_AWARE,
    RACK_NAMED,
    TABLE,
    _read_streams,
    empty_topics,
    first_named,
    lag_unknown,
    memberless,
    pack,
)
from vocabulary.schemas import ASSIGNED_ARROW_SCHEMA


def _rows(rows: list[dict]) -> pa.Table:
    """Assignment rows of one queue per dict (the report pass's ASSIGNMENT_COLUMNS)."""
    def col(name: str, type_: pa.DataType, default=None) -> pa.Array:
        return pa.array([r.get(name, default) for r in rows], type_)

    base = {"snapshot_id": "s", "cluster": "c"}
    rows = [{**base, **r} for r in rows]
    return pa.table({
        **{k: col(k, pa.string()) for k in ("snapshot_id", "cluster", "consumer_group",
                                            "topic", "broker_name", "client_id",
                                            "broker_room")},
        "queue_id": col("queue_id", pa.int32(), 0),
        "status": col("status", pa.string(), "OK"),
        "lag": col("lag", pa.int64()),
        "rate": pa.array([None if r.get("rate") is None else Decimal(r["rate"])
                          for r in rows], RATE_TYPE),
        "queue_first": col("queue_first", pa.bool_(), True),
        "committed_offset": col("committed_offset", pa.int64()),
        "consumed_offset": col("consumed_offset", pa.int64()),
    })


def _members(rows: list[dict]) -> pa.Table:
    base = {"snapshot_id": "s", "cluster": "c", "strategy": "AVG", "variant": "AVG|[]"}
    rows = [{**base, **r} for r in rows]
    names = ["snapshot_id", "cluster", "consumer_group", "client_id", "topic", "strategy",
             "variant", "message_model", "client_room", "client_addr", "allocation_mode"]
    table = pa.table({n: pa.array([r.get(n) for r in rows], pa.string()) for n in names})
    for name in ("virtual_nodes", "pop_share_queue_num"):
        table = table.append_column(name, pa.array([r.get(name) for r in rows], pa.int32()))
    if any(OBSERVED in r for r in rows):
        table = table.append_column(OBSERVED, pa.array([r.get(OBSERVED, False) for r in rows]))
    return table


def _facts(rows: pa.Table) -> dict:
    out = claim_facts(rows)
    return {(r["consumer_group"], r["topic"], r["client_id"]): r for r in out.to_pylist()}


def test_claim_facts_count_claims_queues_and_exact_sums() -> None:
    rows = _rows([
        # queue 0: contended by a and b (first row carries the queue's facts)
        {"consumer_group": "g", "topic": "t", "queue_id": 0, "client_id": "a",
         "status": "CONTENDED", "lag": 5, "rate": "0.1"},
        {"consumer_group": "g", "topic": "t", "queue_id": 0, "client_id": "b",
         "status": "CONTENDED", "lag": 5, "rate": "0.1", "queue_first": False},
        # queue 1: a alone, lag unknown, rate 0.2 (0.1 + 0.2 is exactly 0.3 here)
        {"consumer_group": "g", "topic": "t", "queue_id": 1, "client_id": "a",
         "rate": "0.2"},
        # queue 2: nobody (null client), lag 7
        {"consumer_group": "g", "topic": "t", "queue_id": 2, "client_id": None,
         "status": "UNCONSUMED", "lag": 7},
        # a broadcast row: counted as the client's row, not as a claim
        {"consumer_group": "g", "topic": "t", "queue_id": 1, "client_id": "z",
         "status": "BROADCAST", "lag": 3, "queue_first": False},
    ])
    f = _facts(rows)
    a, b, none, z = (f[("g", "t", c)] for c in ("a", "b", None, "z"))
    assert (a["rows"], a["claims"], a["contended"], a["queues"]) == (2, 2, 1, 2)
    assert (a["lag_all"], a["lag_all_known"], a["claim_lag"]) == (5, 1, 5)
    assert a["rate_all"] == Decimal("0.300000000") and a["rate_all_known"] == 2
    assert (a["contended_queues"], a["queue_lag"], a["queue_lag_known"]) == (1, 5, 1)
    assert (b["queues"], b["claims"], b["queue_lag"], b["queue_rate"]) == (0, 1, None, None)
    assert (none["unconsumed_queues"], none["claims"], none["queue_lag"]) == (1, 0, 7)
    assert none["rate_all"] is None and none["rate_all_known"] == 0
    assert (z["rows"], z["claims"], z["claim_lag"], z["lag_all"]) == (1, 0, None, 3)


def test_sums_beyond_their_type_fail_as_spark_does() -> None:
    big = 2**62
    rows = _rows([{"consumer_group": "g", "topic": "t", "queue_id": i, "client_id": "a",
                   "lag": big} for i in range(2)])
    with pytest.raises(OverflowError, match=(
            r"^the sum of lag of the queues of client 'a' is beyond its type "
            r"\(snapshot 's', cluster 'c', group 'g', topic 't'\)$")):
        claim_facts(rows)
    # sums that fit are exact even when the int64 fast path cannot be used
    fine = _rows([{"consumer_group": "g", "topic": "t", "queue_id": i, "client_id": "a",
                   "lag": v} for i, v in enumerate((big, -big + 1, 5))])
    assert claim_facts(fine).column("lag_all").to_pylist() == [6]
    with pytest.raises(OverflowError):
        lag_of(pa.array([2**63 - 1]), pa.array([-1]))
    assert lag_of(pa.array([10, None]), pa.array([3, 1])).to_pylist() == [7, None]
    # a commit past the max offset is no backlog: 0, never a negative lag
    assert lag_of(pa.array([50, 50, None]), pa.array([60, 50, None])).to_pylist() == [
        0, 0, None]


def _two_groups() -> tuple[pa.Table, pa.Table]:
    """g1: 2 clients, 4 queues, balanced; g2: client b idle (one queue)."""
    rows = _rows([
        *[{"consumer_group": "g1", "topic": "t", "broker_name": "b0", "queue_id": i,
           "client_id": "a" if i < 2 else "b"} for i in range(4)],
        {"consumer_group": "g2", "topic": "t", "broker_name": "b0", "queue_id": 0,
         "client_id": "a"},
    ])
    members = _members([{"consumer_group": g, "client_id": c, "topic": "t",
                         "client_addr": c} for g in ("g1", "g2") for c in ("a", "b")])
    return rows, members


def _simulated(tables: dict) -> set[str]:
    return set(tables["what_if"].column("consumer_group").to_pylist())


def test_what_if_runs_for_the_chosen_groups() -> None:
    rows, members = _two_groups()
    findings = report_bucket(rows, members, "findings")
    whole = [r for r in findings["group_balance"].to_pylist() if r["topic"] is None]
    assert {r["consumer_group"]: r["findings"] for r in whole} == \
        {"g1": [], "g2": ["IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES"]}
    assert _simulated(findings) == {"g2"}
    assert _simulated(report_bucket(rows, members, "all")) == {"g1", "g2"}
    assert report_bucket(rows, members, "off")["what_if"].num_rows == 0
    # a group with observed rows may get OBSERVED_DRIFT later: simulated too
    observed = _members([{"consumer_group": g, "client_id": c, "topic": "t",
                          "client_addr": c, OBSERVED: g == "g1"}
                         for g in ("g1", "g2") for c in ("a", "b")])
    assert _simulated(report_bucket(rows, observed, "findings")) == {"g1", "g2"}
    assert len(findings["consumer_load"]) == 4
    with pytest.raises(ValueError):
        report_bucket(rows, members, "some")


def test_whole_group_spreads_are_null_where_no_lag_or_rate_is_known() -> None:
    """No offsets and no in_rate (a run without --offsets): the topic rows' lag and rate
    spreads are null, and so are the whole-group rows' (they read 0.0, "no lag"). One
    known lag makes the group's spread known, a client with none counting as 0."""
    spreads = ["min_lag", "max_lag", "mean_lag", "min_in_rate", "max_in_rate",
               "mean_in_rate"]
    rows, members = _two_groups()
    balance = report_bucket(rows, members, "off")["group_balance"].to_pylist()
    assert len(balance) == 4
    assert all(r[c] is None for r in balance for c in spreads)
    known = _rows([{"consumer_group": "g1", "topic": "t", "broker_name": "b0",
                    "queue_id": i, "client_id": "a" if i < 2 else "b",
                    "lag": 7 if i == 0 else None} for i in range(4)])
    whole = next(r for r in report_bucket(known, members, "off")["group_balance"].to_pylist()
                 if r["topic"] is None and r["consumer_group"] == "g1")
    assert (whole["min_lag"], whole["max_lag"], whole["mean_lag"]) == (0, 7, 3.5)
    assert whole["min_in_rate"] is None


def test_packed_tables_come_back_whole() -> None:
    rows, members = _two_groups()
    tables = report_bucket(rows, members, "all")
    assigned = pa.table({f.name: pa.array([], f.type) for f in ASSIGNED_ARROW_SCHEMA},
                        schema=ASSIGNED_ARROW_SCHEMA)
    packed = pack(assigned, tables)
    # one row per table with rows and one of their counts; no assignment rows here
    assert packed.num_rows == 4

    def back(name: str) -> pa.Table:
        blob = packed.filter(pc.equal(packed.column(TABLE), CODES[name]))
        return pa.Table.from_batches(list(_read_streams(iter(
            blob.select(["_blob"]).to_batches()))))

    for name, table in tables.items():
        assert back(name).equals(table), name
    assert sorted(back(COUNTS).to_pylist(), key=lambda r: r["table"]) == [
        {"table": name, "snapshot_id": "s", "cluster": "c", "rows": tables[name].num_rows,
         "consumer_group": None, "detail": None} for name in sorted(tables)]
    empty = pack(assigned, {name: t.slice(0, 0) for name, t in tables.items()})
    assert empty.num_rows == 0


def test_churn_compares_each_snapshot_with_its_predecessor() -> None:
    """s1 in the output (prior rows), s2 and s3 in the run: b joins at s2 and takes queue
    1 from a (committed 10, consumed 14: 4 duplicates); nothing changes at s3."""
    def snapshot(snap: str, owners: list[str]) -> pa.Table:
        return _rows([{"snapshot_id": snap, "consumer_group": "g", "topic": "t",
                       "broker_name": "b0", "queue_id": i, "client_id": c,
                       "committed_offset": 10, "consumed_offset": 14}
                      for i, c in enumerate(owners)])

    rows = pa.concat_tables([snapshot("s2", ["a", "b"]), snapshot("s3", ["a", "b"])])
    members = _members([{"snapshot_id": s, "consumer_group": "g", "client_id": c,
                         "topic": "t", "client_addr": c} for s in ("s2", "s3")
                        for c in ("a", "b")])
    prior = snapshot("s1", ["a", "a"])
    pairs = pa.table({"cluster": ["c", "c"], "snapshot_id": ["s2", "s3"],
                      "previous_snapshot_id": ["s1", "s2"], "previous_in_run": [False, True]})
    churn = {r["snapshot_id"]: r for r in
             report_bucket(rows, members, "off", pairs, prior, None)["churn"].to_pylist()}
    s2, s3 = churn["s2"], churn["s3"]
    assert (s2["clients_before"], s2["clients_after"], s2["clients_joined"]) == (1, 2, ["b"])
    assert (s2["queues_moved"], s2["estimated_duplicates"]) == (1, 4)
    assert [(m["queue_id"], m["from_client"], m["to_client"]) for m in s2["moves"]] == \
        [(1, "a", "b")]
    # prior clients known only by their claims: topics unknown, no subscription change
    assert not s2["_subscription"]
    assert (s3["queues_moved"], s3["clients_joined"], s3["clients_left"]) == (0, [], [])


def test_groups_with_queues_and_no_known_lag_are_counted_when_offsets_are_expected() -> None:
    rows, members = _two_groups()  # no committed offsets: no lag anywhere
    known = rows.set_column(rows.schema.get_field_index("lag"), "lag",
                            pa.array([5, 5, 5, 5, None], pa.int64()))
    tables = report_bucket(known, members, "off")
    assert lag_unknown(tables["group_balance"]).column("consumer_group").to_pylist() == ["g2"]
    assigned = pa.table({f.name: pa.array([], f.type) for f in ASSIGNED_ARROW_SCHEMA},
                        schema=ASSIGNED_ARROW_SCHEMA)

    def counted(lag_expected: bool) -> dict:
        packed = pack(assigned, tables, lag_expected=lag_expected)
        blob = packed.filter(pc.equal(packed.column(TABLE), CODES[COUNTS]))
        counts = pa.Table.from_batches(list(_read_streams(iter(
            blob.select(["_blob"]).to_batches()))))
        return {(r["table"], r["consumer_group"]): r["rows"] for r in counts.to_pylist()}

    assert counted(True)[LAG_UNKNOWN, None] == 1
    assert counted(True)[LAG_NAMED, "g2"] == 1
    assert not {t for t, _ in counted(False)} & {LAG_UNKNOWN, LAG_NAMED}


def test_groups_assigned_by_rack_are_counted_and_named_with_the_tables() -> None:
    """The bucket's Kafka groups their clients would assign by rack (`rebalance_udfs.racks`)
    ride in the counts stream: how many per snapshot and cluster, and the first by name;
    a bucket without any adds no row."""
    assigned = pa.table({f.name: pa.array([], f.type) for f in ASSIGNED_ARROW_SCHEMA},
                        schema=ASSIGNED_ARROW_SCHEMA)
    racked = pa.table({"snapshot_id": ["s1"] * 7, "cluster": ["c"] * 7,
                       "consumer_group": [f"g{i}" for i in (6, 5, 4, 3, 2, 1, 0)]})

    def counted(racked: pa.Table | None) -> list[tuple]:
        packed = pack(assigned, {}, racked=racked)
        blob = packed.filter(pc.equal(packed.column(TABLE), CODES[COUNTS]))
        if not blob.num_rows:  # nothing to count: no stream
            return []
        counts = pa.Table.from_batches(list(_read_streams(iter(
            blob.select(["_blob"]).to_batches()))))
        return sorted((r["table"], r["consumer_group"] or "", r["rows"])
                      for r in counts.to_pylist())

    assert counted(racked) == [(RACK_AWARE, "", 7),
                               *((RACK_NAMED, f"g{i}", 1) for i in range(5))]
    assert counted(racked.slice(0, 0)) == counted(None) == []


def test_groups_subscribing_a_topic_with_no_readable_queue_are_counted_and_named() -> None:
    """g1's clients subscribe t (2 queues) and four topics no queue row has; g2 only t.
    The whole-group row of g1 has no finding (t is even): the counts stream counts it and
    names it with its first three empty topics, for the run's warning."""
    rows = _rows([{"consumer_group": g, "topic": "t", "broker_name": "b0", "queue_id": i,
                   "client_id": "a" if i == 0 else "b"} for g in ("g1", "g2") for i in range(2)])
    members = _members([{"consumer_group": g, "client_id": c, "topic": t, "client_addr": c}
                        for g, topics in (("g1", ("t", "t9", "t8", "t7", "t6")), ("g2", ("t",)))
                        for c in ("a", "b") for t in topics])
    tables = report_bucket(rows, members, "off")
    whole = {r["consumer_group"]: r for r in tables["group_balance"].to_pylist()
             if r["topic"] is None}
    assert whole["g1"]["findings"] == [] and whole["g2"]["findings"] == []
    # nor do its empty topics' rows: queues 0, every client idle on them, no finding code
    empty = [r for r in tables["group_balance"].to_pylist() if r["topic"] in ("t6", "t9")]
    assert [(r["queues"], r["findings"]) for r in empty] == [(0, []), (0, [])]
    assert empty_topics(tables["group_balance"]).to_pylist() == [
        {"snapshot_id": "s", "cluster": "c", "consumer_group": "g1",
         "detail": "t6, t7, t8 and 1 more"}]
    assigned = pa.table({f.name: pa.array([], f.type) for f in ASSIGNED_ARROW_SCHEMA},
                        schema=ASSIGNED_ARROW_SCHEMA)
    packed = pack(assigned, tables)
    blob = packed.filter(pc.equal(packed.column(TABLE), CODES[COUNTS]))
    counts = pa.Table.from_batches(list(_read_streams(iter(blob.select(["_blob"]).to_batches()))))
    said = {(r["table"], r["consumer_group"], r["detail"]): r["rows"] for r in counts.to_pylist()
            if r["table"] in (EMPTY_TOPICS, EMPTY_NAMED)}
    assert said == {(EMPTY_TOPICS, None, None): 1,
                    (EMPTY_NAMED, "g1", "t6, t7, t8 and 1 more"): 1}
    # a bucket whose groups' topics all have queues counts none
    only_g2 = report_bucket(rows.filter(pc.equal(rows.column("consumer_group"), "g2")),
                            members.filter(pc.equal(members.column("consumer_group"), "g2")),
                            "off")
    assert empty_topics(only_g2["group_balance"]).num_rows == 0


def test_groups_with_offsets_and_no_member_reading_a_queue_are_counted_and_named() -> None:
    """The offsets rows no queue took because their group has no queue to audit name
    that group, once per snapshot and cluster however many rows it has; rows of a queue
    the group does not read (OFFSETS_NOT_READ) name nobody: that group has members."""
    def row(group: str | None, queue: int, reason: str, snapshot: str = "s1") -> dict:
        return {"snapshot_id": snapshot, "cluster": "c", "consumer_group": group,
                "topic": "T", "broker_name": "b", "queue_id": queue,
                "committed_offset": 1, "consumed_offset": None, "reason": reason}
    unmatched = pa.Table.from_pylist([
        row("gone", 0, GROUP_NOT_AUDITED), row("gone", 1, GROUP_NOT_AUDITED),
        row("gone", 0, GROUP_NOT_AUDITED, "s2"), row("live", 9, OFFSETS_NOT_READ),
        row(None, 0, GROUP_NOT_AUDITED), *(row(f"g{i}", 0, GROUP_NOT_AUDITED)
                                           for i in range(6))], schema=UNMATCHED_SCHEMA)
    assert sorted(memberless(unmatched).to_pylist(), key=lambda r: tuple(r.values())) == [
        {"snapshot_id": s, "cluster": "c", "consumer_group": g}
        for s, g in [*(("s1", f"g{i}") for i in range(6)), ("s1", "gone"), ("s2", "gone")]]
    assigned = pa.table({f.name: pa.array([], f.type) for f in ASSIGNED_ARROW_SCHEMA},
                        schema=ASSIGNED_ARROW_SCHEMA)

    def counted(unmatched: pa.Table) -> dict:
        packed = pack(assigned, {"unmatched_offsets": unmatched})
        blob = packed.filter(pc.equal(packed.column(TABLE), CODES[COUNTS]))
        counts = pa.Table.from_batches(list(_read_streams(iter(
            blob.select(["_blob"]).to_batches()))))
        return {(r["table"], r["snapshot_id"], r["consumer_group"]): r["rows"]
                for r in counts.to_pylist() if r["table"] in (MEMBERLESS, MEMBERLESS_NAMED)}

    assert counted(unmatched) == {
        (MEMBERLESS, "s1", None): 7, (MEMBERLESS, "s2", None): 1,
        **{(MEMBERLESS_NAMED, "s1", g): 1 for g in ("g0", "g1", "g2", "g3", "g4")},
        (MEMBERLESS_NAMED, "s2", "gone"): 1}
    assert counted(unmatched.filter(pc.equal(unmatched.column("reason"),
                                             OFFSETS_NOT_READ))) == {}


def test_the_first_groups_by_name_are_named_per_snapshot_and_cluster() -> None:
    groups = pa.table({"snapshot_id": ["s2", "s1", "s1", "s1", "s2", "s1"],
                       "cluster": ["c", "c", "d", "c", "c", "c"],
                       "consumer_group": ["z", "m", "q", "b", "a", "k"]})
    named = first_named(groups, 2).to_pylist()
    assert [(r["snapshot_id"], r["cluster"], r["consumer_group"]) for r in named] == [
        ("s1", "c", "b"), ("s1", "c", "k"), ("s1", "d", "q"), ("s2", "c", "a"),
        ("s2", "c", "z")]
    assert first_named(groups.slice(0, 0)).num_rows == 0


@pytest.mark.parametrize(("strategy", "flagged"), [("sticky", False),
                                                   ("cooperative-sticky", False),
                                                   ("roundrobin", False), ("range", True),
                                                   ("AVG", True)])
def test_a_pooled_assignor_is_not_blamed_for_one_topics_split(strategy: str,
                                                             flagged: bool) -> None:
    """a holds both queues of t1, b both of t2: 2 each, a balanced total, as a sticky
    assignor that kept its owners leaves it. Each topic alone is uneven (max 2 where 1 is
    even): STRATEGY_IMBALANCE for the strategies that split each topic on its own, not for
    Kafka's pooled assignors, which balance a client's total (the group has no skew)."""
    rows = _rows([{"consumer_group": "g", "topic": t, "broker_name": "b0", "queue_id": i,
                   "client_id": c} for t, c in (("t1", "a"), ("t2", "b")) for i in range(2)])
    members = _members([{"consumer_group": "g", "client_id": c, "topic": t,
                         "client_addr": c, "strategy": strategy, "variant": strategy}
                        for c in ("a", "b") for t in ("t1", "t2")])
    balance = report_bucket(rows, members, "off")["group_balance"].to_pylist()
    whole = next(r for r in balance if r["topic"] is None)
    assert whole["skew"] == 0
    for row in balance:
        assert ("STRATEGY_IMBALANCE" in row["findings"]) == flagged, row
