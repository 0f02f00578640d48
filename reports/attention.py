"""What the run's console summary names after the writes: the groups most in need of
attention, how many groups each finding touches, the groups whose members rows were
rejected (audited without them, or not at all; no finding says so), and the rebalances
that moved the most queues. Each is one or two small Spark jobs over a written table (or
the run's rejects); a handful of rows reach the driver.

A group counts at its latest snapshot of the run (by capture time, then snapshot id), as
report.html counts it at its latest shown one: a group whose findings an earlier snapshot
had and its latest has not is no longer in need of attention. Those rows
(`latest_group_rows`) are chosen once, by a window over every group_balance row, and both
the worst groups and the tally read them (the caller materializes them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from reports.group_balance import (
    names_empty_topics,
    rejected_member_rows,
    rejected_members_line,
    rejected_queues_line,
    what_if_line,
)
from vocabulary.columns import GROUP_KEYS
from vocabulary.findings import FINDINGS
from vocabulary.severity import SEVERITY_WEIGHTS

# the tally's sums beside the codes (no finding code starts with a space)
_GROUPS, _WITH_ANY, _EMPTY_TOPICS = " groups", " with any", " empty topics"


@dataclass
class FindingCounts:
    """Groups per finding code (codes no group has are left out), the groups with at
    least one finding, the groups audited, and the groups that subscribe a topic with no
    readable queue (no finding code says so: its recommendation does)."""

    by_code: dict[str, int] = field(default_factory=dict)
    with_any: int = 0
    groups: int = 0
    empty_topics: int = 0

    def ordered(self) -> list[tuple[str, int]]:
        """Most groups first; ties in the contract's order of the codes."""
        rank = {code: i for i, code in enumerate(FINDINGS)}
        return sorted(self.by_code.items(),
                      key=lambda item: (-item[1], rank.get(item[0], len(rank)), item[0]))


def latest_group_rows(balance: DataFrame) -> DataFrame:
    """Each group's whole-group row (null topic) at its latest snapshot in `balance`."""
    latest = Window.partitionBy("cluster", "consumer_group").orderBy(
        F.desc_nulls_last("captured_at"), F.desc("snapshot_id"))
    return (balance.where(F.col("topic").isNull())
            .withColumn("_latest", F.row_number().over(latest)).where(F.col("_latest") == 1)
            .drop("_latest"))


def worst_groups(latest: DataFrame, limit: int = 10) -> list[dict]:
    """Of `latest` (`latest_group_rows`), the groups with findings, most severe first
    (`vocabulary.severity`), each with its what-if line (the end of the recommendation,
    `reports.group_balance.with_what_if`)."""
    severity = sum((F.coalesce(F.col(c), F.lit(0)) * w for c, w in SEVERITY_WEIGHTS.items()),
                   F.lit(0))
    rows = (latest.where(F.size("findings") > 0)
            .withColumn("_severity", severity)
            .orderBy(F.desc("_severity"), "snapshot_id", "cluster", "consumer_group")
            .limit(limit))
    rows = rows.withColumn("what_if_line", what_if_line(F.col("recommendation")))
    return [r.asDict() for r in rows.collect()]


def finding_counts(latest: DataFrame) -> FindingCounts:
    """How many groups each finding touches in `latest` (`latest_group_rows`: every group
    once, at its latest snapshot). The worst groups are ten; this says how many more there
    are and which findings the severity order ranks low (BROKER_UNSUPPORTED_STRATEGY weighs
    nothing). It also counts the groups whose topics include one with no readable queue,
    which no finding names: the summary must not call them balanced."""
    findings = F.coalesce(F.col("findings"), F.array().cast("array<string>"))
    none = F.array().cast("array<string>")
    labels = F.concat(findings, F.array(F.lit(_GROUPS)),
                      F.when(F.size(findings) > 0, F.array(F.lit(_WITH_ANY))).otherwise(none),
                      F.when(names_empty_topics(F.col("recommendation")),
                             F.array(F.lit(_EMPTY_TOPICS))).otherwise(none))
    rows = (latest.select(F.explode(labels).alias("code"))
            .groupBy("code").count().collect())
    counts = {r["code"]: r["count"] for r in rows}
    return FindingCounts(by_code={c: n for c, n in counts.items()
                                  if c not in (_GROUPS, _WITH_ANY, _EMPTY_TOPICS)},
                         with_any=counts.get(_WITH_ANY, 0), groups=counts.get(_GROUPS, 0),
                         empty_topics=counts.get(_EMPTY_TOPICS, 0))


