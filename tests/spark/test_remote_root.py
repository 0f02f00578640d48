"""A run looks through its session's filesystem for a Delta table holding its output root:
the pre-JVM check compares remote roots only by name, with the inputs
(`storage.remote.delta_table_above`, `jobs.preflight.check_root_apart`). Here on `file:`
URLs, through the same Hadoop filesystem calls an `s3a://` root goes through. And a bare
root the session would send to another filesystem is named (`default_filesystem_for`).
The inputs are compared with the tables the run writes on the names the session's
filesystem gives them (`check_inputs_apart`), here on Hadoop's `viewfs://`: a real
filesystem with an authority and a default, as HDFS is on a gateway, and on HDFS's own
filesystem class, which names a location without calling a namenode."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import jobs.preflight
from jobs.audit import run
from jobs.config import AuditConfig
from jobs.preflight import check_apart, check_inputs_apart, check_root_apart
from storage.base import TableError
from storage.remote import default_filesystem_for, delta_table_above, qualified
from tests.support.delta_inputs import write_inputs
from tests.support.hadoop import hadoop_settings
from tests.support.outputs import member_rows, queue_rows


def _table(folder: Path) -> Path:
    (folder / "_delta_log").mkdir(parents=True)
    return folder


def test_the_table_holding_a_location_is_found_up_its_folders(spark, tmp_path) -> None:
    table = _table(tmp_path / "lake" / "queues")
    found = delta_table_above(spark, f"file:{table}/audit/out")
    assert found is not None and Path(found.removeprefix("file:")) == table
    assert Path(delta_table_above(spark, f"file://{table}").removeprefix("file:")) == table
    assert delta_table_above(spark, f"file:{tmp_path}/lake/queues2/out") is None
    assert delta_table_above(spark, str(tmp_path / "lake")) is None


def test_a_store_that_does_not_answer_stands_aside_and_says_so(spark, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="storage.remote"):
        assert delta_table_above(spark, "nosuchfs://bucket/audit") is None
    assert "could not tell whether nosuchfs://bucket/audit lies in a Delta table" in caplog.text


def test_the_run_refuses_a_root_its_filesystem_shows_inside_a_table(spark, tmp_path,
                                                                   monkeypatch) -> None:
    """As for a remote root, which the pre-JVM check cannot open: with that check standing
    aside, the run's own look refuses the root before anything is written there."""
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(["A"]),
                         members=member_rows(["A"]))
    table = _table(tmp_path / "lake" / "events")
    output = table / "audit"
    monkeypatch.setattr(jobs.preflight, "delta_table_holding", lambda _location: None)
    config = AuditConfig(queues=paths["queues"], members=paths["members"],
                         output=f"file:{output}", engine="offline", run_id="r")
    with pytest.raises(TableError, match=r"output root file:.*/lake/events/audit is inside "
                                         r"the Delta table at file:.*/lake/events: a VACUUM"):
        run(config, spark=spark)
    assert not output.exists()  # nothing created there, not even the root's folder


def test_a_bare_path_names_the_default_filesystem_only_when_it_is_elsewhere(
        spark, default_fs_elsewhere) -> None:
    assert default_filesystem_for(spark, "out/audit") == "nosuchfs://cluster/"
    assert default_filesystem_for(spark, "/data/audit") == "nosuchfs://cluster/"
    assert default_filesystem_for(spark, "file:/data/audit") is None
    assert default_filesystem_for(spark, "s3a://bkt/audit") is None


def test_on_this_machines_filesystem_a_bare_path_is_local(spark) -> None:
    assert default_filesystem_for(spark, "/data/audit") is None


