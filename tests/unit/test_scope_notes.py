"""Warnings about the inputs that the assign-and-report pass counts (`jobs.scope`)."""

from __future__ import annotations

from jobs.scope import groups_without_lag


def test_groups_without_lag_are_one_note_per_snapshot_and_cluster() -> None:
    counts = {("s2", "eu"): 3, ("s1", "us"): 1, ("s1", "eu"): 0, ("s3", None): 2,
              ("s4", "eu"): 5}
    notes = groups_without_lag(counts, {("s4", "eu")})  # offsets has no rows of s4 at all
    assert [(n.snapshot_id, n.cluster, n.table) for n in notes] == [
        ("s1", "us", None), ("s2", "eu", None), ("s3", None, None)]
    assert notes[1].text().startswith(
        "snapshot s2 (cluster eu): lag is unknown for 3 group(s) with queues: none of "
        "their queues has both a committed_offset (offsets) and a max_offset (queues)")
    assert groups_without_lag({}, set()) == []
