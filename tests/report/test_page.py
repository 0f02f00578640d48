"""The HTML builder on small pandas frames: escaping, order, absent tables, empty output."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from reports.html.charts import topic_counts
from reports.html.data import ReportData, of_complete_runs
from reports.html.page import WARNINGS_SHOWN, render
from reports.html.run_warnings import RunWarnings
from reports.html.select import groups_needing_attention, severity
from tests.report import frames
from vocabulary.contracts import EXACT_DUPLICATE
from vocabulary.severity import SEVERITY_WEIGHTS


def data(**overrides) -> ReportData:
    runs = frames.runs()
    shown = runs[runs["snapshot_id"] == "s2"]
    balance = of_complete_runs(frames.group_balance(), runs)
    base = {"output": "/out/<root>", "runs": shown,
            "group_balance": balance[balance["snapshot_id"] == "s2"],
            "consumer_load": frames.consumer_load(), "churn": frames.churn(),
            "drift": frames.drift_counts(), "what_if": frames.what_if()}
    return ReportData(**{**base, **overrides})


def body(page: str) -> str:
    """The page without the inlined plotly.js (whose source holds '<script' literals)."""
    return page[page.index("</head>"):]


def test_user_strings_are_escaped_everywhere():
    page = body(render(data()))
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "<t2>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page  # HTML text
    assert "/out/&lt;root&gt;" in page
    assert len(re.findall(r"<script\b", page)) == len(re.findall(r"</script>", page))


def test_groups_worst_first_with_findings_only():
    page = body(render(data()))
    titles = re.findall(r"<h3>\d+\. c1 / (.*?) @ s2</h3>", page)
    assert titles == ["&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;", "g-skew",
                      "g-idle"]
    assert "g-ok" not in page.split('id="attention"')[1]


def test_severity_uses_the_named_weights():
    rows = pd.DataFrame([{"contended_queues": 1, "unconsumed_queues": 2, "skew": None,
                          "idle_clients": 3}])
    assert severity(rows).iloc[0] == (SEVERITY_WEIGHTS["contended_queues"]
                                      + 2 * SEVERITY_WEIGHTS["unconsumed_queues"]
                                      + 3 * SEVERITY_WEIGHTS["idle_clients"])


def test_latest_snapshot_of_each_group_is_ranked():
    balance = pd.DataFrame([frames.balance_row("s1", "g", None, skew=9, findings=["A"],
                                               captured_at=frames.T1),
                            frames.balance_row("s2", "g", None, skew=1, findings=["A"])])
    worst = groups_needing_attention(balance)
    assert worst["snapshot_id"].tolist() == ["s2"]


def test_what_if_table_highlights_current_and_recommended():
    page = body(render(data()))
    section = page.split("<h3>2. c1 / g-skew")[1].split("</section>")[0]
    assert "<h4>What if</h4>" in section
    assert '<tr class="current">' in section and '<tr class="recommended">' in section
    assert "recommended: the best candidate the group can run as it is" in section
    assert section.index('class="current"') < section.index("CONSISTENT_HASH")
    heads = re.findall(r"<th[^>]*>([^<]+)</th>", section.split("<h4>What if</h4>")[1])
    assert heads[:3] == ["candidate", "recommended", "is_current"]  # the verdict first
    assert "virtual_nodes" not in heads and "split_by_topic" not in heads  # in the name
    other = page.split("<h3>3. c1 / g-idle")[1].split("</section>")[0]
    assert "No what-if candidates for this group." in other


@pytest.mark.parametrize("what_if", [None, frames.what_if().iloc[0:0]])
def test_absent_what_if_and_drift_omit_their_sections(what_if):
    page = body(render(data(what_if=what_if, drift=None)))
    assert "What if" not in page and "what-if" not in page
    assert 'id="drift"' not in page
    assert 'href="#drift"' not in page


def test_drift_counts_per_group():
    page = body(render(data()))
    drift = page.split('id="drift"')[1]
    assert re.search(r"<td class=\"t\">g-skew</td><td>3</td><td>1</td><td>2</td>", drift)


def test_drift_of_several_snapshots_is_a_row_per_snapshot_not_a_sum():
    """g-skew's three drifting queues in s1 and in s2 read 6 drifting queues (it has 8)."""
    both = pd.concat([frames.drift_counts().assign(snapshot_id="s1"), frames.drift_counts()])
    drift = body(render(data(drift=both))).split('id="drift"')[1].split("<tbody>")[1]
    drift = drift.split("</table>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", drift)]
    assert rows == [[s, "c1", "g-skew", "3", "1", "2"] for s in ("s1", "s2")]


