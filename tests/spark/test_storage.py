"""The offline Delta engine: Spark moves the data, delta-rs owns the log."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable
from pyspark.sql.types import LongType, StringType, StructField, StructType

from storage.delta import DeltaStore, TableError
from storage.offline import _refuse_unsupported_features, _values_in_folders, hadoop_uri
from tests.support.deletion_vectors import allow_deletion_vectors, delete_rows

pytestmark = pytest.mark.spark

AWKWARD = ["a b", "é", "x:y", "50%", None, "c+d", "p/q", "ü#?[]"]
# plain folder names, and values that partition discovery would type if asked to infer
PLAIN = ["0001", "2026-11-28", "null", "1e5", "true", "A.b_c-d", "-"]


@pytest.fixture
def store(spark):
    return DeltaStore(spark, "offline")


def _frame(spark, values, offset=0):
    return spark.createDataFrame([(v, i + offset, float(i) / 3) for i, v in enumerate(values)],
                                 "snapshot_id string, n long, x double")


def test_partitioned_round_trip_with_awkward_values(spark, store, tmp_path: Path) -> None:
    df = _frame(spark, AWKWARD)
    store.write(df, str(tmp_path / "t"), "t", ["snapshot_id"])
    back = store.read(str(tmp_path / "t"), "t")
    assert_df_equality(back, df, ignore_row_order=True, ignore_nullable=True)
    # delta-rs (and so DuckDB / Polars, which read through it) see the same rows
    rs = DeltaTable(str(tmp_path / "t")).to_pandas().sort_values("n")
    assert rs["snapshot_id"].tolist() == AWKWARD
    assert DeltaTable(str(tmp_path / "t")).protocol().min_reader_version == 1


def _joins_on_file(df) -> bool:
    return "BroadcastHashJoin" in df._jdf.queryExecution().executedPlan().toString()


def test_partition_values_are_read_off_the_folders(spark, store, tmp_path: Path) -> None:
    df = _frame(spark, AWKWARD + PLAIN)  # Spark's own folder names: `x%3Ay`, `50%25`, `é`
    path = str(tmp_path / "t")
    store.write(df, path, "t", ["snapshot_id"])
    back = store.read(path, "t")
    assert not _joins_on_file(back)
    assert_df_equality(back, df, ignore_row_order=True, ignore_nullable=True)
    some = store.read(path, "t", snapshots=["0001", "null", "x:y", None])
    assert sorted(r.snapshot_id or "" for r in some.collect()) == ["", "0001", "null", "x:y"]


def test_a_table_under_a_folder_that_looks_like_a_partition(spark, store,
                                                            tmp_path: Path) -> None:
    df = _frame(spark, ["s1", "s2"])
    path = str(tmp_path / "env=prod data" / "t")  # the table's root bounds the discovery
    store.write(df, path, "t", ["snapshot_id"])
    back = store.read(path, "t")
    assert not _joins_on_file(back)
    assert back.columns == ["snapshot_id", "n", "x"]
    assert_df_equality(back, df, ignore_row_order=True, ignore_nullable=True)


def test_values_of_another_writer(spark, store, tmp_path: Path) -> None:
    """delta-rs escapes a folder's value as UTF-8 bytes: `2026-11-28T15%3A00%3A00Z` (the
    capture's snapshot ids) reads back as written, `é` as `%C3%A9` would not."""
    from deltalake import write_deltalake

    cases = ((["2026-11-28T15:00:00Z", "a b", "c+d", None], False), (["s1", "é"], True))
    for i, (values, joins) in enumerate(cases):
        path = str(tmp_path / f"t{i}")
        rows = pa.table({"snapshot_id": values * 2,
                         "cluster": ["c1"] * len(values) + ["c 2"] * len(values),
                         "n": pa.array(range(2 * len(values)), pa.int64())})
        write_deltalake(path, rows, partition_by=["snapshot_id", "cluster"])
        back = store.read(path, "t")
        assert _joins_on_file(back) is joins
        got = back.select("snapshot_id", "cluster", "n").collect()
        assert sorted(repr(tuple(r)) for r in got) == sorted(
            repr(tuple(r.values())) for r in rows.to_pylist())


def _in_folders(actions: pd.DataFrame, partition_cols: list[str], schema: StructType) -> bool:
    """`_values_in_folders` with the actions' paths unquoted, as the read passes them."""
    return _values_in_folders(actions["path"].map(unquote), actions, partition_cols, schema)


