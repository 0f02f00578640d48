"""What `load` reads: every group in the few columns the overview and the choice of groups
need, whole rows only for the groups the page details."""

from __future__ import annotations

import re
from datetime import timedelta

import pandas as pd
import pytest

from reports.html.data import load
from tests.report import frames


def test_whole_rows_only_for_the_detailed_groups(tmp_path):
    output = frames.write_outputs(str(tmp_path / "out"))
    data = load(output, top=1)
    # the worst group of s2 (a contended queue) is the one detailed ...
    assert set(data.group_balance["consumer_group"]) == {frames.NASTY}
    assert "recommendation" in data.group_balance.columns
    assert set(data.consumer_load["consumer_group"]) == {frames.NASTY}
    # ... while the histogram still counts every shown group of complete runs
    assert data.skew_counts.to_dict() == {0: 3, 3: 1}


def test_a_group_filter_details_that_group(tmp_path):
    output = frames.write_outputs(str(tmp_path / "out"))
    data = load(output, groups=["g-skew"])
    assert set(data.group_balance["consumer_group"]) == {"g-skew"}
    assert sorted(data.group_balance["topic"].fillna("").tolist()) == ["", "t1"]
    assert data.skew_counts.to_dict() == {3: 1}
    # the churn timeline too: g-skew's 4 moves, not every group's 6
    assert data.churn[["cluster", "snapshot_id", "queues_moved"]].values.tolist() == [
        ["c1", "s2", 4]]


def test_churn_timeline_sums_each_snapshot_of_complete_runs(tmp_path):
    from deltalake import write_deltalake

    output = frames.write_outputs(str(tmp_path / "out"))
    dead = frames.churn().assign(run_id="dead", queues_moved=100)  # a run that died
    write_deltalake(f"{output}/rebalance_churn", frames.to_arrow(dead), mode="append",
                    partition_by=["snapshot_id"])
    churn = load(output).churn
    assert churn[["cluster", "snapshot_id", "queues_moved"]].values.tolist() == [
        ["c1", "s2", 6]]


def test_the_index_counts_findings_of_whole_group_rows_of_complete_runs(tmp_path):
    from reports.html.data import balance_index, complete_runs

    output = frames.write_outputs(str(tmp_path / "out"))
    index = balance_index(output, ["s2"], None, complete_runs(output), top=100,
                          everything=True).worst
    expected = frames.group_balance()
    expected = expected[(expected["snapshot_id"] == "s2") & expected["topic"].isna()
                        & (expected["run_id"] == frames.RUN)]
    assert sorted(index["consumer_group"]) == sorted(expected["consumer_group"])
    counts = dict(zip(index["consumer_group"], index["findings"], strict=True))
    assert counts == {g: len(f) if f is not None else 0
                      for g, f in zip(expected["consumer_group"], expected["findings"],
                                      strict=True)}


T3 = frames.T2 + timedelta(hours=1)


def _two_clusters(root: str) -> str:
    """s1 before s2 in c1, after it in c2; groups that change between the snapshots."""
    from deltalake import write_deltalake

    runs = pd.concat([frames.runs(),
                      frames.runs((("s1", T3), ("s2", frames.T1)), cluster="c2")])
    row = frames.balance_row
    rows = [
        # c1: the newer s2 row of g-both has no finding, so g-both is not detailed
        row("s1", "g-both", None, skew=7, findings=["MULTI_TOPIC_SKEW"],
            captured_at=frames.T1),
        row("s2", "g-both", None, skew=0),
        row("s1", "g-gone", None, skew=2, findings=["IDLE_CLIENTS"], idle=3,
            captured_at=frames.T1),
        row("s2", "g-worse", None, contended=2, findings=["CONTENDED_QUEUES"]),
        row("s1", "g-worse", None, idle=1, findings=["IDLE_CLIENTS"], captured_at=frames.T1),
        row("s2", "g-ok", None),
        row("s2", "g-ghost", None, skew=9, findings=["X"], run_id="dead"),
        # c2: s1 is the newer snapshot
        {**row("s1", "g-both", None, skew=4, findings=["MULTI_TOPIC_SKEW"]), "cluster": "c2",
         "captured_at": T3},
        {**row("s2", "g-both", None, skew=0), "cluster": "c2", "captured_at": frames.T1},
        {**row("s2", "g-c2-old", None, unconsumed=1, findings=["UNCONSUMED_QUEUES"]),
         "cluster": "c2", "captured_at": frames.T1},
        {**row("s1", "g-c2", None, skew=1, findings=["MULTI_TOPIC_SKEW"]), "cluster": "c2",
         "captured_at": T3},
    ]
    write_deltalake(f"{root}/runs", frames.to_arrow(runs), partition_by=["snapshot_id"])
    write_deltalake(f"{root}/group_balance", frames.to_arrow(pd.DataFrame(rows)),
                    partition_by=["snapshot_id"])
    return root


