"""What both Delta engines share: errors, results, and the replace-with-conflict-check
contract every writer of an output table follows."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from vocabulary.errors import TableError

ENGINES = ("auto", "native", "offline")
PARTITION_COLUMN = "snapshot_id"


class ConflictError(TableError):
    """Another writer changed the partitions this run replaces after the run read them."""

    def __init__(self, table: str, path: str, partitions: list, others: list[str],
                 run_id: str | None = None) -> None:
        # a run given this run's --run-id: "run X wrote ..." read as this run itself
        names = [f"{n} (another run given this run's --run-id)" if n == run_id else n
                 for n in sorted(others)]
        who = (f"run {', '.join(names)}" if names else "another writer")
        shown = ", ".join("(null)" if p is None else str(p) for p in sorted(
            partitions, key=lambda p: (p is not None, str(p))))
        super().__init__(
            f"{who} wrote snapshot(s) {shown} of the {table} table at {path} while this run "
            "was computing them. Nothing of this run is published for them (no `runs` row); "
            "re-run to audit them again once the other run has finished, or at once if it "
            "was killed (its snapshots then have no `runs` row either)."
        )
        self.table, self.path, self.partitions, self.others = table, path, partitions, others

    @classmethod
    def of_commits(cls, table: str, path: str, partitions: list, commits: list,
                   run_id: str | None = None) -> ConflictError:
        """The conflict of `commits` (another writer's, after this run's baseline) with the
        `partitions` this run replaces: naming the partitions they touched, not all this
        run's (a run of s1 and s2 was said to have written s2 and s3), and their runs."""
        touched = [p for p in partitions if any(p in c.partitions for c in commits)]
        return cls(table, path, touched or partitions,
                   sorted({c.run_id for c in commits if c.run_id}), run_id)


def unreadable_file(name: str, path: str, detail: str) -> TableError:
    """A data file the table's log names that cannot be read, the table named: whichever
    reader met it (Spark's, or Arrow's for `runs`)."""
    return TableError(
        f"the {name} table at {path}: a data file its log names cannot be read ({detail}): "
        "the table was copied without all its files, vacuumed or rewritten while the run "
        "read it, or damaged; copy it whole or write it again, then audit again")


@dataclass(frozen=True)
class TableState:
    """A table as a run first saw it: its version, or None when it did not exist yet.
    Writes replace partitions only if no other commit touched them since this state."""

    path: str
    version: int | None


@dataclass(frozen=True)
class WriteResult:
    table: str
    engine: str
    files: int
    version: int | None


def snapshot_filter(snapshots: list) -> Column:
    """Rows whose snapshot_id is one of `snapshots` (None selects the null snapshot_id)."""
    values = [s for s in snapshots if s is not None]
    condition = F.col(PARTITION_COLUMN).isin(values)
    if any(s is None for s in snapshots):
        condition = condition | F.col(PARTITION_COLUMN).isNull()
    return condition


def filter_snapshots(df: DataFrame, snapshots: list | None) -> DataFrame:
    """`df` limited to `snapshots` (None: all rows). A table without a column named
    snapshot_id, in that spelling, is returned whole: an input's contract check names a
    missing column, and one spelled in another case is the reader's to filter once it is
    conformed (`jobs.read`)."""
    if snapshots is None or PARTITION_COLUMN not in df.columns:
        return df
    return df.where(snapshot_filter(snapshots))


# the folder Spark and Delta write the rows of a null partition value into
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def snapshot_of_file(path: str) -> str | None:
    """The snapshot_id of a data file of a table partitioned by it, from its folder
    (`snapshot_id=<escaped value>/`), as Spark and Delta name them; None for the null
    partition or a file in no such folder."""
    for part in reversed(path.split("/")[:-1]):
        if part.startswith(f"{PARTITION_COLUMN}="):
            value = unquote(part.split("=", 1)[1])
            return None if value == NULL_PARTITION else value
    return None