@pytest.mark.parametrize(
    ("paths", "values", "expected"),
    [
        (["snapshot_id=s1/f.parquet"], ["s1"], True),
        (["snapshot_id=s%253A1/f.parquet"], ["s:1"], True),  # `s%3A1` on disk
        (["snapshot_id=__HIVE_DEFAULT_PARTITION__/f.parquet"], [None], True),
        (["snapshot_id=s1/f.parquet"], ["s2"], False),  # the folder is not the log's value
        (["snapshot_id=%25C3%25A9/f.parquet"], ["é"], False),  # Spark reads two characters
        (["snapshot_id=s%25+1/f.parquet"], ["s%+1"], False),  # a '%' that starts no escape
        (["snapshot_id=__HIVE_DEFAULT_PARTITION__/f.parquet"], ["__HIVE_DEFAULT_PARTITION__"],
         False),  # Spark would read it as null
        (["snapshot_id=/f.parquet"], [""], False),  # Spark refuses an empty value
        (["snapshot_id=s1/sub/f.parquet"], ["s1"], False),  # deeper than its partitions
        (["/elsewhere/snapshot_id=s1/f.parquet"], ["s1"], False),  # an absolute path
        (["ab/f.parquet"], ["s1"], False),  # a random prefix, not the partition's folder
        (["snapshot_id=s1/f.parquet", "snapshot_id=s2/f.parquet"], ["s1", "s3"], False),
    ],
)
def test_which_tables_have_their_values_in_folders(paths, values, expected) -> None:
    actions = pd.DataFrame({"path": paths, "partition.snapshot_id": values})
    schema = StructType([StructField("snapshot_id", StringType()), StructField("n", LongType())])
    assert _in_folders(actions, ["snapshot_id"], schema) is expected


def test_values_in_folders_follow_the_tables_column_order() -> None:
    actions = pd.DataFrame({"path": ["a=1/b=2/f.parquet"], "partition.a": ["1"],
                            "partition.b": ["2"]})
    strings = StructType([StructField("a", StringType()), StructField("b", StringType())])
    assert _in_folders(actions, ["a", "b"], strings)
    assert not _in_folders(actions, ["b", "a"], strings)
    typed = StructType([StructField("a", StringType()), StructField("b", LongType())])
    assert not _in_folders(actions, ["a", "b"], typed)  # only strings are read as is


