"""Where an audit writes, checked by name before any Spark work: an output root inside an
input's Delta table, or an input that is a table the run writes, is refused for remote
locations too (`jobs.preflight.check_apart`, `storage.paths.place_of`)."""

from __future__ import annotations

import time

import pytest

from jobs.cli import main
from jobs.preflight import check_apart
from storage.base import TableError
from storage.paths import lies_within, place_of
from vocabulary.contracts import OUTPUT_TABLES, RUNS

TABLES = [*OUTPUT_TABLES, RUNS]


@pytest.mark.parametrize(("a", "b"), [
    ("s3a://bkt/in/queues", "s3://bkt/in/queues/"),
    ("s3n://BKT/in//queues/.", "s3://bkt/in/queues"),
    ("abfss://c@acct.dfs.core.windows.net/q", "abfs://c@acct.dfs.core.windows.net/q"),
    ("hdfs://nn:8020/a/b/../q", "hdfs://nn:8020/a/q"),
    ("file:///tmp/x/q", "/tmp/x/../x/q/"),
])
def test_one_place_has_one_name_whatever_the_connector_and_spelling(a, b) -> None:
    assert place_of(a) == place_of(b)


@pytest.mark.parametrize(("a", "b"), [
    ("s3://bkt/in/queues", "s3://bkt/in/queues2"),  # a longer name is not inside
    ("s3://bkt/in/queues", "gs://bkt/in/queues"),
    ("s3://bkt/in/queues", "s3://other/in/queues"),
    ("hdfs://nn:8020/q", "hdfs://nn2:8020/q"),
])
def test_other_places_stay_apart(a, b) -> None:
    assert place_of(a) != place_of(b)
    assert not lies_within(a, b) and not lies_within(b, a)


@pytest.mark.parametrize(("output", "queues", "message"), [
    ("s3://bkt/in/queues/audit", "s3a://bkt/in/queues",
     "output root s3://bkt/in/queues/audit is inside the --queues table at "
     "s3a://bkt/in/queues: a VACUUM of that table"),
    ("s3a://bkt/in/queues", "s3a://bkt/in/queues/",
     "output root s3a://bkt/in/queues is the --queues table at s3a://bkt/in/queues/"),
    ("s3a://bkt/out", "s3://bkt/out/rejects",
     "--queues s3://bkt/out/rejects is the rejects table this run writes under --output "
     "s3a://bkt/out: it would replace what it reads"),
    ("abfss://c@acct.dfs.core.windows.net/out",
     "abfs://c@acct.dfs.core.windows.net/out/assignments/snapshot_id=A",
     "lies in the assignments table this run writes"),
])
def test_remote_outputs_over_inputs_are_refused(output, queues, message) -> None:
    with pytest.raises(TableError) as raised:
        check_apart(output, {"queues": queues, "members": "s3a://bkt/in/members",
                             "offsets": None}, TABLES)
    assert message in str(raised.value)


def test_remote_places_apart_pass() -> None:
    check_apart("s3a://bkt/audit", {"queues": "s3a://bkt/in/queues",
                                    "members": "s3a://bkt/audit_inputs/members",
                                    "offsets": "s3a://bkt/audit/rejects_archive"}, TABLES)


def test_an_output_inside_a_local_folder_that_is_no_table_is_left_to_the_read(
        tmp_path) -> None:
    """`--queues /data` (a plain folder) with `--output /data/audit` said the root lay
    "inside the --queues table at /data", which is no table: the read says what is wrong
    (not a Delta table). A folder with a Delta log still refuses it."""
    plain = tmp_path / "plain"
    plain.mkdir()
    check_apart(str(plain / "audit"), {"queues": str(plain), "members": None}, TABLES)
    table = tmp_path / "table"
    (table / "_delta_log").mkdir(parents=True)
    with pytest.raises(TableError, match="is inside the Delta table at"):
        check_apart(str(table / "audit"), {"queues": str(table), "members": None}, TABLES)


def test_the_cli_refuses_a_remote_output_inside_an_input_in_seconds(capsys) -> None:
    """Exit 2 with the message, no traceback, and no JVM: a remote place is never opened."""
    started = time.perf_counter()
    code = main(["audit", "--queues", "s3a://bkt/in/queues", "--members",
                 "s3a://bkt/in/members", "--output", "s3a://bkt/in/members/audit",
                 "--engine", "native"])
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert "output root s3a://bkt/in/members/audit is inside the --members table" in err
    assert elapsed < 5, f"took {elapsed:.1f}s: the check comes before any Spark work"
