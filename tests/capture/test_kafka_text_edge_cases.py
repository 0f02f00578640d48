"""kafka-consumer-groups.sh output that is cut, laid out unusually or contradicts itself:
each line is read as the tool printed it or becomes a `rejects` row, never half-read."""

from __future__ import annotations

import functools
import itertools
import re
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from capture.errors import CaptureError
from capture.importers import import_files

DATA = Path(__file__).parent.parent / "data" / "capture"
AT = datetime(2026, 11, 23, 10, 16, tzinfo=UTC)
M1 = "consumer-1-0f6f6c7e-2b1a-4a8e-9a57-3d3c1b2a9e01"
M2 = "consumer-2-7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e02"
OFFSETS_COLUMNS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                   "CONSUMER-ID", "HOST", "CLIENT-ID")


def offsets_line(*values: object) -> str:
    """A line as ConsumerGroupCommand prints the offsets layout (widths of the fixtures):
    `%-15s %-15s %-10s %-15s %-15s %-15s %-47s %-15s %s`."""
    widths = (15, 15, 10, 15, 15, 15, 47, 15)
    padded = [f"{v!s:<{w}}" for v, w in zip(values, widths, strict=False)]
    return " ".join([*padded, *map(str, values[len(widths):])]).rstrip()


HEADER = offsets_line(*OFFSETS_COLUMNS)
ROW0 = offsets_line("g1", "orders", 0, 100, 120, 20, M1, "/10.0.0.11", "consumer-1")
ROW1 = offsets_line("g1", "orders", 1, 95, 110, 15, M2, "/10.0.0.12", "consumer-2")


def write(tmp_path: Path, name: str, *lines: str) -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run(*paths: str):
    return import_files(list(paths), cluster="c1", snapshot_id="s1", captured_at=AT)


def frame(snap, table: str) -> pd.DataFrame:
    return snap.table(table).to_pandas()


def queues(snap) -> dict:
    q = frame(snap, "queues")
    return {(r.topic, r.queue_id): (None if pd.isna(r.max_offset) else r.max_offset)
            for r in q.itertuples()}


def committed(snap) -> dict:
    o = frame(snap, "offsets")
    return {(r.consumer_group, r.topic, r.queue_id): r.committed_offset for r in o.itertuples()}


def observed(snap) -> dict:
    o = frame(snap, "observed")
    return {(r.topic, r.queue_id): r.client_id for r in o.itertuples()}


def members(snap) -> set:
    m = frame(snap, "members")
    return set(zip(m.client_id, m.client_host, m.client_name, strict=True))


def rejects(snap) -> list[tuple[int, str, str]]:
    r = frame(snap, "rejects").sort_values("line")
    return list(zip(r.line, r.reason, r.raw, strict=True))


# 1. a line cut short: Kafka prints `-` for a missing value, so a blank column is a cut
@pytest.mark.parametrize(("last", "column"), [
    (ROW1[:ROW1.index("110") + 1], "LAG"),  # cut inside LOG-END-OFFSET
    (ROW1[:ROW1.index(M2) + 15], "HOST"),  # cut inside CONSUMER-ID
    ("g1  orders  1  95  1", "LAG"),  # not laid out under the header: split at whitespace
])
def test_a_line_cut_short_is_rejected_naming_the_column(tmp_path, last, column):
    snap = run(write(tmp_path, "offsets.txt", HEADER, ROW0, last))
    assert queues(snap) == {("orders", 0): 120}
    assert committed(snap) == {("g1", "orders", 0): 100}
    assert members(snap) == {(M1, "10.0.0.11", "consumer-1")}
    [(line, reason, raw)] = rejects(snap)
    assert line == 3 and raw == last
    assert f"line ends before column {column}" in reason