def test_row_estimate_comes_from_the_log_without_a_scan(spark, store, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    assert store.row_estimate(path) is None  # no table yet
    store.write(_frame(spark, ["s1", "s2", "s2"]), path, "t", ["snapshot_id"])
    store.write(_frame(spark, ["s2"], offset=100), path, "t", ["snapshot_id"], replace=["s2"])
    assert store.row_estimate(path) == 2  # the current version's files only


def test_replace_touches_only_the_given_partitions(spark, store, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    store.write(_frame(spark, ["s1", "s2", "s2"]), path, "t", ["snapshot_id"])
    store.write(_frame(spark, ["s2"], offset=100), path, "t", ["snapshot_id"],
                replace=["s2"])
    expected = spark.createDataFrame([("s1", 0), ("s2", 100)], "snapshot_id string, n long")
    assert_df_equality(store.read(path, "t").select("snapshot_id", "n"), expected,
                       ignore_row_order=True, ignore_nullable=True)
    assert DeltaTable(path).version() == 1
    assert not (tmp_path / "t" / "_staging").exists()


def test_rows_per_file_caps_every_file(spark, store, tmp_path: Path) -> None:
    """What report.html reads a file at a time: a task starts a new file after that many
    rows (`jobs.write.PAGE_FILE_ROWS`)."""
    path = str(tmp_path / "t")
    df = _frame(spark, ["s1"] * 7 + ["s2"] * 3).coalesce(1)
    store.write(df, path, "t", ["snapshot_id"], rows_per_file=3)
    files = pa.table(DeltaTable(path).get_add_actions(flatten=True))
    assert sorted(files.column("num_records").to_pylist()) == [1, 3, 3, 3]
    assert_df_equality(store.read(path, "t"), df, ignore_row_order=True, ignore_nullable=True)


def test_unpartitioned_and_empty_tables(spark, store, tmp_path: Path) -> None:
    path = str(tmp_path / "u")
    df = _frame(spark, ["a", "b"])
    store.write(df, path, "u", [])
    assert_df_equality(store.read(path, "u"), df, ignore_row_order=True, ignore_nullable=True)
    empty = spark.createDataFrame([], "snapshot_id string, n long")
    store.write(empty, str(tmp_path / "e"), "e", ["snapshot_id"])
    assert store.read(str(tmp_path / "e"), "e").count() == 0


def test_not_a_table_and_schema_change_are_explained(spark, store, tmp_path: Path) -> None:
    # a path that is not there says so (it read "is not a Delta table", as a folder does)
    with pytest.raises(TableError, match=r"queues table at .*missing does not exist"):
        store.read(str(tmp_path / "missing"), "queues")
    (tmp_path / "plain").mkdir()
    with pytest.raises(TableError, match=r"queues table at .*plain is not a Delta table"):
        store.read(str(tmp_path / "plain"), "queues")
    path = str(tmp_path / "t")
    store.write(_frame(spark, ["a"]), path, "t", ["snapshot_id"])
    other = spark.createDataFrame([("a", 1)], "snapshot_id string, other int")
    with pytest.raises(TableError, match="has columns"):
        store.write(other, path, "t", ["snapshot_id"])


NOT_NULL_ID = StructType([StructField("snapshot_id", StringType(), False),
                          StructField("n", LongType())])


def _data_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet")
                  if "_delta_log" not in p.parts)


def test_an_empty_partition_value_a_column_cannot_hold_is_refused_before_the_commit(
        spark, store, tmp_path: Path) -> None:
    """Spark writes "" as the null partition: committed into an output, whose snapshot_id
    is not nullable, no reader opened the table again, its earlier snapshots with it."""
    path = str(tmp_path / "t")
    store.write(spark.createDataFrame([("s1", 1)], NOT_NULL_ID), path, "t", ["snapshot_id"])
    before = _data_files(tmp_path / "t")
    with pytest.raises(TableError, match="rows with an empty or null snapshot_id, which is "
                       "its partition column and cannot be null; nothing was committed"):
        store.write(spark.createDataFrame([("", 2)], NOT_NULL_ID), path, "t",
                    ["snapshot_id"], replace=[""])
    assert DeltaTable(path).version() == 0
    assert DeltaTable(path).to_pandas()["snapshot_id"].tolist() == ["s1"]
    assert _data_files(tmp_path / "t") == before  # the staged files gone with it


def test_a_commit_that_landed_keeps_its_files_when_its_writer_fails_after(
        spark, store, tmp_path: Path, monkeypatch) -> None:
    """delta-rs writes the commit, then reloads the table: a failure there was taken for
    a commit that never happened, and the files the commit adds were deleted."""
    path = str(tmp_path / "t")
    store.write(_frame(spark, ["s1"]), path, "t", ["snapshot_id"])
    commit = DeltaTable.create_write_transaction

    def commit_then_fail(self, *args, **kwargs):
        commit(self, *args, **kwargs)
        raise RuntimeError("reloading the table failed")

    monkeypatch.setattr(DeltaTable, "create_write_transaction", commit_then_fail)
    with pytest.raises(TableError, match=r"the t table at .* was committed \(version 1\), "
                       "then its writer failed: reloading the table failed"):
        store.write(_frame(spark, ["s2"], offset=10), path, "t", ["snapshot_id"])
    monkeypatch.undo()
    assert sorted(DeltaTable(path).to_pandas()["snapshot_id"]) == ["s1", "s2"]


@pytest.mark.parametrize("partition_by", [None, ["snapshot_id"], ["snapshot_id", "k"]])
def test_a_column_whose_name_holds_a_dot_or_a_backtick_is_read(store, tmp_path: Path,
                                                                partition_by) -> None:
    """Another writer's table (an input with extra columns, which the audit ignores):
    `meta.source` was read as field `source` of a struct `meta`, and the read failed."""
    from deltalake import write_deltalake

    path = str(tmp_path / "t")
    rows = pd.DataFrame({"snapshot_id": ["s1", "s2"], "k": ["a", "b"],
                         "meta.source": ["x", "y"], "odd`name": [1, 2]})
    write_deltalake(path, rows, partition_by=partition_by)
    back = store.read(path, "t").toPandas().sort_values("snapshot_id")
    assert back[["snapshot_id", "k", "meta.source", "odd`name"]].values.tolist() == \
        rows.values.tolist()


def test_partition_values_of_any_type_are_the_logs(store, tmp_path: Path) -> None:
    """An input partitioned by a timestamp (pandas handed Spark a pd.Timestamp) or by an
    integer column holding a null (pandas made it a float) failed the read."""
    from datetime import datetime

    from deltalake import write_deltalake

    at = [datetime(2026, 11, 1, 8, tzinfo=UTC), datetime(2026, 11, 2, 8, tzinfo=UTC)]
    rows = pa.table({"snapshot_id": ["s1", "s2"], "captured_at": at,
                     "n": pa.array([7, None], pa.int64()), "x": [1.5, 2.5]})
    path = str(tmp_path / "t")
    write_deltalake(path, rows, partition_by=["captured_at", "n"])
    back = store.read(path, "t").toPandas().sort_values("snapshot_id")
    # the session's time zone is UTC (`jobs.session`): Spark hands naive UTC times back
    assert back["captured_at"].tolist() == [pd.Timestamp(t.replace(tzinfo=None)) for t in at]
    assert back["n"].tolist()[0] == 7 and pd.isna(back["n"].tolist()[1])
    assert back["x"].tolist() == [1.5, 2.5]


def test_native_engine_is_refused_without_jars(spark) -> None:
    with pytest.raises(TableError, match="needs Delta's jars"):
        DeltaStore(spark, "native")


def test_column_mapping_is_refused() -> None:
    table = SimpleNamespace(
        protocol=lambda: SimpleNamespace(reader_features=["columnMapping"],
                                         writer_features=["columnMapping"]),
        metadata=lambda: SimpleNamespace(configuration={"delta.columnMapping.mode": "name"}),
    )
    with pytest.raises(TableError, match=r"uses column mapping.*--engine native") as refused:
        _refuse_unsupported_features(table, "queues", "/data/q")
    assert "REORG" not in str(refused.value)  # that advice is for deletion vectors


def _one_file(spark, values, offset=0):
    return _frame(spark, values, offset).coalesce(1)


def test_a_table_that_only_allows_deletion_vectors_is_read_and_written(
        spark, store, tmp_path: Path) -> None:
    """New tables on some platforms allow deletion vectors before any is written: the
    file list is then the table's rows, and the offline engine reads and writes it."""
    path = str(tmp_path / "t")
    store.write(_one_file(spark, ["a", "a", "b"]), path, "t", ["snapshot_id"])
    allow_deletion_vectors(path)
    assert DeltaTable(path).protocol().reader_features == ["deletionVectors"]
    assert sorted(r.n for r in store.read(path, "t").collect()) == [0, 1, 2]
    store.write(_one_file(spark, ["b"], offset=10), path, "t", ["snapshot_id"], replace=["b"])
    store.write(None, path, "t", ["snapshot_id"], replace=["c"])
    assert sorted(r.n for r in store.read(path, "t").collect()) == [0, 1, 10]


@pytest.mark.parametrize("property_off", [False, True])
def test_rows_a_deletion_vector_deletes_are_refused_not_read(
        spark, store, tmp_path: Path, property_off: bool) -> None:
    """The file list still names rows a deletion vector deleted: reading it would bring
    them back, so such a table is refused, also once `delta.enableDeletionVectors` is
    turned off (the vectors written before stay)."""
    path = str(tmp_path / "t")
    store.write(_one_file(spark, ["a", "a", "a"]), path, "t", ["snapshot_id"])
    allow_deletion_vectors(path)
    delete_rows(path, 0, [1])
    vectors = pa.table(DeltaTable(path).deletion_vectors()).to_pylist()
    assert [v["selection_vector"] for v in vectors] == [[True, False, True]]
    if property_off:
        DeltaTable(path).alter.set_table_properties({"delta.enableDeletionVectors": "false"})
    refused = r"t table at .* uses deletion vectors \(1 row\(s\) deleted in 1 data file\(s\)\)"
    with pytest.raises(TableError, match=refused + r".*REORG TABLE"):
        store.read(path, "t")
    with pytest.raises(TableError, match=refused):
        store.write(_one_file(spark, ["a"]), path, "t", ["snapshot_id"], replace=["a"])
    with pytest.raises(TableError, match=refused):  # a remove by path alone leaves the file
        store.write(None, path, "t", ["snapshot_id"], replace=["a"])
    with pytest.raises(TableError, match=refused):
        store.check(path, "t", started=0.0)


def test_a_deletion_vector_that_cannot_be_read_is_refused(spark, store, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    store.write(_one_file(spark, ["a", "a"]), path, "t", ["snapshot_id"])
    allow_deletion_vectors(path)
    delete_rows(path, 0, [0])
    log = max(Path(path, "_delta_log").glob("*.json"))
    vector = json.loads(log.read_text().splitlines()[-1])["add"]["deletionVector"]
    log.write_text(log.read_text().replace(vector["pathOrInlineDv"],
                                           "0" * len(vector["pathOrInlineDv"])))
    with pytest.raises(TableError, match=r"uses deletion vectors that cannot be read \("):
        store.read(path, "t")


def test_hadoop_uri_matches_spark_file_path(spark, tmp_path: Path) -> None:
    folder = tmp_path / "p=a b%c+d:é#"
    folder.mkdir()
    spark.range(3).coalesce(1).write.mode("overwrite").parquet(str(folder / "f"))
    files = sorted(str(p) for p in (folder / "f").glob("*.parquet"))
    seen = {r[0] for r in spark.read.parquet(*files).select("_metadata.file_path").collect()}
    assert seen == {hadoop_uri(f) for f in files}


def test_offline_tables_stay_here_whatever_the_default_filesystem(
        spark, store, tmp_path: Path, default_fs_elsewhere) -> None:
    """The offline engine hands Spark `file:` URLs: its data files are written and read
    where delta-rs keeps the log (a bare path sent the parquet to the default filesystem
    while the commit looked for it in the local staging folder)."""
    from deltalake import write_deltalake

    df = _frame(spark, AWKWARD + PLAIN)
    path = str(tmp_path / "t")
    store.write(df, path, "t", ["snapshot_id"])
    store.write(_frame(spark, ["0001"], offset=100), path, "t", ["snapshot_id"],
                replace=["0001"])
    back = store.read(path, "t")
    assert back.count() == len(AWKWARD + PLAIN)
    assert [r.n for r in store.read(path, "t", snapshots=["0001"]).collect()] == [100]
    assert [r.n for r in store.read(path, "t", snapshots=["x:y"]).collect()] == [2]
    flat = str(tmp_path / "u")
    store.write(_frame(spark, ["a", "b"]), flat, "u", [])
    assert store.read(flat, "u").count() == 2
    other = str(tmp_path / "rs")  # delta-rs' folder names: the read joins on each file
    write_deltalake(other, pa.table({"snapshot_id": ["s1", "é"], "n": pa.array([1, 2])}),
                    partition_by=["snapshot_id"])
    assert sorted(tuple(r) for r in store.read(other, "t").select("snapshot_id", "n")
                  .collect()) == [("s1", 1), ("é", 2)]


def _collected(rows) -> list:
    return sorted((tuple(r) for r in rows), key=repr)


@pytest.mark.parametrize("local_zone", ["UTC", "America/New_York"])
def test_read_rows_are_the_rows_spark_collects(spark, store, tmp_path: Path, monkeypatch,
                                               local_zone: str) -> None:
    """`runs` is read through Arrow, not a Spark job; its callers compare its capture
    times with ones Spark collected, so every value is the one `collect()` gives: naive
    times in the driver's local zone, maps as dicts, the null partition's rows, in any
    zone the driver runs in."""
    import time as clock
    from datetime import date, datetime
    from decimal import Decimal

    monkeypatch.setenv("TZ", local_zone)
    clock.tzset()
    try:
        df = spark.createDataFrame(
            [("s1", datetime(2026, 11, 1, 8, 30, 0, 123456), date(2026, 11, 1),
              {"assignments": 3, "rejects": None}, ["a", "b"], ("x", 1), Decimal("1.50")),
             (None, None, None, None, None, None, None),
             ("é x", datetime(1969, 12, 31, 23, 59, 59, 1), date(1900, 1, 1), {}, [], None,
              Decimal("-2.25"))],
            "snapshot_id string, at timestamp, day date, rows map<string,bigint>, "
            "tables array<string>, pair struct<k:string,v:int>, amount decimal(10,2)")
        path = str(tmp_path / "t")
        store.write(df, path, "t", ["snapshot_id"])
        columns = ["rows", "snapshot_id", "at", "day", "tables", "pair", "amount"]
        got = store.read_rows(path, "t", columns)
        assert _collected(got) == _collected(store.read(path, "t").select(*columns).collect())
        assert [r.snapshot_id for r in got if r.at is None] == [None]
        assert {r.snapshot_id: r.rows for r in got}["s1"] == {"assignments": 3, "rejects": None}
    finally:
        monkeypatch.undo()
        clock.tzset()


def test_read_rows_of_files_before_a_column_was_added_are_null(spark, store,
                                                               tmp_path: Path) -> None:
    """A column added after some files were written reads as null in those files, as in a
    Spark read; a column the table lacks is named."""
    from deltalake import write_deltalake

    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"snapshot_id": ["s1"], "n": pa.array([1], pa.int64())}),
                    partition_by=["snapshot_id"])
    write_deltalake(path, pa.table({"snapshot_id": ["s2"], "n": pa.array([2], pa.int64()),
                                    "note": ["late"]}),
                    partition_by=["snapshot_id"], mode="append", schema_mode="merge")
    got = store.read_rows(path, "t", ["snapshot_id", "n", "note"])
    assert _collected(got) == _collected(
        store.read(path, "t").select("snapshot_id", "n", "note").collect())
    assert sorted((r.snapshot_id, r.note) for r in got) == [("s1", None), ("s2", "late")]
    with pytest.raises(TableError, match=r"t table at .* has no column nope"):
        store.read_rows(path, "t", ["snapshot_id", "nope"])
    with pytest.raises(TableError, match="absent does not exist"):
        store.read_rows(str(tmp_path / "absent"), "t", ["n"])


