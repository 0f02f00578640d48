"""Warnings about the inputs that the assign-and-report pass counts (`jobs.scope`)."""

from __future__ import annotations

import pytest

from jobs.audit import _refuse_requested_absent, prior_line
from jobs.scope import (
    Scope,
    groups_with_empty_topics,
    groups_without_lag,
    idle_buckets,
    implausible_capture_times,
)
from rebalance_udfs.spark.report_pass import NamedGroups
from vocabulary.errors import InputError


def test_groups_without_lag_are_one_note_per_snapshot_and_cluster_naming_the_first() -> None:
    counts = {("s2", "eu"): NamedGroups(7, ["A", "B", "C", "D", "E"]),
              ("s1", "us"): NamedGroups(1, ["G"]), ("s1", "eu"): NamedGroups(0, []),
              ("s3", None): NamedGroups(2, ["G", "H"]), ("s4", "eu"): NamedGroups(5, ["X"])}
    notes = groups_without_lag(counts, {("s4", "eu")})  # offsets has no rows of s4 at all
    assert [(n.snapshot_id, n.cluster, n.table) for n in notes] == [
        ("s1", "us", None), ("s2", "eu", None), ("s3", None, None)]
    assert notes[1].text().startswith(
        "snapshot s2 (cluster eu): lag is unknown for 7 group(s) with queues (A, B, C, D, E "
        "and 2 more): none of their queues has both a committed_offset (offsets) and a "
        "max_offset (queues)")
    assert "lag is unknown for 1 group(s) with queues (G): " in notes[0].text()
    # where to find them all reads as a query on group_balance
    assert notes[1].text().endswith(
        "lag columns (assignments, consumer_load, group_balance) are null; group_balance "
        "lists them all: its rows where topic is null, lag_total is null and queues > 0")
    assert "(G, H): " in notes[2].text()
    assert groups_without_lag({}, set()) == []


def test_groups_with_empty_topics_are_one_note_per_snapshot_and_cluster() -> None:
    """Topics with no readable queue are reported (SPEC §3) though no finding code names
    them: a note per snapshot and cluster names the first groups with their topics."""
    counts = {("s2", "eu"): NamedGroups(7, ["A (T9)", "B (T1, T2, T3 and 1 more)", "C (x)",
                                            "D (x)", "E (x)"]),
              ("s1", "us"): NamedGroups(1, ["G (T9)"]), ("s1", "eu"): NamedGroups(0, [])}
    notes = groups_with_empty_topics(counts)
    assert [(n.snapshot_id, n.cluster, n.table) for n in notes] == [
        ("s1", "us", None), ("s2", "eu", None)]
    assert notes[0].text() == (
        "snapshot s1 (cluster us): 1 group(s) subscribe topic(s) with no readable queue, so "
        "nothing of those topics is assigned: G (T9); the queues table has no readable row "
        "of them (a misspelt topic, one whose queues are all readable=false, or one the "
        "capture missed) and no finding code says so: group_balance lists them all, its "
        "rows where topic is not null and queues = 0")
    assert ": A (T9); B (T1, T2, T3 and 1 more); C (x); D (x); E (x) and 2 more; " in \
        notes[1].text()
    assert groups_with_empty_topics({}) == []


def test_a_run_is_refused_only_when_every_snapshot_it_names_is_absent() -> None:
    def scope(requested: list[str], absent: list[str]) -> Scope:
        return Scope(audited=[], not_audited=[], clusters={}, requested=requested,
                     absent=absent)

    with pytest.raises(InputError, match=r"^--snapshot nope, typo: no row of them in any"):
        _refuse_requested_absent(scope(["nope", "typo"], ["nope", "typo"]))
    with pytest.raises(InputError, match=r"^--snapshot nope: no row of it in any input"):
        _refuse_requested_absent(scope(["nope"], ["nope"]))
    _refuse_requested_absent(scope(["A", "nope"], ["nope"]))  # a warning, not a refusal
    _refuse_requested_absent(scope([], []))  # the whole inputs


