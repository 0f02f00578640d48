"""Warnings about what the output already holds (`jobs.held`), without Spark."""

from __future__ import annotations

from datetime import datetime

from jobs.held import (
    HeldRun,
    clusters_left_out,
    comparison_without_predecessor,
    followers_of_replaced,
    lag_replaced_by_none,
    outdated_followers,
    previous_keys,
    published_meanwhile,
    replaced_by_none,
    unfinished_before,
)
from jobs.scope import Scope


def at(minute: int) -> datetime:
    return datetime(2026, 11, 1, 8, minute)


def held_at(times: dict) -> dict:
    return {key: HeldRun(at, {}) for key, at in times.items()}


def followers(held: dict, run: dict) -> list[tuple]:
    return [(n.snapshot_id, n.cluster, n.reason.split(":")[0])
            for n in outdated_followers(held_at(held), run)]


def test_the_snapshot_after_a_backfill_is_named_per_cluster():
    held = {("A", "c"): at(0), ("C", "c"): at(20), ("D", "c"): at(30), ("C", "d"): at(20)}
    assert followers(held, {("B", "c"): at(10)}) == [
        ("C", "c", "already in the output, it now follows snapshot B, which this run audits "
                   "before it")]
    # two added before C: C follows the later; D still follows C
    assert [s for s, _, _ in followers(held, {("B", "c"): at(10), ("B2", "c"): at(15)})] == ["C"]
    # added after every held one, or re-run: nothing held changes its previous
    assert followers(held, {("E", "c"): at(40)}) == []
    assert followers(held, {("C", "c"): at(20)}) == []
    # a snapshot re-run at another time moves: the held ones around it change previous;
    # the run adds neither's new previous (it said "B, which this run adds" of A's move)
    assert [n.reason for n in outdated_followers(held_at(held), {("A", "c"): at(25)})] == [
        "already in the output, it now follows no earlier snapshot, as this run audits "
        "snapshot A at another capture time: its churn compares with snapshot A (and its "
        "sticky assignors started from A's assignment) until it is audited again "
        "(--snapshot C)",
        "already in the output, it now follows snapshot A, which this run audits before "
        "it: its churn compares with snapshot C (and its sticky assignors started from C's "
        "assignment) until it is audited again (--snapshot D)"]
    moved = {("A", "c"): at(0), ("B", "c"): at(10), ("C", "c"): at(20)}
    [note] = outdated_followers(held_at(moved), {("B", "c"): at(25)})
    assert note.reason.startswith(
        "already in the output, it now follows snapshot A, as this run audits snapshot B at "
        "another capture time: its churn compares with snapshot B")


def test_a_replaced_snapshot_is_paired_with_the_held_one_that_still_follows_it():
    held = held_at({("A", "c"): at(0), ("C", "c"): at(20), ("D", "c"): at(30),
                    ("C", "d"): at(20), ("E", "d"): at(40)})
    # C re-run: D still follows it (its rows are compared, not its place)
    assert followers_of_replaced(held, {("C", "c"): at(20)}) == {("C", "c"): ("D", "c")}
    assert followers_of_replaced(held, {("C", "c"): at(20), ("C", "d"): at(20)}) == {
        ("C", "c"): ("D", "c"), ("C", "d"): ("E", "d")}
    # the latest re-run (the scheduled retry) and a new snapshot: no follower
    assert followers_of_replaced(held, {("D", "c"): at(30), ("F", "c"): at(50)}) == {}
    # both re-run: D is this run's own; C moved past D: D's previous changes, which
    # `outdated_followers` names instead
    assert followers_of_replaced(held, {("C", "c"): at(20), ("D", "c"): at(30)}) == {}
    assert followers_of_replaced(held, {("C", "c"): at(35)}) == {}
    # D follows A now; C of d, which the run leaves out, goes: E follows nothing
    assert [s for s, _, _ in followers(
        {k: r.captured_at for k, r in held.items()}, {("C", "c"): at(35)})] == ["D", "E"]


def test_a_follower_whose_churn_compares_with_another_is_named_when_its_previous_reruns():
    """C follows B; B audited again changes C's place in nothing, but C's churn rows name
    A (audited before B was backfilled) or none: said, and C is no follower whose churn
    compares with B's replaced rows. Rows naming B, or none read: no word."""
    held = held_at({("A", "c"): at(0), ("B", "c"): at(10), ("C", "c"): at(20)})
    run = {("B", "c"): at(10)}
    for compared, said in (("A", "snapshot A (and its sticky assignors started from A's "
                                 "assignment)"),
                           (None, "no earlier snapshot (and its sticky assignors with no "
                                  "previous assignment)")):
        [note] = outdated_followers(held, run, {("C", "c"): compared})
        assert (note.snapshot_id, note.cluster, note.reason) == ("C", "c", (
            "already in the output, it follows snapshot B, which this run audits again, but "
            f"its churn compares with {said}: it was audited before B was added before it, "
            "and stays so until it is audited again (--snapshot C)"))
        assert followers_of_replaced(held, run, {("C", "c"): compared}) == {}
    assert outdated_followers(held, run, {("C", "c"): "B"}) == []
    assert outdated_followers(held, run) == []
    assert followers_of_replaced(held, run, {("C", "c"): "B"}) == {("B", "c"): ("C", "c")}


