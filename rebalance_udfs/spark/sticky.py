"""Kafka `sticky` / `cooperative-sticky` in Spark: a group's snapshots in one call.

Each snapshot starts from the previous one's result (`rebalance_udfs.sticky_chain`), so
groups are hashed by (cluster, consumer_group) — not by snapshot — into `buckets`; one
cogrouped Arrow UDF call receives every snapshot of the bucket's groups. The audit runs
the chain inside the assign-and-report pass's call (`chain_claims`, with the snapshots'
order collected by `chain_order`); `assign_sticky` runs it as a Spark pass of its own
(the strategy comparison's oracle and the chain's Spark tests use it).

The previous assignment of a snapshot outside the run comes from `prior_assignments` (the
assignments table of earlier runs); none when the group had no sticky rows there. Only
claims written by a sticky assignor count (strategy sticky / cooperative-sticky, status
OK, or CONTENDED where a member of the group on another strategy claims the queue too),
in the run and from prior rows alike, so the result does not depend on how snapshots were
split into runs. (Real Kafka also lets `cooperative-sticky` keep what a
member owned under another assignor right after a switch; the audit starts such a group
fresh.)
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rebalance_udfs.exact import column_values
from rebalance_udfs.key_codes import row_of
from rebalance_udfs.spark.arrow import kernel_claims, run_kernel
from rebalance_udfs.spark.assign import subscribed_units
from rebalance_udfs.spark.buckets import BUCKET, BUCKET_KEYS, bucketed
from rebalance_udfs.spark.snapshot_order import snapshot_order
from rebalance_udfs.sticky_chain import MEMBER_SIDE, ORDER_COLUMNS, member_side, sticky_bucket
from vocabulary.columns import (
    CONTENDED,
    GROUP_KEYS,
    OK,
    QUEUE_KEYS,
    SNAPSHOT_KEYS,
    STICKY_STRATEGIES,
)
from vocabulary.schemas import ASSIGNED_SCHEMA

# the statuses of a sticky member's claim that the chain continues from (module docstring)
_KEPT = [OK, CONTENDED]


def sticky_arrow(queues: pa.Table, members: pa.Table) -> pa.Table:
    """The cogrouped UDF body: every snapshot of a bucket of groups in, assignment rows out."""
    return run_kernel(queues, [*QUEUE_KEYS, *ORDER_COLUMNS],
                      members.select(MEMBER_SIDE).to_pandas(), sticky_bucket)


def chain_claims(queues: pa.Table, members: pd.DataFrame, prior_rows: pa.Table | None,
                 order: pa.Table) -> pd.DataFrame:
    """In the assign-and-report pass's call: the claims (`kernel_claims`: `_row` into
    `queues`) the sticky chain makes for a bucket's sticky members.

    `queues`: the queue rows of the units those members subscribe; `members`: their rows
    (the kernels' member frame); `prior_rows`: the predecessor's assignment rows that ride
    along for churn, with `strategy`; `order`: `chain_order` of the run's snapshots and
    the predecessors, collected (a few rows per cluster)."""
    side = pd.concat([member_side(members), _prior_claim_rows(prior_rows, order, members)],
                     ignore_index=True)
    side["_prior"] = side["_prior"].astype(bool)
    return kernel_claims(ordered_keys(queues, order), [*QUEUE_KEYS, *ORDER_COLUMNS], side,
                         sticky_bucket)


def ordered_keys(queues: pa.Table, order: pa.Table) -> pa.Table:
    """The QUEUE_KEYS of `queues` with their snapshot's ORDER_COLUMNS from `order`
    (`chain_order`, collected), row for row: what `sticky_bucket` reads."""
    at = row_of([column_values(order, "snapshot_id"), column_values(order, "cluster")],
                [column_values(queues, "snapshot_id"), column_values(queues, "cluster")])
    keyed = queues.select(QUEUE_KEYS)
    for name in ORDER_COLUMNS:
        keyed = keyed.append_column(name, order.column(name).take(pa.array(at)))
    return keyed


def _prior_claim_rows(prior_rows: pa.Table | None, order: pa.Table, members: pd.DataFrame
                      ) -> pd.DataFrame:
    """MEMBER_SIDE rows (`_prior` true) of the predecessor's sticky claims, keyed by the
    run's snapshot that follows it, for the groups of `members` (as `_prior_claims`)."""
    if prior_rows is None or not prior_rows.num_rows:
        return pd.DataFrame(columns=MEMBER_SIDE)
    claimed = pc.and_(pc.and_(prior_rows.column("client_id").is_valid(),
                              pc.is_in(prior_rows.column("status"), value_set=pa.array(_KEPT))),
                      pc.is_in(prior_rows.column("strategy"),
                               value_set=pa.array(STICKY_STRATEGIES)))
    rows = prior_rows.filter(pc.fill_null(claimed, False))
    first = order.filter(pc.and_(order.column("_previous").is_valid(),
                                 pc.invert(pc.fill_null(order.column("_previous_in_run"),
                                                        True))))
    following = row_of([column_values(first, "cluster"), column_values(first, "_previous")],
                       [column_values(rows, "cluster"), column_values(rows, "snapshot_id")])
    kept = following >= 0
    claims = pd.DataFrame({
        "snapshot_id": column_values(first, "snapshot_id")[following[kept]],
        **{c: column_values(rows, c)[kept]
           for c in ("cluster", "consumer_group", "client_id", "topic", "broker_name",
                     "queue_id")},
        "strategy": None, "message_model": None, "_prior": True})
    ours = row_of([members[c].to_numpy(object) for c in GROUP_KEYS],
                  [claims[c].to_numpy(object) for c in GROUP_KEYS]) >= 0
    return claims[ours][MEMBER_SIDE]


def chain_order(rows: DataFrame, prior_rows: DataFrame | None = None) -> DataFrame:
    """SNAPSHOT_KEYS and ORDER_COLUMNS of every snapshot of `rows` (queue rows, or any with
    SNAPSHOT_KEYS and captured_at): its place in its cluster's order and its predecessor,
    which may be a snapshot of `prior_rows` (the output's assignment rows of earlier runs)
    (`snapshot_order`), as `sticky_bucket` reads them."""
    times = [*SNAPSHOT_KEYS, "captured_at"]
    prior_times = prior_rows.select(*times) if prior_rows is not None else None
    return snapshot_order(rows.select(*times), prior_times).select(
        *SNAPSHOT_KEYS, F.col("position").alias("_position"),
        F.col("previous_snapshot_id").alias("_previous"),
        F.col("previous_in_run").alias("_previous_in_run"))


def assign_sticky(queues: DataFrame, members: DataFrame, offsets: DataFrame | None,
                  buckets: int, prior_assignments: DataFrame | None = None) -> DataFrame:
    """Assignment rows (ASSIGNED_SCHEMA) of the groups whose members run a sticky assignor.

    `members` holds only `sticky` / `cooperative-sticky` members; `queues` / `offsets` are
    the validated inputs. `prior_assignments`: rows of the assignments table written by
    earlier runs (snapshot_id, cluster, captured_at, consumer_group, topic, broker_name,
    queue_id, client_id, strategy, status; extra columns ignored), or None.
    """
    order = chain_order(queues, prior_assignments)

    units = subscribed_units(queues, members, offsets).join(
        F.broadcast(order), SNAPSHOT_KEYS)

    member_side = members.select(
        *GROUP_KEYS, "client_id", "topic", "strategy", "message_model",
        F.lit(None).cast("string").alias("broker_name"),
        F.lit(None).cast("int").alias("queue_id"), F.lit(False).alias("_prior"))
    if prior_assignments is not None:
        member_side = member_side.unionByName(
            _prior_claims(prior_assignments, order, members))
    return (
        bucketed(units, buckets, BUCKET_KEYS).groupBy(BUCKET)
        .cogroup(bucketed(member_side, buckets, BUCKET_KEYS).groupBy(BUCKET))
        .applyInArrow(sticky_arrow, ASSIGNED_SCHEMA)
    )


def _prior_claims(prior: DataFrame, order: DataFrame, members: DataFrame) -> DataFrame:
    """Clustering claims of the predecessor snapshots that are not in this run, keyed by
    the run's snapshot that follows them (only for groups of this run's members)."""
    wanted = (order.where(~F.col("_previous_in_run"))
              .select(F.col("snapshot_id").alias("_next"), "cluster",
                      F.col("_previous").alias("snapshot_id")))
    groups = members.select(*[F.col(c).alias(c) for c in GROUP_KEYS]).distinct()
    claims = (prior.where(F.col("client_id").isNotNull() & F.col("status").isin(*_KEPT)
                          & F.col("strategy").isin(*STICKY_STRATEGIES))
              .select(*GROUP_KEYS, "client_id", "topic", "broker_name", "queue_id")
              .join(F.broadcast(wanted), SNAPSHOT_KEYS)
              .drop("snapshot_id").withColumnRenamed("_next", "snapshot_id")
              .join(groups, GROUP_KEYS, "left_semi"))
    return claims.select(
        *GROUP_KEYS, "client_id", "topic", F.lit(None).cast("string").alias("strategy"),
        F.lit(None).cast("string").alias("message_model"), "broker_name",
        F.col("queue_id").cast("int").alias("queue_id"), F.lit(True).alias("_prior"))