def test_empty_outputs_render_a_page_saying_so():
    empty = pd.DataFrame()
    page = render(data(group_balance=empty, consumer_load=empty, churn=empty, drift=None,
                       what_if=None))
    assert "No group has findings" in page
    assert "No group has a skew figure" in page
    assert "No churn rows" in page
    # two complete snapshots may have none (probe X): "a cluster needs two" alone was false
    assert "one audited before its predecessor has none until it is audited again" in page


def test_plotly_js_is_inlined_once_and_nothing_is_fetched():
    page = render(data())
    assert page.count("plotly.js v") == 1
    rest = page.split("</head>")[1]
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert "cdn.plot.ly" not in rest
    assert len(re.findall(r'class="plotly-graph-div"', rest)) == 5  # 3 groups, skew, churn


@pytest.mark.parametrize("value", [
    {"t1": 2, "t2": 1}, [("t1", 2), ("t2", 1)], [{"key": "t1", "value": 2},
                                                 {"key": "t2", "value": 1}],
])
def test_queues_by_topic_in_any_arrow_shape(value):
    assert topic_counts(value) == {"t1": 2, "t2": 1}
    assert topic_counts(None) == {}


def test_element_ids_are_unique():
    """plotly draws into getElementById(div_id): a heading with the same id steals it."""
    ids = re.findall(r'\sid="([^"]+)"', body(render(data())))
    assert len(ids) == len(set(ids))


def test_the_skew_histogram_carries_one_bar_per_skew_value():
    """The page holds the counts, not a value per group: its size does not grow with the
    number of groups."""
    import json

    counts = pd.Series({0: 120_000, 3: 7, 12: 1})
    page = body(render(data(skew_counts=counts)))
    chart = page.split('id="skew-chart"')[1].split("</script>")[0]
    trace = json.loads(re.search(r"Plotly\.newPlot\(\s*\"skew-chart\",\s*(\[.*?\]),\s*\{",
                                 chart, re.S).group(1))[0]
    assert (trace["type"], trace["x"], trace["y"]) == ("bar", [0, 3, 12], [120_000, 7, 1])
    assert trace["text"] == ["120,000", "7", "1"]  # a bar too low to see still says its count
    assert "120,008 group(s) by skew" in chart and "each at its latest shown snapshot" in chart


def test_rejected_input_rows_have_a_section_of_their_own():
    rejects = pd.DataFrame([{"snapshot_id": "s2", "cluster": "c1", "source_table": "members",
                             "reason": "strategy is not one of <AVG>", "rows": 7}])
    page = body(render(data(rejects=rejects)))
    section = page.split('id="rejects"')[1]
    assert "strategy is not one of &lt;AVG&gt;</td><td>7</td>" in section
    assert 'href="#rejects"' in page
    for none in (None, rejects.iloc[:0]):
        assert 'id="rejects"' not in body(render(data(rejects=none)))


def test_rejected_rows_name_their_groups_decoded_and_escaped():
    rejects = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "members", "reason": "r1",
         "rows": 9, "names": ['<g>\\"1', "g2", "g3", "g4"]},
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "queues", "reason": "r2",
         "rows": 1, "names": ["topic T"]},
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "x.txt", "reason": "r3",
         "rows": 1, "names": []}])
    section = body(render(data(rejects=rejects))).split('id="rejects"')[1]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r)[-1]
             for r in re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>")[1])]
    # the JSON escape \" decoded, then HTML-escaped
    assert cells == ["&lt;g&gt;&quot;1, g2, g3 and more", "topic T", "—"]


def test_the_shown_runs_warnings_are_listed_escaped_near_the_top():
    warnings = ["snapshot s9 is in none of the inputs",
                "observed has no rows for 1 of its member group(s) (<G&1>): their drift is "
                "not checked"]
    page = body(render(data(warnings=RunWarnings({"run-1": warnings}))))
    section = page.split('id="warnings"')[1].split("</h2>", 1)
    assert section[0].endswith("(2)")
    assert "<li>snapshot s9 is in none of the inputs</li>" in section[1]  # one run: no name
    assert "(&lt;G&amp;1&gt;)" in section[1] and "<G&1>" not in page
    assert 'href="#warnings"' in page
    assert page.index('id="warnings"') < page.index('id="skew"')
    for none in (RunWarnings(), RunWarnings({"run-1": []})):
        page = body(render(data(warnings=none)))
        assert 'id="warnings"' not in page and 'href="#warnings"' not in page
        assert "No record of the warnings" not in page
    many = [f"snapshot s{i} is in none of the inputs" for i in range(WARNINGS_SHOWN + 3)]
    page = body(render(data(warnings=RunWarnings({"run-1": many}))))
    assert page.count("<li>snapshot s") == WARNINGS_SHOWN
    assert f"({WARNINGS_SHOWN + 3})</h2>" in page and "3 more in the run's log" in page