def _whole_index(output: str, snapshots: list[str], runs: pd.DataFrame) -> pd.DataFrame:
    """Every whole-group row of complete runs at once: what the reduced index must equal."""
    from reports.html.data import of_complete_runs, read_table

    rows = of_complete_runs(read_table(output, "group_balance", snapshots), runs)
    rows = rows[rows["topic"].isna()]
    return rows.assign(findings=rows["findings"].map(len))


def _whole_overview(output: str, snapshots: list[str], runs: pd.DataFrame):
    """The findings overview of every whole-group row of complete runs at once, each group
    at its latest snapshot: what the reduced one must equal."""
    from reports.html.data import of_complete_runs, read_table
    from reports.html.select import findings_overview, latest_per_group

    rows = of_complete_runs(read_table(output, "group_balance", snapshots), runs)
    return findings_overview(latest_per_group(rows[rows["topic"].isna()]))


def _assert_same_overview(got, expected) -> None:
    assert got.counts == expected.counts
    assert got.groups == expected.groups
    assert got.examples == expected.examples


@pytest.mark.parametrize("snapshots", [["s1", "s2"], ["s1"], ["s2"]])
@pytest.mark.parametrize("everything", [False, True])
@pytest.mark.parametrize("top", [1, 2, 3, 25])
def test_the_reduced_index_equals_the_whole_one_one_row_per_batch(tmp_path, monkeypatch,
                                                                  snapshots, everything, top):
    """Read a row at a time, with a snapshot newer in one cluster and older in the other,
    the worst groups and the skew counts are those of the whole index at once."""
    from reports.html import data
    from reports.html.data import balance_index, complete_runs
    from reports.html.select import groups_needing_attention, latest_per_group, skew_counts

    output = _two_clusters(str(tmp_path / "out"))
    runs = complete_runs(output)
    whole = _whole_index(output, snapshots, runs)
    expected = groups_needing_attention(whole, top, everything)
    scan = data.scan

    def one_row_batches(*args, **kwargs):
        for batch in scan(*args, **kwargs):
            yield from (batch.slice(i, 1) for i in range(batch.num_rows))

    monkeypatch.setattr(data, "scan", one_row_batches)
    index = balance_index(output, snapshots, None, runs, top, everything)
    columns = ["snapshot_id", "cluster", "consumer_group", "severity", "findings"]
    assert index.worst[columns].values.tolist() == expected[columns].values.tolist()
    # each group counted once, at its latest shown snapshot, as in the findings overview
    assert index.skew_counts.to_dict() == skew_counts(latest_per_group(whole)["skew"]).to_dict()
    _assert_same_overview(index.findings, _whole_overview(output, snapshots, runs))
    if snapshots == ["s1", "s2"] and not everything and top == 25:
        # g-both at its latest: s2 in c1 (no finding), s1 in c2; g-gone and g-c2-old
        # only in their older snapshot
        assert sorted(map(tuple, index.worst[["cluster", "consumer_group", "snapshot_id"]]
                          .values.tolist())) == [
            ("c1", "g-gone", "s1"), ("c1", "g-worse", "s2"), ("c2", "g-both", "s1"),
            ("c2", "g-c2", "s1"), ("c2", "g-c2-old", "s2")]
        # g-both's older finding in c1 is not counted; the dead run's g-ghost is in none
        assert index.findings.counts == {
            ("c1", "CONTENDED_QUEUES"): 1, ("c1", "IDLE_CLIENTS"): 1,
            ("c2", "MULTI_TOPIC_SKEW"): 2, ("c2", "UNCONSUMED_QUEUES"): 1}
        assert index.findings.groups == {"c1": 4, "c2": 3}
        assert [(e.finding, e.consumer_group) for e in index.findings.examples] == [
            ("CONTENDED_QUEUES", "g-worse"), ("IDLE_CLIENTS", "g-gone"),
            ("MULTI_TOPIC_SKEW", "g-both"), ("MULTI_TOPIC_SKEW", "g-c2"),
            ("UNCONSUMED_QUEUES", "g-c2-old")]


