"""Reading a local table's `_delta_log` directly: which commits touched which partitions,
and which data files any commit ever added.

The offline engine needs both beyond what delta-rs exposes: conflict detection between
runs (did a commit after version v add or remove files in the partitions this run
replaces?) and debris sweeping (a parquet file that no commit ever added is an orphan of
a killed writer; a file a commit added, even one later removed, is never touched).

Also what a table's deletion vectors delete, which its add actions in delta-rs do not
show: the offline engine and the page (which loads no pyspark) both refuse such rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

LOG_DIR = "_delta_log"
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(\.\d+\.\d+)?\.parquet$")
RUN_ID_KEY = "rebalance_audit.run_id"


@dataclass(frozen=True)
class Commit:
    """What one commit did to the partitions of one column (e.g. snapshot_id)."""

    version: int
    partitions: frozenset  # partition values added to or removed from (None = null)
    run_id: str | None  # the rebalance-audit run that made it, when one did


def log_dir(root: str | Path) -> Path:
    return Path(root, LOG_DIR)


def commit_versions(root: str | Path) -> list[int]:
    """Versions with a commit file, ascending (empty: no table, or debris)."""
    folder = log_dir(root)
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := _COMMIT.match(p.name)))


def has_commit(root: str | Path) -> bool:
    """Whether the log holds any commit or checkpoint, i.e. the table exists."""
    folder = log_dir(root)
    if not folder.is_dir():
        return False
    return any(_COMMIT.match(p.name) or _CHECKPOINT.match(p.name) for p in folder.iterdir())


def _actions(file: Path) -> Iterator[dict]:
    with file.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def commits_after(root: str | Path, version: int | None, column: str) -> list[Commit]:
    """Every commit after `version` (None: all of them), summarised for `column`."""
    start = -1 if version is None else version
    out = []
    for v in commit_versions(root):
        if v <= start:
            continue
        partitions, run_id = set(), None
        for action in _actions(log_dir(root) / f"{v:020d}.json"):
            for kind in ("add", "remove"):
                if kind in action:
                    partitions.add((action[kind].get("partitionValues") or {}).get(column))
            if "commitInfo" in action:
                run_id = action["commitInfo"].get(RUN_ID_KEY) or None
        out.append(Commit(v, frozenset(partitions), run_id))
    return out


def referenced_files(root: str | Path) -> set[str]:
    """Relative on-disk paths of every data file any commit or checkpoint ever added or
    removed (the log stores them URL-encoded)."""
    folder = log_dir(root)
    paths: set[str] = set()
    if not folder.is_dir():
        return paths
    for file in folder.iterdir():
        if _COMMIT.match(file.name):
            for action in _actions(file):
                for kind in ("add", "remove"):
                    if kind in action:
                        paths.add(unquote(action[kind]["path"]))
        elif _CHECKPOINT.match(file.name):
            paths.update(_checkpoint_paths(file))
    return paths


def _checkpoint_paths(file: Path) -> Iterable[str]:
    table = pq.read_table(file)
    for kind in ("add", "remove"):
        if kind in table.column_names:
            for entry in table.column(kind).to_pylist():
                if entry and entry.get("path"):
                    yield unquote(entry["path"])


def add_actions(table: object) -> pa.Table:
    """A delta-rs table's current add actions, a row per data file, partition values in
    `partition.<column>` columns (delta-rs' flattened form)."""
    return pa.table(table.get_add_actions(flatten=True))  # type: ignore[attr-defined]


def partition_values_held(table: object, column: str) -> set:
    """The non-null values of partition column `column` that a delta-rs table's current
    data files hold, from its log alone (no data file read); empty when the table is not
    partitioned by `column` or holds no file."""
    adds = add_actions(table)
    name = f"partition.{column}"
    if name not in adds.column_names:
        return set()
    return {v for v in adds.column(name).to_pylist() if v is not None}


class VectorCount(NamedTuple):
    """Rows deleted through deletion vectors, and the data files whose vectors delete them."""

    rows: int
    files: int


def deletion_vector_count(table: object) -> VectorCount:
    """What the current deletion vectors of a delta-rs table delete (0 files: none is
    written). delta-rs' add actions do not show the vectors; its `deletion_vectors()`
    decodes them, one keep-mask per data file that has one. Raises what delta-rs raises
    for a vector it cannot decode."""
    vectors = pa.table(table.deletion_vectors())  # type: ignore[attr-defined]
    if vectors.num_rows == 0:
        return VectorCount(0, 0)
    kept = pc.list_flatten(vectors.column("selection_vector"))
    return VectorCount(len(kept) - int(pc.sum(kept).as_py() or 0), vectors.num_rows)
