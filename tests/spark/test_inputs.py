"""Input contracts: wrong shapes stop the run with a clear message; bad rows become rejects."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from jobs import validate
from jobs.persist import Persisted
from jobs.validate import conform, validate_members, validate_offsets, validate_queues
from vocabulary.errors import InputError
from vocabulary.partitions import snapshot_id_fits

pytestmark = pytest.mark.spark

QUEUE_SCHEMA = "snapshot_id string, cluster string, topic string, broker_name string, queue_id long"


def test_missing_required_column_names_table_and_column(spark) -> None:
    df = spark.createDataFrame([("s", "c", "t")],
                               "snapshot_id string, cluster string, topic string")
    with pytest.raises(InputError, match=r"queues table: required column `queue_id` \(int\) "
                                         r"is missing"):
        conform(df, "queues")


def test_mistyped_column_names_table_and_column(spark) -> None:
    df = spark.createDataFrame([("s", "c", "g", "id", "AVG", "x")],
                               "snapshot_id string, cluster string, consumer_group string, "
                               "client_id string, strategy string, strategy_params string")
    with pytest.raises(InputError, match=r"members table: column `strategy_params` is string, "
                                         r"expected map<string,string>"):
        conform(df, "members")


def test_an_integer_column_pandas_made_float_says_how_to_write_it(spark, tmp_path) -> None:
    """An offsets frame whose unknown offsets are NaN has float columns; the message says
    so, and the nullable Int64 it points to is read, its missing values null."""
    from deltalake import write_deltalake

    frame = pd.DataFrame({"snapshot_id": ["s"] * 2, "cluster": ["c"] * 2,
                          "consumer_group": ["g"] * 2, "topic": ["t"] * 2,
                          "broker_name": ["b"] * 2, "queue_id": [0, 1],
                          "committed_offset": [5, None]})
    assert frame["committed_offset"].dtype == "float64"
    write_deltalake(str(tmp_path / "float"), frame)
    df = spark.read.parquet(str(tmp_path / "float"))
    with pytest.raises(InputError, match=r"column `committed_offset` is double, expected "
                                         r"bigint \(pandas makes an integer column holding a "
                                         r"missing value float: write it as pandas' nullable "
                                         r"Int64"):
        conform(df, "offsets")
    write_deltalake(str(tmp_path / "int64"),
                    frame.astype({"committed_offset": "Int64"}))
    rows = conform(spark.read.parquet(str(tmp_path / "int64")), "offsets").collect()
    assert sorted((r.queue_id, r.committed_offset) for r in rows) == [(0, 5), (1, None)]


def test_absent_nullable_columns_are_null_and_extras_dropped(spark) -> None:
    df = spark.createDataFrame([("s", "c", "t", "b", 3, "extra")], QUEUE_SCHEMA + ", junk string")
    out = conform(df, "queues")
    assert out.columns == ["snapshot_id", "cluster", "captured_at", "topic", "broker_name",
                           "queue_id", "readable", "broker_room", "max_offset", "in_rate"]
    row = out.collect()[0]
    assert row.readable is None and row.queue_id == 3


def test_a_void_column_is_null_everywhere_unless_it_is_required(spark) -> None:
    """pandas and pyarrow type a column null everywhere (Kafka's broker_name) as void: a
    nullable one reads as left out; a required one stops the run, named once."""
    df = spark.createDataFrame([("s", "c", "t", None, 3, None)],
                               QUEUE_SCHEMA.replace("broker_name string", "broker_name void")
                               + ", readable void")
    row = conform(df, "queues").collect()[0]
    assert row.broker_name is None and row.readable is None and row.queue_id == 3
    assert dict(conform(df, "queues").dtypes)["broker_name"] == "string"

    voids = "snapshot_id void, cluster void, topic void, broker_name void, queue_id long"
    with pytest.raises(InputError, match=(
            r"^queues table: required columns `snapshot_id` \(string\), `cluster` "
            r"\(string\), `topic` \(string\) have type void: no value anywhere \(written "
            r"from a column null everywhere, or from an empty frame\)\. Columns found")):
        conform(spark.createDataFrame([(None, None, None, None, 3)], voids), "queues")
    # an empty pandas frame writes its text columns as void: no rows, the empty input it
    # is (a warning, as a typed empty table), not exit 2
    empty = conform(spark.createDataFrame([], voids), "queues")
    assert empty.count() == 0 and empty.columns[:3] == ["snapshot_id", "cluster", "captured_at"]
    assert dict(empty.dtypes)["queue_id"] == "int"


def test_tables_pandas_wrote_with_all_null_columns_are_audited(spark, tmp_path) -> None:
    """A Kafka topology written from pandas with deltalake: broker_name None everywhere
    (as the contract asks for partitions), members without rooms or parameters. Every row
    is usable, read through the Delta log and files as a run reads them."""
    from deltalake import write_deltalake

    from tests.support.delta_inputs import read_written
    from tests.support.outputs import member_rows, queue_rows

    queues = queue_rows(["A"]).assign(broker_name=None, readable=None)
    members = member_rows(["A"]).assign(strategy="range", client_room=None,
                                        strategy_params=None)
    paths = {}
    for name, frame in (("queues", queues), ("members", members)):
        paths[name] = str(tmp_path / name)
        write_deltalake(paths[name], frame)
    read = read_written(spark, paths, Persisted())

    assert read.rejects.count() == 0
    assert sorted(r.queue_id for r in read.queues.collect()) == [0, 1, 2, 3]
    assert {r.broker_name for r in read.queues.collect()} == {None}
    assert read.members.count() == 2


def _params_read(spark, tmp_path, members) -> dict:
    """client_id -> (strategy_params, virtual_nodes) of `members` (a pandas frame or Arrow
    table, written as given beside queues of snapshot A) read and validated as a run reads
    them; no row may be rejected."""
    from deltalake import write_deltalake

    from tests.support.delta_inputs import read_written
    from tests.support.outputs import queue_rows

    paths = {"queues": str(tmp_path / "queues"), "members": str(tmp_path / "members")}
    write_deltalake(paths["queues"], queue_rows(["A"]))
    write_deltalake(paths["members"], members)
    read = read_written(spark, paths, Persisted())
    assert read.rejects.count() == 0
    return {r.client_id: (r.strategy_params, r.virtual_nodes) for r in read.members.collect()}


def test_strategy_params_written_as_dicts_read_as_maps(spark, tmp_path) -> None:
    """pandas and pyarrow write a column of dicts as a struct with a field per key any row
    has: read as the map each row's dict spells (its keys with a value; numbers as text),
    through the Delta log and files as a run reads them. A nested struct stays refused."""
    from tests.support.outputs import member_rows

    members = member_rows(["A"], clients=3).assign(
        strategy=["CONSISTENT_HASH", "CONSISTENT_HASH", "AVG"],
        strategy_params=[{"virtual_nodes": 4, "never": None}, {"rooms": 2, "never": None},
                         None])
    assert _params_read(spark, tmp_path, members) == {
        "c1": ({"virtual_nodes": "4"}, 4), "c2": ({"rooms": "2"}, None), "c3": (None, None)}

    nested = spark.createDataFrame(
        [("s", "c", "g", "id", "AVG", (("x",),))],
        "snapshot_id string, cluster string, consumer_group string, client_id string, "
        "strategy string, strategy_params struct<a: struct<b: string>>")
    with pytest.raises(InputError, match=r"column `strategy_params` is struct<a:struct<b:"
                                         r"string>>, expected map<string,string>"):
        conform(nested, "members")


def test_strategy_params_as_a_map_of_numbers_read_as_text(spark, tmp_path) -> None:
    """A map<string,int> (pyarrow's map of a dict column typed so, or Spark's) was refused
    with "expected map<string,string>", while the same keys as a struct of ints were read:
    its values read as text too, and a map with other than text keys stays refused."""
    import pyarrow as pa

    from tests.support.outputs import member_rows

    members = pa.Table.from_pandas(member_rows(["A"], clients=2).assign(
        strategy="CONSISTENT_HASH"), preserve_index=False)
    members = members.append_column("strategy_params", pa.array(
        [[("virtual_nodes", 4)], None], pa.map_(pa.string(), pa.int32())))
    assert _params_read(spark, tmp_path, members) == {"c1": ({"virtual_nodes": "4"}, 4),
                                                       "c2": (None, None)}

    keyed_by_number = spark.createDataFrame(
        [("s", "c", "g", "id", "AVG", {1: "x"})],
        "snapshot_id string, cluster string, consumer_group string, client_id string, "
        "strategy string, strategy_params map<int,string>")
    with pytest.raises(InputError, match=r"column `strategy_params` is map<int,string>, "
                                         r"expected map<string,string>"):
        conform(keyed_by_number, "members")


def test_queue_rows_that_cannot_be_used_are_rejected_with_reasons(spark) -> None:
    rows = [
        ("s", "c", "t", "b", 0),        # fine
        ("s", "c", "t", "b", 1),        # exact duplicate pair: one kept, one rejected
        ("s", "c", "t", "b", 1),
        ("s", "c", "t", "b", -1),       # negative id
        ("s", "c", None, "b", 2),       # null topic
        ("s", "c", "t", "b", 2**31),    # does not fit an int
    ]
    good, bad = validate_queues(
        conform(spark.createDataFrame(rows, QUEUE_SCHEMA), "queues"), Persisted())
    assert_df_equality(good.select("queue_id"),
                       spark.createDataFrame([(0,), (1,)], "queue_id int"),
                       ignore_row_order=True, ignore_nullable=True)
    reasons = sorted((json.loads(r.row_json)["queue_id"], r.reason, r.source_table)
                     for r in bad.collect())
    assert reasons == [
        (-1, "queue_id is negative", "queues"),
        (1, "exact duplicate of another row", "queues"),
        (2, "topic is null", "queues"),
        (2**31, "queue_id does not fit an int", "queues"),
    ]


def test_conflicting_rows_for_one_queue_are_all_rejected(spark) -> None:
    rows = [("s", "c", "t", "b", 0, 10), ("s", "c", "t", "b", 0, 20)]
    df = conform(spark.createDataFrame(rows, QUEUE_SCHEMA + ", max_offset long"), "queues")
    good, bad = validate_queues(df, Persisted())
    assert good.count() == 0
    assert {r.reason for r in bad.collect()} == {
        "conflicting rows for the same snapshot_id, cluster, topic, broker_name, queue_id"}


def test_an_empty_broker_name_is_the_null_one(spark) -> None:
    """A Kafka partition's broker_name is null, sorting as "" (SPEC): a queue written once
    with each spelling was two queues of one id, both assigned. "" now reads as null, in
    every table with the column."""
    rows = [("s", "c", "t", None, 0), ("s", "c", "t", "", 0), ("s", "c", "t", "", 1)]
    good, bad = validate_queues(
        conform(spark.createDataFrame(rows, QUEUE_SCHEMA), "queues"), Persisted())
    assert sorted((r.broker_name, r.queue_id) for r in good.collect()) == [(None, 0), (None, 1)]
    assert [r.reason for r in bad.collect()] == ["exact duplicate of another row"]
    offsets = conform(spark.createDataFrame(
        [("s", "c", "g", "t", "", 0, 5)],
        "snapshot_id string, cluster string, consumer_group string, topic string, "
        "broker_name string, queue_id int, committed_offset long"), "offsets")
    assert [r.broker_name for r in offsets.collect()] == [None]


def test_keys_whose_hashes_collide_are_told_apart(spark) -> None:
    """Duplicates are first found by a hash of the key, which skips nulls: these two keys
    hash alike, yet neither row is a duplicate of the other."""
    rows = [("s", "c", "t", None, 1), ("s", "c", None, "t", 1)]
    df = conform(spark.createDataFrame(rows, QUEUE_SCHEMA), "queues")
    key = ["snapshot_id", "cluster", "topic", "broker_name", "queue_id"]
    assert df.select(F.xxhash64(*key).alias("h")).distinct().count() == 1
    good, bad = validate_queues(df, Persisted())
    assert [(r.topic, r.broker_name) for r in good.collect()] == [("t", None)]
    assert [r.reason for r in bad.collect()] == ["topic is null"]


def test_member_rows_with_unknown_strategy_or_bad_params_are_rejected(spark) -> None:
    schema = ("snapshot_id string, cluster string, consumer_group string, client_id string, "
              "topic string, strategy string, message_model string, "
              "strategy_params map<string,string>")
    rows = [
        ("s", "c", "g", "a", "t", "AVG", None, None),
        ("s", "c", "g", "b", "t", "AVERAGE", None, None),
        ("s", "c", "g", "c", "t", "AVG", "PUSH", None),
        ("s", "c", "g", "d", "t", "CONSISTENT_HASH", None, {"virtual_nodes": "ten"}),
        ("s", "c", "g", "e", "t", "CONSISTENT_HASH", None, {"virtual_nodes": "-1"}),
        ("s", "c", "g", None, "t", "AVG", None, None),
        ("s", "c", "g", "f", "t", "CONFIG", None, {"queues": "t@b:1, t@b:x"}),
        ("s", "c", "g", "h", "t", "CONFIG", None, {"queues": "t@room@b:0, t@b:1"}),
        ("s", "c", "g", "i", "t", "CONSISTENT_HASH", None, {"virtual_nodes": "100001"}),
        # whole numbers an int cannot hold are out of range, not "not an integer"
        ("s", "c", "g", "j", "t", "CONSISTENT_HASH", None, {"virtual_nodes": "99999999999"}),
        ("s", "c", "g", "k", "t", "CONSISTENT_HASH", None, {"virtual_nodes": " -99999999999"}),
        ("s", "c", "g", "l", "t", "AVG", None, {"pop_share_queue_num": "99999999999"}),
        ("s", "c", "g", "m", "t", "CONSISTENT_HASH", None, {"virtual_nodes": " +12 "}),
    ]
    good, bad = validate_members(conform(spark.createDataFrame(rows, schema), "members"),
                                 Persisted())
    assert_df_equality(good.select("client_id"),
                       spark.createDataFrame([("a",), ("h",), ("m",)], "client_id string"),
                       ignore_row_order=True, ignore_nullable=True)
    reasons = {json.loads(r.row_json)["client_id"]: r.reason for r in bad.collect()}
    assert reasons["b"].startswith("unknown strategy (supported: AVG, ")
    assert reasons["c"] == "message_model must be CLUSTERING or BROADCASTING"
    assert reasons["d"] == "strategy_params.virtual_nodes is not an integer"
    assert reasons["e"] == "strategy_params.virtual_nodes is negative"
    assert reasons[None] == "client_id is null"
    assert reasons["f"] == "strategy_params.queues is not a comma list of topic@broker:queue_id"
    assert reasons["i"] == "strategy_params.virtual_nodes is above 100000"
    assert reasons["j"] == "strategy_params.virtual_nodes is above 100000"
    assert reasons["k"] == "strategy_params.virtual_nodes is negative"
    assert reasons["l"] == "strategy_params.pop_share_queue_num is beyond a Java int"


def test_rows_with_a_nul_in_any_text_are_rejected_naming_the_column(spark) -> None:
    # the kernels' pandas and numpy end a string at a NUL: 'a' and 'a\x00' would be one
    # client, so such a row is rejected instead of audited as another row's key
    members_schema = ("snapshot_id string, cluster string, consumer_group string, "
                      "client_id string, topic string, strategy string, "
                      "strategy_params map<string,string>")
    members = [
        ("s", "c", "g", "a", "t", "AVG", None),
        ("s", "c", "g", "a\x00", "t", "AVG", None),
        ("s", "c", "g\x00x", "b", "t", "AVG", None),
        ("s", "c", "g", "d", "t", "MACHINE_ROOM", {"rooms": "r1,\x00r2"}),
        ("s", "c", "g", "e", "t", "AVG", {"x\x00": "1"}),
        ("s", "c", "g", "f", "t", "AVG", {"rooms": None}),
    ]
    good, bad = validate_members(
        conform(spark.createDataFrame(members, members_schema), "members"), Persisted())
    assert sorted(r.client_id for r in good.collect()) == ["a", "f"]
    assert sorted((json.loads(r.row_json)["client_id"], r.reason) for r in bad.collect()) == [
        ("a\x00", "client_id contains a NUL character"),
        ("b", "consumer_group contains a NUL character"),
        ("d", "strategy_params contains a NUL character"),
        ("e", "strategy_params contains a NUL character"),
    ]
    queues = [("s", "c", "t", "b", 0), ("s", "c", "t\x00", "b", 0), ("s\x00", "c", "t", "b", 1),
              ("s", "c", None, "b\x00", 2)]
    good, bad = validate_queues(
        conform(spark.createDataFrame(queues, QUEUE_SCHEMA), "queues"), Persisted())
    assert good.count() == 1
    assert sorted(r.reason for r in bad.collect()) == [  # every failed check, in order
        "snapshot_id contains a NUL character", "topic contains a NUL character",
        "topic is null; broker_name contains a NUL character"]
    offsets_schema = ("snapshot_id string, cluster string, consumer_group string, "
                      "topic string, broker_name string, queue_id int")
    good, bad = validate_offsets(conform(spark.createDataFrame(
        [("s", "c", "g", "t", "b\x00", 0)], offsets_schema), "offsets"), Persisted())
    assert good.count() == 0
    assert [r.reason for r in bad.collect()] == ["broker_name contains a NUL character"]


def test_offsets_validation(spark) -> None:
    schema = ("snapshot_id string, cluster string, consumer_group string, topic string, "
              "broker_name string, queue_id int, committed_offset long")
    rows = [("s", "c", "g", "t", None, 0, 5), ("s", "c", None, "t", None, 1, 5)]
    good, bad = validate_offsets(conform(spark.createDataFrame(rows, schema), "offsets"),
                                 Persisted())
    assert good.count() == 1
    assert [r.reason for r in bad.collect()] == ["consumer_group is null"]


def test_negative_offsets_are_rejected_an_unknown_one_is_null(spark) -> None:
    """-1, what some tools print for "no offset", would count as an offset (a lag one past
    the max offset); every offset column is checked, and null stays unknown."""
    schema = ("snapshot_id string, cluster string, consumer_group string, topic string, "
              "broker_name string, queue_id int, committed_offset long, consumed_offset long")
    rows = [("s", "c", "g", "t", None, 0, 5, 7), ("s", "c", "g", "t", None, 1, -1, None),
            ("s", "c", "g", "t", None, 2, 3, -7), ("s", "c", "g", "t", None, 3, None, None),
            ("s", "c", "g", "t", None, 4, 2**63 - 1, None),
            ("s", "c", "g", "t", None, 5, 2**53 - 1, 2**53 - 1),
            ("s", "c", "g", "t", None, 6, 0, 2**53)]
    good, bad = validate_offsets(conform(spark.createDataFrame(rows, schema), "offsets"),
                                 Persisted())
    assert sorted(r.queue_id for r in good.collect()) == [0, 3, 5]
    sentinel = ("is 2^53 or more, which no real queue reaches (a sentinel such as "
                "Long.MAX_VALUE for an unknown offset must be null)")
    assert sorted((json.loads(r.row_json)["queue_id"], r.reason) for r in bad.collect()) == [
        (1, "committed_offset is negative (an unknown offset is null)"),
        (2, "consumed_offset is negative (an unknown offset is null)"),
        (4, f"committed_offset {sentinel}"), (6, f"consumed_offset {sentinel}")]


def test_queue_offsets_and_rates_that_are_no_real_figure_are_rejected(spark) -> None:
    """A negative max_offset or one of Long.MAX_VALUE; a rate that is NaN, infinite,
    negative or too large for the exact decimal the reports sum rates in (it used to be
    an unknown rate, unsaid)."""
    rows = [(0, 100, 1.5), (1, -1, 1.0), (2, 5, float("nan")), (3, 5, float("inf")),
            (4, 5, -0.5), (5, 5, 1e29), (6, None, None), (7, 0, 0.0), (8, 5, 9.9e28),
            (9, 2**63 - 1, 1.0)]
    df = spark.createDataFrame([("s", "c", "t", "b", q, m, r) for q, m, r in rows],
                               QUEUE_SCHEMA + ", max_offset long, in_rate double")
    good, bad = validate_queues(conform(df, "queues"), Persisted())
    assert sorted(r.queue_id for r in good.collect()) == [0, 6, 7, 8]
    reasons = dict(sorted((json.loads(r.row_json)["queue_id"], r.reason)
                          for r in bad.collect()))
    assert reasons == {
        1: "max_offset is negative (an unknown offset is null)",
        2: "in_rate is not a finite number (NaN or infinite; an unknown rate is null)",
        3: "in_rate is not a finite number (NaN or infinite; an unknown rate is null)",
        4: "in_rate is negative",
        5: "in_rate is 1e29 messages per second or more (the reports sum rates as exact "
           "decimals of 38 digits, 9 of them after the point)",
        9: "max_offset is 2^53 or more, which no real queue reaches (a sentinel such as "
           "Long.MAX_VALUE for an unknown offset must be null)"}


def test_scope_counts_usable_rows_as_read_less_rejected(spark, tmp_path) -> None:
    """The scope's usable rows per (snapshot, cluster) are the rows read less the rejects:
    an exact duplicate leaves its first copy usable, conflicting rows leave none, and a
    snapshot whose rows are all rejected is read but not audited. The same aggregate
    estimates the audited snapshots' subscriptions (rejected rows included)."""
    from jobs.scope import find_scope
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, queue_rows

    members = pd.concat([
        member_rows(["A", "B"], cluster="c1"),
        member_rows(["A"], cluster="c1").iloc[[0]],                  # exact duplicate
        member_rows(["A"], cluster="c2"),                            # conflicting pair
        member_rows(["A"], cluster="c2").assign(strategy="AVG_BY_CIRCLE"),
        member_rows(["B"], cluster="c1").assign(snapshot_id="X", strategy="NOPE"),
        member_rows(["A"], cluster="c1").assign(consumer_group="H", topic="U"),
        member_rows(["B"], cluster="c1").assign(consumer_group="H", topic=None).iloc[[0]],
    ])
    queues = pd.concat([queue_rows(["A", "B", "X"], cluster="c1"),
                        queue_rows(["A"], cluster="c2")])
    paths = write_inputs(spark, tmp_path, queues=queues, members=members)
    read = read_written(spark, paths, Persisted())
    scope = find_scope(read, ())

    assert scope.audited == ["A", "B"] and scope.not_audited == ["X"]
    assert scope.usable_clusters == {"A": ["c1", "c2"], "B": ["c1"], "X": ["c1"]}
    assert scope.partial == [("A", "c2")] and scope.audited_clusters("A") == ["c1"]
    assert scope.clusters == {"A": ["c1", "c2"], "B": ["c1"], "X": ["c1"]}
    assert sorted(n.text() for n in scope.notes) == [
        "snapshot A (cluster c2): members has no usable rows for this cluster, queues has 4: "
        "the cluster is not audited",
        "snapshot X (cluster c1): members has no usable rows, queues has 4: not audited "
        "(earlier output of it is kept)",
    ]
    # the duplicate, both clients' conflicting pairs, X's two rows
    assert read.rejects.count() == 7
    # (A, c1, G, T), (A, c1, H, U), (A, c2, G, T) of rejected rows, (B, c1, G, T); not X's,
    # not B's member without a topic
    assert scope.subscriptions == 4
    asked = find_scope(read, ("A", "nope", "nope"))  # named twice: one note
    assert (asked.requested, asked.absent) == (["A", "nope"], ["nope"])
    assert [n.text() for n in asked.notes if "none of the inputs" in n.text()] == [
        "snapshot nope is in none of the inputs"]



def test_a_snapshot_asked_for_that_only_offsets_hold_is_not_said_to_empty_the_inputs(
        spark, tmp_path) -> None:
    """`--snapshot s8`, s8 only in offsets: the run reads only s8's rows, and said the
    queues and members inputs "have no usable rows at all" though they hold snapshot A."""
    from jobs.read import InputPaths, read_inputs
    from jobs.scope import find_scope
    from storage.delta import DeltaStore
    from tests.support.delta_inputs import write_inputs
    from tests.support.outputs import member_rows, queue_rows

    offsets = pd.DataFrame([{"snapshot_id": "s8", "cluster": "c", "consumer_group": "G",
                             "topic": "T", "broker_name": "broker-a", "queue_id": 0,
                             "committed_offset": 1, "consumed_offset": 1}])
    paths = write_inputs(spark, tmp_path, queues=queue_rows(["A"]),
                         members=member_rows(["A"]), offsets=offsets)

    def said(snapshots: tuple[str, ...]) -> list[str]:
        read = read_inputs(DeltaStore(spark, "offline"),
                           InputPaths(paths["queues"], paths["members"], paths["offsets"]),
                           snapshots, Persisted())
        return [n.text() for n in find_scope(read, snapshots).notes
                if "input has no" in n.text() or "inputs have no" in n.text()]

    assert "the queues and members inputs have no usable rows of the --snapshot(s) given (s8): " \
        "nothing to audit" in said(("s8",))
    assert not [t for t in said(("s8",)) if "at all" in t]
    assert said(()) == []

def test_members_with_their_topic_column_under_another_name_are_a_noted_problem(
        spark, tmp_path) -> None:
    """A members table whose topic column is named otherwise (`topic_name`) reads as
    members subscribing nothing (topic may be left out: null everywhere): the run would
    assign no queue and call every client idle. A note (a warning, a rejects row, a strict
    failure) says so for each snapshot and cluster with no subscribed topic at all."""
    from jobs.scope import find_scope
    from storage.delta import DeltaStore
    from tests.support.delta_inputs import frame_for, read_written
    from tests.support.outputs import member_rows, queue_rows

    store = DeltaStore(spark, "offline")
    paths = {"queues": str(tmp_path / "queues"), "members": str(tmp_path / "members")}
    store.write(frame_for(spark, "queues", queue_rows(["A", "B"], cluster="c1")),
                paths["queues"], "queues", ["snapshot_id"])
    renamed = member_rows(["A", "B"], cluster="c1").rename(columns={"topic": "topic_name"})
    members = spark.createDataFrame(renamed)
    store.write(members, paths["members"], "members", ["snapshot_id"])
    read = read_written(spark, paths, Persisted())
    scope = find_scope(read, ())

    assert scope.audited == ["A", "B"]
    assert [(n.table, n.text()) for n in scope.notes] == [
        ("members", f"snapshot {s} (cluster c1): topic is null in all {n} usable members "
                    "rows: no client subscribes anything, so no queue is assigned (a members "
                    "table without a topic column, or with it under another name, reads so)")
        for s, n in (("A", 2), ("B", 3))]
    assert read.members.count() == 5


def test_a_snapshot_without_observed_rows_says_its_drift_is_not_checked(spark,
                                                                        tmp_path) -> None:
    """With --observed, an audited snapshot and cluster the observed table lacks has no
    drift rows, which reads as "every queue held as expected": a note says it is not
    checked (a strict failure). A snapshot only in observed is read, not audited."""
    from jobs.scope import find_scope
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, observed_rows, queue_rows

    observed = observed_rows(["A", "Z"], cluster="c1")
    paths = write_inputs(spark, tmp_path, queues=queue_rows(["A", "B"], cluster="c1"),
                         members=member_rows(["A", "B"], cluster="c1"), observed=observed)
    scope = find_scope(read_written(spark, paths, Persisted()), ())

    assert scope.audited == ["A", "B"] and scope.not_audited == ["Z"]
    assert [n.text() for n in scope.notes] == [
        f"snapshot Z (cluster c1): queues and members have no usable rows, observed has "
        f"{(observed['snapshot_id'] == 'Z').sum()}: not audited (earlier output of it is "
        "kept)",
        "snapshot B (cluster c1): observed has no rows for it: drift is not checked (the "
        "drift table has no rows of it)",
    ]
    # Z's observed rows are rejects rows (each its own); B's missing drift a warning
    assert [(n.table, n.unused) for n in scope.notes] == [(None, "observed"), (None, None)]


def test_a_snapshot_whose_offsets_rows_were_all_rejected_says_so(spark, tmp_path) -> None:
    """B's one offsets row (a negative committed offset) is a reject: the warning said
    "offsets has no rows for it", sending the user looking for rows the capture lost. D,
    named by one rejected offsets row alone, was said to have had "every queues and
    members row of it rejected"."""
    import pandas as pd

    from jobs.scope import find_scope
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, queue_rows

    offsets = pd.DataFrame([{"snapshot_id": s, "cluster": "c1", "consumer_group": "G",
                             "topic": "T", "broker_name": "broker-a", "queue_id": 0,
                             "committed_offset": offset}
                            for s, offset in (("A", 5), ("B", -7), ("D", -1))])
    paths = write_inputs(spark, tmp_path, queues=queue_rows(["A", "B", "C"], cluster="c1"),
                         members=member_rows(["A", "B", "C"], cluster="c1"), offsets=offsets)
    scope = find_scope(read_written(spark, paths, Persisted()), ())

    assert scope.not_audited == ["D"]
    assert [n.text() for n in scope.notes] == [
        "snapshot D: every row of it was rejected (offsets 1; see rejects): not audited",
        "snapshot B (cluster c1): offsets has no usable rows for it (its 1 row(s) were "
        "rejected: see rejects): lag and duplicate estimates are unknown",
        "snapshot C (cluster c1): offsets has no rows for it: lag and duplicate estimates "
        "are unknown"]


def test_member_groups_without_observed_rows_are_named_per_snapshot(spark,
                                                                     tmp_path) -> None:
    """Drift is checked per group with observed rows: in a snapshot that has some, the
    member groups with none are named (up to five, then counted)."""
    from jobs.scope import groups_not_observed
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, observed_rows, queue_rows

    groups = ["G", "H1", "H2", "H3", "H4", "H5", "H6"]
    members = pd.concat([member_rows(["A", "B"]).assign(consumer_group=g) for g in groups])
    observed = observed_rows(["A"])
    paths = write_inputs(spark, tmp_path, queues=queue_rows(["A", "B"]), members=members,
                         observed=observed)
    read = read_written(spark, paths, Persisted())
    # B has no observed row at all: the scope says so already (`find_scope`)
    assert [n.text() for n in groups_not_observed(read.members, read.observed)] == [
        "snapshot A (cluster c): observed has no rows for 6 of its member group(s) (H1, H2, "
        "H3, H4, H5 and 1 more): their drift is not checked"]


def test_a_run_limited_to_snapshots_reads_only_their_files(spark, tmp_path) -> None:
    """`--snapshot` prunes the inputs' files by partition from the log (where the offline
    engine joins each row's snapshot_id from its file, a filter on the rows alone reads
    every file)."""
    from jobs.read import InputPaths, read_inputs
    from storage.delta import DeltaStore
    from tests.support.delta_inputs import write_inputs
    from tests.support.outputs import member_rows, queue_rows

    paths = write_inputs(spark, tmp_path, queues=queue_rows(["A", "B", "C"]),
                         members=member_rows(["A", "B", "C"]))
    read = read_inputs(DeltaStore(spark, "offline"),
                       InputPaths(paths["queues"], paths["members"]), ("B",), Persisted())
    files = read.read_keys.inputFiles()
    assert files and all("snapshot_id=B" in f for f in files)
    assert {r.snapshot_id for r in read.read_keys.collect()} == {"B"}
    assert {r.snapshot_id for r in read.queues.collect()} == {"B"}


def test_a_snapshot_column_spelled_in_another_case_is_limited_too(spark, tmp_path) -> None:
    """The contract accepts `Snapshot_ID` (`conform`); the store leaves such a table whole
    and the reader limits it once conformed."""
    from jobs.read import InputPaths, read_inputs
    from storage.delta import DeltaStore
    from tests.support.delta_inputs import frame_for, write_inputs
    from tests.support.outputs import member_rows, queue_rows

    store = DeltaStore(spark, "offline")
    paths = write_inputs(spark, tmp_path, members=member_rows(["A", "B"]))
    queues = str(tmp_path / "queues")
    store.write(frame_for(spark, "queues", queue_rows(["A", "B"]))
                .withColumnRenamed("snapshot_id", "Snapshot_ID"), queues, "queues", [])
    read = read_inputs(store, InputPaths(queues, paths["members"]), ("B",), Persisted())
    assert {r.snapshot_id for r in read.queues.collect()} == {"B"}
    assert {r.snapshot_id for r in read.read_keys.collect()} == {"B"}


DUPLICATED = [("s", "c", "t", "b", 0, 5), ("s", "c", "t", "b", 1, 5), ("s", "c", "t", "b", 1, 5),
              ("s", "c", "t", "b", 2, 5), ("s", "c", "t", "b", 2, 6), ("s", "c", "t", "b", 3, 5),
              ("s", "c", "t", "b", -4, 5)]
DUPLICATED_SCHEMA = QUEUE_SCHEMA + ", max_offset long"


def _outcome(good, bad) -> tuple[list, list]:
    return (sorted((r.queue_id, r.max_offset) for r in good.collect()),
            sorted((json.loads(r.row_json)["queue_id"], json.loads(r.row_json)["max_offset"],
                    r.reason) for r in bad.collect()))


class _Recording(Persisted):
    """Persisted that records how many rows each frame it stores holds."""

    def __init__(self) -> None:
        super().__init__()
        self.stored: list[int] = []

    def __call__(self, df, eager: bool = True):
        out = super().__call__(df, eager)
        self.stored.append(out.count())
        return out


def test_a_few_duplicates_store_only_their_own_rows_again(spark) -> None:
    """The input's rows are materialized once; the rows of repeated keys are scored apart
    and only they are stored a second time (the outcome of scoring every row: the next
    test)."""
    df = conform(spark.createDataFrame(DUPLICATED, DUPLICATED_SCHEMA), "queues")
    persist = _Recording()
    good, bad = validate_queues(df, persist)
    # every row once, the 2 repeated key hashes, then the 4 rows of queues 1 and 2
    assert persist.stored == [7, 2, 4]
    assert _outcome(good, bad) == (
        [(0, 5), (1, 5), (3, 5)],
        [(-4, 5, "queue_id is negative"),
         (1, 5, "exact duplicate of another row"),
         (2, 5, "conflicting rows for the same snapshot_id, cluster, topic, broker_name, "
                "queue_id"),
         (2, 6, "conflicting rows for the same snapshot_id, cluster, topic, broker_name, "
                "queue_id")])


def test_many_duplicates_score_every_row_alike(spark, monkeypatch) -> None:
    """Above BROADCAST_DUPLICATE_KEYS repeated keys every row is scored and stored again
    (no broadcast join): the outcome is the same."""
    df = conform(spark.createDataFrame(DUPLICATED, DUPLICATED_SCHEMA), "queues")
    expected = _outcome(*validate_queues(df, Persisted()))
    monkeypatch.setattr(validate, "BROADCAST_DUPLICATE_KEYS", 1)
    persist = _Recording()
    assert _outcome(*validate_queues(df, persist)) == expected
    assert persist.stored == [7, 2, 7]


def test_snapshot_ids_no_output_partition_can_hold_are_rejected(spark) -> None:
    """An empty id is the null partition of every output (whose snapshot_id cannot be
    null: the commit broke the table); a folder name holds 255 bytes, `snapshot_id=` and
    each / : % # ... as three. Those rows are rejects."""
    ids = {"": False, "x" * 243: True, "x" * 244: False, "/" * 81: True, "/" * 82: False,
           "\u00e9" * 121: True, "\u00e9" * 122: False, " ": True,
           # no folder name holds a NUL (the rejects' write failed with a Java stack trace,
           # the run half published); Spark reads its null partition's folder as null
           "a\x00b": False, "__HIVE_DEFAULT_PARTITION__": False,
           "__hive_default_partition__": True}
    named = {"a\x00b": "snapshot_id contains a NUL character",
             "__HIVE_DEFAULT_PARTITION__": "snapshot_id is __HIVE_DEFAULT_PARTITION__, the "
             "folder name Spark gives the null partition, which reads back as null"}
    rows = [(s, "c", "t", "b", i) for i, s in enumerate(ids)]
    good, bad = validate_queues(
        conform(spark.createDataFrame(rows, QUEUE_SCHEMA), "queues"), Persisted())
    assert sorted(r.snapshot_id for r in good.collect()) == sorted(s for s, ok in ids.items()
                                                                   if ok)
    rejected = {r.snapshot_id: r.reason for r in bad.collect()}
    assert rejected == {
        "": "snapshot_id is empty (it names the outputs' partition of the snapshot)",
        **{s: ("snapshot_id is too long to name the outputs' partition folder "
                     "(snapshot_id=<id>, 255 bytes at most, characters such as / : % # "
               "counting 3)") for s, ok in ids.items() if s and not ok and s not in named},
        **named}
    # the rejects table keeps them in the null partition, row_json holding the id
    kept = bad.select(validate.writable_snapshot_id(F.col("snapshot_id")).alias("s"),
                      "row_json").collect()
    assert {json.loads(r.row_json)["snapshot_id"]: r.s for r in kept} == {
        s: None for s in rejected}
    # the driver's twin (the runs table has no row of such a snapshot) agrees
    odd = ["a\tb", 'q"#%', "x:y=z", "[^]{}", "\x7f", "\\"]
    values = [*ids, *(c * n for c in odd for n in (20, 90))]
    frame = spark.createDataFrame([(s,) for s in values], "s string")
    for r in frame.select("s", *validate.unwritable_snapshot_id(F.col("s"))).collect():
        assert snapshot_id_fits(r[0]) == (not any(r[1:])), r[0]


def test_capture_times_no_capture_was_taken_at_are_rejected(spark) -> None:
    """Go's zero time (0001-01-01, a capture tool's "unknown") and epoch nanoseconds read
    as microseconds (year 57,971) stopped the run with a traceback when the driver took
    them as Python datetimes."""
    micros = {"zero": -62135596800 * 10**6, "far": 1767225600 * 10**9,
              "1899": -2240524800 * 10**6, "last": 253402300799 * 10**6,
              "now": 1764927000 * 10**6}
    df = spark.createDataFrame(
        [(s, "c", "t", "b", 0, m) for s, m in micros.items()],
        QUEUE_SCHEMA + ", at long").withColumn("captured_at", F.timestamp_micros("at"))
    good, bad = validate_queues(conform(df, "queues"), Persisted())
    assert sorted(r.snapshot_id for r in good.collect()) == ["last", "now"]
    assert sorted((r.snapshot_id, r.reason) for r in bad.collect()) == [
        (s, "captured_at is before 1900 or after 9999: no capture time (a tool's zero time "
            "for unknown, or a timestamp in the wrong unit); leave it null if unknown")
        for s in ("1899", "far", "zero")]


def test_offsets_and_observed_rows_of_a_snapshot_not_audited_are_rejects(spark,
                                                                          tmp_path) -> None:
    """A snapshot only offsets or observed hold: its rows were a console warning, in no
    rejects row (the run's rejects said nothing of them), then one rejects row per
    cluster saying how many, which was no input row: each is a rejects row of its own."""
    from jobs.audit import _rejects
    from jobs.scope import find_scope
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, queue_rows

    queues = queue_rows(["A"], cluster="c1")
    offsets = queues.assign(consumer_group="G", committed_offset=1, consumed_offset=1)
    offsets = pd.concat([offsets, offsets.assign(snapshot_id="Z"),
                         offsets.assign(snapshot_id="Z", cluster="c2")])
    paths = write_inputs(spark, tmp_path, queues=queues,
                         members=member_rows(["A"], cluster="c1"), offsets=offsets)
    read = read_written(spark, paths, Persisted())
    scope = find_scope(read, ())
    assert scope.audited == ["A"] and scope.not_audited == ["Z"]
    per_queue = len(queues)
    assert sorted((n.snapshot_id, n.cluster, n.unused, n.reason) for n in scope.notes
                  if n.snapshot_id == "Z") == [
        ("Z", c, "offsets", f"queues and members have no usable rows, offsets has "
                            f"{per_queue}: not audited (earlier output of it is kept)")
        for c in ("c1", "c2")]
    rejects = _rejects(spark, read, scope.notes, "r").toPandas()
    assert sorted(zip(rejects["snapshot_id"], rejects["cluster"], rejects["source_table"],
                      rejects["row_json"].map(lambda r: json.loads(r)["queue_id"]),
                      strict=True)) == sorted(
        ("Z", c, "offsets", q) for c in ("c1", "c2") for q in queues["queue_id"])
    assert set(rejects["reason"]) == {n.reason for n in scope.notes if n.snapshot_id == "Z"}
    assert set(rejects["run_id"]) == {"r"}


def test_offsets_and_observed_rows_beside_one_missing_input_are_rejects(spark,
                                                                       tmp_path) -> None:
    """A snapshot queues hold and members lack (not audited), and a cluster of an audited
    snapshot that only offsets and observed hold: their offsets and observed rows were
    dropped without a word (only the queues rows were rejects)."""
    from jobs.audit import _rejects
    from jobs.scope import find_scope
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, queue_rows

    queues = pd.concat([queue_rows(["A"], cluster="c1"), queue_rows(["B"], cluster="c1")])
    members = member_rows(["A"], cluster="c1")
    offsets = queues.assign(consumer_group="G", committed_offset=1, consumed_offset=1)
    offsets = pd.concat([offsets, offsets[offsets["snapshot_id"] == "A"].assign(cluster="c9")])
    observed = offsets[["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                        "queue_id"]].assign(client_id="x@1", source="test")
    paths = write_inputs(spark, tmp_path, queues=queues, members=members, offsets=offsets,
                         observed=observed)
    read = read_written(spark, paths, Persisted())
    scope = find_scope(read, ())
    assert scope.audited == ["A"] and scope.not_audited == ["B"]
    per_queue = len(queue_rows(["A"], cluster="c1"))
    unused = sorted((n.snapshot_id, n.cluster, n.unused, n.reason) for n in scope.notes
                    if n.unused in ("offsets", "observed"))
    assert unused == sorted([
        *(("A", "c9", t, f"the cluster is not audited (queues or members has no usable "
                         f"rows of it), {t} has {per_queue}") for t in ("offsets", "observed")),
        *(("B", "c1", t, f"the snapshot is not audited (queues or members has no usable "
                         f"rows of it), {t} has {per_queue}: earlier output of it is kept")
          for t in ("offsets", "observed"))])
    rejects = _rejects(spark, read, scope.notes, "r").toPandas()
    got = sorted(zip(rejects["snapshot_id"], rejects["cluster"], rejects["source_table"],
                     rejects["row_json"].map(lambda r: json.loads(r)["queue_id"]),
                     strict=True))
    queue_ids = list(queue_rows(["A"], cluster="c1")["queue_id"])
    assert got == sorted([
        *((s, c, t, q) for s, c in (("A", "c9"), ("B", "c1"))
          for t in ("offsets", "observed") for q in queue_ids),
        *(("B", "c1", "queues", q) for q in queue_ids)])
