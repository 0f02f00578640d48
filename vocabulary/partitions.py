"""Which snapshot ids can name an output partition: plain Python, shared by the flags that
take an id (`vocabulary.arguments`), the configuration and validation (`jobs.validate`,
which spells the same rule as a Spark column).

Every output is partitioned by snapshot_id, a folder `snapshot_id=<value>` per snapshot,
the value escaped as Spark escapes it (ExternalCatalogUtils.escapePathName: these
characters become %XX). An empty id is written as the null partition, which the outputs'
snapshot_id (not nullable) cannot hold: the commit broke the table, earlier snapshots too.
A folder name holds 255 bytes: a longer one failed the write after the whole run was
computed. Spark escapes no NUL (a folder name cannot hold one: the write failed with a
Java stack trace, the run's other tables committed, rejects and runs not), and reads a
folder named for its null partition, `__HIVE_DEFAULT_PARTITION__`, back as null.
"""

from __future__ import annotations

FOLDER_NAME_BYTES = 255
PARTITION_FOLDER = "snapshot_id="
ESCAPED_CHARS = frozenset([*map(chr, range(0x01, 0x20)), *"\"#%'*/:=?\\\x7f{[]^"])
TOO_LONG = (f"too long to name the outputs' partition folder ({PARTITION_FOLDER}<id>, "
            f"{FOLDER_NAME_BYTES} bytes at most, characters such as / : % # counting 3)")
NULL_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
NO_FOLDER = (f"{NULL_PARTITION_NAME}, the folder name Spark gives the null partition, which "
             "reads back as null")


def snapshot_id_fits(snapshot_id: str | None) -> bool:
    """Whether the id can name an output partition (null can: the null partition of a
    table whose column allows it)."""
    return snapshot_id is None or unfit_reason(snapshot_id) is None


def unfit_reason(snapshot_id: str) -> str | None:
    """Why no output partition can hold the id ("is ..."), or None when one can."""
    if snapshot_id == "":
        return "empty"
    if "\x00" in snapshot_id:
        return "holding a NUL character, which no folder name can"
    if snapshot_id == NULL_PARTITION_NAME:
        return NO_FOLDER
    escaped = sum(1 for ch in snapshot_id if ch in ESCAPED_CHARS)
    if (len(PARTITION_FOLDER) + len(snapshot_id.encode("utf-8"))
            + 2 * escaped) > FOLDER_NAME_BYTES:
        return TOO_LONG
    return None


def shown_id(snapshot_id: str, limit: int = 60) -> str:
    """The id quoted for a message, cut to its first `limit` characters."""
    if len(snapshot_id) <= limit:
        return repr(snapshot_id)
    return f"{snapshot_id[:limit]!r}… ({len(snapshot_id)} characters)"
