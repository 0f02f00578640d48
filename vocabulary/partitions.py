"""Which snapshot ids can name an output partition: plain Python, shared by the flags that
take an id (`vocabulary.arguments`), the configuration and validation (`jobs.validate`,
which spells the same rule as a Spark column).

Every output is partitioned by snapshot_id, a folder `snapshot_id=<value>` per snapshot,
the value escaped as Spark escapes it (ExternalCatalogUtils.escapePathName: these
characters become %XX). An empty id is written as the null partition, which the outputs'
snapshot_id (not nullable) cannot hold: the commit broke the table, earlier snapshots too.
A folder name holds 255 bytes: a longer one failed the write after the whole run was
computed.
"""

from __future__ import annotations

FOLDER_NAME_BYTES = 255
PARTITION_FOLDER = "snapshot_id="
ESCAPED_CHARS = frozenset([*map(chr, range(0x01, 0x20)), *"\"#%'*/:=?\\\x7f{[]^"])
TOO_LONG = (f"too long to name the outputs' partition folder ({PARTITION_FOLDER}<id>, "
            f"{FOLDER_NAME_BYTES} bytes at most, characters such as / : % # counting 3)")


def snapshot_id_fits(snapshot_id: str | None) -> bool:
    """Whether the id can name an output partition (null can: the null partition of a
    table whose column allows it)."""
    if snapshot_id is None:
        return True
    escaped = sum(1 for ch in snapshot_id if ch in ESCAPED_CHARS)
    return snapshot_id != "" and (len(PARTITION_FOLDER) + len(snapshot_id.encode("utf-8"))
                                  + 2 * escaped) <= FOLDER_NAME_BYTES


def shown_id(snapshot_id: str, limit: int = 60) -> str:
    """The id quoted for a message, cut to its first `limit` characters."""
    if len(snapshot_id) <= limit:
        return repr(snapshot_id)
    return f"{snapshot_id[:limit]!r}… ({len(snapshot_id)} characters)"