@dataclass
class FirstGroups:
    """How many groups a selection holds, and the first few of them."""

    total: int = 0
    first: list[dict] = field(default_factory=list)


def groups_missing_members(latest: DataFrame, limit: int = 5) -> FirstGroups:
    """Of `latest` (`latest_group_rows`), the groups audited without some of their members
    rows (rejected), each with `rejected`: how many rows and which clients, as its
    recommendation says ("2 members row(s) of this group (client(s) b)"). No finding says
    so, so a group can be among them and have none."""
    return _groups_saying(latest, rejected_members_line(F.col("recommendation")), limit)


def groups_missing_queues(latest: DataFrame, limit: int = 5) -> FirstGroups:
    """Of `latest` (`latest_group_rows`), the groups whose topics lost queues rows to the
    rejects, each with `rejected`: how many rows, as its recommendation says ("3 queues
    row(s)"). No finding says so either."""
    return _groups_saying(latest, rejected_queues_line(F.col("recommendation")), limit)


def _groups_saying(latest: DataFrame, line: Column, limit: int) -> FirstGroups:
    """The groups of `latest` whose `line` (words of their recommendation) is not null,
    with it as `rejected`."""
    return _first(latest.withColumn("rejected", line).where(F.col("rejected").isNotNull())
                  .select(*GROUP_KEYS, "rejected"), limit)


def groups_all_rejected(rejects: DataFrame, members: DataFrame, snapshots: list[str],
                        limit: int = 5) -> FirstGroups:
    """The groups that, at some of the audited `snapshots`, had every members row rejected
    (`rejects`: the run's; `members`: its usable rows), each with those `snapshots`
    (sorted) and `rows`, how many were rejected there: the audit has no figure of them,
    so nothing but the rejects table says they exist. The group comes from each row as
    read (`row_json`); a row without one names no group."""
    rejected = (rejected_member_rows(rejects).where(F.col("snapshot_id").isin(snapshots))
                .groupBy(*GROUP_KEYS).agg(F.count(F.lit(1)).alias("rows")))
    # broadcast both ways: a row per group with rejected rows, and the few of those groups
    # with usable rows left; the usable rows themselves are filtered where they lie
    def same(left: DataFrame, right: DataFrame) -> list:
        return [left[k].eqNullSafe(right[k]) for k in GROUP_KEYS]

    usable = members.select(*GROUP_KEYS)
    kept = usable.join(F.broadcast(rejected), same(usable, rejected), "left_semi").distinct()
    gone = rejected.join(F.broadcast(kept), same(rejected, kept), "left_anti")
    per_group = gone.groupBy("cluster", "consumer_group").agg(
        F.array_sort(F.collect_list("snapshot_id")).alias("snapshots"),
        F.sum("rows").alias("rows"))
    return _first(per_group, limit, ["cluster", "consumer_group"])


def _first(groups: DataFrame, limit: int, order: list[str] = GROUP_KEYS) -> FirstGroups:
    """`limit` rows of `groups` in `order` and their number, counted only when there are
    more than `limit`. `groups` (a few rows per group that has them) is stored by the
    first job and counted from there: the count does not compute it again (10M benchmark:
    the summary step read 224 MB more and took 4.8 s more before)."""
    groups = groups.persist()
    try:
        rows = groups.orderBy(*order).limit(limit + 1).collect()
        total = len(rows) if len(rows) <= limit else groups.count()
    finally:
        groups.unpersist()
    return FirstGroups(total, [r.asDict() for r in rows[:limit]])


def top_churn(churn: DataFrame, limit: int = 5) -> list[dict]:
    """The rebalances that moved the most queues."""
    rows = (churn.where(F.col("queues_moved") > 0)
            .orderBy(F.desc("queues_moved"), "snapshot_id", "cluster", "consumer_group")
            .select("snapshot_id", "previous_snapshot_id", "cluster", "consumer_group",
                    "queues_moved", "paused_queues", "estimated_duplicates", "triggers")
            .limit(limit).collect())
    return [r.asDict() for r in rows]
