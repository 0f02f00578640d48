"""The console summary's selections (`reports.attention`): every group once, at its latest
snapshot of the run, for both the worst groups and the findings tally."""

from __future__ import annotations

import io
from datetime import datetime

import pytest

from reports.attention import (
    FindingCounts,
    FirstGroups,
    finding_counts,
    groups_all_rejected,
    groups_missing_members,
    latest_group_rows,
    worst_groups,
)
from reports.summary import print_summary

pytestmark = pytest.mark.spark

SCHEMA = ("snapshot_id string, cluster string, captured_at timestamp, consumer_group string, "
          "topic string, findings array<string>, contended_queues int, unconsumed_queues int, "
          "skew int, idle_clients int, recommendation string")
T1, T2 = datetime(2026, 12, 1, 10), datetime(2026, 12, 1, 11)


def _balance(spark):
    def row(snapshot, at, group, findings, cluster="c1", topic=None, skew=0, idle=0,
            unconsumed=0):
        return (snapshot, cluster, at, group, topic, findings, 0, unconsumed, skew, idle,
                "Balance it.")

    return spark.createDataFrame([
        # fixed by s2: in need of attention at s1 only, so not any more
        row("s1", T1, "g-fixed", ["IDLE_CLIENTS"], idle=3, unconsumed=9),
        row("s2", T2, "g-fixed", []),
        # worse at s1 than at s2: counted and ranked at s2
        row("s1", T1, "g-skew", ["MULTI_TOPIC_SKEW", "IDLE_CLIENTS"], skew=5, idle=2),
        row("s2", T2, "g-skew", ["MULTI_TOPIC_SKEW"], skew=1),
        row("s2", T2, "g-skew", ["MULTI_TOPIC_SKEW"], topic="t", skew=1),  # a topic row
        # one name in two clusters: two groups
        row("s2", T2, "g-skew", ["IDLE_CLIENTS"], cluster="c2", idle=1),
        # weighs nothing, still a finding
        row("s2", T2, "g-broker", ["BROKER_UNSUPPORTED_STRATEGY"]),
        # no capture time: later snapshot ids win among equals
        row("s3", None, "g-untimed", ["UNCONSUMED_QUEUES"], unconsumed=2),
        row("s4", None, "g-untimed", ["UNCONSUMED_QUEUES", "IDLE_CLIENTS"], unconsumed=4,
            idle=1),
        row("s2", T2, "g-fine", []),
    ], SCHEMA)


def test_each_group_counts_once_at_its_latest_snapshot(spark) -> None:
    counts = finding_counts(latest_group_rows(_balance(spark)))
    assert (counts.groups, counts.with_any) == (6, 4)
    assert counts.ordered() == [("IDLE_CLIENTS", 2), ("MULTI_TOPIC_SKEW", 1),
                                ("UNCONSUMED_QUEUES", 1), ("BROKER_UNSUPPORTED_STRATEGY", 1)]


def test_worst_groups_are_ranked_at_their_latest_snapshot(spark) -> None:
    latest = latest_group_rows(_balance(spark))
    worst = worst_groups(latest)
    assert [(g["cluster"], g["consumer_group"], g["snapshot_id"]) for g in worst] == [
        ("c1", "g-untimed", "s4"),   # 4 unconsumed, 1 idle: 401
        ("c1", "g-skew", "s2"),      # skew 1: 10
        ("c2", "g-skew", "s2"),      # 1 idle: 1
        ("c1", "g-broker", "s2"),    # 0
    ]
    assert [g["consumer_group"] for g in worst_groups(latest, limit=1)] == ["g-untimed"]


def test_an_audit_with_no_group_rows_counts_nothing(spark) -> None:
    none = latest_group_rows(spark.createDataFrame([], SCHEMA))
    assert finding_counts(none) == FindingCounts() and worst_groups(none) == []


def test_the_summary_tallies_the_findings_beyond_the_worst_groups() -> None:
    from jobs.audit import RunResult

    worst = [{"cluster": "c1", "consumer_group": "g", "snapshot_id": "s2",
              "findings": ["IDLE_CLIENTS"], "clients": 3, "queues": 2, "max_queues": 1,
              "pooled_max": 1, "idle_clients": 1, "unconsumed_queues": 0,
              "contended_queues": 0, "recommendation": "Fewer clients."}]
    counts = FindingCounts({"BROKER_UNSUPPORTED_STRATEGY": 1, "IDLE_CLIENTS": 1200}, 1201,
                           5000)
    result = RunResult("run-1", "out", "offline", ["s2"], {}, worst_groups=worst,
                       finding_counts=counts)
    text = io.StringIO()
    print_summary(result, text)
    assert ("\nFindings: 1,201 of 5,000 group(s) have at least one, each group at its latest "
            "snapshot; the 1 worst below\n"
            "  IDLE_CLIENTS                1,200 group(s)\n"
            "  BROKER_UNSUPPORTED_STRATEGY     1 group(s)\n"
            "\nGroups that need attention (worst first):\n") in text.getvalue()


