"""Member-row expressions the kernels' glue and the reports share."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from vocabulary.columns import CLUSTERING


def clustering() -> Column:
    """Members in CLUSTERING mode (the default when message_model is null)."""
    return F.coalesce(F.col("message_model"), F.lit(CLUSTERING)) == CLUSTERING


def variant() -> Column:
    """A member's strategy with the parameters its group's members must agree on, one
    comparable string (MIXED_STRATEGIES counts the distinct ones of a group).

    CONFIG's `queues` is left out: it is each client's own list by design (the strategy
    hands a client exactly the queues configured for it), so lists that differ are not
    two views of one split; their overlaps and gaps are CONTENDED and UNCONSUMED queues."""
    params = F.coalesce(F.col("strategy_params"), F.create_map().cast("map<string,string>"))
    agreed = F.when(F.col("strategy") == "CONFIG",
                    F.map_filter(params, lambda key, _value: key != "queues")).otherwise(params)
    return F.concat_ws("|", "strategy", F.to_json(F.array_sort(F.map_entries(agreed))))