def test_a_follower_whose_churn_already_matches_its_new_place_is_no_word():
    """C was audited alone (no churn rows); A, backfilled before it, is audited again after
    it: C follows nothing again, as its churn does. Or C's churn names X, held and left
    alone, which A's move makes its previous again."""
    held = held_at({("A", "c"): at(10), ("C", "c"): at(20)})
    assert outdated_followers(held, {("A", "c"): at(30)}, {("C", "c"): None}) == []
    held = held_at({("X", "c"): at(0), ("A", "c"): at(10), ("C", "c"): at(20)})
    assert outdated_followers(held, {("A", "c"): at(30)}, {("C", "c"): "X"}) == []
    # without the churn rows read, `held` alone says C's previous changes
    assert [n.snapshot_id for n in outdated_followers(held, {("A", "c"): at(30)})] == ["C"]


def test_the_follower_of_a_cluster_a_rerun_leaves_out_is_named():
    """B audited again without cluster k (its inputs lack it): replacing B removes B's k
    rows (`clusters_left_out` says so), and C of k, left alone, followed B: its churn
    still compared with the removed rows, and no word said so (probe Z). Cluster c, whose
    B is audited again, keeps its order."""
    held = held_at({("A", "c"): at(0), ("B", "c"): at(10), ("C", "c"): at(20),
                    ("A", "k"): at(0), ("B", "k"): at(10), ("C", "k"): at(20)})
    run = {("B", "c"): at(10)}
    [note] = outdated_followers(held, run)
    assert (note.snapshot_id, note.cluster, note.reason) == ("C", "k", (
        "already in the output, it now follows snapshot A, as this run removes snapshot B's "
        "rows of this cluster (its inputs lack them): its churn compares with snapshot B "
        "(and its sticky assignors started from B's assignment) until it is audited again "
        "(--snapshot C)"))
    # its churn rows already name A (audited before B was): no word
    assert outdated_followers(held, run, {("C", "k"): "A"}) == []
    # C of k is no follower of a replaced snapshot: B of k is not replaced, it is gone
    assert followers_of_replaced(held, run) == {("B", "c"): ("C", "c")}


def test_comparison_rows_a_run_cannot_recompute_are_a_warning_with_the_flag_given():
    """`--compare-strategies --snapshot C`: the comparison pairs the run's consecutive
    snapshots, so C (its run's first) has none, and its 152 rows went without a word
    (probe Z). Said per first snapshot of each cluster; one run over B and C, or a first
    snapshot whose run wrote none, is no word."""
    held = {("B", "c"): HeldRun(at(10), {"strategy_comparison": 150}),
            ("C", "c"): HeldRun(at(20), {"strategy_comparison": 152}),
            ("C", "d"): HeldRun(at(20), {"strategy_comparison": 3}),
            ("A", "d"): HeldRun(at(0), {})}
    [note] = comparison_without_predecessor(held, {("C", "c"): at(20), ("C", "d"): at(20)})
    assert note.text() == (
        "strategy_comparison: the output's complete runs of snapshot C (cluster c), "
        "snapshot C (cluster d) wrote 155 strategy comparison row(s); this run compares its "
        "own consecutive snapshots only, and audits none before them, so its "
        "strategy_comparison table has none of them (audit each with the snapshot before "
        "it, in one run, to keep them)")
    assert comparison_without_predecessor(held, {("B", "c"): at(10), ("C", "c"): at(20)}
                                          ) == [note.__class__(None, None, None, (
        "strategy_comparison: the output's complete runs of snapshot B (cluster c) wrote 150 "
        "strategy comparison row(s); this run compares its own consecutive snapshots only, "
        "and audits none before them, so its strategy_comparison table has none of them "
        "(audit each with the snapshot before it, in one run, to keep them)"))]
    assert comparison_without_predecessor(held, {("A", "d"): at(0), ("C", "d"): at(20)}) == []
    # a run per capture: D follows C in the output, and gets no comparison row either
    # (probe B: the scheduled mode wrote the table empty, without a word)
    [note] = comparison_without_predecessor(held, {("D", "c"): at(30), ("A", "e"): at(0)})
    assert note.text() == (
        "strategy_comparison: snapshot D (cluster c) follow(s) a snapshot already in the "
        "output, which this run does not audit; the comparison pairs a run's own consecutive "
        "snapshots only, so this run writes no strategy comparison row for them (audit each "
        "with the snapshot before it, in one run, to have them)")
    # a snapshot before every one the output holds follows none
    assert comparison_without_predecessor(held, {("Z0", "c"): None}) == []


