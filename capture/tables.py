"""Arrow schemas of the tables a capture writes, and the one writer (delta-rs).

The column lists follow the input contract (SPEC §2 and §6; vocabulary/contracts.py);
members adds the nullable `client_name` (Kafka client.id) and `client_host`, which the
audit ignores. A capture writes one snapshot of one cluster: the rows of that snapshot_id
and cluster are replaced, every other snapshot and cluster stays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from capture.errors import CaptureError
from jobs import faults
from storage import locks

STR, INT, LONG, DOUBLE, BOOL = pa.string(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()
TS = pa.timestamp("us", tz="UTC")
PARAMS = pa.map_(pa.string(), pa.string())


def _schema(*cols: tuple[str, pa.DataType, bool]) -> pa.Schema:
    return pa.schema([pa.field(name, typ, nullable=nullable) for name, typ, nullable in cols])


QUEUES = _schema(
    ("snapshot_id", STR, False), ("cluster", STR, False), ("captured_at", TS, True),
    ("topic", STR, False), ("broker_name", STR, True), ("queue_id", INT, False),
    ("readable", BOOL, True), ("broker_room", STR, True), ("max_offset", LONG, True),
    ("in_rate", DOUBLE, True),
)
MEMBERS = _schema(
    ("snapshot_id", STR, False), ("cluster", STR, False), ("consumer_group", STR, False),
    ("client_id", STR, False), ("topic", STR, True), ("strategy", STR, False),
    ("message_model", STR, True), ("client_room", STR, True), ("client_addr", STR, True),
    ("strategy_params", PARAMS, True),
    # not in the contract: Kafka's client.id and the member's host (the audit ignores them)
    ("client_name", STR, True), ("client_host", STR, True),
)
OFFSETS = _schema(
    ("snapshot_id", STR, False), ("cluster", STR, False), ("consumer_group", STR, False),
    ("topic", STR, False), ("broker_name", STR, True), ("queue_id", INT, False),
    ("committed_offset", LONG, True), ("consumed_offset", LONG, True),
)
OBSERVED = _schema(
    ("snapshot_id", STR, False), ("cluster", STR, False), ("consumer_group", STR, False),
    ("topic", STR, False), ("broker_name", STR, True), ("queue_id", INT, False),
    ("client_id", STR, False), ("source", STR, False),
)
REJECTS = _schema(
    ("snapshot_id", STR, False), ("cluster", STR, False), ("file", STR, False),
    ("line", LONG, True), ("reason", STR, False), ("raw", STR, True),
)
SCHEMAS: dict[str, pa.Schema] = {
    "queues": QUEUES, "members": MEMBERS, "offsets": OFFSETS, "observed": OBSERVED,
    "rejects": REJECTS,
}
TABLES = tuple(SCHEMAS)


@dataclass
class Snapshot:
    """Rows of one capture, table by table, as plain dicts (a capture is small)."""

    snapshot_id: str
    cluster: str
    rows: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {name: [] for name in TABLES})
    warnings: list[str] = field(default_factory=list)

    def add(self, table: str, **values: Any) -> None:
        self.rows[table].append(
            {"snapshot_id": self.snapshot_id, "cluster": self.cluster, **values})

    def reject(self, file: str, line: int | None, reason: str, raw: str | None = None) -> None:
        self.add("rejects", file=file, line=line, reason=reason, raw=raw)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def table(self, name: str) -> pa.Table:
        """The rows of table `name`. The importers check every value against its column
        (rejecting the line); a value that still does not fit stops the capture with the
        table's name, not a traceback."""
        try:
            return to_arrow(self.rows[name], SCHEMAS[name])
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError) as exc:
            raise CaptureError(f"the {name} table cannot hold a value read: {exc}; nothing "
                               "was written") from exc