def test_warnings_of_several_runs_name_their_run_and_unrecorded_runs_are_named():
    page = body(render(data(warnings=RunWarnings(
        {"run-a": ["snapshot s1 is in none of the inputs"], "run-b": ["lag is unknown"]},
        unrecorded=["run-old"]))))
    assert "<li>run run-a: snapshot s1 is in none of the inputs</li>" in page
    assert "<li>run run-b: lag is unknown</li>" in page
    assert "No record of the warnings of run(s) run-old" in page
    page = body(render(data(warnings=RunWarnings(unrecorded=["run-old"]))))
    assert 'id="warnings"' not in page and "No record of the warnings of run(s) run-old" in page


def test_a_run_whose_warnings_record_cannot_be_read_is_named_apart():
    """A damaged record is not "audited before runs kept them": the page says which."""
    page = body(render(data(warnings=RunWarnings(unreadable=["run-cut"]))))
    assert ("The record of the warnings of run(s) run-cut cannot be read (its file in "
            "_warnings/ under the output root is damaged or cut); their log has them") in page
    assert "No record" not in page


def test_what_later_runs_said_of_the_shown_snapshots_has_a_section_of_its_own():
    """A backfill's warning about the snapshot right after it, shown on that snapshot's
    page: named by run, escaped, linked, cut at WARNINGS_SHOWN."""
    said = "snapshot s2 (cluster c1): its churn compares with <s0> until it is audited again"
    page = body(render(data(warnings=RunWarnings({"run-1": []}, about_shown={"b": [said]}))))
    section = page.split('id="warnings-about"')[1].split("</h2>", 1)
    assert section[0].endswith("Warnings later runs gave about the shown snapshot(s) (1)")
    assert ("<li>run b: snapshot s2 (cluster c1): its churn compares with &lt;s0&gt; until it "
            "is audited again</li>") in section[1]
    assert 'href="#warnings-about"' in page and 'id="warnings"' not in page
    assert page.index('id="warnings-about"') < page.index('id="skew"')
    page = body(render(data()))
    assert 'warnings-about' not in page
    many = {"b": [f"snapshot s2: {i}" for i in range(WARNINGS_SHOWN + 2)]}
    page = body(render(data(warnings=RunWarnings(about_shown=many))))
    assert page.count("<li>run b: snapshot s2") == WARNINGS_SHOWN
    assert f"({WARNINGS_SHOWN + 2})</h2>" in page and "2 more in those runs' logs" in page


def test_the_skew_axis_reaches_five_and_counts_are_whole():
    """One balanced group was a block filling the axis with a tick at 0.5 groups."""
    from reports.html.charts import skew_histogram

    few = skew_histogram(pd.Series({0: 1})).layout
    assert list(few.xaxis.range) == [-0.5, 5.5] and few.yaxis.dtick == 1
    assert few.yaxis.tickformat == ",d"
    some = skew_histogram(pd.Series({0: 50, 3: 2})).layout
    assert some.yaxis.type is None and some.yaxis.dtick is None
    assert (some.yaxis.tickformat, some.yaxis.rangemode) == (",d", "tozero")
    # 120,000 balanced groups beside one skewed: a log axis, where a bar of 1 still shows
    many = skew_histogram(pd.Series({0: 120_000, 12: 1})).layout
    assert list(many.xaxis.range) == [-0.5, 12.5]
    assert (many.yaxis.type, many.yaxis.dtick, many.yaxis.range[0]) == ("log", 1, -0.2)
    # counts read across a few wide bars, upright over many narrow ones
    assert skew_histogram(pd.Series({0: 120_000, 12: 1})).data[0].textangle == 0
    assert skew_histogram(pd.Series({-30: 1, 0: 9})).data[0].textangle == -90
    # a group whose max load is under its pooled max (queues nobody consumes) stays seen
    below = skew_histogram(pd.Series({-2: 1, 0: 3})).layout
    assert list(below.xaxis.range) == [-2.5, 5.5]


def test_one_capture_time_charts_churn_by_snapshot_two_by_time():
    """A cluster's first churn row is one point: on a time axis it spanned a millisecond."""
    from reports.html.charts import churn_timeline

    one = churn_timeline(frames.churn()).layout
    assert (one.xaxis.type, one.xaxis.title.text) == ("category", "snapshot")
    assert one.showlegend is True  # the one cluster's name shows
    two = pd.concat([frames.churn(), frames.churn().assign(snapshot_id="s3",
                                                           captured_at=frames.T2
                                                           + pd.Timedelta(hours=1))])
    axis = churn_timeline(two).layout.xaxis
    assert (axis.type, axis.title.text) == ("date", "captured at")