def test_unknown_capture_times_come_first_then_snapshot_ids():
    held = {("A", "c"): None, ("C", "c"): None}
    assert [s for s, _, _ in followers(held, {("B", "c"): None})] == ["C"]
    assert [s for s, _, _ in followers(held, {("B", "c"): at(0)})] == []


def test_a_cluster_the_inputs_lack_is_named():
    held = held_at({("A", "c"): at(0), ("A", "d"): at(0), ("B", "c"): at(5)})
    scope = Scope(audited=["A"], not_audited=[], clusters={"A": ["d"]},
                  usable_clusters={"A": ["d"]})
    assert [(n.snapshot_id, n.cluster) for n in clusters_left_out(held, scope)] == [("A", "c")]
    # c read, but with queues and no members (a capture killed between them): not audited
    partial = Scope(audited=["A"], not_audited=[], clusters={"A": ["c", "d"]},
                    usable_clusters={"A": ["c", "d"]}, partial=[("A", "c")])
    [note] = clusters_left_out(held, partial)
    assert (note.snapshot_id, note.cluster) == ("A", "c")
    assert "this run's inputs lack its usable queues or members rows" in note.reason


def test_rows_an_option_left_out_replaces_are_counted_per_table():
    held = {("A", "c"): HeldRun(at(0), {"drift": 3, "what_if": 4}),
            ("A", "d"): HeldRun(at(0), {"drift": 0}),
            ("B", "c"): HeldRun(at(5), {"drift": 1}),
            ("A", "e"): HeldRun(at(0), {"drift": 2})}
    scope = Scope(audited=["A"], not_audited=[], clusters={"A": ["c", "d"]})
    # B is not audited; d had no drift; e's rows of A go too (A is replaced whole)
    assert [n.text() for n in replaced_by_none(held, scope, ["drift", "what_if"])] == [
        "drift: the output's complete runs of snapshot A (cluster c), snapshot A (cluster e) "
        "wrote 5 drifting queue(s); this run has no --observed, so its drift table has none "
        "of them (pass --observed to keep them)",
        "what_if: the output's complete runs of snapshot A (cluster c) wrote 4 what-if "
        "row(s); this run has no --what-if findings or all, so its what_if table has none "
        "of them (pass --what-if findings or all to keep them)"]
    assert replaced_by_none(held, scope, []) == []


def test_many_snapshots_are_named_five_then_counted():
    held = {(f"s{i}", "c"): HeldRun(None, {"strategy_comparison": 2}) for i in range(8)}
    scope = Scope(audited=[f"s{i}" for i in range(8)], not_audited=[], clusters={})
    [note] = replaced_by_none(held, scope, ["strategy_comparison"])
    assert note.text().startswith(
        "strategy_comparison: the output's complete runs of snapshot s0 (cluster c), "
        "snapshot s1 (cluster c), snapshot s2 (cluster c), snapshot s3 (cluster c), "
        "snapshot s4 (cluster c) and 3 more wrote 16 strategy comparison row(s)")


def test_lags_a_run_without_offsets_turns_null_are_one_note():
    [note] = lag_replaced_by_none({("B", "c"): 3, ("A", None): 2, ("A", "d"): 0})
    assert note.text() == (
        "lag: the output's complete runs of snapshot A, snapshot B (cluster c) knew the lag "
        "of 5 client(s) (consumer_load); this run has no --offsets, so its lag columns "
        "(assignments, consumer_load, group_balance) are null for them (pass --offsets to "
        "keep them)")
    assert lag_replaced_by_none({("A", "c"): 0}) == []
    assert lag_replaced_by_none({}) == []


def test_a_follower_another_run_published_meanwhile_is_named():
    before = held_at({("A", "c"): at(0), ("A", "d"): at(0)})
    run = {("B", "c"): at(10)}
    now = {**before, **held_at({("B", "c"): at(10), ("C", "c"): at(20), ("C", "d"): at(20),
                                ("A0", "c"): None})}
    [note] = published_meanwhile(now, before, run)
    assert note.text() == (
        "snapshot C (cluster c): another run published it while this one ran; already in "
        "the output, it now follows snapshot B, which this run audits before it: its churn "
        "compares with snapshot A (and its sticky assignors started from A's assignment) "
        "until it is audited again (--snapshot C)")
    # C of cluster d follows no snapshot of this run's; A0 is earlier; nothing new: quiet
    assert published_meanwhile({**before, **held_at({("B", "c"): at(10)})}, before, run) == []


