"""The audit job from Delta inputs to Delta outputs on the offline engine."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable

from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.delta_inputs import write_inputs
from tests.support.examples import load, rocketmq_case

pytestmark = pytest.mark.spark


def _seed_skew_inputs(spark, root: Path) -> dict[str, str]:
    vector = next(v for v in load("rocketmq_averagely.json")
                  if v["name"] == "seed_multitopic_skew_2x2q_4c")
    case = rocketmq_case(vector, "AVG", snapshot="snap-1")
    queues = case.queues.drop(columns="consumer_group").drop_duplicates()
    queues["max_offset"] = 1000
    offsets = case.queues[["snapshot_id", "cluster", "consumer_group", "topic", "broker_name",
                           "queue_id"]].assign(committed_offset=900, consumed_offset=950)
    return write_inputs(spark, root, queues=queues, members=case.members, offsets=offsets)


def _table(path: str) -> pd.DataFrame:
    return DeltaTable(path).to_pandas()


def test_seed_multi_topic_skew_end_to_end(spark, tmp_path: Path) -> None:
    paths = _seed_skew_inputs(spark, tmp_path / "in")
    out = tmp_path / "out"
    config = AuditConfig(queues=paths["queues"], members=paths["members"],
                         offsets=paths["offsets"], output=str(out), engine="offline",
                         run_id="run-1")
    started = time.perf_counter()
    result = run(config, spark=spark)
    wall = time.perf_counter() - started
    assert result.snapshots == ["snap-1"]
    # every part of the run is in a step: they add up to its total, its wall time
    steps = {k: v for k, v in result.timings.items() if k != "total"}
    assert {"read", "assign", "reports", "write", "summary", "report_html"} <= set(steps)
    assert sum(steps.values()) <= result.timings["total"] <= wall
    assert result.timings["total"] - sum(steps.values()) < 0.5

    balance = _table(str(out / "group_balance"))
    whole = balance[balance["topic"].isna()].iloc[0]
    assert "MULTI_TOPIC_SKEW" in whole["findings"] and "IDLE_CLIENTS" in whole["findings"]
    assert (whole["max_queues"], whole["pooled_max"], whole["skew"]) == (2, 1, 1)
    assert whole["idle_clients"] == 2 and whole["clients"] == 4
    assert "multiple of the client count" in whole["recommendation"]

    load_ = _table(str(out / "consumer_load")).set_index("client_id")
    assert load_.loc[["consumer-3", "consumer-4"], "idle"].tolist() == [True, True]
    assert load_.loc["consumer-1", "queues"] == 2 and load_.loc["consumer-1", "lag"] == 200

    assignments = _table(str(out / "assignments"))
    assert len(assignments) == 4 and set(assignments["status"]) == {"OK"}
    assert set(assignments["lag"]) == {100} and set(assignments["run_id"]) == {"run-1"}
    assert _table(str(out / "rejects")).empty


def test_rerunning_a_snapshot_replaces_its_rows(spark, tmp_path: Path) -> None:
    paths = _seed_skew_inputs(spark, tmp_path / "in")
    out = tmp_path / "out"
    for run_id in ("first", "second"):
        run(AuditConfig(queues=paths["queues"], members=paths["members"], output=str(out),
                        engine="offline", run_id=run_id), spark=spark)
    for table, rows in (("assignments", 4), ("consumer_load", 4), ("group_balance", 3)):
        frame = _table(str(out / table))
        assert len(frame) == rows, table
        assert set(frame["run_id"]) == {"second"}, table


def _member(client, topic, strategy, addr="10.0.0.1:1", model=None, group="GID_split"):
    return {"snapshot_id": "s1", "cluster": "c", "consumer_group": group, "client_id": client,
            "topic": topic, "strategy": strategy, "client_addr": addr, "message_model": model}


def test_split_brain_group_shows_the_real_gaps_and_overlaps(spark, tmp_path: Path) -> None:
    """Hand-computed: cidAll = [c1, c2, c3, c4, c4] (c4 runs twice), 6 queues of T.

    AVG shares would be c1 {0,1}, c2 {2}, c3 {3}, c4 {4}, second c4 slot {5}. But c2 runs
    AVG_BY_CIRCLE ({1}: contended with c1), c3 does not subscribe T ({3} unconsumed), and
    the duplicate slot's {5} is never claimed; {2} is lost as c2 does not run AVG.
    """
    queues = pd.DataFrame(
        [{"snapshot_id": "s1", "cluster": "c", "topic": "T", "broker_name": "broker-a",
          "queue_id": q} for q in range(6)]
        + [{"snapshot_id": "s1", "cluster": "c", "topic": "U", "broker_name": "broker-a",
            "queue_id": q} for q in range(2)]
        + [{"snapshot_id": "s1", "cluster": "c", "topic": "R", "broker_name": f"{room}@b",
            "queue_id": q} for room in ("r1", "r2") for q in range(2)]
    )
    rooms = {"strategy_params": {"rooms": "r1"}}
    members = pd.DataFrame([
        # GID_rooms's strategy takes room r1's queues only; GID_missing reads a topic the
        # queues table lacks: two groups with nothing wrong in their members but queues
        {**_member("m1", "R", "MACHINE_ROOM", group="GID_rooms"), **rooms},
        {**_member("m2", "R", "MACHINE_ROOM", group="GID_rooms"), **rooms},
        _member("x", "V", "AVG", group="GID_missing"),
        # CONFIG: each client's own list (not a parameter the members must agree on)
        {**_member("k1", "U", "CONFIG", group="GID_config"),
         "strategy_params": {"queues": "U@broker-a:0"}},
        {**_member("k2", "U", "CONFIG", group="GID_config"),
         "strategy_params": {"queues": "U@broker-a:1"}},
        _member("c1", "T", "AVG"), _member("c2", "T", "AVG_BY_CIRCLE"),
        _member("c3", "U", "AVG"),
        _member("c4", "T", "AVG", addr="10.0.0.4:1"), _member("c4", "T", "AVG", addr="10.0.0.5:1"),
        _member("b1", "T", "AVG", model="BROADCASTING", group="GID_bcast"),
        _member("b2", "T", "AVG", model="BROADCASTING", group="GID_bcast"),
    ])
    paths = write_inputs(spark, tmp_path / "in", queues=queues, members=members)
    out = tmp_path / "out"
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(out), engine="offline"), spark=spark)
    # no comparison asked for: none written, none counted
    assert "strategy_comparison" not in result.rows
    assert not (out / "strategy_comparison").exists()

    a = _table(str(out / "assignments"))
    split = a[a["consumer_group"] == "GID_split"]
    got = sorted((t, q, c if isinstance(c, str) else None, s) for t, q, c, s in
                 zip(split["topic"], split["queue_id"], split["client_id"], split["status"],
                     strict=True))
    assert got == [
        ("T", 0, "c1", "OK"), ("T", 1, "c1", "CONTENDED"), ("T", 1, "c2", "CONTENDED"),
        # c4's two processes both pull its share (it was OK: one row, one client id)
        ("T", 2, None, "UNCONSUMED"), ("T", 3, None, "UNCONSUMED"), ("T", 4, "c4", "CONTENDED"),
        ("T", 5, None, "UNCONSUMED"),
        ("U", 0, None, "UNCONSUMED"), ("U", 1, None, "UNCONSUMED"),
    ]
    bcast = a[a["consumer_group"] == "GID_bcast"]
    assert len(bcast) == 12 and set(bcast["status"]) == {"BROADCAST"}

    balance = _table(str(out / "group_balance"))
    whole = balance[(balance["consumer_group"] == "GID_split") & balance["topic"].isna()].iloc[0]
    assert list(whole["findings"]) == [
        "IDLE_CLIENTS", "INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES",
        "DUPLICATE_CLIENT_ID", "UNCONSUMED_QUEUES", "CONTENDED_QUEUES"]
    assert (whole["unconsumed_queues"], whole["contended_queues"], whole["clients"]) == (5, 2, 4)
    assert "c4" in whole["recommendation"] and "instanceName" in whole["recommendation"]
    assert "5 queue(s) are consumed by nobody and their backlog grows; fix the causes named " \
        "below." in whole["recommendation"]
    # unconsumed with no cause among the findings: the sentence names the causes left
    rooms = balance[(balance["consumer_group"] == "GID_rooms") & balance["topic"].isna()]
    assert rooms.iloc[0]["unconsumed_queues"] == 2
    assert "2 queue(s) are consumed by nobody and their backlog grows; no client's own " \
        "strategy takes them (MACHINE_ROOM rooms" in rooms.iloc[0]["recommendation"]
    assert "named below" not in rooms.iloc[0]["recommendation"]
    config = balance[(balance["consumer_group"] == "GID_config") & balance["topic"].isna()]
    assert list(config.iloc[0]["findings"]) == [], config.iloc[0]["findings"]
    assert config.iloc[0]["recommendation"] == "Balanced: no action needed."
    missing = balance[(balance["consumer_group"] == "GID_missing") & balance["topic"].isna()]
    assert "No readable queue in topic(s) V: nothing to allocate there (the queues table " \
        "has no readable row of it: a topic it lacks, or one without read permission)." \
        in missing.iloc[0]["recommendation"]
    b = balance[(balance["consumer_group"] == "GID_bcast") & balance["topic"].isna()].iloc[0]
    assert b["subscribing_clients"] == 0 and b["unconsumed_queues"] == 0
    assert list(b["findings"]) == []


def test_rate_sums_are_exact_whatever_the_row_order(spark, tmp_path: Path) -> None:
    """0.1 + 0.2 + 0.3 as doubles is 0.6000000000000001 in two of its three orders: the
    rates are summed exactly, so every snapshot (rows in opposite orders) reads 0.6."""
    rows = [{"snapshot_id": snap, "cluster": "c", "topic": "T", "broker_name": "broker-a",
             "queue_id": q, "in_rate": rate}
            for snap, order in (("s1", (0, 1, 2)), ("s2", (2, 1, 0)))
            for q, rate in ((q, (0.1, 0.2, 0.3)[q]) for q in order)]
    members = pd.DataFrame([{**_member("c1", "T", "AVG", group="GID_rate"), "snapshot_id": s}
                            for s in ("s1", "s2")])
    paths = write_inputs(spark, tmp_path / "in", queues=pd.DataFrame(rows), members=members)
    out = tmp_path / "out"
    run(AuditConfig(queues=paths["queues"], members=paths["members"], output=str(out),
                    engine="offline"), spark=spark)

    load_ = _table(str(out / "consumer_load"))
    assert load_["in_rate"].tolist() == [0.6, 0.6]
    balance = _table(str(out / "group_balance"))
    for col in ("in_rate_total", "min_in_rate", "max_in_rate", "mean_in_rate"):
        assert balance[col].tolist() == [0.6] * 4, col


def test_a_rate_that_is_not_a_finite_number_counts_as_unknown(spark) -> None:
    from decimal import Decimal

    from pyspark.sql import functions as F

    from rebalance_udfs.spark.rates import exact_rate

    rates = spark.createDataFrame([(0.1,), (float("nan"),), (float("inf"),), (1e30,), (None,)],
                                  "in_rate double")
    got = [r[0] for r in rates.select(exact_rate(F.col("in_rate"))).collect()]
    assert got == [Decimal("0.100000000"), None, None, None, None]


def test_the_client_named_for_lag_skew_is_the_smallest_id_of_equal_ones(spark,
                                                                        tmp_path: Path) -> None:
    """AVG gives c1..c5 one queue each; q0 and q1 lag 1,000, the rest 0: c1 and c2 tie for
    the most lag (above 2x the mean of 400), and the sentence names c1 whatever the order."""
    base = {"snapshot_id": "s1", "cluster": "c", "topic": "T", "broker_name": "broker-a"}
    queues = pd.DataFrame([{**base, "queue_id": q, "max_offset": 1000} for q in range(5)])
    offsets = pd.DataFrame([{**base, "consumer_group": "GID_lag", "queue_id": q,
                             "committed_offset": 0 if q < 2 else 1000} for q in range(5)])
    members = pd.DataFrame([_member(f"c{i}", "T", "AVG", group="GID_lag") for i in (5, 2, 4, 1, 3)])
    paths = write_inputs(spark, tmp_path / "in", queues=queues, members=members, offsets=offsets)
    out = tmp_path / "out"
    run(AuditConfig(queues=paths["queues"], members=paths["members"], offsets=paths["offsets"],
                    output=str(out), engine="offline"), spark=spark)

    balance = _table(str(out / "group_balance"))
    whole = balance[balance["topic"].isna()].iloc[0]
    assert "LAG_SKEW" in whole["findings"]
    assert "By lag, client c1 carries 1,000 (50% of the group's total" in whole["recommendation"]


def test_input_splits_follow_the_run_partitions_unless_set(spark) -> None:
    """The input files are read in at least as many splits as the run has partitions
    (the session's spark.sql.shuffle.partitions here: the test session sets 4)."""
    from types import SimpleNamespace

    from jobs.audit import _size

    key = "spark.sql.files.minPartitionNum"
    assert not spark.sparkContext.getConf().contains(key)
    try:
        _size(SimpleNamespace(spark=spark), 10_000_000)
        # the session's own shuffle partitions win over the rule (40 for 10M rows)
        assert spark.conf.get("spark.sql.shuffle.partitions") == "4"
        assert spark.conf.get(key) == "4"
    finally:
        spark.conf.unset(key)


def test_assignments_are_written_in_as_many_tasks_as_their_rows_need(spark) -> None:
    """Not one task (and its files) per bucket of the pass: `jobs.sizing`'s rule, never
    more partitions than the frame has."""
    from jobs.sizing import ROWS_PER_TASK, partitions_for
    from jobs.write import SIZED, _sized

    cores = spark.sparkContext.defaultParallelism
    frame = spark.range(100).repartition(3 * cores)
    assert "assignments" in SIZED and "rejects" in SIZED
    assert _sized(frame, 100).rdd.getNumPartitions() == partitions_for(100, cores) == cores
    assert _sized(frame, 100 * ROWS_PER_TASK).rdd.getNumPartitions() == 3 * cores
    assert _sized(None, 100) is None


def test_the_tables_report_html_reads_are_written_in_small_files() -> None:
    """The page reads a file at a time: every table it reads has a cap on a file's rows
    (`jobs.write.PAGE_FILE_ROWS`), whatever the tasks that write it."""
    from jobs.audit import OUTPUT_TABLES
    from jobs.write import PAGE_FILE_ROWS, SIZED

    page = {"consumer_load", "group_balance", "rebalance_churn", "what_if", "drift"}
    assert set(PAGE_FILE_ROWS) == page and page <= set(OUTPUT_TABLES)
    assert not page & set(SIZED)
    assert all(0 < rows <= 50_000 for rows in PAGE_FILE_ROWS.values())


def test_a_snapshot_id_no_partition_holds_is_rejected_and_the_output_kept(
        spark, tmp_path: Path) -> None:
    """Rows of snapshot "" passed validation: the commit of the null partition they made
    broke every output table, the snapshots audited before with it, and each later run
    failed. Now its rows are rejects (the rejects' null partition) and no runs row. So are
    those of an id holding a NUL, which no folder name can (the rejects' write failed with
    a Java stack trace after the other tables committed), and of Spark's null-partition
    folder name, which read back as null (exit 2, the whole run lost)."""
    from deltalake import write_deltalake

    vector = next(v for v in load("rocketmq_averagely.json")
                  if v["name"] == "seed_multitopic_skew_2x2q_4c")
    out = str(tmp_path / "out")
    inputs = {}
    unfit = ["", "a\x00b", "__HIVE_DEFAULT_PARTITION__"]
    for run_id, snapshots in (("first", ["snap-1"]), ("second", [*unfit, "snap-2"])):
        cases = [(s, rocketmq_case(vector, "AVG", snapshot="any")) for s in snapshots]
        for name in ("queues", "members"):
            rows = pd.concat([getattr(c, name).assign(snapshot_id=s) for s, c in cases],
                             ignore_index=True)
            if name == "queues":
                rows = rows.drop(columns="consumer_group").drop_duplicates()
            inputs[name] = str(tmp_path / run_id / name)
            write_deltalake(inputs[name], rows, mode="overwrite")
        result = run(AuditConfig(queues=inputs["queues"], members=inputs["members"],
                                 output=out, engine="offline", run_id=run_id), spark=spark)
    assert result.snapshots == ["snap-2"]
    for table in ("assignments", "consumer_load", "group_balance"):
        assert sorted(set(_table(f"{out}/{table}")["snapshot_id"])) == ["snap-1", "snap-2"]
    runs = _table(f"{out}/runs")
    assert sorted(runs["snapshot_id"]) == ["snap-1", "snap-2"]
    rejects = _table(f"{out}/rejects")
    second = {name: DeltaTable(path).to_pandas() for name, path in inputs.items()}
    assert rejects["snapshot_id"].isna().all()
    assert rejects.groupby("source_table").size().to_dict() == {
        name: int(rows["snapshot_id"].isin(unfit).sum()) for name, rows in second.items()}
    assert set(rejects["reason"]) == {
        "snapshot_id is empty (it names the outputs' partition of the snapshot)",
        "snapshot_id contains a NUL character",
        "snapshot_id is __HIVE_DEFAULT_PARTITION__, the folder name Spark gives the null "
        "partition, which reads back as null"}


def test_rows_no_partition_holds_are_rejected_once_whatever_the_reruns(
        spark, tmp_path: Path) -> None:
    """Rows whose snapshot id no partition holds are kept in the rejects' null partition.
    Each re-run over the whole inputs added them again (it replaced the null partition
    only for clusters with rows of a null id), and `--snapshot` of such an id added them
    on every run. Now a whole run replaces them, and such a `--snapshot` is refused."""
    from deltalake import write_deltalake

    from vocabulary.errors import ConfigError

    vector = next(v for v in load("rocketmq_averagely.json")
                  if v["name"] == "seed_multitopic_skew_2x2q_4c")
    long_id = "x" * 300
    inputs = {}
    cases = [(s, rocketmq_case(vector, "AVG", snapshot="any")) for s in ("snap-1", long_id, "")]
    for name in ("queues", "members"):
        rows = pd.concat([getattr(c, name).assign(snapshot_id=s) for s, c in cases],
                         ignore_index=True)
        if name == "queues":
            rows = rows.drop(columns="consumer_group").drop_duplicates()
        inputs[name] = str(tmp_path / name)
        write_deltalake(inputs[name], rows)
    unwritable = sum(int((DeltaTable(p).to_pandas()["snapshot_id"].isin([long_id, ""])).sum())
                     for p in inputs.values())
    out = str(tmp_path / "out")
    for run_id, snapshots in (("whole-1", ()), ("one", ("snap-1",)), ("whole-2", ())):
        run(AuditConfig(queues=inputs["queues"], members=inputs["members"], output=out,
                        engine="offline", run_id=run_id, snapshots=snapshots), spark=spark)
        rejects = _table(f"{out}/rejects")
        assert len(rejects) == unwritable, run_id
        assert set(rejects["run_id"]) == {"whole-1" if run_id == "one" else run_id}
    with pytest.raises(ConfigError, match=r"snapshot 'xxx.*\(300 characters\) can name no "):
        AuditConfig(queues=inputs["queues"], members=inputs["members"], output=out,
                    snapshots=(long_id,))


@pytest.mark.parametrize("damage", ["gone", "not parquet"])
def test_a_data_file_the_log_names_but_spark_cannot_read_names_its_table(
        spark, tmp_path: Path, damage: str) -> None:
    """An input copied without all its files (or vacuumed while read, or damaged) ended
    the run with a Java stack trace."""
    from deltalake import write_deltalake

    from vocabulary.errors import TableError

    vector = next(v for v in load("rocketmq_averagely.json")
                  if v["name"] == "seed_multitopic_skew_2x2q_4c")
    case = rocketmq_case(vector, "AVG", snapshot="snap-1")
    paths = {name: str(tmp_path / name) for name in ("queues", "members")}
    write_deltalake(paths["queues"],
                    case.queues.drop(columns="consumer_group").drop_duplicates())
    write_deltalake(paths["members"], case.members)
    [data_file] = (tmp_path / "members").glob("*.parquet")
    if damage == "gone":
        data_file.unlink()
    else:
        data_file.write_bytes(b"PAR1 not a parquet file PAR1")
    config = AuditConfig(queues=paths["queues"], members=paths["members"],
                         output=str(tmp_path / "out"), engine="offline")
    with pytest.raises(TableError, match=(
            rf"the members table at {paths['members']}: a data file its log names cannot "
            r"be read \((\[PATH_NOT_FOUND\]|\[FAILED_READ_FILE).*\): the table was copied "
            r"without all its files")):
        run(config, spark=spark)