# 2. a blank GROUP-INSTANCE-ID (dynamic member beside a static one), read by position
STATIC = ["GROUP           CONSUMER-ID                                     GROUP-INSTANCE-ID "
          "HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT",
          f"orders-range    {M1}                   /10.0.0.11      consumer-1      3          "
          "     orders(0,1), payments(0)",
          "orders-range    inst-b-7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e02     inst-b            "
          "/10.0.0.12      consumer-2      2               orders(2), payments(1)"]
INST_B = "inst-b-7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e02"


def test_a_blank_group_instance_id_keeps_the_columns_in_place(tmp_path):
    snap = run(write(tmp_path, "members.txt", *STATIC))
    assert rejects(snap) == []
    assert observed(snap) == {("orders", 0): M1, ("orders", 1): M1, ("payments", 0): M1,
                              ("orders", 2): INST_B, ("payments", 1): INST_B}
    assert members(snap) == {(M1, "10.0.0.11", "consumer-1"),
                             (INST_B, "10.0.0.12", "consumer-2")}


def test_a_blank_group_instance_id_lost_with_the_spacing_is_said_not_misread(tmp_path):
    """STATIC's lines with spaces collapsed: the dynamic member's blank
    GROUP-INSTANCE-ID is gone. With a client.id of two words the count of words still
    matched, and `/10.0.0.11` was read as its instance id, `x` as its host, `1` as its
    client.id; with a client.id of one word and one partition the reason said only that the
    line was cut."""
    collapsed = [" ".join(line.split()) for line in STATIC]
    spaced = collapsed[1].replace(" consumer-1 ", " x 1 ")
    one_word = f"orders-range {M1} /10.0.0.11 consumer-1 1 orders(0)"
    snap = run(write(tmp_path, "members.txt", collapsed[0], spaced, one_word, collapsed[2]))
    assert [(line, reason) for line, reason, _ in rejects(snap)] == [
        (2, "unreadable members row: GROUP-INSTANCE-ID reads /10.0.0.11 and HOST x: the tool "
            "prints the host as /address, so a blank GROUP-INSTANCE-ID was lost with the "
            "spacing (tabs, spaces collapsed by a copy) and the columns after it moved; save "
            "the tool's output as it prints it"),
        (3, "unreadable members row: line ends before column ASSIGNMENT (6 of 7 values); or "
            "its blank GROUP-INSTANCE-ID was lost with the spacing (tabs, spaces collapsed by "
            "a copy): save the tool's output as it prints it")]
    assert members(snap) == set()  # the group is not written without those two members


def test_lines_not_laid_out_under_the_header_are_split_at_whitespace(tmp_path):
    # rows with tabs under a space-padded header, and an offset wider than its 15-character
    # column (the tool then shifts the rest of the line): both read by whitespace
    tabs = "\t".join(["g1", "orders", "0", "100", "120", "20", M1, "/10.0.0.11", "consumer-1"])
    wide = offsets_line("g1", "orders", 1, 1234567890123456, 1234567890123460, 4, M2,
                        "/10.0.0.12", "consumer-2")
    snap = run(write(tmp_path, "offsets.txt", HEADER, tabs, wide))
    assert rejects(snap) == []
    assert queues(snap) == {("orders", 0): 120, ("orders", 1): 1234567890123460}
    assert committed(snap) == {("g1", "orders", 0): 100, ("g1", "orders", 1): 1234567890123456}
    assert observed(snap) == {("orders", 0): M1, ("orders", 1): M2}


def test_a_file_all_in_tabs_reads_as_the_tool_prints_it(tmp_path):
    """The output pasted through a spreadsheet: the header is tab-separated too."""
    lines = [HEADER, ROW0, ROW1]
    tabs = ["\t".join(line.split()) for line in lines]
    padded, tabbed = run(write(tmp_path, "a.txt", *lines)), run(write(tmp_path, "b.txt", *tabs))
    assert rejects(tabbed) == []
    for read in (queues, committed, observed, members):
        assert read(tabbed) == read(padded)


