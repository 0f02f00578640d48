"""Member-row expressions the kernels' glue and the reports share."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from rebalance_udfs.batch import DEFAULT_VIRTUAL_NODES
from vocabulary.columns import CLUSTERING, POP
from vocabulary.findings import BROKER_STRATEGIES


def clustering() -> Column:
    """Members in CLUSTERING mode (the default when message_model is null)."""
    return F.coalesce(F.col("message_model"), F.lit(CLUSTERING)) == CLUSTERING


def variant(columns: Sequence[str] = ()) -> Column:
    """A member's strategy with the parameters its group's members must agree on, one
    comparable string (MIXED_STRATEGIES counts the distinct ones of a group): only those
    its strategy reads, as the kernels read them (`columns`: the member rows' columns).

    - virtual_nodes, for a CONSISTENT_HASH strategy: the integer, 10 when unset
      (`rebalance_udfs.batch.DEFAULT_VIRTUAL_NODES`), so "10", " 10" and none agree;
    - rooms, for MACHINE_ROOM: the set of names (`machine_room.parse_rooms`), so
      " r1 , r2 " and "r2,r1" agree; unset is apart from an empty list;
    - pop_share_queue_num, where the broker pops (POP mode, AVG or AVG_BY_CIRCLE): the
      integer, 0 for unset or below (the broker's `allocate4Pop` lets every client pop
      every queue for all of them, `rebalance_udfs.pop`), so none, "0" and "-1" agree.

    A key no strategy reads (a misspelt one, which the run warns of) changes nothing a
    client computes, and two clients are not two views of the split for it. CONFIG's
    `queues` is left out too: it is each client's own list by design (the strategy hands
    a client exactly the queues configured for it), so lists that differ are not two
    views of one split; their overlaps and gaps are CONTENDED and UNCONSUMED queues."""
    strategy = F.col("strategy")
    # parse_rooms strips every blank around a name (F.trim only spaces)
    names = F.filter(F.transform(F.split(F.col("rooms"), ","),
                                 lambda r: F.regexp_replace(r, r"^\s+|\s+$", "")),
                     lambda r: r != "")
    pop = (F.when((F.col("allocation_mode") == POP) & strategy.isin(*BROKER_STRATEGIES),
                  F.greatest(F.coalesce(F.col("pop_share_queue_num"), F.lit(0)), F.lit(0)))
           if {"allocation_mode", "pop_share_queue_num"} <= set(columns) else F.lit(None))
    agreed = F.struct(
        F.when(strategy.endswith("CONSISTENT_HASH"), F.coalesce(
            F.col("virtual_nodes"), F.lit(DEFAULT_VIRTUAL_NODES))).alias("virtual_nodes"),
        F.when(strategy == "MACHINE_ROOM", F.array_sort(F.array_distinct(names)))
        .alias("rooms"),
        pop.alias("pop_share_queue_num"))
    return F.concat_ws("|", strategy, F.to_json(agreed))