def test_a_scan_file_by_file_reads_what_the_whole_table_holds(tmp_path):
    """`scan` reads one file at a time (so that no file's metadata outlives its read):
    over many files, two partitions and a column the older files lack, it yields the
    rows, partition values and nulls one read of the whole table does, in its order."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable, write_deltalake

    from reports.html.data import scan

    path = str(tmp_path / "out" / "group_balance")
    for i in range(6):
        rows = [frames.balance_row("s1" if i % 2 else "s2", f"g-{i}-{j}", None, skew=j)
                for j in range(3)]
        frame = pd.DataFrame(rows)
        frame = (frame.drop(columns="recommendation") if i < 4
                 else frame.assign(recommendation="add clients"))
        write_deltalake(path, frames.to_arrow(frame), partition_by=["snapshot_id"],
                        mode="append", schema_mode="merge")
    assert len(DeltaTable(path).file_uris()) == 6

    wanted = ["g-1-0", "g-3-2", "g-4-1", "g-5-0", "g-5-1"]
    columns = ["consumer_group", "skew", "recommendation", "snapshot_id"]
    condition = ((ds.field("skew") < 2) & ds.field("consumer_group").isin(wanted)
                 & ds.field("snapshot_id").isin(["s1"]))
    got = pd.concat([b.to_pandas() for b in scan(str(tmp_path / "out"), "group_balance",
                                                 ["s1"], wanted, columns,
                                                 ds.field("skew") < 2)],
                    ignore_index=True)
    at_once = (DeltaTable(path).to_pyarrow_dataset().to_table(columns=columns,
                                                              filter=condition).to_pandas())
    pd.testing.assert_frame_equal(got, at_once)
    assert sorted(got["consumer_group"]) == ["g-1-0", "g-5-0", "g-5-1"]
    assert got["snapshot_id"].unique().tolist() == ["s1"]
    # the file written before the column was added reads it as null
    assert got.set_index("consumer_group")["recommendation"].isna().to_dict() == {
        "g-1-0": True, "g-5-0": False, "g-5-1": False}


@pytest.mark.parametrize("one_row_batches", [False, True])
def test_drift_is_counted_per_group_and_kind_of_complete_runs(tmp_path, monkeypatch,
                                                              one_row_batches):
    """The page gets drifting queues per (cluster, group, kind), never the rows: counted
    batch by batch (one row a batch: the same counts), a dead run's rows left out, a
    group filter kept."""
    from deltalake import write_deltalake

    from reports.html import data

    output = frames.write_outputs(str(tmp_path / "out"))
    dead = frames.drift().assign(run_id="dead")  # a run that died part-way
    write_deltalake(f"{output}/drift", frames.to_arrow(dead), mode="append",
                    partition_by=["snapshot_id"])
    if one_row_batches:
        scan = data.scan

        def batches(*args, **kwargs):
            for batch in scan(*args, **kwargs):
                yield from (batch.slice(i, 1) for i in range(batch.num_rows))

        monkeypatch.setattr(data, "scan", batches)
    drift = load(output).drift
    assert drift.sort_values("kind").values.tolist() == [
        ["s2", "c1", "g-skew", "HELD_TWICE", 1], ["s2", "c1", "g-skew", "NOT_HELD", 2]]
    assert load(output, groups=["g-idle"]).drift.empty
    assert list(load(output, snapshots=["s1"]).drift.columns) == [
        "snapshot_id", "cluster", "consumer_group", "kind", "queues"]


def test_drift_of_several_shown_snapshots_is_counted_per_snapshot(tmp_path):
    """The same three queues drifting in s1 and s2 were summed to six drifting queues
    of g-skew (summed once per shown snapshot); each snapshot keeps its own three."""
    from deltalake import write_deltalake

    output = frames.write_outputs(str(tmp_path / "out"))
    write_deltalake(f"{output}/drift", frames.to_arrow(frames.drift().assign(
        snapshot_id="s1")), mode="append", partition_by=["snapshot_id"])
    drift = load(output, snapshots=["s1", "s2"]).drift
    assert sorted(drift.values.tolist()) == [
        ["s1", "c1", "g-skew", "HELD_TWICE", 1], ["s1", "c1", "g-skew", "NOT_HELD", 2],
        ["s2", "c1", "g-skew", "HELD_TWICE", 1], ["s2", "c1", "g-skew", "NOT_HELD", 2]]


def _publish_again(output: str, snapshot: str, run_id: str) -> None:
    """Another run of `snapshot`: every table's rows of it under `run_id`, `runs` last."""
    from deltalake import DeltaTable, write_deltalake

    runs = DeltaTable(f"{output}/runs").to_pandas()
    current = runs.loc[runs["snapshot_id"] == snapshot, "run_id"].iloc[0]
    for name in ("group_balance", "consumer_load", "rebalance_churn", "drift", "what_if",
                 "runs"):
        frame = DeltaTable(f"{output}/{name}").to_pandas()
        rows = frame[(frame["snapshot_id"] == snapshot)
                     & (frame["run_id"] == current)].assign(run_id=run_id)
        write_deltalake(f"{output}/{name}", frames.to_arrow(rows.reset_index(drop=True)),
                        mode="overwrite", predicate=f"snapshot_id = '{snapshot}'")