def test_the_summary_says_the_paused_queues_where_they_are_more_than_the_moved() -> None:
    """Kafka's eager protocol pauses every partition a group held; the line said "moved and
    paused" of the moved ones only."""
    from jobs.audit import RunResult

    churn = [{"cluster": "k", "consumer_group": g, "snapshot_id": "s2",
              "previous_snapshot_id": "s1", "queues_moved": 1, "paused_queues": paused,
              "estimated_duplicates": None, "triggers": ["CLIENTS_CHANGED"]}
             for g, paused in (("eager", 6), ("coop", 1))]
    text = io.StringIO()
    print_summary(RunResult("run-1", "out", "offline", ["s2"], {}, churn=churn), text)
    assert ("  k/eager s1 -> s2: 1 queue(s) moved, 6 paused, unknown duplicate message(s); "
            "CLIENTS_CHANGED\n"
            "  k/coop s1 -> s2: 1 queue(s) moved and paused, unknown duplicate message(s); "
            "CLIENTS_CHANGED\n") in text.getvalue()


def test_groups_audited_without_members_rows_are_counted_and_named(spark) -> None:
    left_out = (" were rejected, so these figures leave them out; the rejects table gives "
                "each row's reason.")
    rows = [
        # among other sentences, before the what-if line; a client id with parentheses
        ("s2", "g-skew", ["IDLE_CLIENTS"], "1 client(s) claim no queue. 3 members row(s) of "
         f"this group (client(s) a (x), b){left_out} What-if: AVG: max 2."),
        # no finding at all
        ("s2", "g-quiet", [], f"1 members row(s) of this group{left_out}"),
        # at s1 only: not at its latest snapshot, so not counted
        ("s1", "g-was", [], f"2 members row(s) of this group (client(s) c){left_out}"),
        ("s2", "g-was", [], "Balanced: no action needed."),
    ]
    balance = spark.createDataFrame(
        [(s, "c1", T2 if s == "s2" else T1, g, None, f, 0, 0, 0, 0, r) for s, g, f, r in rows],
        SCHEMA)
    latest = latest_group_rows(balance)
    assert groups_missing_members(latest) == FirstGroups(2, [
        {"snapshot_id": "s2", "cluster": "c1", "consumer_group": "g-quiet",
         "rejected": "1 members row(s) of this group"},
        {"snapshot_id": "s2", "cluster": "c1", "consumer_group": "g-skew",
         "rejected": "3 members row(s) of this group (client(s) a (x), b)"}])
    assert groups_missing_members(latest, limit=1) == FirstGroups(2, [
        {"snapshot_id": "s2", "cluster": "c1", "consumer_group": "g-quiet",
         "rejected": "1 members row(s) of this group"}])


def test_groups_every_members_row_of_which_was_rejected_are_counted(spark) -> None:
    members = spark.createDataFrame([
        ("s1", "c1", "g-audited", "a"), ("s0", "c1", "g-gone", "a"), ("s1", "c1", "g-big", "a"),
    ], "snapshot_id string, cluster string, consumer_group string, client_id string")

    def rejected(snapshot, group, table="members", cluster="c1"):
        row = None if group is None else f'{{"consumer_group": "{group}", "client_id": "x"}}'
        return (snapshot, cluster, table, row, "unknown strategy")

    rejects = spark.createDataFrame([
        rejected("s1", "g-audited"),             # a usable row left: audited without this one
        rejected("s1", "g-gone"), rejected("s1", "g-gone"),  # usable at s0 only
        rejected("s1", "g-gone", cluster=None),  # another cluster (none): another group
        rejected("s1", "g-q", table="queues"),   # not a members row
        rejected("s1", None),                    # names no group
        rejected("s9", "g-later"),               # a snapshot not audited
        *[rejected("s1", "g-big")] * 3,
        rejected("s2", "g-gone"),                # no usable row at s2 either
    ], "snapshot_id string, cluster string, source_table string, row_json string, "
       "reason string")
    gone = groups_all_rejected(rejects, members, ["s1"])
    assert gone == FirstGroups(2, [
        {"cluster": None, "consumer_group": "g-gone", "snapshots": ["s1"], "rows": 1},
        {"cluster": "c1", "consumer_group": "g-gone", "snapshots": ["s1"], "rows": 2}])
    assert groups_all_rejected(rejects, members, ["s1"], limit=1) == FirstGroups(2, [
        {"cluster": None, "consumer_group": "g-gone", "snapshots": ["s1"], "rows": 1}])
    # a group with none left at two snapshots is one group, its snapshots listed
    assert groups_all_rejected(rejects, members, ["s2", "s1"]).first[1] == {
        "cluster": "c1", "consumer_group": "g-gone", "snapshots": ["s1", "s2"], "rows": 3}
    assert groups_all_rejected(rejects, members, ["s0"]) == FirstGroups()


