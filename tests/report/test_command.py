"""`report` end to end on Delta tables written by delta-rs: no Spark, no JVM."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from jobs.cli import main
from tests.report import frames

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def output(tmp_path) -> str:
    return frames.write_outputs(str(tmp_path / "out"))


def titles(path: str) -> list[str]:
    return titles_of(Path(path).read_text(encoding="utf-8"))


def titles_of(page: str) -> list[str]:
    return re.findall(r"<h3>\d+\. c1 / (.*?) @ (s\d)</h3>", page)


def test_report_defaults_to_the_latest_snapshot_of_complete_runs(output, capsys):
    assert main(["report", "--output", output]) == 0
    path = capsys.readouterr().out.strip()
    assert path == os.path.join(output, "report.html")
    shown = titles(path)
    assert [g for g, _ in shown][1:] == ["g-skew", "g-idle"]
    assert {s for _, s in shown} == {"s2"}  # g-old (s1) not shown by default
    page = Path(path).read_text(encoding="utf-8")
    assert "g-ghost" not in page  # a killed run's row: not the run `runs` names
    assert "<h4>What if</h4>" in page and 'id="drift"' in page
    # each card's rebalances: g-skew's and g-idle's s1 → s2 rows; the third has none;
    # the same two rows head the page's largest rebalances
    assert page.count("<h4>Rebalances</h4>") == 3
    assert page.count("s1 → s2</td>") == 4 and page.count("None recorded up to") == 1
    assert page.split('id="rebalances"')[1].split("</table>")[0].count("s1 → s2</td>") == 2


def test_snapshot_group_and_html_flags(output, tmp_path, capsys):
    target = str(tmp_path / "elsewhere" / "r.html")
    assert main(["report", "--output", output, "--snapshot", "s1", "--html", target]) == 0
    assert capsys.readouterr().out.strip() == target
    assert titles(target) == [("g-old", "s1")]
    assert main(["report", "--output", output, "--group", "g-ok", "--html", target]) == 0
    assert titles(target) == [("g-ok", "s2")]  # asked for by name: shown without findings


def test_a_page_of_an_older_snapshot_says_newer_ones_exist(output, tmp_path, capsys):
    """A backfill's or `--snapshot`'s page shows an older snapshot of a cluster: it says how
    many complete ones came after and which is the latest, and how to see it (it read as
    the cluster's state now). The latest page says nothing of the kind."""
    frames.add_second_cluster(output)  # c2's only snapshot is s1
    target = str(tmp_path / "s1.html")
    assert main(["report", "--output", output, "--snapshot", "s1", "--html", target]) == 0
    page = Path(target).read_text(encoding="utf-8")
    assert ("Newer complete snapshots than the one shown: cluster c1: 1, the latest s2. "
            in page)
    assert "cluster c2:" not in page
    assert "· 1 snapshot(s) of 2 cluster(s), run(s) run-1" in page  # the rows: one each
    assert f"<code>./spark-submit.sh report --output {output}</code>" in page
    assert main(["report", "--output", output]) == 0
    latest = Path(capsys.readouterr().out.strip().splitlines()[-1]).read_text(encoding="utf-8")
    assert "Newer complete snapshots" not in latest


def test_a_group_page_lists_the_runs_of_the_clusters_the_group_is_in(output, tmp_path):
    """g-c2 lives in cluster c2 only: its page said "1 snapshot(s) of 2 cluster(s)" and
    listed c1's run beside c2's (probe Z). The page of every group lists both."""
    frames.add_second_cluster(output)

    def header(*args: str) -> str:
        target = str(tmp_path / "page.html")
        assert main(["report", "--output", output, *args, "--html", target]) == 0
        return Path(target).read_text(encoding="utf-8").split("<h1>")[1].split("</table>")[0]

    one = header("--group", "g-c2")
    assert "· 1 snapshot(s) of 1 cluster(s), run(s) run-1; groups: g-c2" in one
    assert ">c2<" in one and ">c1<" not in one
    every = header()
    assert "· 2 snapshot(s) of 2 cluster(s), run(s) run-1" in every
    assert ">c1<" in every and ">c2<" in every


def test_top_one_details_one_group_and_the_findings_table_counts_them_all(output, capsys):
    assert main(["report", "--output", output, "--top", "1"]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
    assert len(titles_of(page)) == 1
    table = page.split('id="findings"')[1].split("</table>")[0]
    found = re.findall(r'<span class="finding">([A-Z_]+)</span></td><td>(\d+)</td>', table)
    # the three groups with findings of s2's complete run, each once; not g-old (s1) nor
    # the killed run's g-ghost
    assert found == [("CONTENDED_QUEUES", "1"), ("MULTI_TOPIC_SKEW", "1"), ("IDLE_CLIENTS", "1")]
    assert "4 group(s) shown" in page and 'href="#g1"' in table and "g-idle" in table


def test_the_command_a_group_without_a_card_is_given_renders_it_beside_the_page(output,
                                                                             capsys):
    """The findings table's command for a group below --top: run as printed, it wrote
    OUTPUT/report.html, replacing the page it was read from with one group's page."""
    import html
    import shlex

    assert main(["report", "--output", output, "--top", "1"]) == 0
    path = capsys.readouterr().out.strip()
    page = Path(path).read_text(encoding="utf-8")
    command = html.unescape(re.search(r"<code>(\S*spark-submit\.sh report .*?)</code>",
                                      page).group(1))
    program, *args = shlex.split(command)
    assert main(args) == 0
    card = capsys.readouterr().out.strip()
    assert Path(path).read_text(encoding="utf-8") == page  # the run's page left as it is
    assert card == os.path.join(output, "report-g-skew.html")
    assert titles(card) == [("g-skew", "s2")]
    assert program == "./spark-submit.sh"  # as README runs it, from the project folder


def test_without_what_if_and_drift_tables(tmp_path, capsys):
    out = frames.write_outputs(str(tmp_path / "bare"), with_drift=False, with_what_if=False)
    assert main(["report", "--output", out]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
    assert "What if" not in page and 'id="drift"' not in page


def test_no_output_tables_is_a_user_error(tmp_path, capsys):
    assert main(["report", "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no output tables" in err and str(tmp_path) in err
    assert not (tmp_path / "report.html").exists()


def test_a_root_whose_first_run_died_before_publishing_says_so(tmp_path, capsys):
    """Probe X: a first run killed after some table commits, before `runs`, left a root
    the page called "no output tables here ... point --output at the output root of an
    audit run": it is one."""
    out = frames.write_outputs(str(tmp_path / "died"))
    shutil.rmtree(Path(out) / "runs")
    assert main(["report", "--output", out]) == 2
    err = capsys.readouterr().err
    assert (f"{out}: an audit output without its 'runs' table (group_balance, "
            "consumer_load, rebalance_churn") in err
    assert ("the first run into it ended before publishing any snapshot (killed, or "
            "failed); run the audit again, and its snapshots are shown") in err


def test_unknown_snapshot_is_a_user_error(output, capsys):
    assert main(["report", "--output", output, "--snapshot", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_unknown_group_is_a_user_error(output, capsys):
    # the group filter of none of the shown snapshots' groups: a message, not pyarrow's
    # error about an empty value set's type
    assert main(["report", "--output", output, "--group", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no consumer group nope in snapshot(s)" in err and "Traceback" not in err
    assert not (Path(output) / "report.html").exists()


def test_an_unknown_group_is_told_where_it_went(output, capsys):
    """On-call names a group the page does not show: the message says whether another
    snapshot holds it, whether its input rows were rejected (by the shown run: not the
    killed one's), or which shown names are close; a killed run's group is in none."""
    from deltalake import write_deltalake

    member = '{"snapshot_id":"s2","consumer_group":"g-\\"gone\\"","strategy":"AVG "}'
    rejects = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "members",
         "row_json": member, "reason": "unknown strategy", "run_id": run}
        for run in (frames.RUN, frames.RUN, "dead")])
    write_deltalake(f"{output}/rejects", frames.to_arrow(rejects), mode="overwrite",
                    partition_by=["snapshot_id"])
    assert main(["report", "--output", output, "--group", "g-old", "--group", 'g-"gone"',
                 "--group", "g-skw", "--group", "g-ghost"]) == 2
    err = capsys.readouterr().err
    assert ('no consumer group g-"gone", g-ghost, g-old, g-skw in snapshot(s) s2. '
            'g-"gone": 2 members row(s) rejected there (unknown strategy); '
            "g-ghost: no audited snapshot holds it; "
            "g-old: audited in snapshot(s) s1 (show the latest with --snapshot s1); "
            "g-skw: no audited snapshot holds it; close names in the shown snapshot(s): "
            "g-skew, g-ok\n") in err
    assert "Traceback" not in err


def test_a_snapshot_whose_run_did_not_complete_is_said_not_shown(output, capsys):
    # a run of s3 killed after its group_balance commit: the page showed s2 as the
    # latest with no word of s3 (README: such snapshots are visible as incomplete)
    from deltalake import write_deltalake

    dead = pd.DataFrame([{**frames.balance_row("s3", "g-new", None, skew=5,
                                               findings=["MULTI_TOPIC_SKEW"]),
                          "run_id": "dead"}])
    write_deltalake(f"{output}/group_balance", frames.to_arrow(dead), mode="append",
                    partition_by=["snapshot_id"])
    assert main(["report", "--output", output]) == 0
    page = Path(capsys.readouterr().out.strip()).read_text(encoding="utf-8")
    assert {s for _, s in titles_of(page)} == {"s2"}
    assert ("Snapshot(s) s3: the output holds rows of a run of them that did not complete "
            "(killed, or still writing), and no complete run: not shown here") in page
    assert "<code>audit ... --snapshot s3</code>" in page


def test_a_group_named_in_another_case_gets_the_name_it_has(output, capsys):
    # "G-SKEW" for g-skew got no close name: difflib scores it low, and upper case
    # sorts it far from the name among many
    assert main(["report", "--output", output, "--group", "G-SKEW"]) == 2
    err = capsys.readouterr().err
    assert ("G-SKEW: no audited snapshot holds it; close names in the shown snapshot(s): "
            "g-skew") in err


def test_every_named_group_is_shown_and_an_unknown_one_named(output, tmp_path, capsys):
    # a typo among several names failed nowhere (the page showed the others), and named
    # groups beyond --top were dropped without a word
    target = str(tmp_path / "r.html")
    assert main(["report", "--output", output, "--group", "g-ok", "--group", "nope",
                 "--group", "g-skew", "--html", target]) == 2
    err = capsys.readouterr().err
    assert "no consumer group nope in snapshot(s) s2" in err and "g-ok" not in err
    assert not Path(target).exists()
    assert main(["report", "--output", output, "--group", "g-ok", "--group", "g-skew",
                 "--top", "1", "--html", target]) == 0
    assert sorted(titles(target)) == [("g-ok", "s2"), ("g-skew", "s2")]


def test_a_folder_as_html_or_no_top_is_a_user_error(output, tmp_path, capsys):
    # --html naming a folder was an IsADirectoryError traceback; --top 0 or -3 was taken
    folder = tmp_path / "pages"
    folder.mkdir()
    assert main(["report", "--output", output, "--html", str(folder)]) == 2
    assert f"--html {folder} is a folder" in capsys.readouterr().err
    assert list(folder.iterdir()) == []
    # a page inside a table's folder is lost to that table's VACUUM
    inside = Path(output) / "group_balance" / "snapshot_id=s2" / "r.html"
    assert main(["report", "--output", output, "--html", str(inside)]) == 2
    err = capsys.readouterr().err
    assert (f"--html {inside} lies in the Delta table at {Path(output) / 'group_balance'}: "
            "a VACUUM") in err and "Traceback" not in err
    assert not inside.exists()
    for top in ("0", "-3"):
        with pytest.raises(SystemExit) as exit_:
            main(["report", "--output", output, "--top", top])
        assert exit_.value.code == 2
        assert "is not a whole number of 1 or more" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--snapshot", "--group", "--html"])
def test_a_blank_snapshot_group_or_html_is_refused(output, capsys, flag):
    # it read as "no complete run of snapshot(s) " (or "no consumer group  in ..."); a
    # blank --html (an unset shell variable) wrote the default page silently
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--output", output, flag, ""])
    assert exit_.value.code == 2
    assert f"{flag}: must not be blank" in capsys.readouterr().err


def test_spark_submit_sh_routes_report_without_spark(output):
    env = {**os.environ, "REBALANCE_AUDIT_PYTHON": sys.executable,
           "SPARK_HOME": "/nonexistent", "JAVA_HOME": "/nonexistent"}
    done = subprocess.run(["bash", str(ROOT / "spark-submit.sh"), "report", "--output", output],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == os.path.join(output, "report.html")
    missing = subprocess.run(["bash", str(ROOT / "spark-submit.sh"), "report", "--output",
                              os.path.dirname(output) + "/none"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert missing.returncode == 2 and "no output tables" in missing.stderr


def test_the_tables_are_read_with_the_system_allocator_which_is_put_back(output, monkeypatch):
    """`write_report` reads through malloc, not Arrow's jemalloc pool (its per-thread
    arenas raised the driver's peak), and leaves the process's default pool as it was."""
    import pyarrow as pa

    from reports.html import data, write_report

    before = pa.default_memory_pool().backend_name
    seen: list[str] = []
    load = data.load

    def spying_load(*args, **kwargs):
        seen.append(pa.default_memory_pool().backend_name)
        return load(*args, **kwargs)

    monkeypatch.setattr(data, "load", spying_load)
    write_report(output)
    assert seen == ["system"]
    assert pa.default_memory_pool().backend_name == before


def test_a_page_left_half_written_by_a_killed_writer_is_removed(output):
    # a real process that is gone (its pid, reaped), and this live one's
    from reports.html import write_report

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = Path(output, f"report.html.tmp-{gone.pid}")
    live = Path(output, f"report.html.tmp-{os.getppid()}")
    for partial in (dead, live):
        partial.write_text("<html>half", encoding="utf-8")
    write_report(output)
    assert not dead.exists() and live.exists()
    assert Path(output, "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE")


def test_close_names_of_a_group_begin_with_the_names_it_begins() -> None:
    """`--group GID_app_001` named GID_app_0019, 0018 and 0017: difflib's picks among
    many equal scores, from the end of the range."""
    from reports.html.missing_groups import _close_names

    names = sorted([f"GID_app_{i:04d}" for i in range(30)] + ["GID_pop_orders"])
    assert _close_names(names, "GID_app_001") == ["GID_app_0010", "GID_app_0011",
                                                  "GID_app_0012"]
    assert _close_names(names, "gid_APP_0005") == ["GID_app_0005"]
    assert _close_names(names, "GID_nope") == ["GID_pop_orders"]