def test_a_run_published_while_the_page_reads_is_read_whole(tmp_path, monkeypatch):
    # the page read `runs` (s2 of RUN), then another run of s2 published before it read
    # group_balance: kept to RUN's rows, s2 had no group at all ("all balanced")
    from reports.html import data as report_data

    output = frames.write_outputs(str(tmp_path / "out"))
    scan, published = report_data.scan, []

    def another_run_publishes(root, name, *args, **kwargs):
        if name == "group_balance" and not published:
            published.append(name)
            _publish_again(output, "s2", "run-2")
        return scan(root, name, *args, **kwargs)

    monkeypatch.setattr(report_data, "scan", another_run_publishes)
    data = load(output, top=1)
    assert published
    assert set(data.group_balance["consumer_group"]) == {frames.NASTY}
    assert set(data.group_balance["run_id"]) == {"run-2"} == set(data.runs["run_id"])
    assert data.skew_counts.to_dict() == {0: 3, 3: 1}


def test_a_page_that_never_reads_a_quiet_moment_says_so(tmp_path, monkeypatch):
    from reports.html import data as report_data
    from vocabulary.errors import NoOutputError

    output = frames.write_outputs(str(tmp_path / "out"))
    scan, runs = report_data.scan, iter(range(100))

    def a_run_publishes_each_time(root, name, *args, **kwargs):
        if name == "group_balance":
            _publish_again(output, "s2", f"run-{next(runs)}")
        return scan(root, name, *args, **kwargs)

    monkeypatch.setattr(report_data, "scan", a_run_publishes_each_time)
    with pytest.raises(NoOutputError, match="runs were published while the page read the "
                                            "tables, 3 times in a row"):
        load(output)


def test_rejects_of_the_shown_complete_runs_are_counted_per_input_and_reason(tmp_path):
    output = frames.write_outputs(str(tmp_path / "out"))
    rejects = load(output).rejects  # the latest snapshot, s2: not the dead run's row
    assert rejects.values.tolist() == [
        ["s2", "c1", "members", "strategy is not one of <AVG, ...>", 2, []]]
    assert load(output, snapshots=["s1"]).rejects["rows"].tolist() == [1]


def test_a_table_without_run_id_shows_the_rows_of_the_shown_pairs_only(tmp_path):
    """An older audit's rejects has no run_id: its rows were all shown, c1's of s1 among
    them though c1 is shown at s2 (only c2 at s1); now kept to the shown (snapshot,
    cluster) pairs, as the run id would."""
    from deltalake import write_deltalake

    output = frames.add_second_cluster(frames.write_outputs(str(tmp_path / "out")))
    older = pd.concat([frames.rejects(), frames.rejects().assign(cluster="c2")])
    write_deltalake(f"{output}/rejects", frames.to_arrow(
        older.drop(columns="run_id").reset_index(drop=True)), mode="overwrite",
        schema_mode="overwrite", partition_by=["snapshot_id"])
    rejects = load(output).rejects
    assert sorted(set(zip(rejects["snapshot_id"], rejects["cluster"], strict=True))) == [
        ("s1", "c2"), ("s2", "c1")]
    assert load(output, snapshots=["s1"]).rejects["cluster"].tolist() == ["c1", "c2"]


def test_rejects_name_the_groups_or_topics_their_rows_belonged_to(tmp_path, monkeypatch):
    """Read a row at a time: the names are the first four distinct ones of each input
    and reason in the table's order (the page decodes them); rows with neither a group
    nor a topic count but are not named."""
    import json

    from deltalake import write_deltalake

    from reports.html import data
    from reports.html.data import REJECT_NAMES

    output = frames.write_outputs(str(tmp_path / "out"))
    reason = "unknown strategy"
    rows = [{"consumer_group": f"g{i}", "strategy": "AVERAGE"} for i in (5, 1, 4, 1, 3, 2)]
    rows += [{"consumer_group": 'quote"d', "strategy": "AVERAGE"}, {"no": "names"}]
    frame = pd.DataFrame(
        [{"snapshot_id": "s2", "cluster": "c1", "source_table": "members",
          "row_json": json.dumps(r, separators=(",", ":")), "reason": reason,
          "run_id": frames.RUN} for r in rows]
        + [{"snapshot_id": "s2", "cluster": "c1", "source_table": "queues",
            "row_json": '{"topic":"TopicA","queue_id":-1}', "reason": "negative queue id",
            "run_id": frames.RUN},
           {"snapshot_id": "s2", "cluster": "c1", "source_table": "members.txt",
            "row_json": "GROUP g9 raw line", "reason": "unparsable", "run_id": frames.RUN}])
    write_deltalake(f"{output}/rejects", frames.to_arrow(frame), mode="overwrite",
                    partition_by=["snapshot_id"])
    scan = data.scan

    def one_row_batches(*args, **kwargs):
        for batch in scan(*args, **kwargs):
            yield from (batch.slice(i, 1) for i in range(batch.num_rows))

    monkeypatch.setattr(data, "scan", one_row_batches)
    found = {r["reason"]: (r["rows"], r["names"]) for r in load(output).rejects.to_dict("records")}
    assert found == {
        reason: (8, ["g5", "g1", "g4", "g3"][:REJECT_NAMES + 1]),
        "negative queue id": (1, ["topic TopicA"]), "unparsable": (1, [])}