def to_arrow(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows → a table of exactly `schema` (absent keys are null)."""
    rows = list(rows)
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.Table.from_pydict(columns, schema=schema)


CAPTURE_LOCK = locks.CAPTURE_LOCK  # beside the tables: held while a capture writes them
LOCK_WAIT_SECONDS = 300.0


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def write_snapshot(output: str | Path, snapshot: Snapshot,
                   on_wait: Callable[[], None] | None = None) -> dict[str, int]:
    """Write every table of `snapshot` under `output`/<table>, replacing that snapshot's rows
    of its cluster (and only them: one snapshot id may hold several clusters, captured
    one call each). Empty tables are written too, so a re-capture that finds nothing
    clears what an earlier capture of the same snapshot id and cluster wrote. Returns rows
    per table. `on_wait` is called once if another capture holds the folder's lock."""
    tables = {name: snapshot.table(name) for name in TABLES}
    _check_existing_tables(output, tables)  # a folder of other tables: refused untouched
    try:
        # one capture at a time per folder: two of the same snapshot and cluster would
        # otherwise interleave table by table (one's queues beside the other's members)
        with locks.exclusive(Path(output) / CAPTURE_LOCK, wait_seconds=LOCK_WAIT_SECONDS,
                             on_wait=on_wait):
            return _write_tables(output, snapshot, tables)
    except locks.LockTimeout as exc:
        raise CaptureError(f"{exc}: another capture into {output} has been writing for "
                           "that long; nothing was written") from exc
    except OSError as exc:  # the lock file: an unwritable or missing folder
        raise CaptureError(f"cannot write under {output}: {exc}") from exc


def _write_tables(output: str | Path, snapshot: Snapshot,
                  tables: dict[str, pa.Table]) -> dict[str, int]:
    from deltalake import DeltaTable, write_deltalake

    existing = _check_existing_tables(output, tables)
    ours = (f"snapshot_id = {_quote(snapshot.snapshot_id)} "
            f"AND cluster = {_quote(snapshot.cluster)}")
    # queues go first and come back last, so a capture is one unit to the audit: while a
    # cluster of a snapshot has queues rows, every table holds exactly one capture's rows
    # of it. A capture that dies part-way (kill -9, a full disk) leaves the cluster
    # without queues, which the audit reports and does not audit (`jobs.scope`), never
    # audited with another capture's members or without its offsets and observed rows
    assert TABLES[0] == "queues"
    written, replaced = {}, {}
    try:
        for name in existing:  # in TABLES' order
            with _naming(name, output):
                gone = DeltaTable(str(Path(output) / name)).delete(ours)
            replaced[name] = int((gone or {}).get("num_deleted_rows") or 0)
            faults.reached(f"capture:deleted:{name}")
        for name in reversed(TABLES):
            with _naming(name, output):
                # the predicate even when the table is new: a writer without the lock (an
                # older capture) may create it meanwhile, and an overwrite without one
                # would replace that writer's rows
                write_deltalake(str(Path(output) / name), tables[name], mode="overwrite",
                                partition_by=["snapshot_id"], predicate=ours)
            written[name] = tables[name].num_rows
            faults.reached(f"capture:written:{name}")
    except CaptureError as exc:
        raise CaptureError(f"{exc}. Snapshot {snapshot.snapshot_id} of cluster "
                           f"{snapshot.cluster} is incomplete under {output} (written: "
                           f"{', '.join(written) or 'no table'}; queues, written last, is not, "
                           "so the audit leaves the cluster out): capture it again") from exc
    if any(replaced.values()):  # the same id given twice by mistake must not pass unseen
        snapshot.warn(f"snapshot {snapshot.snapshot_id} of cluster {snapshot.cluster} was "
                      f"captured under {output} before: its earlier rows are replaced ("
                      + ", ".join(f"{name} {n}" for name, n in replaced.items() if n) + ")")
    return {name: written[name] for name in TABLES}  # in the order users read them


@contextmanager
def _naming(name: str, output: str | Path) -> Iterator[None]:
    """A write's failure as a CaptureError naming the table (delta-rs raises its own
    types: schema mismatch, IO)."""
    path = Path(output) / name
    try:
        yield
    except (OSError, ValueError) as exc:
        raise CaptureError(f"cannot write table {name} at {path}: {exc}") from exc
    except Exception as exc:
        raise CaptureError(f"cannot write table {name} at {path}: "
                           f"{type(exc).__name__}: {exc}") from exc


def _check_existing_tables(output: str | Path, tables: dict[str, pa.Table]) -> list[str]:
    """The tables already under `output`, their columns checked before anything is
    written: a folder holding another kind of table of a name (an audit's `rejects`, when
    --output is an audit's output root) is refused whole, not after the tables before it."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    found = []
    for name, data in tables.items():
        path = str(Path(output) / name)
        try:
            have = [f.name for f in DeltaTable(path).schema().fields]
        except TableNotFoundError:
            continue
        except Exception as exc:  # delta-rs raises its own types (a damaged log, IO)
            raise CaptureError(f"cannot read table {name} at {path}: "
                               f"{type(exc).__name__}: {exc}") from exc
        if set(have) != set(data.schema.names):
            raise CaptureError(
                f"{name} table at {path} is not a capture's {name} table (its columns: "
                f"{', '.join(have)}; a capture writes {', '.join(data.schema.names)}). "
                "Nothing was written: point --output at a capture folder of its own")
        found.append(name)
    return found
