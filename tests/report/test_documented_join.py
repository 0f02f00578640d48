"""The SQL that README and docs/SPEC.md give dashboards for reading only complete runs,
run as written (DataFusion through delta-rs) on an output whose run audited two
clusters of a snapshot: every row of a complete run comes once."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder

from tests.report import frames

ROOT = Path(__file__).resolve().parents[2]


def _sql_blocks(holding: str) -> list[tuple[str, str]]:
    """(file, SQL) of every ```sql block of README and docs/SPEC.md that holds `holding`."""
    found = []
    for name in ("README.md", "docs/SPEC.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        found += [(name, sql) for sql in re.findall(r"```sql\n(.*?)```", text, re.S)
                  if holding in sql]
    return found


def _complete_run_queries() -> list[tuple[str, str]]:
    """Every documented SQL that joins a table on runs."""
    return _sql_blocks("JOIN runs")


@pytest.mark.parametrize(("doc", "sql"), _complete_run_queries())
def test_the_documented_join_reads_each_row_of_a_complete_run_once(doc, sql, tmp_path
                                                                    ) -> None:
    root = frames.add_second_cluster(frames.write_outputs(str(tmp_path / "out")))
    runs = DeltaTable(f"{root}/runs").to_pandas()
    assert set(runs["cluster"]) == {"c1", "c2"} and runs["run_id"].nunique() == 1
    table = re.search(r"FROM (\w+)", sql).group(1)
    query = QueryBuilder().register("runs", DeltaTable(f"{root}/runs"))
    # the docs name assignments or group_balance: the same join, run on group_balance
    query = query.register(table, DeltaTable(f"{root}/group_balance"))
    got = pa.table(query.execute(sql).read_all())
    rows = DeltaTable(f"{root}/group_balance").to_pandas()
    complete = runs.loc[runs["status"] == "COMPLETE", ["snapshot_id", "cluster", "run_id"]]
    wanted = rows.merge(complete, on=["snapshot_id", "cluster", "run_id"])
    assert 0 < len(wanted) < len(rows)  # a row of a run that died is left out
    assert got.num_rows == len(wanted), doc
    keys = ["snapshot_id", "cluster", "consumer_group", "topic"]
    # DataFusion answers strings as string views, which pandas does not read
    key_rows = pa.table({k: got.column(k).cast(pa.string()) for k in keys}).to_pandas()
    assert not key_rows.astype(str).duplicated().any(), doc


def test_both_documents_give_the_join() -> None:
    assert sorted(doc for doc, _ in _complete_run_queries()) == ["README.md", "docs/SPEC.md"]


def _rejects_queries() -> list[tuple[str, str]]:
    """Every documented SQL that reads rejects."""
    return _sql_blocks("FROM rejects")


@pytest.mark.parametrize(("doc", "sql"), _rejects_queries())
def test_the_documented_rejects_filter_reads_every_row_of_a_snapshot_in_runs(
        doc, sql, tmp_path) -> None:
    """Run as written: the rows without a snapshot_id and those of every snapshot `runs`
    names, whichever run wrote them (a later run's rejects of a snapshot an earlier run
    completed have no runs row of their own: filtered on run_id they were hidden)."""
    from deltalake import write_deltalake

    root = frames.write_outputs(str(tmp_path / "out"))
    # a row of a snapshot a run that died was writing: no runs row names s9
    dead = frames.rejects().head(1).assign(snapshot_id="s9", run_id="dead")
    write_deltalake(f"{root}/rejects", frames.to_arrow(dead), mode="append")
    query = (QueryBuilder().register("runs", DeltaTable(f"{root}/runs"))
             .register("rejects", DeltaTable(f"{root}/rejects")))
    got = pa.table(query.execute(sql).read_all())
    rows = DeltaTable(f"{root}/rejects").to_pandas()
    named = set(DeltaTable(f"{root}/runs").to_pandas()["snapshot_id"])
    wanted = rows[rows["snapshot_id"].isna() | rows["snapshot_id"].isin(named)]
    assert got.num_rows == len(wanted) == len(rows) - 1, doc


def test_the_readme_gives_the_rejects_filter() -> None:
    assert [doc for doc, _ in _rejects_queries()] == ["README.md"]