def test_naming_rejected_rows_stops_reading_once_every_reason_has_its_names(tmp_path,
                                                                          monkeypatch):
    """Many rows rejected for one reason: row_json is read until the reason has its
    names, then no further (the counts still cover every row)."""
    from deltalake import write_deltalake

    from reports.html import data

    output = frames.write_outputs(str(tmp_path / "out"))
    frame = pd.DataFrame([{"snapshot_id": "s2", "cluster": "c1", "source_table": "members",
                           "row_json": f'{{"consumer_group":"g{i}"}}', "reason": "bad",
                           "run_id": frames.RUN} for i in range(40)])
    write_deltalake(f"{output}/rejects", frames.to_arrow(frame), mode="overwrite",
                    partition_by=["snapshot_id"])
    scan, read = data.scan, []

    def one_row_batches(output, name, snapshots=None, groups=None, columns=None, *rest):
        for batch in scan(output, name, snapshots, groups, columns, *rest):
            for i in range(batch.num_rows):
                if "row_json" in (columns or []):
                    read.append(i)
                yield batch.slice(i, 1)

    monkeypatch.setattr(data, "scan", one_row_batches)
    rejects = load(output).rejects
    assert rejects[["reason", "rows"]].values.tolist() == [["bad", 40]]
    assert rejects["names"].tolist() == [["g0", "g1", "g2", "g3"]]
    assert len(read) == 4


def _churn_row(snapshot: str, hour: int, group: str = "g-skew", run_id: str = frames.RUN,
               joined=(), left=(), moved: int = 1) -> dict:
    return {"snapshot_id": snapshot, "cluster": "c1", "consumer_group": group,
            "captured_at": frames.T1 + timedelta(hours=hour),
            "previous_snapshot_id": f"before-{snapshot}", "clients_before": 4,
            "clients_after": 4 + len(joined) - len(left), "clients_joined": list(joined),
            "clients_left": list(left), "queues_moved": moved, "paused_queues": moved,
            "estimated_duplicates": None, "triggers": ["CLIENTS_CHANGED"], "run_id": run_id,
            "moves": [{"topic": "t1", "queue_id": 0}]}


def test_a_detailed_groups_rebalances_are_its_latest_up_to_its_card(tmp_path):
    from deltalake import write_deltalake

    from reports.html.data import GROUP_CHURN_ROWS, complete_runs, group_churn

    output = frames.write_outputs(str(tmp_path / "out"))
    hours = range(8)  # h0 … h7 of g-skew; h8 is after its card (h5), h9 a dead run's
    rows = [_churn_row(f"h{h}", h, joined=["a"] * h, left=["b"]) for h in hours]
    rows += [_churn_row("h8", 8), _churn_row("h9", 4, run_id="dead"),
             _churn_row("h3", 3, group="g-other")]
    runs = pd.concat([frames.runs(), frames.runs(
        [(f"h{h}", frames.T1 + timedelta(hours=h)) for h in range(10)])])
    runs = runs[runs["snapshot_id"] != "h9"]  # h9: no complete run
    for name, frame in (("runs", runs), ("rebalance_churn", pd.DataFrame(rows))):
        write_deltalake(f"{output}/{name}", frames.to_arrow(frame), mode="overwrite",
                        partition_by=["snapshot_id"], schema_mode="overwrite")
    cards = pd.DataFrame([{"snapshot_id": "h5", "cluster": "c1", "consumer_group": "g-skew",
                           "captured_at": frames.T1 + timedelta(hours=5)}])
    churn = group_churn(output, complete_runs(output), cards)
    assert churn["snapshot_id"].tolist() == [f"h{h}" for h in range(6 - GROUP_CHURN_ROWS, 6)]
    assert churn["clients_joined"].tolist() == list(range(6 - GROUP_CHURN_ROWS, 6))
    assert set(churn["clients_left"]) == {1} and "moves" not in churn.columns
    assert group_churn(output, complete_runs(output), cards.iloc[:0]).empty