# 3. a rejected row changes nothing (it created its member before)
def test_a_rejected_row_creates_no_member(tmp_path):
    snap = run(str(DATA / "kcg_members_3.7_damaged.txt"))
    assert [line for line, _, _ in rejects(snap)] == [2, 6, 7]
    # consumer-3's and consumer-4's lines are rejects: not members, and their group is not
    # written without them (`test_a_group_with_an_unread_member_line_is_written_whole_or_not`)
    assert frame(snap, "members").empty
    bad = offsets_line("g1", "orders", "two", 1, 2, 1, "consumer-9-x", "/10.0.0.19",
                       "consumer-9")
    snap = run(write(tmp_path, "offsets.txt", HEADER, ROW0, bad))
    assert members(snap) == {(M1, "10.0.0.11", "consumer-1")}
    [(line, reason, _)] = rejects(snap)
    assert line == 3 and "PARTITION 'two' is not a whole number" in reason


# 4. CLIENT-ID not the last column (reordered, or a column after it)
def test_columns_reordered_or_added_are_read_by_the_header(tmp_path):
    plain = run(str(DATA / "kcg_offsets.txt"))
    rows = [("orders-range", "orders", 0, 100, 120, 20, M1, "/10.0.0.11", "consumer-1"),
            ("orders-range", "orders", 1, 95, 110, 15, M1, "/10.0.0.11", "consumer-1"),
            ("orders-range", "orders", 2, 130, 130, 0, M2, "/10.0.0.12", "consumer-2"),
            ("orders-range", "payments", 0, 7, 9, 2, M1, "/10.0.0.11", "consumer-1"),
            ("orders-range", "payments", 1, 12, 12, 0, M2, "/10.0.0.12", "consumer-2")]
    order = (0, 1, 2, 6, 7, 8, 3, 4, 5)
    widths = (15, 15, 10, 47, 15, 15, 15, 15)

    def line(values):
        return " ".join(f"{v!s:<{w}}" for v, w in zip(values, (*widths, 0), strict=True))

    reordered = [line([OFFSETS_COLUMNS[i] for i in order]),
                 *(line([r[i] for i in order]) for r in rows)]
    extra = [HEADER + "  EXTRA-COL", *(offsets_line(*r) + "  x" for r in rows)]
    for name, lines in (("reordered.txt", reordered), ("extra.txt", extra)):
        snap = run(write(tmp_path, name, *lines))
        assert rejects(snap) == [], name
        for table in ("queues", "offsets", "observed", "members"):
            assert frame(snap, table).equals(frame(plain, table)), (name, table)
    # a line that fits neither the positions nor the column count says so
    short = "\t".join(["orders-range", "orders", "0", "100", "120", "20", M1, "/10.0.0.11"])
    snap = run(write(tmp_path, "extra_cut.txt", extra[0], short))
    [(line_no, reason, _)] = rejects(snap)
    assert line_no == 2 and "line ends before column CLIENT-ID (8 of 10 values)" in reason


# 5. --state: ASSIGNMENT-STRATEGY blank (Kafka up to 3.x) or `-` (4.0+) without members
@pytest.mark.parametrize("blank", ["", "-"])
def test_state_of_an_empty_group_without_strategy(tmp_path, blank):
    state = write(tmp_path, "state.txt",
                  "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           "
                  "#MEMBERS",
                  "orders-range    localhost:9092 (1)        roundrobin           Stable          "
                  "2",
                  f"idle-group      localhost:9092 (1)        {blank:<20} Empty           0",
                  f"busy-group      localhost:9092 (1)        {blank:<20} Stable          1",
                  "cut-group       localhost:9092 (1)        range                Sta")
    members_file = str(DATA / "kcg_members_3.7.txt")
    snap = run(members_file, state)
    assert set(frame(snap, "members").strategy) == {"roundrobin"}
    [(line, reason, _)] = rejects(snap)
    assert line == 5 and "#MEMBERS 'Sta' is not a whole number" in reason
    no_strategy = [w for w in snap.warnings if "shows no assignment strategy" in w]
    assert no_strategy == [f"{state} line 4: group busy-group (Stable) shows no assignment "
                           "strategy"]


