"""Checks that fail a run in seconds instead of after minutes of computation.

The output root must be a writable folder before any Spark work; every output table that
already exists must open as Delta, and debris of killed runs is swept (see
`storage.offline.OfflineStore.sweep`). Storage problems are `TableError`s: exit 2 with the
path and the cause.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from storage.base import TableError
from storage.paths import (
    delta_table_holding,
    existing_ancestor,
    is_bare,
    is_local,
    lies_within,
    place_of,
    spark_path,
    without_file_scheme,
)
from vocabulary.contracts import CONTRACTS, OUTPUT_TABLES, REJECTS_SCHEMA, RUNS, RUNS_SCHEMA

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


def check_output_place(config) -> None:
    """Where an audit's `config` writes, before anything is created there: apart from
    every Delta table and input (`check_apart`), then a writable folder
    (`check_output_root`). Called before the JVM starts and again by the run itself."""
    output = config.output.rstrip("/")
    check_apart(output, {name: getattr(config, name) for name in CONTRACTS},
                [*OUTPUT_TABLES, RUNS])
    check_output_root(output)


def check_output_root(output: str) -> None:
    """A local output root must be (or become) a folder this process can write in. Remote
    roots (s3a://, abfss://, hdfs://) are left to the native engine's first access.

    A root that does not exist yet is not made here: its nearest existing folder must
    take a file, and the run's first write makes it. A run refused later (a typo'd
    `--snapshot`, an input error) then leaves no empty folder where it said "nothing
    written"."""
    if not is_local(output):
        return
    root = Path(without_file_scheme(output)).absolute()
    ancestor = existing_ancestor(root)
    if not ancestor.is_dir():
        raise TableError(f"output root {output}: {ancestor} is a file, not a folder; point "
                         "--output at a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=ancestor, prefix="._write_check"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if not os.access(ancestor, os.W_OK):
            reason = f"{ancestor} is not writable by this user"
        raise TableError(f"output root {output} cannot be written: {reason}") from exc


def check_apart(output: str, inputs: dict[str, str | None], tables: list[str]) -> None:
    """The output root must not lie inside a Delta table (an input's or any other): a
    VACUUM of that table deletes every file its log does not name, the audit's tables
    with them. No input may be one of the tables the run writes (it would replace what
    it reads). Remote locations are compared by name (`storage.paths.place_of`); the run
    itself looks for any table above a remote root (`check_root_apart`) and compares the
    inputs again on the names its session's filesystem gives them (`check_inputs_apart`)."""
    if (table := delta_table_holding(output)) is not None:
        raise in_table(output, table)
    given = {flag: path for flag, path in inputs.items() if path is not None}
    for flag, path in given.items():
        # a local folder that is no Delta table has no VACUUM to fear: the read says it is
        # not a table (this said the root lay inside "the --queues table" at a plain folder)
        if lies_within(output, path) and not _local_folder_not_table(path):
            raise in_table(output, path, f"the --{flag} table")
    for flag, path in given.items():
        for name in tables:
            if lies_within(path, f"{output}/{name}"):
                raise replaces_input(flag, path, name, output)


def _local_folder_not_table(path: str) -> bool:
    """A local path that exists without a `_delta_log` folder: not a Delta table."""
    if not is_local(path):
        return False
    folder = Path(without_file_scheme(path))
    return folder.exists() and not (folder / "_delta_log").is_dir()


def check_root_apart(spark: SparkSession, output: str, engine: str) -> None:
    """The run's own look, through its session's filesystem, for a Delta table holding the
    output root: `check_apart` could only compare remote roots by name (with the inputs),
    this finds any table above it (`storage.remote.delta_table_above`). The native engine
    also refuses a bare root its session would send to another filesystem (a Hadoop
    gateway's HDFS): this job's checks, locks and report.html would use the local disk."""
    from storage.remote import default_filesystem_for, delta_table_above

    if engine == "native" and (elsewhere := default_filesystem_for(spark, output)):
        local = os.path.abspath(output)
        raise TableError(
            f"output root {output} is a bare path, which this session resolves against its "
            f"default filesystem {elsewhere}: the tables would go there while this job's "
            "checks, publish lock and report.html use this machine's disk. Name the place: "
            f"--output {elsewhere.rstrip('/')}/... for the cluster's storage, or "
            f"--output file:{local} for this machine's")
    if (table := delta_table_above(spark, as_read_by(output, engine))) is not None:
        raise in_table(output, table)


def check_inputs_apart(spark: SparkSession, output: str, inputs: dict[str, str | None],
                       tables: list[str], engine: str) -> None:
    """`check_apart` again on the places the session's filesystem names
    (`storage.remote.qualified`): `hdfs:///lake/out/runs`, `hdfs://nn:8020/lake/out/runs`
    and, for the native engine on a Hadoop gateway, `/lake/out/runs` are three names of
    one table there, and only there. A location the store will not name is left to the
    read (logged)."""
    from storage.remote import qualified

    root = qualified(spark, as_read_by(output, engine))
    if root is None:
        return
    for flag, path in inputs.items():
        if path is None or (place := qualified(spark, as_read_by(path, engine))) is None:
            continue
        if lies_within(root, place):
            raise in_table(f"{output} ({root})", f"{path} ({place})", f"the --{flag} table",
                           same=place_of(root) == place_of(place))
        for name in tables:
            if lies_within(place, f"{root}/{name}"):
                raise replaces_input(flag, f"{path} ({place})", name, f"{output} ({root})",
                                     same=place_of(place) == place_of(f"{root}/{name}"))


def as_read_by(location: str, engine: str) -> str:
    """`location` as the engine hands it to Spark: the offline engine reads and writes a
    bare path on this machine's disk (`storage.paths.spark_path`); the native engine
    leaves it to the session's default filesystem."""
    if engine == "offline" and is_bare(location):
        return spark_path(os.path.abspath(location))
    return location


def replaces_input(flag: str, path: str, name: str, output: str,
                   same: bool | None = None) -> TableError:
    """Why an input that is (or lies in) a table the run writes is refused."""
    if same is None:
        same = place_of(path) == place_of(f"{output}/{name}")
    return TableError(f"--{flag} {path} {'is' if same else 'lies in'} the {name} table this "
                      f"run writes under --output {output}: it would replace what it reads; "
                      "point --output elsewhere")


def in_table(output: str, table: str, what: str = "the Delta table",
             same: bool | None = None) -> TableError:
    """Why an output root inside a Delta table is refused."""
    if same is None:
        same = place_of(table) == place_of(output)
    where = "is" if same else "is inside"
    return TableError(f"output root {output} {where} {what} at {table}: a VACUUM of that "
                      "table would delete the audit's tables with the files its log does "
                      "not name; point --output at a folder of its own")


# the columns a run reads back from these tables before it writes them (the rejects it
# keeps, the runs it retracts): another table of the name fails the run here, not there
READ_BACK_COLUMNS = {"rejects": [*REJECTS_SCHEMA.fieldNames(), "run_id"],
                     RUNS: RUNS_SCHEMA.fieldNames()}


def check_tables(store, output: str, names: list[str], started: float) -> list[str]:
    """Each existing output table opens as Delta and, where the run reads it back, has
    this job's columns; debris older than `started` is removed. Returns what was removed
    (the run reports it)."""
    cleaned: list[str] = []
    for name in names:
        path = f"{output}/{name}"
        cleaned += store.check(path, name, started)
        if name in READ_BACK_COLUMNS and store.exists(path):
            _check_columns(store.columns(path, name), READ_BACK_COLUMNS[name], name, path)
    return cleaned


def _check_columns(have: list[str], want: list[str], name: str, path: str) -> None:
    missing = [c for c in want if c not in have]
    if missing:
        capture = (" (a capture writes a rejects table of its own: keep the audit's output "
                   "apart from the capture's folder)" if name == "rejects" else "")
        raise TableError(
            f"{name} table at {path} is not an audit's {name} table: it lacks "
            f"{', '.join(missing)} (its columns: {', '.join(have)}). Point --output at a "
            f"new folder or migrate the table{capture}")