def _findings_rows(page: str) -> dict[str, list[str]]:
    """The findings table: each finding's cells as text (tags stripped), by code."""
    table = page.split('id="findings"')[1].split("</table>")[0]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1]):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        rows[cells[0]] = cells[1:]
    return rows


def test_the_findings_overview_counts_every_shown_group_beyond_the_cards():
    # --top 1 details one group; the overview still counts and names the other two
    page = body(render(data(), top=1))
    rows = _findings_rows(page)
    assert list(rows) == ["CONTENDED_QUEUES", "MULTI_TOPIC_SKEW", "IDLE_CLIENTS"]
    assert {code: cells[:2] for code, cells in rows.items()} == {
        "CONTENDED_QUEUES": ["1", "25%"], "MULTI_TOPIC_SKEW": ["1", "25%"],
        "IDLE_CLIENTS": ["1", "25%"]}
    assert "4 group(s) shown" in page
    table = page.split('id="findings"')[1].split("</table>")[0]
    # the detailed group links to its card, the others are named without a link
    nasty = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"
    # a long name is cut with an ellipsis on the page (CSS), whole in its title
    assert f'<a class="name" title="{nasty}" href="#g1">{nasty}</a>' in table
    assert ('<span class="name" title="g-skew">g-skew</span>' in table
            and 'href="#g2"' not in table)
    assert "duplicate consumption" in rows["CONTENDED_QUEUES"][-1]
    assert '<a href="#findings">findings</a>' in page


def test_the_findings_overview_names_the_worst_few_counts_the_rest_and_each_cluster():
    from reports.html.select import EXAMPLES_PER_FINDING

    runs = pd.concat([frames.runs(), frames.runs(cluster="c2")])
    many = [{**frames.balance_row("s2", f"g{i:02d}", None, idle=i + 1,
                                  findings=["IDLE_CLIENTS"]), "cluster": f"c{1 + i % 2}"}
            for i in range(250)]
    healthy = [{**frames.balance_row("s2", f"ok{i}", None), "cluster": "c1"}
               for i in range(1, 251)]
    page = body(render(data(runs=runs[runs["snapshot_id"] == "s2"],
                            group_balance=pd.DataFrame(many + healthy)), top=2))
    rows = _findings_rows(page)
    assert list(rows) == ["IDLE_CLIENTS"]
    groups, share, clusters, worst = rows["IDLE_CLIENTS"][:4]
    assert (groups, share, clusters) == ("250", "50%", "c1 125, c2 125")
    # the most idle clients first; the two on cards are linked
    assert worst == f"g249 (c2), g248 (c1), g247 (c2) and {250 - EXAMPLES_PER_FINDING} more"
    table = page.split('id="findings"')[1].split("</table>")[0]
    assert table.count('href="#g') == 2


def test_a_finding_no_card_shows_gets_the_command_that_renders_its_group():
    """BROKER_UNSUPPORTED_STRATEGY weighs nothing in the severity: with one card, the idle
    group has it and the broker group is named without a link; the page says how to
    render the broker group's card (the finding no card shows, though it sorts last)."""
    from reports.html.page import findings_section
    from reports.html.select import findings_overview, groups_needing_attention

    rows = pd.DataFrame([
        frames.balance_row("s2", "g-idle", None, idle=2, findings=["IDLE_CLIENTS"]),
        frames.balance_row("s2", "g-idle2", None, idle=1, findings=["IDLE_CLIENTS"]),
        frames.balance_row("s2", "g broker's", None, findings=["BROKER_UNSUPPORTED_STRATEGY"]),
    ])
    page = body(render(data(group_balance=rows, output="/out/audit root"), top=1))
    assert list(_findings_rows(page)) == ["IDLE_CLIENTS", "BROKER_UNSUPPORTED_STRATEGY"]
    note = page.split('id="findings"')[1].split("</table></div>")[1].split("</p>")[0]
    assert note == (
        '<p class="muted">A group named without a link ranks below the 1 with a card '
        "(<code>report --top N</code> shows more); <code>./spark-submit.sh report --output "
        "&#x27;/out/audit root&#x27; --snapshot s2 --group &#x27;g broker&#x27;&quot;&#x27;&quot;"
        "&#x27;s&#x27; --html &#x27;/out/audit root/report-g_broker_s-7b22157a.html&#x27;</code> "
        "renders a page with its card.")
    # every named group on a card: no note
    assert "ranks below" not in body(render(data(group_balance=rows), top=3))
    # every finding on a card, one group left out: the command names that group
    two = rows.iloc[:2]
    overview = findings_overview(two)
    section = findings_section(overview, groups_needing_attention(two, 1), "/out")
    assert "--output /out --snapshot s2 --group g-idle2 --html /out/report-g-idle2.html</code>" \
        in section