def test_state_verbose_layout(tmp_path):
    header = ("GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE         "
              "       GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH   #MEMBERS")
    state = write(tmp_path, "state.txt", header,
                  "orders-range    localhost:9092  (1)       sticky               Stable        "
                  "       -               -                         2")
    snap = run(str(DATA / "kcg_members_3.7.txt"), state)
    assert rejects(snap) == []
    assert set(frame(snap, "members").strategy) == {"sticky"}
    # a blank strategy is not filled with the next column (it was read as "Stable")
    state = write(tmp_path, "state.txt", header,
                  "orders-range    localhost:9092  (1)                            Stable        "
                  "       5               5                         2")
    snap = run(str(DATA / "kcg_members_3.7.txt"), state)
    assert rejects(snap) == []
    assert set(frame(snap, "members").strategy) == {"range"}  # the default, said
    assert f"{state} line 2: group orders-range (Stable) shows no assignment strategy" in (
        snap.warnings)


# 6. the same partition read twice with different offsets: the larger, whatever the order
def test_conflicting_duplicates_keep_the_larger_whatever_the_order(tmp_path):
    a = write(tmp_path, "a.txt", HEADER, ROW0)
    b = write(tmp_path, "b.txt", HEADER, offsets_line("g1", "orders", 0, 110, 118, 8, M1,
                                                      "/10.0.0.11", "consumer-1"))
    ab, ba = run(a, b), run(b, a)
    for snap in (ab, ba):
        assert queues(snap) == {("orders", 0): 120}
        assert committed(snap) == {("g1", "orders", 0): 110}
        assert rejects(snap) == []
        assert [w for w in snap.warnings if "read as" in w] == [
            f"group g1 topic orders partition 0: CURRENT-OFFSET read as 100 ({a} line 2) and "
            f"110 ({b} line 2); the larger, 110, is kept",
            f"group g1 topic orders partition 0: LOG-END-OFFSET read as 118 ({b} line 2) and "
            f"120 ({a} line 2); the larger, 120, is kept"]
    for table in ("queues", "offsets", "observed", "members"):
        assert frame(ab, table).equals(frame(ba, table)), table
    # an identical repeat (one file given twice) is silent
    same = run(a, a)
    assert not [w for w in same.warnings if "read as" in w]
    assert queues(same) == {("orders", 0): 120}


def test_a_partition_read_three_times_is_one_warning_whatever_the_order(tmp_path):
    """Each value once, where it was first read by file name, in any order of the files."""
    line = functools.partial(offsets_line, "g1", "orders", 0)
    a = write(tmp_path, "a.txt", HEADER, line(100, 120, 20, M1, "/10.0.0.11", "consumer-1"))
    b = write(tmp_path, "b.txt", HEADER, line(110, 120, 10, M1, "/10.0.0.11", "consumer-1"))
    c = write(tmp_path, "c.txt", HEADER, line(100, 120, 20, M1, "/10.0.0.11", "consumer-1"))
    d = write(tmp_path, "d.txt", HEADER, line(105, 120, 15, M1, "/10.0.0.11", "consumer-1"))
    said = {tuple(w for w in run(*order).warnings if "read as" in w)
            for order in itertools.permutations([a, b, c, d])}
    assert said == {(f"group g1 topic orders partition 0: CURRENT-OFFSET read as 100 ({a} "
                     f"line 2), 105 ({d} line 2) and 110 ({b} line 2); the largest, 110, is "
                     "kept",)}


