"""Deletion vectors written into a Delta table's log, as Spark's DELETE writes them on a
table that allows them: no jars here can make one, and delta-rs only reads them.

`delete_rows` commits, for one data file, a remove of it and an add of the same file
carrying an inline deletion vector (storage type "i", the Delta protocol's "Deletion
Vector Format": the 64-bit roaring bitmap array, Z85-encoded). delta-rs' own reader
(`DeltaTable.deletion_vectors()`) decodes what it writes, which the tests check.
"""

from __future__ import annotations

import base64
import json
import struct
import time
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, TableFeatures

_BITMAP_ARRAY_MAGIC = 1681511377
_ROARING_NO_RUNS_COOKIE = 12346
_RFC1924 = ("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
            "!#$%&()*+-;<=>?@^_`{|}~")
_Z85 = ("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        ".-:+=^!/*?&<>()[]{}@%$#")


def allow_deletion_vectors(path: str | Path) -> None:
    """Add the deletionVectors table feature (reader 3, writer 7), as a platform whose
    new tables allow them does: the table holds no vector yet."""
    DeltaTable(str(path)).alter.add_feature(TableFeatures.DeletionVectors,
                                            allow_protocol_versions_increase=True)


def delete_rows(path: str | Path, file_index: int, rows: list[int]) -> str:
    """Mark `rows` (positions in the file, below 65,536) of the table's `file_index`-th data
    file deleted; returns that file's path in the log."""
    table = DeltaTable(str(path))
    add = pa.table(table.get_add_actions(flatten=False)).to_pylist()[file_index]
    stamp = int(time.time() * 1000)
    common = {"path": add["path"], "partitionValues": add.get("partition") or {},
              "size": add["size_bytes"], "dataChange": True}
    bitmap = _bitmap_array(rows)
    vector = {"storageType": "i", "pathOrInlineDv": _z85(bitmap),
              "sizeInBytes": len(bitmap), "cardinality": len(set(rows))}
    actions = [
        {"commitInfo": {"timestamp": stamp, "operation": "DELETE"}},
        {"remove": {**common, "deletionTimestamp": stamp}},
        {"add": {**common, "modificationTime": stamp, "deletionVector": vector,
                 "stats": json.dumps({"numRecords": add["num_records"]})}},
    ]
    log = Path(path, "_delta_log", f"{table.version() + 1:020d}.json")
    log.write_text("".join(json.dumps(a) + "\n" for a in actions))
    return add["path"]


def _bitmap_array(rows: list[int]) -> bytes:
    """One 32-bit roaring bitmap (key 0) of one array container, in the portable format,
    behind the bitmap array's magic number and count."""
    values = sorted(set(rows))
    assert values and values[-1] < 1 << 16, "one array container holds positions < 65,536"
    container = b"".join(struct.pack("<H", v) for v in values)
    header = struct.pack("<IIHHI", _ROARING_NO_RUNS_COOKIE, 1, 0, len(values) - 1, 16)
    return struct.pack("<iqi", _BITMAP_ARRAY_MAGIC, 1, 0) + header + container


def _z85(data: bytes) -> str:
    """Z85 of `data` padded to whole 4-byte words (the descriptor's sizeInBytes says how
    many bytes are the vector's): base85 with Z85's alphabet."""
    padded = data + b"\0" * (-len(data) % 4)
    return base64.b85encode(padded).decode().translate(str.maketrans(_RFC1924, _Z85))