def test_the_previous_snapshot_is_the_latest_held_before_the_runs_first_per_cluster():
    held = {("A", "c"): HeldRun(at(0), {}, "r1"), ("B", "c"): HeldRun(at(10), {}, "r2"),
            ("D", "c"): HeldRun(at(30), {}, "r3"), ("A", "d"): HeldRun(at(0), {}, "r1"),
            ("Z", "e"): HeldRun(at(0), {}, "r4")}
    # c: before C (20) comes B, and D (30) lies between C and E (40); d: A; e is not in
    # this run
    assert previous_keys(held, {("C", "c"): at(20), ("E", "c"): at(40), ("C", "d"): at(20)},
                         ["C", "E"]) == [("A", "r1"), ("B", "r2"), ("D", "r3")]
    # a snapshot of this run is never its own previous, whatever its old capture time
    assert previous_keys(held, {("B", "c"): at(25)}, ["B"]) == [("A", "r1")]
    # at one capture time, ids decide: A comes before A0, and nothing before 0
    assert previous_keys(held, {("A0", "c"): at(0)}, ["A0"]) == [("A", "r1")]
    assert previous_keys(held, {("0", "c"): at(0)}, ["0"]) == []
    # unknown capture times come first, then ids
    unknown = {("U", "c"): HeldRun(None, {}, "u"), ("A", "c"): HeldRun(at(0), {}, "r1")}
    assert previous_keys(unknown, {("V", "c"): None}, ["V"]) == [("U", "u")]
    assert previous_keys(unknown, {("T", "c"): None}, ["T"]) == []
    assert previous_keys(unknown, {("B", "c"): at(5)}, ["B"]) == [("A", "r1")]


def test_a_held_snapshot_between_two_of_the_runs_is_a_previous_one_too():
    # a run of A and D with B and C held: D compares with C (as a run of all four does),
    # not with A; A's own previous is none
    held = {("B", "c"): HeldRun(at(10), {}, "r2"), ("C", "c"): HeldRun(at(20), {}, "r3"),
            ("E", "c"): HeldRun(at(40), {}, "r4")}
    assert previous_keys(held, {("A", "c"): at(0), ("D", "c"): at(30)}, ["A", "D"]) == [
        ("C", "r3")]
    # each gap its own: C2 follows C, F follows E
    assert previous_keys(held, {("A", "c"): at(0), ("C2", "c"): at(25), ("F", "c"): at(50)},
                         ["A", "C2", "F"]) == [("C", "r3"), ("E", "r4")]


def skipped(unfinished: dict, held: dict, run: dict) -> list[tuple]:
    """(snapshot, cluster, the snapshot named unfinished, what churn compares with)."""
    return [(n.snapshot_id, n.cluster, n.reason.split("rows of snapshot ")[1].split(",")[0],
             n.reason.split("compare with ")[1].split(", not")[0])
            for n in unfinished_before(unfinished, held_at(held), run)]


def test_a_snapshot_right_after_an_unfinished_one_is_named_with_what_it_compares():
    """The output holds rows of B without a complete run (a run of B killed after
    retracting its `runs` row): C, audited now, comes right after B and compares with A."""
    held = {("A", "c"): at(0)}
    assert skipped({("B", "c"): at(10)}, held, {("C", "c"): at(20)}) == [
        ("C", "c", "B", "snapshot A")]
    # nothing complete before B: C gets no churn rows
    assert skipped({("B", "c"): at(10)}, {}, {("C", "c"): at(20)}) == [
        ("C", "c", "B", "no earlier snapshot (it gets no churn rows)")]
    # B between two of the run's own snapshots: the later compares with the earlier
    assert skipped({("B", "c"): at(10)}, held, {("A2", "c"): at(5), ("C", "c"): at(20)}) == [
        ("C", "c", "B", "snapshot A2")]


def test_an_unfinished_snapshot_not_right_before_one_of_the_run_is_no_word():
    """After the run's snapshot (another run writing a later one now), before a complete
    one that precedes the run's, in another cluster, or one this run audits again."""
    held = {("A", "c"): at(0), ("B", "c"): at(10)}
    run = {("C", "c"): at(20)}
    assert skipped({("D", "c"): at(30)}, held, run) == []
    assert skipped({("A0", "c"): at(5)}, held, run) == []
    assert skipped({("B2", "d"): at(15)}, held, run) == []
    assert skipped({("C", "c"): at(15)}, held, run) == []


def test_unknown_capture_times_come_first_as_churn_orders_them():
    """An unfinished snapshot without captured_at orders first: right before the run's
    earliest one when nothing complete has no time either."""
    assert skipped({("B", "c"): None}, {("A", "c"): at(0)}, {("C", "c"): at(20)}) == []
    assert skipped({("B", "c"): None}, {}, {("C", "c"): None, ("D", "c"): at(20)}) == [
        ("C", "c", "B", "no earlier snapshot (it gets no churn rows)")]