# 7. numbers the tables cannot hold are rejects of their line
def test_numbers_beyond_the_columns_are_rejects(tmp_path):
    huge = offsets_line("g1", "orders", 1, 12, 99999999999999999999, 0, M2, "/10.0.0.12",
                        "consumer-2")
    big_partition = offsets_line("g1", "orders", 3000000000, 12, 12, 0, M2, "/10.0.0.12",
                                 "consumer-2")
    negative = offsets_line("g1", "orders", 2, -5, 12, 17, M2, "/10.0.0.12", "consumer-2")
    snap = run(write(tmp_path, "offsets.txt", HEADER, ROW0, huge, big_partition, negative))
    assert queues(snap) == {("orders", 0): 120}
    assert members(snap) == {(M1, "10.0.0.11", "consumer-1")}
    assert [(line, reason) for line, reason, _ in rejects(snap)] == [
        (3, "unreadable offsets row: LOG-END-OFFSET 99999999999999999999 is beyond a 64-bit "
            "integer"),
        (4, "unreadable offsets row: PARTITION 3000000000 is beyond a 32-bit integer"),
        (5, "unreadable offsets row: negative CURRENT-OFFSET -5")]
    members_file = write(tmp_path, "members.txt",
                         "GROUP           CONSUMER-ID                                     HOST  "
                         "          CLIENT-ID       #PARTITIONS     ASSIGNMENT",
                         f"g1              {M1} /10.0.0.11      consumer-1      1               "
                         "orders(3000000000)")
    snap = run(members_file)
    [(line, reason, _)] = rejects(snap)
    assert line == 2 and "partition 3000000000 is beyond a 32-bit integer" in reason
    assert frame(snap, "members").empty


# a file holding more than one reading, or laid out as pasted
MEMBERS_HEADER = ("GROUP           CONSUMER-ID                                     HOST            "
                  "CLIENT-ID       #PARTITIONS     ASSIGNMENT")


def test_a_partition_two_files_give_two_holders_is_one_observed_row(tmp_path):
    """--offsets and --members taken either side of a rebalance: a Kafka partition has
    one owner per generation, yet both were written to observed, which the audit reads
    as a partition held twice. The smaller id is written, whatever the file order."""
    offsets = write(tmp_path, "offsets.txt", HEADER, ROW0, ROW1)
    moved = write(tmp_path, "members.txt", MEMBERS_HEADER,
                  f"g1              {M2} /10.0.0.12      consumer-2      2               "
                  "orders(0,1)")
    for files in ((offsets, moved), (moved, offsets)):
        snap = run(*files)
        assert len(frame(snap, "observed")) == 2
        assert observed(snap) == {("orders", 0): M1, ("orders", 1): M2}
        assert [w for w in snap.warnings if "different readings" in w] == [
            f"group g1: partition orders-0 is held by {M1} and {M2} in different readings "
            f"(a rebalance between them?); {M1} is written to observed"]


def test_state_files_naming_two_assignors_are_a_warning_whatever_the_order(tmp_path):
    state = (DATA / "kcg_state.txt").read_text()
    range_file = write(tmp_path, "state1.txt", state)
    rr_file = write(tmp_path, "state2.txt", state.replace("range                Stable",
                                                          "roundrobin           Stable"))
    offsets = str(DATA / "kcg_offsets.txt")
    for files in ((offsets, range_file, rr_file), (offsets, rr_file, range_file)):
        snap = run(*files)
        assert set(frame(snap, "members")["strategy"]) == {"range"}
        assert ("group orders-range: the --state files name the assignors range and "
                "roundrobin (captures on either side of a change?); members written with "
                "range, the first by name") in snap.warnings


def test_an_output_opening_with_a_bracketed_log_line_is_text_not_json(tmp_path):
    """log4j's `[time] WARN ...` line, saved with the rows by `2>&1`, opens the file with a
    bracket: the file was refused as JSON that does not parse (exit 2)."""
    log = ("[2026-11-23 10:15:40,123] WARN [AdminClient clientId=adminclient-1] Connection "
           "to node -1 (localhost/127.0.0.1:9092) could not be established.")
    snap = run(write(tmp_path, "offsets.txt", log, "", HEADER, ROW0, ROW1))
    assert observed(snap) == {("orders", 0): M1, ("orders", 1): M2}
    assert rejects(snap) == [(1, "row before any kafka-consumer-groups header", log)]