def test_groups_whose_names_differ_only_in_odd_characters_get_pages_of_their_own():
    """`a/b` and `a b` were both report-a_b.html: the second group's page replaced the
    first's. A name that had to change ends in a digest of itself; a plain one is kept."""
    from reports.html.page import FILE_NAME_PART, _in_file_name

    odd = ["a/b", "a b", "a_b", "a:b", "x" * 300, "x" * 301, "ü", "é"]
    names = [_in_file_name(n) for n in odd]
    assert len(set(names)) == len(odd)
    assert names[2] == "a_b" and _in_file_name("g-skew.v2") == "g-skew.v2"
    assert all(len(n) <= FILE_NAME_PART and re.fullmatch(r"[A-Za-z0-9._-]+", n)
               for n in names)


def test_a_finding_of_one_group_among_many_is_not_rounded_to_none():
    healthy = [frames.balance_row("s2", f"ok{i}", None) for i in range(300)]
    lone = frames.balance_row("s2", "g-lone", None, findings=["LAG_SKEW"])
    rows = _findings_rows(body(render(data(group_balance=pd.DataFrame([*healthy, lone])))))
    assert rows["LAG_SKEW"][:2] == ["1", "&lt;1%"]


def test_no_findings_or_no_groups_leave_the_findings_table_out():
    quiet = pd.DataFrame([frames.balance_row("s2", "g-ok", None)])
    page = body(render(data(group_balance=quiet)))
    assert 'id="findings"' not in page and 'href="#findings"' not in page
    assert "No group has findings: every shown group is balanced." in page
    empty = body(render(data(group_balance=pd.DataFrame(), consumer_load=pd.DataFrame())))
    assert 'id="findings"' not in empty and 'href="#findings"' not in empty


def test_no_findings_with_rejected_members_rows_is_not_called_balanced():
    quiet = pd.DataFrame([frames.balance_row("s2", "g-ok", None)])
    rejects = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "members", "reason": "r1",
         "rows": 1200, "names": ["g-half"]},
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "members", "reason": "r2",
         "rows": 3, "names": ["g-gone"]},
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "queues", "reason": "r3",
         "rows": 5, "names": ["topic T"]}])
    page = body(render(data(group_balance=quiet, rejects=rejects)))
    assert "every shown group is balanced" not in page
    assert ("No group has findings in what was audited, but 1,203 members row(s) and 5 "
            'queues row(s) were rejected: the groups and topics <a href="#rejects">named '
            "below</a> were audited without them, or not at all.") in page
    page = body(render(data(group_balance=quiet, rejects=rejects.iloc[:2])))
    assert ("No group has findings in what was audited, but 1,203 members row(s) were "
            'rejected: the groups <a href="#rejects">named below</a> were audited without '
            "them, or not at all.") in page
    # queues rows rejected leave their topics short of queues: said too
    page = body(render(data(group_balance=quiet, rejects=rejects.iloc[2:])))
    assert "every shown group is balanced" not in page
    assert ("No group has findings in what was audited, but 5 queues row(s) were rejected: "
            'the groups and topics <a href="#rejects">named below</a> were audited without '
            "them, or not at all.") in page
    # an exact duplicate's first copy was audited: balanced
    duplicate = rejects.iloc[2:].assign(reason=EXACT_DUPLICATE)
    page = body(render(data(group_balance=quiet, rejects=duplicate)))
    assert "No group has findings: every shown group is balanced." in page


def test_a_group_page_says_the_rejects_of_other_groups_are_left_out():
    quiet = pd.DataFrame([frames.balance_row("s2", "g-ok", None)])
    rejects = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "source_table": "members", "reason": "r1",
         "rows": 2, "names": ["g-ok"]}])
    left_out = ("1,500 rejected row(s) of other groups and topics are not on this page of "
                "the named groups; the <code>rejects</code> table holds them")
    page = body(render(data(group_balance=quiet, rejects=rejects, groups=["g-ok"],
                            rejects_elsewhere=1500)))
    assert left_out in page and "r1" in page
    page = body(render(data(group_balance=quiet, rejects=rejects.iloc[:0], groups=["g-ok"],
                            rejects_elsewhere=1500)))
    assert '<h2 id="rejects">' in page and left_out in page
    page = body(render(data(group_balance=quiet, rejects=rejects.iloc[:0])))
    assert 'id="rejects"' not in page


