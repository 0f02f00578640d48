"""Write example rows as Delta input tables (through the product's own storage layer)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame, SparkSession

from jobs.persist import Persist
from jobs.read import InputPaths, Inputs, read_inputs
from storage.delta import DeltaStore
from vocabulary.contracts import CONTRACTS


def frame_for(spark: SparkSession, table: str, rows: pd.DataFrame) -> DataFrame:
    """A DataFrame with exactly the contract's columns (absent ones null)."""
    columns = [c.name for c in CONTRACTS[table]]
    rows = rows.reindex(columns=columns).astype(object).where(rows.notna().reindex(
        columns=columns, fill_value=False), None)
    schema = ", ".join(f"{c.name} {c.type.simpleString()}" for c in CONTRACTS[table])
    records = [{k: v.to_pydatetime() if isinstance(v, pd.Timestamp) else v
                for k, v in r.items()} for r in rows.to_dict("records")]
    return spark.createDataFrame(records, schema=schema)


def write_inputs(spark: SparkSession, root: Path, **tables: pd.DataFrame) -> dict[str, str]:
    """Write each given table (queues=..., members=..., offsets=...) under `root`."""
    store = DeltaStore(spark, "offline")
    paths = {}
    for name, rows in tables.items():
        path = str(root / name)
        store.write(frame_for(spark, name, rows), path, name, ["snapshot_id"])
        paths[name] = path
    return paths


def read_written(spark: SparkSession, paths: dict[str, str], persist: Persist) -> Inputs:
    """The tables `write_inputs` wrote (offsets and observed when given), read and
    validated as the audit reads them."""
    return read_inputs(DeltaStore(spark, "offline"),
                       InputPaths(paths["queues"], paths["members"], paths.get("offsets"),
                                  paths.get("observed")),
                       (), persist)