def test_native_refuses_a_bare_root_its_session_sends_elsewhere(spark, tmp_path,
                                                                default_fs_elsewhere) -> None:
    """The native engine would write the tables to the default filesystem while the
    checks, the publish lock and report.html use the local disk: refused, with both
    spellings that name the place. The offline engine writes such a root here
    (`storage.paths.spark_path`), and its look for a table above it is the local one."""
    root = str(tmp_path / "audit")
    with pytest.raises(TableError, match=(
            rf"output root {root} is a bare path, which this session resolves against its "
            r"default filesystem nosuchfs://cluster/.*--output nosuchfs://cluster/\.\.\. "
            rf"for the cluster's storage, or --output file:{root} for this machine's")):
        check_root_apart(spark, root, "native")
    check_root_apart(spark, root, "offline")
    check_root_apart(spark, f"file:{root}", "native")
    table = _table(tmp_path / "events")
    with pytest.raises(TableError, match=r"is inside the Delta table at file:.*/events"):
        check_root_apart(spark, str(table / "audit"), "offline")


OUTPUT_TABLES = ["assignments", "rejects", "runs"]


@pytest.fixture
def lake_on_viewfs(spark, tmp_path):
    """The session's default filesystem set to `viewfs://cluster/`, whose `/lake` is
    `tmp_path/lake`: as on a Hadoop gateway, `/lake/x`, `viewfs:///lake/x` and
    `viewfs://cluster/lake/x` are three names of one place."""
    lake = tmp_path / "lake"
    lake.mkdir()
    with hadoop_settings(spark, {"fs.defaultFS": "viewfs://cluster/",
                                 "fs.viewfs.mounttable.cluster.link./lake": f"file://{lake}",
                                 "fs.viewfs.impl.disable.cache": "true"}):
        yield lake


def test_one_place_has_one_name_on_the_sessions_filesystem(spark, lake_on_viewfs,
                                                           caplog) -> None:
    names = {qualified(spark, spelling) for spelling in
             ("/lake/out/runs", "viewfs:///lake/out/runs", "viewfs://cluster/lake/out/runs")}
    assert names == {"viewfs://cluster/lake/out/runs"}
    with caplog.at_level(logging.INFO, logger="storage.remote"):
        assert qualified(spark, "nosuchfs://bucket/audit") is None
    assert "could not tell where nosuchfs://bucket/audit is" in caplog.text


def test_an_input_that_is_an_output_table_under_another_name_is_refused(
        spark, lake_on_viewfs) -> None:
    """By name alone (`check_apart`, before the JVM) `viewfs:///lake/out/runs` is not the
    runs table under `viewfs://cluster/lake/out`; the session's filesystem says it is."""
    output = "viewfs://cluster/lake/out"
    inputs = {"queues": "viewfs:///lake/out/runs", "members": "/lake/in/members"}
    check_apart(output, inputs, OUTPUT_TABLES)
    with pytest.raises(TableError, match=(
            r"--queues viewfs:///lake/out/runs \(viewfs://cluster/lake/out/runs\) is the "
            r"runs table this run writes under --output viewfs://cluster/lake/out "
            r"\(viewfs://cluster/lake/out\): it would replace what it reads")):
        check_inputs_apart(spark, output, inputs, OUTPUT_TABLES, "native")
    # the native engine reads a bare path from the default filesystem
    bare = {"queues": "/lake/in/queues", "members": "/lake/out/rejects/day=1"}
    with pytest.raises(TableError, match=r"--members /lake/out/rejects/day=1 \(viewfs://"
                                         r"cluster/lake/out/rejects/day=1\) lies in the "
                                         r"rejects table"):
        check_inputs_apart(spark, output, bare, OUTPUT_TABLES, "native")
    # the offline engine reads it from this machine's disk, where /lake is another place
    check_inputs_apart(spark, f"file:{lake_on_viewfs}/out", bare, OUTPUT_TABLES, "offline")
    # and an output root inside an input named another way
    with pytest.raises(TableError, match=(
            r"output root viewfs:///lake/in/queues/audit \(viewfs://cluster/lake/in/queues/"
            r"audit\) is inside the --queues table at /lake/in/queues \(viewfs://cluster/"
            r"lake/in/queues\)")):
        check_inputs_apart(spark, "viewfs:///lake/in/queues/audit", bare, OUTPUT_TABLES,
                           "native")


