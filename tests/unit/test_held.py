"""Warnings about what the output already holds (`jobs.held`), without Spark."""

from __future__ import annotations

from datetime import datetime

from jobs.held import HeldRun, clusters_left_out, drift_replaced_by_none, outdated_followers
from jobs.scope import Scope


def at(minute: int) -> datetime:
    return datetime(2026, 11, 1, 8, minute)


def held_at(times: dict) -> dict:
    return {key: HeldRun(at, 0) for key, at in times.items()}


def followers(held: dict, run: dict) -> list[tuple]:
    return [(n.snapshot_id, n.cluster, n.reason.split(":")[0])
            for n in outdated_followers(held_at(held), run)]


def test_the_snapshot_after_a_backfill_is_named_per_cluster():
    held = {("A", "c"): at(0), ("C", "c"): at(20), ("D", "c"): at(30), ("C", "d"): at(20)}
    assert followers(held, {("B", "c"): at(10)}) == [
        ("C", "c", "already in the output, it now follows snapshot B, which this run adds")]
    # two added before C: C follows the later; D still follows C
    assert [s for s, _, _ in followers(held, {("B", "c"): at(10), ("B2", "c"): at(15)})] == ["C"]
    # added after every held one, or re-run: nothing held changes its previous
    assert followers(held, {("E", "c"): at(40)}) == []
    assert followers(held, {("C", "c"): at(20)}) == []
    # a snapshot re-run at another time moves: the held ones around it change previous
    assert [s for s, _, _ in followers(held, {("A", "c"): at(25)})] == ["C", "D"]


def test_unknown_capture_times_come_first_then_snapshot_ids():
    held = {("A", "c"): None, ("C", "c"): None}
    assert [s for s, _, _ in followers(held, {("B", "c"): None})] == ["C"]
    assert [s for s, _, _ in followers(held, {("B", "c"): at(0)})] == []


def test_a_cluster_the_inputs_lack_is_named():
    held = held_at({("A", "c"): at(0), ("A", "d"): at(0), ("B", "c"): at(5)})
    scope = Scope(audited=["A"], not_audited=[], clusters={"A": ["d"]})
    assert [(n.snapshot_id, n.cluster) for n in clusters_left_out(held, scope)] == [("A", "c")]


def test_drift_replaced_by_none_is_named_only_without_observed():
    held = {("A", "c"): HeldRun(at(0), 3), ("A", "d"): HeldRun(at(0), 0),
            ("B", "c"): HeldRun(at(5), 1), ("A", "e"): HeldRun(at(0), 2)}
    scope = Scope(audited=["A"], not_audited=[], clusters={"A": ["c", "d", "e"]},
                  usable_clusters={"A": ["c", "d"]})
    notes = drift_replaced_by_none(held, scope, observed=False)
    # B is not audited; d had no drift; e's rows of A go too (A is replaced whole)
    assert [(n.snapshot_id, n.cluster, n.reason.split(";")[0]) for n in notes] == [
        ("A", "c", "the output's complete run of it found 3 drifting queue(s) (it had "
                   "--observed)"),
        ("A", "e", "the output's complete run of it found 2 drifting queue(s) (it had "
                   "--observed)")]
    assert drift_replaced_by_none(held, scope, observed=True) == []
