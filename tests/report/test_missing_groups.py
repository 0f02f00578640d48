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


def test_clusters_at_different_snapshots_point_to_the_unshown_one_holding_a_group(tmp_path):
    """c1 is shown at s2, c2 at s1: g-old, in c1's s1 only, was said in no audited
    snapshot ("s1, s2" shown by id), and a rejected row of c1's unshown s1 was said
    rejected there. By (snapshot, cluster) pair: c1's s1 holds it, and no shown run
    rejected its rows."""
    import pandas as pd
    import pytest
    from deltalake import write_deltalake

    from reports.html.data import load
    from tests.report import frames
    from vocabulary.errors import NoOutputError

    output = frames.add_second_cluster(frames.write_outputs(str(tmp_path / "out")))
    rejected = pd.DataFrame([{"snapshot_id": "s1", "cluster": "c1", "source_table": "members",
                              "row_json": '{"consumer_group":"g-old"}', "reason": "bad",
                              "run_id": frames.RUN}])
    write_deltalake(f"{output}/rejects", frames.to_arrow(rejected), mode="append",
                    partition_by=["snapshot_id"])
    with pytest.raises(NoOutputError) as raised:
        load(output, groups=["g-old"])
    assert str(raised.value).endswith(
        "no consumer group g-old in snapshot(s) s1 (c2), s2 (c1). g-old: audited in "
        "snapshot(s) s1 (show the latest with --snapshot s1)")
    # asked for by id, every cluster's s1 is shown: the ids alone say it
    with pytest.raises(NoOutputError, match=r"in snapshot\(s\) s1\. nope: no audited"):
        load(output, snapshots=["s1"], groups=["nope"])
    with pytest.raises(NoOutputError, match=r"in snapshot\(s\) s1 \(c1, c2\), s2 \(c1\)\. "):
        load(output, snapshots=["s1", "s2"], groups=["nope"])