# one table, named with HDFS's default port, without it, and by another name of its host
RUNS_ON_HDFS = "hdfs://localhost:8020/lake/out/runs"
OTHER_NAMES_OF_IT = ("hdfs://localhost/lake/out/runs", "hdfs://127.0.0.1:8020/lake/out/runs")
# an HA nameservice: a logical name, with no port, that the filesystem keeps
HA_NAMESERVICE = {
    "dfs.nameservices": "lakens", "dfs.ha.namenodes.lakens": "nn1,nn2",
    "dfs.namenode.rpc-address.lakens.nn1": "localhost:8020",
    "dfs.namenode.rpc-address.lakens.nn2": "127.0.0.1:8021",
    "dfs.client.failover.proxy.provider.lakens":
        "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"}


def test_hdfs_gives_a_namenode_one_name_with_its_port(spark) -> None:
    """On HDFS's own filesystem class (`DistributedFileSystem`, in Spark's Hadoop client),
    which names a location without calling its namenode (none runs here; nothing is
    listed): its default port left out or spelled out, and another name of its host, are
    one name."""
    names = {qualified(spark, spelling) for spelling in (RUNS_ON_HDFS, *OTHER_NAMES_OF_IT)}
    assert len(names) == 1
    (name,) = names
    assert name.startswith("hdfs://") and name.endswith(":8020/lake/out/runs")
    with hadoop_settings(spark, {"fs.defaultFS": "hdfs://localhost/"}):
        assert qualified(spark, "/lake/out/runs") == name
    with hadoop_settings(spark, HA_NAMESERVICE):
        assert qualified(spark, "hdfs://lakens/lake/../lake/out/runs") == \
            "hdfs://lakens/lake/out/runs"


def test_an_output_table_under_another_namenode_spelling_is_refused(spark) -> None:
    """`hdfs://localhost/...` and `hdfs://localhost:8020/...` differ by name (`check_apart`
    passes them); the session's filesystem says they are one table."""
    output = "hdfs://localhost:8020/lake/out"
    for spelling in OTHER_NAMES_OF_IT:
        inputs = {"queues": spelling, "members": "hdfs://localhost/lake/in/members"}
        check_apart(output, inputs, OUTPUT_TABLES)
        with pytest.raises(TableError, match=(
                rf"--queues {spelling} \(hdfs://.*:8020/lake/out/runs\) is the runs table "
                rf"this run writes under --output {output} \(hdfs://.*:8020/lake/out\)")):
            check_inputs_apart(spark, output, inputs, OUTPUT_TABLES, "native")
    bare_in_output = (r"--members /lake/out/rejects/day=1 \(hdfs://.*:8020/lake/out/rejects/"
                      r"day=1\) lies in the rejects table")
    with (hadoop_settings(spark, {"fs.defaultFS": "hdfs://localhost/"}),
          pytest.raises(TableError, match=bare_in_output)):
        check_inputs_apart(spark, output, {"members": "/lake/out/rejects/day=1"},
                           OUTPUT_TABLES, "native")


def test_a_store_that_does_not_name_a_location_leaves_it_to_the_read(spark) -> None:
    check_inputs_apart(spark, "nosuchfs://bucket/out", {"queues": "nosuchfs://bucket/out/runs"},
                       OUTPUT_TABLES, "native")


def test_the_run_compares_its_inputs_with_its_tables_before_it_writes(spark, tmp_path,
                                                                     monkeypatch) -> None:
    """With the by-name check standing aside (as it does for spellings only the store can
    tell apart), the run's own comparison refuses an input that is one of its tables."""
    paths = write_inputs(spark, tmp_path / "in", queues=queue_rows(["A"]),
                         members=member_rows(["A"]))
    output = tmp_path / "out"
    monkeypatch.setattr(jobs.preflight, "check_apart", lambda *_args: None)
    config = AuditConfig(queues=paths["queues"], members=f"{output}/rejects",
                         output=str(output), engine="offline", run_id="r")
    with pytest.raises(TableError, match=r"--members .*/out/rejects \(file:.*/out/rejects\) "
                                         r"is the rejects table this run writes"):
        run(config, spark=spark)
    assert not output.exists()  # nothing created there, not even the root's folder