def test_an_indented_output_reads_as_the_tool_printed_it(tmp_path):
    """A block pasted indented (from a wiki or a chat): the header was not recognised, and
    every line became a reject."""
    plain = run(write(tmp_path, "plain.txt", HEADER, ROW0, ROW1))
    indented = run(write(tmp_path, "offsets.txt", *(f"    {line}" for line in
                                                    (HEADER, ROW0, ROW1))))
    assert rejects(indented) == []
    for table in ("queues", "members", "offsets", "observed"):
        assert frame(indented, table).equals(frame(plain, table)), table


# a client.id holding a space: the member id is `<client.id>-<uuid>`, so two columns do
def printed(header: tuple[str, ...], *rows: tuple, fixed: dict[str, int] | None = None,
            least: dict[str, int] | None = None) -> list[str]:
    """Lines as ConsumerGroupCommand prints them: each column but the last left-aligned to
    its fixed width or to its longest value (at least 15, or `least`), then one space."""
    fixed, least = fixed or {}, least or {}
    widths = [fixed.get(name) or max(least.get(name, 15), *(len(str(r[i])) for r in rows))
              for i, name in enumerate(header[:-1])]
    return [" ".join([*(f"{v!s:<{w}}" for v, w in zip(line, widths, strict=False)),
                      str(line[-1])]).rstrip() for line in (header, *rows)]


SPACED = "order service-1-0f6f6c7e-2b1a-4a8e-9a57-3d3c1b2a9e01"
OFFSETS_FIXED = {"PARTITION": 10, "CURRENT-OFFSET": 15, "LOG-END-OFFSET": 15, "LAG": 15}
MEMBERS_COLUMNS = ("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID",
                   "#PARTITIONS", "ASSIGNMENT")


def test_a_value_holding_a_space_is_read_where_the_tool_printed_it(tmp_path):
    """The line was split at whitespace: CONSUMER-ID 'order', HOST 'service-1-...' and
    CLIENT-ID '/10.0.0.11      order service-1' were written without a reject."""
    offsets = write(tmp_path, "offsets.txt", *printed(
        OFFSETS_COLUMNS,
        ("g1", "orders", 0, 100, 120, 20, SPACED, "/10.0.0.11", "order service-1"),
        # a 17-digit offset overflows its column and shifts the rest of the line
        ("g1", "orders", 1, 12345678901234567, 12345678901234568, 1, SPACED, "/10.0.0.11",
         "order service-1"),
        ("g1", "orders", 2, 5, 9, 4, INST_B, "/10.0.0.12", "consumer-2"),
        fixed=OFFSETS_FIXED))
    members_file = write(tmp_path, "members.txt", *printed(
        MEMBERS_COLUMNS,
        ("g1", SPACED, "", "/10.0.0.11", "order service-1", 2, "orders(0,1)"),
        ("g1", INST_B, "inst-b", "/10.0.0.12", "consumer-2", 1, "orders(2)"),
        fixed={"#PARTITIONS": 15}, least={"GROUP-INSTANCE-ID": 17}))
    for files in ((offsets,), (members_file,), (offsets, members_file)):
        snap = run(*files)
        assert rejects(snap) == [], files
        assert members(snap) == {(SPACED, "10.0.0.11", "order service-1"),
                                 (INST_B, "10.0.0.12", "consumer-2")}, files
        assert observed(snap) == {("orders", 0): SPACED, ("orders", 1): SPACED,
                                  ("orders", 2): INST_B}, files
    assert committed(run(offsets))[("g1", "orders", 1)] == 12345678901234567


