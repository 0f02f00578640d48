"""Rows read through Arrow on the driver, as Spark's `collect()` hands them back.

A small table read without a Spark job (`OfflineStore.read_rows`) must give its callers
the very values a Spark read would: they compare them with values Spark collected (a
snapshot's capture time). Each Arrow value goes to Spark's internal form (a timestamp's
microseconds, a date's days, a map's dict), then through the schema's own
`fromInternal`, the conversion `collect()` applies.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    MapType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
_MICROSECOND = timedelta(microseconds=1)


def spark_rows(columns: dict[str, list], schema: StructType) -> list[Row]:
    """One Row per position of `columns` (each column's Python values, as Arrow's
    `to_pylist` gives them), with `schema`'s fields in its order."""
    fields = schema.fields
    values = [columns[f.name] for f in fields]
    count = len(values[0]) if values else 0
    return [schema.fromInternal(tuple(_internal(column[i], f.dataType)
                                      for column, f in zip(values, fields, strict=True)))
            for i in range(count)]


def column_values(table: pa.Table, name: str) -> list:
    """A column's Python values; a timestamp at microseconds first (Spark keeps no finer
    unit: a file another writer stored in nanoseconds reads as Spark reads it)."""
    column = table.column(name)
    if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
        column = column.cast(pa.timestamp("us", column.type.tz), safe=False)
    return column.to_pylist()


def _internal(value, dtype: DataType):
    """`value` (Arrow's Python form) in Spark's internal form of `dtype`."""
    if value is None:
        return None
    if isinstance(dtype, TimestampType):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (moment - _EPOCH) // _MICROSECOND
    if isinstance(dtype, TimestampNTZType):
        return (value.replace(tzinfo=None) - _EPOCH_NAIVE) // _MICROSECOND
    if isinstance(dtype, DateType):
        return value.toordinal() - _EPOCH_DAY
    if isinstance(dtype, MapType):
        pairs = value.items() if isinstance(value, dict) else value
        return {_internal(k, dtype.keyType): _internal(v, dtype.valueType) for k, v in pairs}
    if isinstance(dtype, ArrayType):
        return [_internal(v, dtype.elementType) for v in value]
    if isinstance(dtype, StructType):
        return tuple(_internal(value.get(f.name), f.dataType) for f in dtype.fields)
    return value