def test_no_findings_with_groups_on_topics_without_queues_is_not_called_balanced():
    """The shown runs warned of groups that subscribe a topic with no readable queue: no
    finding names them, so the page must not call every group balanced."""
    quiet = pd.DataFrame([frames.balance_row("s2", "g-ok", None)])
    warned = RunWarnings({"run-1": [
        "snapshot s2 (cluster c1): 1 group(s) subscribe topic(s) with no readable queue, "
        "so nothing of those topics is assigned: G (T9); ..."]})
    page = body(render(data(group_balance=quiet, warnings=warned)))
    assert "every shown group is balanced" not in page
    assert ('No group has findings, but groups the <a href="#warnings">warnings</a> name '
            "subscribe topic(s) with no readable queue, so nothing of those topics is "
            "assigned.") in page
    rejects = pd.DataFrame([{"snapshot_id": "s2", "cluster": "c1", "source_table": "queues",
                             "reason": "r3", "rows": 5, "names": ["topic T"]}])
    page = body(render(data(group_balance=quiet, warnings=warned, rejects=rejects)))
    assert ("were audited without them, or not at all; and groups the <a href=\"#warnings"
            '">warnings</a> name subscribe topic(s) with no readable queue, so nothing of '
            "those topics is assigned.") in page
    # other warnings leave the page's words as they were
    other = RunWarnings({"run-1": ["snapshot s2 (cluster c1): lag is unknown for ..."]})
    page = body(render(data(group_balance=quiet, warnings=other)))
    assert "No group has findings: every shown group is balanced." in page


def test_every_finding_code_has_a_meaning():
    from vocabulary.findings import FINDING_MEANINGS, FINDINGS

    assert list(FINDING_MEANINGS) == FINDINGS
    assert all(text.endswith(".") for text in FINDING_MEANINGS.values())


def test_each_card_lists_its_groups_rebalances_newest_first_escaped():
    churn = pd.DataFrame([
        {"snapshot_id": s, "cluster": "c1", "consumer_group": "g-skew", "captured_at": t,
         "previous_snapshot_id": p, "clients_before": 4, "clients_after": after,
         "clients_joined": joined, "clients_left": left, "queues_moved": moved,
         "paused_queues": moved, "estimated_duplicates": dup, "triggers": triggers,
         "duplicates_known_moves": 2 if dup else 0}
        for s, p, t, after, joined, left, moved, dup, triggers in (
            ("s1", "<s0>", frames.T1, 5, 2, 1, 3, 1234.0, ["CLIENTS_CHANGED"]),
            ("s2", "s1", frames.T2, 5, 0, 0, 0, None, []))])
    page = body(render(data(group_churn=churn)))
    card = page.split("g-skew @ s2")[1].split("</section>")[0]
    table = card.split("<h4>Rebalances</h4>")[1].split("</table>")[0]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r)
             for r in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])]
    assert [c[0] for c in cells] == ["s1 → s2", "&lt;s0&gt; → s1"]
    assert [c[2] for c in cells] == ["4 → 5", "4 → 5 (+2 −1)"]
    assert cells[1][3:] == ["3", "3", "1,234 (2 of 3 moves known)", "CLIENTS_CHANGED"]
    assert cells[0][5:] == ["—", "—"]
    assert "the latest 2, each against the snapshot before it;" in card
    one = body(render(data(group_churn=churn.iloc[:1]))).split("g-skew @ s2")[1]
    assert "the latest, against the snapshot before it;" in one  # not "the latest 1"
    # a detailed group without churn rows says so; no churn table: no section at all
    idle = page.split("g-idle @ s2")[1].split("</section>")[0]
    assert "None recorded up to this snapshot" in idle
    assert "<h4>Rebalances</h4>" not in body(render(data()))


def test_table_cells_group_thousands_whatever_the_count_s_type():
    """A what-if row's 22773 duplicates read 22,773, as a column with a null (floats) did."""
    import numpy as np

    from reports.html.page import fmt

    assert [fmt(22773), fmt(np.int64(22773)), fmt(22773.0), fmt(np.int32(-1200))] == [
        "22,773", "22,773", "22,773", "-1,200"]
    assert [fmt(True), fmt(np.bool_(False)), fmt(None), fmt(float("nan"))] == [
        "yes", "no", "—", "—"]