def test_read_rows_again_at_one_version_is_the_last_read_and_a_commit_is_read_afresh(
        spark, store, tmp_path: Path) -> None:
    """A run reads `runs` five times before it lands, about 1.8 s each at 4,700 files: at
    an unchanged version the last read answers (its files are not read again, shown by
    removing one), while a commit in between, or a table made anew at the same version
    number, is read afresh."""
    import shutil

    from deltalake import write_deltalake

    path = str(tmp_path / "runs")
    write_deltalake(path, pa.table({"snapshot_id": ["s1", "s2"], "n": pa.array([1, 2])}),
                    partition_by=["snapshot_id"])
    first = store.read_rows(path, "runs", ["snapshot_id", "n"])
    for data_file in Path(path).rglob("*.parquet"):
        data_file.unlink()
    assert store.read_rows(path, "runs", ["snapshot_id", "n"]) == first
    with pytest.raises(TableError, match="cannot be read"):  # other columns: read afresh
        store.read_rows(path, "runs", ["n"])
    shutil.rmtree(path)
    write_deltalake(path, pa.table({"snapshot_id": ["s3"], "n": pa.array([3])}),
                    partition_by=["snapshot_id"])  # version 0 again, of another table
    assert [tuple(r) for r in store.read_rows(path, "runs", ["snapshot_id", "n"])] == [("s3", 3)]
    write_deltalake(path, pa.table({"snapshot_id": ["s4"], "n": pa.array([4])}),
                    partition_by=["snapshot_id"], mode="append")
    assert sorted(tuple(r) for r in store.read_rows(path, "runs", ["snapshot_id", "n"])) == [
        ("s3", 3), ("s4", 4)]