def test_the_churn_history_read_is_each_clusters_latest_window(tmp_path, monkeypatch):
    """A scheduled audit adds a snapshot every few minutes: the page read every one of
    them (75-120 s at 4,800 partitions). It reads each cluster's latest CHURN_WINDOW
    complete snapshots only (those up to a card for a group's rebalances), scanning no
    other partition, and the timeline's title says so."""
    from deltalake import write_deltalake

    from reports.html import charts, data

    output = frames.write_outputs(str(tmp_path / "out"))
    rows = [_churn_row(f"h{h}", h) for h in range(8)]
    runs = pd.concat([frames.runs(), frames.runs(
        [(f"h{h}", frames.T1 + timedelta(hours=h)) for h in range(8)])])
    for name, frame in (("runs", runs), ("rebalance_churn", pd.DataFrame(rows))):
        write_deltalake(f"{output}/{name}", frames.to_arrow(frame), mode="overwrite",
                        partition_by=["snapshot_id"], schema_mode="overwrite")
    monkeypatch.setattr(data, "CHURN_WINDOW", 3)
    all_runs = data.complete_runs(output)
    scanned: list[str] = []
    real = data._scan_file

    def spying(dataset, fragment, *args):
        scanned.append(fragment.path)
        return real(dataset, fragment, *args)

    monkeypatch.setattr(data, "_scan_file", spying)
    timeline = data.churn_timeline(output, all_runs)
    assert timeline["snapshot_id"].tolist() == ["h5", "h6", "h7"]
    assert sorted({re.search(r"snapshot_id=(\w+)", p).group(1) for p in scanned}) == [
        "h5", "h6", "h7"]
    title = charts.churn_timeline(timeline, 3).layout.title.text
    assert title.endswith("(each cluster's latest 3 snapshots)")
    assert "latest" not in charts.churn_timeline(timeline).layout.title.text
    assert data.churn_window(all_runs) == 3  # c1 has 10 complete snapshots
    assert data.churn_window(all_runs[all_runs["snapshot_id"].isin(["h1", "h2"])]) is None
    scanned.clear()
    cards = pd.DataFrame([{"snapshot_id": "h4", "cluster": "c1", "consumer_group": "g-skew",
                           "captured_at": frames.T1 + timedelta(hours=4)}])
    churn = data.group_churn(output, all_runs, cards)
    assert churn["snapshot_id"].tolist() == ["h2", "h3", "h4"]
    assert sorted({re.search(r"snapshot_id=(\w+)", p).group(1) for p in scanned}) == [
        "h2", "h3", "h4"]


def test_snapshots_without_a_capture_time_come_first_in_a_groups_rebalances(tmp_path):
    """captured_at may be left out of the inputs: every card said "None recorded" (a
    missing time compared False both ways), and an untimed snapshot's row was dropped
    from a timed card. Untimed snapshots order first, by id, as `in_capture_order`."""
    from deltalake import write_deltalake

    from reports.html.data import complete_runs, group_churn

    output = frames.write_outputs(str(tmp_path / "out"))
    untimed = {"u1", "u2", "u3"}  # before every timed one, whatever their ids
    rows = [{**_churn_row(s, h), "captured_at": None if s in untimed else
             frames.T1 + timedelta(hours=h)}
            for s, h in (("u1", 0), ("u2", 0), ("u3", 0), ("a1", 1), ("a2", 2))]
    runs = pd.concat([frames.runs(), frames.runs(
        [(r["snapshot_id"], r["captured_at"]) for r in rows])])
    for name, frame in (("runs", runs), ("rebalance_churn", pd.DataFrame(rows))):
        write_deltalake(f"{output}/{name}", frames.to_arrow(frame), mode="overwrite",
                        partition_by=["snapshot_id"], schema_mode="overwrite")

    def history(snapshot: str, at) -> list[str]:
        cards = pd.DataFrame({"snapshot_id": [snapshot], "cluster": ["c1"],
                              "consumer_group": ["g-skew"],
                              "captured_at": pd.Series([at], dtype="datetime64[us, UTC]")})
        return group_churn(output, complete_runs(output), cards)["snapshot_id"].tolist()

    assert history("u2", None) == ["u1", "u2"]  # an untimed card: the untimed up to it
    assert history("a1", frames.T1 + timedelta(hours=1)) == ["u1", "u2", "u3", "a1"]
    assert history("a2", frames.T1 + timedelta(hours=2)) == ["u1", "u2", "u3", "a1", "a2"]