def test_table_cells_show_times_to_the_second_in_utc():
    """runs' finished_at read '2026-12-06 20:47:05.882611+00:00' beside captured_at's
    '2026-11-01 08:00:00' in one table."""
    from datetime import UTC, datetime, timedelta, timezone

    import pandas as pd

    from reports.html.page import fmt

    at = datetime(2026, 12, 6, 20, 47, 5, 882611, tzinfo=UTC)
    assert [fmt(at), fmt(pd.Timestamp(at)), fmt(pd.Timestamp("2026-11-01 08:00:00")),
            fmt(at.astimezone(timezone(timedelta(hours=8)))), fmt(pd.NaT)] == [
        "2026-12-06 20:47:05", "2026-12-06 20:47:05", "2026-11-01 08:00:00",
        "2026-12-06 20:47:05", "—"]


def test_a_what_if_card_shows_today_s_count_and_the_fewest_clients_per_max_load():
    """5 clients, 64 queues: ranked by skew alone the card showed 32, 33, ..., 44 clients,
    all at max 2, and none of the strategies at today's 5 clients."""
    from math import ceil

    from reports.html.select import what_if_shown

    def row(candidate, clients, max_queues, moved, strategy="AVG", split=False,
            current=False, recommended=False):
        return {"candidate": candidate, "clients": clients, "strategy": strategy,
                "split_by_topic": split, "max_queues": max_queues, "skew": 0,
                "queues_moved": moved, "is_current": current, "recommended": recommended}

    sweep = [row(f"{n} clients, AVG", n, ceil(64 / n), 60 - n, recommended=n == 64)
             for n in range(1, 65) if n != 5]
    rows = pd.DataFrame([
        *sweep,
        row("5 clients, CONSISTENT_HASH", 5, 15, 47, "CONSISTENT_HASH"),
        row("split by topic", 6, 11, 30, split=True),
        row("5 clients, AVG", 5, 13, 10),
        row("today: 5 clients, AVG/AVG_BY_CIRCLE", 5, 13, 0, "AVG/AVG_BY_CIRCLE",
            current=True),
    ])
    shown = what_if_shown(rows, 10)
    assert shown["candidate"].tolist() == [
        "today: 5 clients, AVG/AVG_BY_CIRCLE", "64 clients, AVG",
        # the split by topic and today's count under other strategies, by max load
        "split by topic", "5 clients, AVG", "5 clients, CONSISTENT_HASH",
        # the fewest clients per max load, nearest 5 (of 2 and 8, 8): 4, 6, 3, 7, 8
        "3 clients, AVG", "4 clients, AVG", "6 clients, AVG", "7 clients, AVG",
        "8 clients, AVG"][:10]
    assert "9 clients, AVG" not in what_if_shown(rows, 40)["candidate"].tolist()[:30]
    assert len(what_if_shown(rows, 200)) == len(rows)  # every row, none twice
    # rows of several read batches share index labels
    assert len(what_if_shown(rows.set_axis([0] * len(rows)), 200)) == len(rows)
    assert what_if_shown(rows.iloc[0:0], 10).empty


def test_groups_past_top_are_said_to_have_no_card():
    # 5 groups with findings and --top 2: the heading said (2) and nothing else did
    rows = pd.DataFrame([frames.balance_row("s2", f"g{i}", None, idle=i + 1,
                                            findings=["IDLE_CLIENTS"]) for i in range(5)]
                        + [frames.balance_row("s2", "g-ok", None)])
    page = body(render(data(group_balance=rows), top=2))
    assert "Groups needing attention (2), worst first" in page
    assert ("3 more group(s) with findings have no card: the page shows the 2 worst "
            "(<code>report --top N</code> shows more); the findings table above counts "
            "them all.") in page
    assert "have no card" not in body(render(data(group_balance=rows), top=5))


def test_a_group_of_many_topics_and_clients_stays_readable_and_says_what_it_leaves_out():
    # 500 topics listed every row and stacked 500 legend entries; 2,000 clients drew
    # 2,000 bars, a label for one in 25, with no word of either
    from reports.html.charts import CHART_CLIENTS, CHART_TOPICS, client_load_figure

    whole = frames.balance_row("s2", "g-big", None, findings=["IDLE_CLIENTS"], idle=1900)
    topics = [frames.balance_row("s2", "g-big", f"t{i:03}", max_q=1 + i % 7)
              for i in range(80)]
    load = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "captured_at": frames.T2,
         "consumer_group": "g-big", "client_id": f"c{i:04}", "queues": 80 if i < 2 else 0,
         "queues_by_topic": [(f"t{t:03}", 1) for t in range(80)] if i < 2 else [],
         "lag": None, "idle": i >= 2, "run_id": frames.RUN} for i in range(2000)])
    page = body(render(data(group_balance=pd.DataFrame([whole, *topics]),
                            consumer_load=load), top=5))
    section = page[page.index("g-big @ s2"):]
    assert section.count('<td class="t">t0') == 50
    assert ("30 more topic(s) of 80 not listed: these are the 50 with the most queues per "
            "client; group_balance has a row for each.") in section
    assert (f"The chart draws the {CHART_CLIENTS} clients with the most queues of 2,000; the "
            "consumer_load table has every client.") in section
    fig = client_load_figure(load, "t")
    assert len(fig.data) == CHART_TOPICS and fig.data[-1].name == "other topics (61)"
    assert len(fig.data[0].x) == CHART_CLIENTS and {"c0000", "c0001"} <= set(fig.data[0].x)
    assert sum(sum(bar.y) for bar in fig.data) == 160  # every queue of the drawn clients