def test_the_validate_line_counts_the_clusters_of_audited_snapshots_left_out() -> None:
    """s3 of cluster c1 lacked its members: the line read "5 snapshot(s) audited", as if
    every cluster of them were."""
    clusters = {s: ["c1", "c2"] for s in ("s1", "s2", "s3")}
    whole = Scope(audited=["s1", "s2", "s3"], not_audited=["s4"], clusters=clusters,
                  usable_clusters=clusters)
    assert whole.summary() == "3 snapshot(s) audited, 1 not"
    partial = Scope(audited=["s1", "s2", "s3"], not_audited=[], clusters=clusters,
                    usable_clusters={**clusters, "s2": ["c2"]}, partial=[("s3", "c1")])
    assert partial.summary() == ("3 snapshot(s) audited; 2 cluster(s) of them not (see the "
                                 "warnings)")


def test_a_snapshot_run_into_an_output_without_earlier_ones_says_churn_starts_there() -> None:
    """`--snapshot s4` into a fresh output wrote no churn rows though s3 was in the inputs,
    and the line said only "no earlier snapshot in the output"."""
    assert prior_line(["s3"], True) == (
        "churn of the first snapshot(s) compared with s3 from the output")
    assert prior_line([], False) == "no earlier snapshot in the output"
    assert prior_line([], True) == (
        "no earlier snapshot in the output: the first snapshot gets no churn rows (churn "
        "compares with the output, not with the snapshots --snapshot leaves out; audit "
        "those first)")


def test_far_more_buckets_than_subscriptions_is_a_warning() -> None:
    """--buckets 100000 over 28 groups ran 100,000 tasks for minutes without a word."""
    assert idle_buckets(100_000, 45).text() == (
        "--buckets 100,000 is more than the about 45 (group, topic) subscriptions of the "
        "audited snapshots: groups are hashed into the buckets, so most get none and each "
        "still costs a task; leave it unset to size it from the data")
    assert idle_buckets(90, 45) is None and idle_buckets(None, 45) is None
    assert idle_buckets(8, 0) is None


def test_a_capture_time_before_2000_is_a_warning_naming_the_likely_unit() -> None:
    """Epoch seconds written as microseconds (1,764,927,000 µs) is 1970-01-01 00:29:24: a
    real date, so validation kept it, and it ordered churn and named the capture."""
    from datetime import datetime

    from pyspark.sql import Row

    spans = [Row(snapshot_id=s, cluster="c", captured_at=at, last_captured_at=at)
             for s, at in (("s2", datetime(1970, 1, 1, 0, 29, 24)),
                           ("s1", datetime(2026, 11, 1, 8)), ("s0", None),
                           ("s3", datetime(1999, 12, 31, 23, 59, 59)))]
    assert [n.text() for n in implausible_capture_times(spans)] == [
        f"snapshot {s} (cluster c): its captured_at is {at} UTC, before any Kafka or "
        "RocketMQ cluster ran: likely epoch seconds or milliseconds written as a finer unit "
        "(they land in January 1970); it orders churn and is shown as given"
        for s, at in (("s2", "1970-01-01 00:29:24"), ("s3", "1999-12-31 23:59:59"))]


def test_ids_that_would_not_read_as_one_word_are_quoted() -> None:
    """`snapshot nightly run (cluster eu west)` read as more words than ids; a tab as a
    gap. Plain ids stay bare, as every other warning shows them."""
    from jobs.scope import Note

    assert [Note(None, s, c, "x").text() for s, c in (
        ("s1", "eu"), ("nightly run", "eu west"), ("a\tb", None), ("s1", ""))] == [
        "snapshot s1 (cluster eu): x", "snapshot 'nightly run' (cluster 'eu west'): x",
        "snapshot 'a\\tb': x", "snapshot s1 (cluster ''): x"]
