"""Warnings about what the output already holds (`jobs.held`), without Spark."""

from __future__ import annotations

from datetime import datetime

from jobs.held import Held, clusters_left_out, outdated_followers
from jobs.scope import Scope


def at(minute: int) -> datetime:
    return datetime(2026, 11, 1, 8, minute)


def followers(held: dict, run: dict) -> list[tuple]:
    return [(n.snapshot_id, n.cluster, n.reason.split(":")[0])
            for n in outdated_followers(Held(held), run)]


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
    held = Held({("A", "c"): at(0), ("A", "d"): at(0), ("B", "c"): at(5)})
    scope = Scope(audited=["A"], not_audited=[], clusters={"A": ["d"]})
    assert [(n.snapshot_id, n.cluster) for n in clusters_left_out(held, scope)] == [("A", "c")]