def test_rejected_members_rows_are_read_back_as_they_came_in(spark) -> None:
    """The one reader of rejected members rows the group_balance sentence and the list of
    groups with none left share: a group, topic and client from row_json, or null."""
    from reports.group_balance import rejected_member_rows

    rejects = spark.createDataFrame([
        ("s1", "c1", "members", '{"consumer_group": "g", "topic": "T", "client_id": "a"}',
         "strategy is null"),
        ("s1", None, "members", '{"consumer_group": "g", "client_id": null}', "x"),
        ("s1", "c1", "members", '{"topic": "T", "client_id": "b"}', "x"),  # names no group
        ("s1", "c1", "queues", '{"consumer_group": "g", "topic": "T"}', "x"),  # not members
        # a copy of a row that was audited: its client is not left out
        ("s1", "c1", "members", '{"consumer_group": "g", "topic": "T", "client_id": "c"}',
         "exact duplicate of another row"),
    ], "snapshot_id string, cluster string, source_table string, row_json string, "
       "reason string")
    rows = rejected_member_rows(rejects)
    assert rows.columns == ["snapshot_id", "cluster", "consumer_group", "topic", "client_id"]
    assert sorted(map(tuple, rows.collect()), key=str) == sorted([
        ("s1", "c1", "g", "T", "a"), ("s1", None, "g", None, None)], key=str)


def test_the_summary_names_a_cluster_without_a_name_as_the_page_does() -> None:
    """Members rows of a null cluster are rejected, and their groups listed: as
    'None/g' before, '(none)/g' on the page."""
    from jobs.audit import RunResult

    gone = FirstGroups(1, [{"cluster": None, "consumer_group": "g", "rows": 2,
                            "snapshots": ["s1"]}])
    result = RunResult("run-1", "out", "offline", ["s1"], {},
                       finding_counts=FindingCounts({}, 0, 0), members_gone=gone)
    text = io.StringIO()
    print_summary(result, text)
    assert "\n  (none)/g @ s1: 2 members row(s) rejected\n" in text.getvalue()


def test_the_summary_says_how_many_groups_lack_members_rows_beyond_those_named() -> None:
    from jobs.audit import RunResult

    short = FirstGroups(12, [{"cluster": "c1", "consumer_group": "g", "snapshot_id": "s2",
                              "rejected": "1 members row(s) of this group (client(s) a)"}])
    gone = FirstGroups(1, [{"cluster": "c1", "consumer_group": "h", "rows": 4,
                            "snapshots": ["s1", "s2", "s3", "s4", "s5"]}])
    result = RunResult("run-1", "out", "offline", ["s2"], {},
                       finding_counts=FindingCounts({}, 0, 40), members_short=short,
                       members_gone=gone)
    text = io.StringIO()
    print_summary(result, text)
    assert ("\nNo group has findings in what was audited, but not every group was audited "
            "whole (below).\n"
            "\n12 groups audited without some of their members rows, which were rejected: the "
            "figures leave those clients out (the first 1):\n"
            "  c1/g @ s2: 1 members row(s) (client(s) a)\n"
            "\n1 group with every members row rejected, so not audited at these snapshots:\n"
            "  c1/h @ s1, s2, s3 and 2 more: 4 members row(s) rejected\n") in text.getvalue()


def test_the_summary_times_its_stages_in_the_step_lines_words() -> None:
    from jobs.audit import RunResult

    timings = {"session": 3.3, "preflight": 0.0, "demo_inputs": 0.2, "size": 0.1,
               "read": 9.9, "assign": 5.0, "reports": 4.5, "write": 4.4, "summary": 1.9,
               "report_html": 1.2, "total": 30.6}
    result = RunResult("run-1", "out", "offline", ["s1"], {}, timings=timings,
                       finding_counts=FindingCounts({}, 0, 0))
    text = io.StringIO()
    print_summary(result, text)
    # the step line `read` is the stage `size`, `validate` the stage `read`: one word each
    assert ("\n  time: session 3.3s, preflight 0.0s, demo inputs 0.2s, read 0.1s, validate "
            "9.9s, assign 5.0s, reports 4.5s, write and publish 4.4s, summary 1.9s, "
            "report.html 1.2s, total 30.6s\n") in text.getvalue()