def test_a_value_holding_a_space_off_the_header_columns_is_rejected(tmp_path):
    """Spaces collapsed by a copy: the words cannot be placed, so the line is a reject
    saying why, and nothing of it is written."""
    offsets = write(tmp_path, "offsets.txt", HEADER, ROW0,
                    f"g1 orders 1 95 110 15 {SPACED} /10.0.0.11 order service-1")
    snap = run(offsets)
    assert members(snap) == {(M1, "10.0.0.11", "consumer-1")}
    assert queues(snap) == {("orders", 0): 120}
    [(line, reason, _)] = rejects(snap)
    assert line == 3 and reason == (
        "unreadable offsets row: 11 words for the 9 columns GROUP TOPIC PARTITION "
        "CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID: the line is not laid "
        "out under the header, so a value holding a space cannot be told from two values")
    members_file = write(tmp_path, "members.txt", MEMBERS_HEADER,
                         f"g1 {SPACED} /10.0.0.11 order service-1 2 orders(0), payments(1)")
    snap = run(members_file)
    assert frame(snap, "members").empty
    [(line, reason, _)] = rejects(snap)
    assert line == 2 and "a value holding a space cannot be told from two values" in reason


# Kafka 2.2 and older: no GROUP column (ConsumerGroupCommand.scala of 2.0.0-2.2.2)
def test_output_before_kafka_2_3_takes_the_group_from_the_file_name():
    """The three layouts without GROUP were an unrecognised file (exit 2)."""
    old = sorted(str(p) for p in (DATA / "kcg_2.2").iterdir())
    snap = run(*old)
    new = run(str(DATA / "kcg_offsets.txt"), str(DATA / "kcg_members_3.7.txt"))
    assert rejects(snap) == []
    for table in ("queues", "offsets", "observed"):
        assert frame(snap, table).equals(frame(new, table)), table
    assert members(snap) == members(new)
    assert set(frame(snap, "members").strategy) == {"roundrobin"}


def test_a_split_line_whose_client_id_holds_a_space_after_the_host_is_read(tmp_path):
    """Tabs from a spreadsheet: a member id without a space (a static member's, a KIP-848
    group's random id) leaves the client.id's words at the end, after the `/host` word,
    and they are its; a member id holding one puts a word where the host is, and the line
    is refused (above)."""
    offsets = write(tmp_path, "offsets.txt", HEADER.replace(" ", "\t"),
                    "\t".join(["g1", "orders", "0", "5", "9", "4", "Jq3XyAbCdEfGhIjKlMnOpQ",
                               "/10.0.0.1", "order service"]))
    snap = run(offsets)
    assert rejects(snap) == []
    assert members(snap) == {("Jq3XyAbCdEfGhIjKlMnOpQ", "10.0.0.1", "order service")}


def test_a_line_cut_after_an_overflowing_number_says_where_it_ends(tmp_path):
    # two 19-digit offsets: the line shifts past where CLIENT-ID's column starts
    row = printed(OFFSETS_COLUMNS, ("g1", "orders", 1, 1234567890123456789,
                                    1234567890123456799, 10, M1, "/10.0.0.11", "consumer-1"),
                  fixed=OFFSETS_FIXED)
    cut = row[1][:row[1].index("/10.0.0.11") + len("/10.0.0.11")]
    snap = run(write(tmp_path, "offsets.txt", row[0], cut))
    [(line, reason, _)] = rejects(snap)
    assert (line, reason) == (2, "unreadable offsets row: line ends before column CLIENT-ID")


def test_two_outputs_before_kafka_2_3_in_one_file_are_refused(tmp_path):
    """The tool described one group per call and printed none: the second output's rows
    were written to the first's group, the file's name."""
    text = (DATA / "kcg_2.2" / "offsets_orders-range.txt").read_text()
    path = write(tmp_path, "offsets_all.txt", text, text)
    with pytest.raises(CaptureError, match=re.escape(
            "a second output of kafka-consumer-groups.sh of Kafka 2.2 or older, which prints "
            "no group")):
        run(path)