def test_a_nanosecond_time_reads_at_microseconds_as_spark_reads_it() -> None:
    from datetime import datetime

    from storage.arrow_rows import column_values

    table = pa.table({"at": pa.array([1_700_000_000_123_456_789, None],
                                     pa.timestamp("ns", "UTC"))})
    assert column_values(table, "at") == [
        datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC), None]


@pytest.mark.parametrize("damage", ["gone", "cut", "not parquet"])
def test_read_rows_of_a_file_that_cannot_be_read_names_the_table(spark, store, tmp_path: Path,
                                                                 damage: str) -> None:
    """A `runs` file gone or damaged stopped every later audit with a pyarrow traceback;
    the Spark read it replaced named the table (exit 2)."""
    path = str(tmp_path / "runs")
    store.write(_frame(spark, ["s1", "s2"]), path, "runs", ["snapshot_id"])
    data_file = sorted(Path(path).rglob("*.parquet"))[0]
    if damage == "gone":
        data_file.unlink()
    elif damage == "cut":
        data_file.write_bytes(data_file.read_bytes()[:100])
    else:
        data_file.write_bytes(b"PAR1 not a parquet file PAR1")
    with pytest.raises(TableError, match=(
            rf"the runs table at {path}: a data file its log names cannot be read \(.*"
            rf"{data_file.name}.*\): the table was copied without all its files")):
        store.read_rows(path, "runs", ["snapshot_id", "n"])
