"""Close names for a missing group among many: compared with its neighbours in sort
order, not all of them (difflib over a million names took about 30 s)."""

from __future__ import annotations

from reports.html.missing_groups import NEIGHBOURS, _listed, _near


def test_among_many_names_only_the_neighbours_are_compared() -> None:
    names = sorted(f"GID_{word}_{i:05d}" for word in ("orders", "payments") for i in
                   range(5 * NEIGHBOURS))
    near = _near(names, "GID_payments_01234x")
    assert len(near) == 2 * NEIGHBOURS and "GID_payments_01234" in near
    assert near == names[names.index("GID_payments_01234") + 1 - NEIGHBOURS:][
        :2 * NEIGHBOURS]
    assert _near(names[:NEIGHBOURS], "zzz") == names[:NEIGHBOURS]  # a few: all of them
    assert _near(names, "~after-all") == names[-NEIGHBOURS:]


def test_many_snapshots_are_listed_latest_last_with_the_earlier_counted() -> None:
    assert _listed(["s1", "s2"]) == "s1, s2"
    assert _listed([f"s{i}" for i in range(1, 12)]) == "s7, s8, s9, s10, s11 (and 6 earlier)"
