"""What the run's console summary names after the writes: the groups most in need of
attention, how many groups each finding touches, and the rebalances that moved the most
queues. Each is one small Spark job over a written table; a handful of rows reach the
driver.

A group counts at its latest snapshot of the run (by capture time, then snapshot id), as
report.html counts it at its latest shown one: a group whose findings an earlier snapshot
had and its latest has not is no longer in need of attention. Those rows
(`latest_group_rows`) are chosen once, by a window over every group_balance row, and both
the worst groups and the tally read them (the caller materializes them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from reports.group_balance import rejected_members_line, what_if_line
from vocabulary.findings import FINDINGS
from vocabulary.severity import SEVERITY_WEIGHTS

# the tally's sums beside the codes (no finding code starts with a space)
_GROUPS, _WITH_ANY, _MEMBERS_REJECTED = " groups", " with any", " members rejected"
_SUMS = (_GROUPS, _WITH_ANY, _MEMBERS_REJECTED)


@dataclass
class FindingCounts:
    """Groups per finding code (codes no group has are left out), the groups with at
    least one finding, the groups audited, and the groups audited without some of their
    members rows (rejected: no finding says so, their recommendation does)."""

    by_code: dict[str, int] = field(default_factory=dict)
    with_any: int = 0
    groups: int = 0
    members_rejected: int = 0

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
    nothing)."""
    findings = F.coalesce(F.col("findings"), F.array().cast("array<string>"))
    none = F.array().cast("array<string>")
    labels = F.concat(
        findings, F.array(F.lit(_GROUPS)),
        F.when(F.size(findings) > 0, F.array(F.lit(_WITH_ANY))).otherwise(none),
        F.when(rejected_members_line(F.col("recommendation")).isNotNull(),
               F.array(F.lit(_MEMBERS_REJECTED))).otherwise(none))
    rows = (latest.select(F.explode(labels).alias("code"))
            .groupBy("code").count().collect())
    counts = {r["code"]: r["count"] for r in rows}
    return FindingCounts(by_code={c: n for c, n in counts.items() if c not in _SUMS},
                         with_any=counts.get(_WITH_ANY, 0), groups=counts.get(_GROUPS, 0),
                         members_rejected=counts.get(_MEMBERS_REJECTED, 0))


def groups_missing_members(latest: DataFrame, limit: int = 5) -> list[dict]:
    """Of `latest` (`latest_group_rows`), the first `limit` groups (by snapshot, cluster,
    group) audited without some of their members rows, each with `rejected`: how many rows
    and which clients, as its recommendation says ("2 members row(s) of this group
    (client(s) b)"). A group can be among them and have no finding at all."""
    line = rejected_members_line(F.col("recommendation"))
    rows = (latest.withColumn("rejected", line).where(F.col("rejected").isNotNull())
            .orderBy("snapshot_id", "cluster", "consumer_group")
            .select("snapshot_id", "cluster", "consumer_group", "rejected")
            .limit(limit).collect())
    return [r.asDict() for r in rows]


def top_churn(churn: DataFrame, limit: int = 5) -> list[dict]:
    """The rebalances that moved the most queues."""
    rows = (churn.where(F.col("queues_moved") > 0)
            .orderBy(F.desc("queues_moved"), "snapshot_id", "cluster", "consumer_group")
            .select("snapshot_id", "previous_snapshot_id", "cluster", "consumer_group",
                    "queues_moved", "estimated_duplicates", "triggers")
            .limit(limit).collect())
    return [r.asDict() for r in rows]