def test_groups_without_any_known_lag_are_said_why():
    # a run without --offsets: dashes for every lag and duplicate estimate, no word why
    note = "No lag is known for the groups below"
    assert note not in body(render(data()))  # some client's lag is known
    unknown = frames.consumer_load().assign(lag=None)
    page = body(render(data(consumer_load=unknown)))
    assert (f"{note}, so they have no lag figures and their duplicate estimates are dashes: "
            "those need committed offsets (<code>audit --offsets</code>, which <code>capture"
            "</code> writes) and queues' max offsets.") in page


def test_the_largest_rebalances_are_named_whatever_the_groups_findings():
    """A group without findings has no card: its rebalance was only an unnamed point on
    the churn timeline, though the console summary named it."""
    top = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "consumer_group": g, "captured_at": frames.T2,
         "previous_snapshot_id": "s1", "clients_before": 2, "clients_after": 3,
         "clients_joined": 1, "clients_left": 0, "queues_moved": moved,
         "paused_queues": moved, "estimated_duplicates": dup, "duplicates_known_moves": moved,
         "triggers": ["CLIENTS_CHANGED"]}
        for g, moved, dup in (("payments-<sticky>", 2, 100.0), ("g-ok", 1, None))])
    page = body(render(data(top_rebalances=top)))
    section = page.split('<h2 id="rebalances">')[1].split("</table>")[0]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r)
             for r in re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>")[1])]
    assert cells[0] == ["c1", "payments-&lt;sticky&gt;", "s1 → s2", "2 → 3 (+1 −0)", "2", "2",
                        "100", "CLIENTS_CHANGED"]
    assert cells[1][1] == "g-ok" and cells[1][6] == "—"
    assert '<a href="#rebalances">' in page
    # none moved, or no churn table: no section
    assert 'id="rebalances"' not in body(render(data(top_rebalances=top.iloc[:0])))
    assert 'id="rebalances"' not in body(render(data()))


def test_a_page_of_named_groups_is_not_headed_as_needing_attention():
    page = body(render(data(groups=["g-skew"])))
    assert "Groups asked for (" in page and "Groups needing attention" not in page


def test_count_axes_tick_whole_numbers_without_milli_prefixes():
    """A client of 1 queue and lag 2: the axes read 0.2 … 0.8 queues and 200m … 800m
    messages (".3~s": milli-messages, read as millions)."""
    from reports.html.charts import churn_timeline, client_load_figure

    load = pd.DataFrame([
        {"snapshot_id": "s2", "cluster": "c1", "captured_at": frames.T2,
         "consumer_group": "g", "client_id": c, "queues": n,
         "queues_by_topic": [("t", n)] if n else [], "lag": lag, "idle": not n,
         "run_id": frames.RUN} for c, n, lag in (("a", 1, 2), ("b", 0, 0))])
    small = client_load_figure(load, "t").layout
    for axis in (small.yaxis, small.yaxis2):
        assert (axis.tickmode, axis.tick0, axis.dtick, axis.tickformat) == (
            "linear", 0, 1, ",d")
    big = client_load_figure(load.assign(queues=[400, 0], queues_by_topic=[[("t", 400)], []],
                                         lag=[2_500_000, 0]), "t").layout
    assert (big.yaxis.tickmode, big.yaxis.tickformat) == ("auto", ",d")
    assert (big.yaxis2.tickformat, big.yaxis2.range) == (".3~s", (0, 2_750_000.0))
    assert churn_timeline(frames.churn()).layout.yaxis.tickformat == ",d"


def test_a_cards_figures_read_name_then_figure():
    page = body(render(data()))
    assert ("clients 4 · queues 8 · max queues 5 · pooled max 2 · skew 3 · idle clients 0 · "
            "unconsumed queues 0 · contended queues 0 · severity") in page
