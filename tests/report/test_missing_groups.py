"""Close names for a missing group among many: compared with its neighbours in sort
order, not all of them (difflib over a million names took about 30 s)."""

from __future__ import annotations

from reports.html.missing_groups import NEIGHBOURS, _near


def test_among_many_names_only_the_neighbours_are_compared() -> None:
    names = sorted(f"GID_{word}_{i:05d}" for word in ("orders", "payments") for i in
                   range(5 * NEIGHBOURS))
    near = _near(names, "GID_payments_01234x")
    assert len(near) == 2 * NEIGHBOURS and "GID_payments_01234" in near
    assert near == names[names.index("GID_payments_01234") + 1 - NEIGHBOURS:][
        :2 * NEIGHBOURS]
    assert _near(names[:NEIGHBOURS], "zzz") == names[:NEIGHBOURS]  # a few: all of them
    assert _near(names, "~after-all") == names[-NEIGHBOURS:]
