"""What a run that lost a race says of the other run (`storage.base.ConflictError`)."""

from __future__ import annotations

from storage.base import ConflictError
from storage.delta_log import Commit


def test_the_conflict_names_what_the_other_run_wrote_not_all_this_run_replaces() -> None:
    """Probe X: a run of s1 and s2 beat one of s2 and s3, which said the other had
    written "snapshot(s) s2, s3", naming s3, which it never touched."""
    error = ConflictError.of_commits("runs", "/out/runs", ["s2", "s3"],
                                     [Commit(4, frozenset({"s1", "s2"}), "r1")], "r2")
    assert str(error).startswith("run r1 wrote snapshot(s) s2 of the runs table at /out/runs "
                                 "while this run was computing them.")
    assert error.partitions == ["s2"]


def test_a_run_given_this_runs_run_id_is_said_to_be_another() -> None:
    """`run SAME wrote ... while this run was computing them` read as this run itself."""
    error = ConflictError.of_commits("assignments", "/out/assignments", ["s1", None],
                                     [Commit(2, frozenset({None}), "SAME")], "SAME")
    assert str(error).startswith(
        "run SAME (another run given this run's --run-id) wrote snapshot(s) (null) of the "
        "assignments table")


def test_the_loser_is_told_what_to_do_if_the_other_run_died() -> None:
    """Probe X: "re-run ... once the other run has finished" left the loser waiting for a
    run that had been killed (its snapshots left without a `runs` row)."""
    error = ConflictError.of_commits("assignments", "/out/assignments", ["s1"],
                                     [Commit(2, frozenset({"s1"}), "r1")], "r2")
    assert str(error).endswith(
        "Nothing of this run is published for them (no `runs` row); re-run to audit them "
        "again once the other run has finished, or at once if it was killed (its snapshots "
        "then have no `runs` row either).")