def test_an_output_without_churn_has_no_rebalances(tmp_path):
    import shutil

    from reports.html.data import complete_runs, group_churn

    output = frames.write_outputs(str(tmp_path / "out"))
    shutil.rmtree(f"{output}/rebalance_churn")
    cards = pd.DataFrame([{"snapshot_id": "s2", "cluster": "c1", "consumer_group": "g-skew",
                           "captured_at": frames.T2}])
    assert group_churn(output, complete_runs(output), cards) is None


def test_each_table_log_is_read_once_a_page(tmp_path, monkeypatch):
    """Each read of a log replays its commits since the last checkpoint: the page reads
    each table's log once (`runs` once more after, to see a run publish meanwhile)."""
    import collections
    import os

    import deltalake

    from reports.html.data import CHECKED

    output = frames.write_outputs(str(tmp_path / "out"))
    opened: collections.Counter = collections.Counter()

    class Counted(deltalake.DeltaTable):
        def __init__(self, path, *args, **kwargs):
            opened[os.path.basename(str(path).rstrip("/"))] += 1
            super().__init__(path, *args, **kwargs)

    monkeypatch.setattr(deltalake, "DeltaTable", Counted)
    load(output)
    assert dict(opened) == {"runs": 2, **dict.fromkeys(CHECKED, 1)}


def test_every_read_of_a_table_sees_the_version_its_rows_were_counted_in(tmp_path,
                                                                         monkeypatch):
    """Rows deleted by hand after the page counted them (no run published): the page
    still shows the version it checked, not a group gone from some sections only."""
    from deltalake import DeltaTable

    from reports.html import data as report_data

    output = frames.write_outputs(str(tmp_path / "out"))
    check = report_data._check_rows_written

    def then_deleted(*args, **kwargs):
        check(*args, **kwargs)
        DeltaTable(f"{output}/group_balance").delete("consumer_group = 'g-skew'")

    monkeypatch.setattr(report_data, "_check_rows_written", then_deleted)
    data = load(output, groups=["g-skew"])
    assert set(data.group_balance["consumer_group"]) == {"g-skew"}
    assert data.skew_counts.to_dict() == {3: 1}


def test_an_output_whose_runs_are_all_retracted_says_why_there_may_be_none(tmp_path):
    """Between a re-run's retraction and its runs commit (or after a re-run that died
    there) the page said only "names no complete run", as if the output were empty."""
    from deltalake import write_deltalake

    from vocabulary.errors import NoOutputError

    out = frames.write_outputs(str(tmp_path / "out"))
    write_deltalake(f"{out}/runs", frames.to_arrow(frames.runs().iloc[:0]),
                    partition_by=["snapshot_id"], mode="overwrite")
    with pytest.raises(NoOutputError, match=(
            r"the 'runs' table names no complete run \(an audit writing into it now "
            r"retracts the runs of the snapshots it replaces until it ends; one that died "
            r"part-way leaves them out until the next run of them\)")):
        load(out)


def test_small_batches_are_reduced_together_in_order_and_large_ones_alone():
    """A table of a file per snapshot gives a batch per file: `reduce_table` hands its
    reduce batches joined up to JOINED_ROWS rows (the pandas work costs per call), never
    a joined one larger, in the scan's order."""
    import pyarrow as pa

    from reports.html.data import JOINED_ROWS, _joined

    def batch(start: int, rows: int) -> pa.RecordBatch:
        return pa.record_batch({"n": pa.array(range(start, start + rows), pa.int64())})

    sizes = [0, 3, 4, 0, JOINED_ROWS - 7, 1, JOINED_ROWS + 1, 2, 2]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    joined = list(_joined(batch(s, n) for s, n in zip(starts, sizes, strict=True)))
    assert [b.num_rows for b in joined] == [JOINED_ROWS, 1, JOINED_ROWS + 1, 4]
    assert pa.concat_arrays([b["n"] for b in joined]).to_pylist() == list(range(sum(sizes)))
    assert list(_joined([batch(0, 0)])) == []


def test_a_reduce_over_many_small_files_is_called_once(tmp_path):
    from deltalake import write_deltalake

    from reports.html.data import reduce_table

    output = frames.write_outputs(str(tmp_path / "out"))
    churn = frames.churn()
    for i in range(6):  # a file per append, each snapshot's rows again
        write_deltalake(f"{output}/rebalance_churn", frames.to_arrow(churn.assign(
            run_id=f"r{i}")), mode="append", partition_by=["snapshot_id"])
    calls = []

    def count(batch):
        calls.append(batch.num_rows)
        return pd.DataFrame({"rows": [batch.num_rows]})

    total = reduce_table(output, "rebalance_churn", count)
    assert len(calls) == 1 and total["rows"].sum() == 7 * len(churn)