def test_a_group_named_by_a_file_keeps_its_own_dots():
    from capture.importers.kafka_consumer_groups import group_from_name

    assert group_from_name("/x/offsets_audit.log.txt", "offsets") == "audit.log"
    assert group_from_name("/x/OFFSETS_my.group.TXT", "offsets") == "my.group"


@pytest.mark.parametrize("name", ["k22_offsets.txt", "offsets.txt", "offsets_orders (1).txt",
                                  "offsets_g.txt.1", "offsets_g.csv", "offsets_.txt",
                                  "offsets_g"])
def test_output_before_kafka_2_3_not_named_by_its_group_is_refused(tmp_path, name):
    text = (DATA / "kcg_2.2" / "offsets_orders-range.txt").read_text()
    path = write(tmp_path, name, text)
    with pytest.raises(CaptureError, match=re.escape(
            f"{path}: kafka-consumer-groups.sh of Kafka 2.2 or older (the header has no GROUP "
            "column) does not print the group, and the file's name does not give it: name the "
            "file offsets_<group>.txt")):
        run(path)


# static membership: Kafka's assignors order static members first, by group.instance.id
def state_file(tmp_path: Path, strategy: str) -> str:
    return write(tmp_path, f"state_{strategy}.txt",
                 "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           "
                 "#MEMBERS",
                 f"orders-range    localhost:9092 (1)        {strategy:<20} Stable          2")


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_a_group_with_static_members_is_said_to_order_them_otherwise(tmp_path, strategy):
    """The instance id was read and dropped: the recompute's member-id order put M1 first
    where Kafka puts inst-b first, a drift nobody was told may be the audit's own."""
    snap = run(write(tmp_path, "members.txt", *STATIC), state_file(tmp_path, strategy))
    said = [w for w in snap.warnings if "static" in w]
    assert said == [
        f"group orders-range has 1 static member(s) ({INST_B} as inst-b) and 1 dynamic; "
        f"Kafka's {strategy} assignor orders static members first, by group.instance.id, "
        "then the others by member id, while the audit recomputes the assignment ordering "
        "every member by member id: this group's drift may be that ordering, not its "
        "clients"]
    # the members table keeps its columns and parameters: the instance id is not a
    # strategy parameter (MIXED_STRATEGIES compares those per member)
    assert frame(snap, "members").strategy_params.isna().all()


def test_a_group_with_an_unread_member_line_is_written_whole_or_not(tmp_path):
    """The dynamic member's line is a rejects row (its partition count is not a number).
    The static member alone was written: the audit recomputed range over one member,
    which moved every partition (drift that is not there), and the group was said to
    have only static members. As the live capture does, its members and holders are not
    written, with a warning naming the line; its offsets, partitions and the holders
    read are."""
    broken = STATIC[1].replace("3          ", "three      ", 1)
    path = write(tmp_path, "members.txt", STATIC[0], broken, STATIC[2])
    offsets = write(tmp_path, "offsets.txt", HEADER,
                    offsets_line("orders-range", "orders", 2, 5, 9, 4, INST_B, "/10.0.0.12",
                                 "consumer-2"))
    snap = run(path, offsets, state_file(tmp_path, "range"))
    assert len(rejects(snap)) == 1
    assert frame(snap, "members").empty
    assert committed(snap) == {("orders-range", "orders", 2): 5}
    assert observed(snap) == {("orders", 2): INST_B, ("payments", 1): INST_B}
    assert not [w for w in snap.warnings if "static" in w]
    assert (f"group orders-range: 1 members line(s) could not be read ({path} line 2; see "
            "rejects): none of its members is written, as a group without one of its "
            "members would be audited as a smaller group; its offsets and the holders read "
            "are") in snap.warnings


def test_static_members_under_other_assignors_or_none_are_not_said(tmp_path):
    sticky = run(write(tmp_path, "members.txt", *STATIC), state_file(tmp_path, "sticky"))
    dynamic = run(str(DATA / "kcg_members_3.7.txt"))
    for snap in (sticky, dynamic):
        assert not [w for w in snap.warnings if "static" in w]