def test_the_largest_rebalances_are_the_shown_snapshots_of_any_group(tmp_path):
    """Of the shown (complete) snapshots only, every group's, those that moved queues,
    the most moved first; the client lists arrive as how many."""
    from deltalake import write_deltalake

    from reports.html.data import TOP_REBALANCES, complete_runs, latest_per_cluster
    from reports.html.data import top_rebalances as largest

    output = frames.write_outputs(str(tmp_path / "out"))
    rows = [_churn_row("s2", 2, group=f"g{k}", moved=k, joined=["a"] * (k % 2))
            for k in range(TOP_REBALANCES + 3)]  # g0 moved nothing
    rows += [_churn_row("s1", 1, group="g-old", moved=99),  # not the shown snapshot
             _churn_row("s2", 2, group="g-dead", moved=50, run_id="dead")]
    write_deltalake(f"{output}/rebalance_churn", frames.to_arrow(pd.DataFrame(rows)),
                    mode="overwrite", partition_by=["snapshot_id"], schema_mode="overwrite")
    runs = latest_per_cluster(complete_runs(output))
    top = largest(output, sorted(set(runs["snapshot_id"])), None, runs)
    moved = list(range(TOP_REBALANCES + 2, 2, -1))
    assert top["consumer_group"].tolist() == [f"g{k}" for k in moved]
    assert top["queues_moved"].tolist() == moved
    assert top["clients_joined"].tolist() == [k % 2 for k in moved]
    assert largest(output, ["s2"], ["g3", "g4"], runs)["consumer_group"].tolist() == [
        "g4", "g3"]


def test_an_output_without_churn_names_no_largest_rebalances(tmp_path):
    import shutil

    from reports.html.data import complete_runs, top_rebalances

    output = frames.write_outputs(str(tmp_path / "out"))
    shutil.rmtree(f"{output}/rebalance_churn")
    assert top_rebalances(output, ["s2"], None, complete_runs(output)) is None


def test_a_group_page_counts_the_rejects_of_its_groups_and_their_topics_only(tmp_path):
    """`--group g-skew` (subscribing t1): its members row, t1's queues row and a row naming
    neither group nor topic are its page's; another group's row and another topic's are
    left out, counted, and so is the dead run's row of g-skew. Without --group: all."""
    import json

    from deltalake import write_deltalake

    output = frames.write_outputs(str(tmp_path / "out"))
    shown = [({"consumer_group": "g-skew", "strategy": "AVERAGE"}, "members", "bad", frames.RUN),
             ({"consumer_group": "g-ok", "strategy": "AVERAGE"}, "members", "bad", frames.RUN),
             ({"consumer_group": frames.NASTY}, "offsets", "bad", frames.RUN),
             ({"topic": "t1", "queue_id": -1}, "queues", "negative", frames.RUN),
             ({"topic": "t9", "queue_id": -1}, "queues", "negative", frames.RUN),
             ({"consumer_group": "g-skew"}, "members", "bad", "dead")]
    frame = pd.DataFrame(
        [{"snapshot_id": "s2", "cluster": "c1", "source_table": table,
          "row_json": json.dumps(row, separators=(",", ":")), "reason": reason, "run_id": run}
         for row, table, reason, run in shown]
        + [{"snapshot_id": "s2", "cluster": "c1", "source_table": "members.txt",
            "row_json": "GROUP g9 raw line", "reason": "unparsable", "run_id": frames.RUN}])
    write_deltalake(f"{output}/rejects", frames.to_arrow(frame), mode="overwrite",
                    partition_by=["snapshot_id"])

    page = load(output, groups=["g-skew"])
    found = {(r["source_table"], r["reason"]): (r["rows"], r["names"])
             for r in page.rejects.to_dict("records")}
    assert found == {("members", "bad"): (1, ["g-skew"]),
                     ("queues", "negative"): (1, ["topic t1"]),
                     ("members.txt", "unparsable"): (1, [])}
    assert page.rejects_elsewhere == 3  # g-ok's, NASTY's and t9's: the dead run's is no row
    nasty = load(output, groups=[frames.NASTY])
    assert nasty.rejects[["source_table", "rows"]].values.tolist() == [
        ["offsets", 1], ["members.txt", 1]]
    assert nasty.rejects_elsewhere == 4
    everything = load(output)
    assert sorted(everything.rejects["rows"]) == [1, 1, 2, 2] and everything.rejects_elsewhere == 0
