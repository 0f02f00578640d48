"""kafka-consumer-groups.sh `--describe` output: `--offsets` (the default), `--members
--verbose` (three assignment layouts) and `--state`.

Layouts (ConsumerGroupCommand; `-` = missing value; columns padded to dynamic widths):
* offsets: GROUP TOPIC PARTITION [LEADER-EPOCH] CURRENT-OFFSET LOG-END-OFFSET LAG
  CONSUMER-ID HOST CLIENT-ID — a member with no partitions prints `-` for topic/partition;
* members: GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS, then
  - up to 3.7:  ASSIGNMENT `topic(0,1,2), topic2(3)`;
  - 3.8-3.9:    ASSIGNMENT `(0,1,2), (3)` — topic names dropped: only the partition count
    and membership are usable; partitions go to rejects unless an offsets file of the same
    group says which topic the member holds;
  - 4.0+:       CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT [UPGRADED],
    assignments `topic:0,1;topic2:3`;
* state: GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE [GROUP-EPOCH
  TARGET-ASSIGNMENT-EPOCH] #MEMBERS.
Before Kafka 2.3 (one group per call, no --all-groups) the three layouts had no GROUP
column, and nothing on stdout names the group: the file's name must (`offsets_<group>.txt`).
Group state lines the tool prints on stderr ("... is rebalancing.", "... has no active
members.") are kept as warnings when they are in the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from capture.errors import CaptureError
from capture.importers.state import (
    ImportState,
    Reading,
    ReadingsWarning,
)
from capture.importers.values import whole_number
from capture.words import spoken

STATE_LINE = re.compile(r"(Consumer group '.*' (has no active members|does not exist)\.|"
                        r"Warning: Consumer group '.*' is rebalancing\.|Error: .*)$")
OLD_ASSIGNMENT = re.compile(r"^([A-Za-z0-9._-]+)\(([0-9,]*)\)$")
TOPICLESS = re.compile(r"^\(([0-9,]*)\)$")
NEW_ASSIGNMENT = re.compile(r"^([A-Za-z0-9._-]+):([0-9,]*)$")
STATE_ROW = re.compile(r"^(\S+)\s+(\S+)\s+\((\S+)\)(.*)$")
STATE_ROW_BEFORE_2_3 = re.compile(r"^()(\S+)\s+\((\S+)\)(.*)$")  # no GROUP: group 1 empty
# the first column of each layout before Kafka 2.3, which printed no GROUP column
FIRST_BEFORE_2_3 = {"offsets": "TOPIC", "members": "CONSUMER-ID", "state": "COORDINATOR"}
NAMED_FILE = re.compile(r"^(offsets|members|state)_(.+)\.(txt|out|log)$", re.IGNORECASE)
MISSING = "-"


def _number(row: dict[str, str], column: str, bits: int = 64) -> int | None:
    """A numeric column's value; None for the tool's `-` (no value)."""
    value = row[column]
    return None if value == MISSING else whole_number(value, column, bits=bits)


def _columns(header: str) -> list[tuple[str, int]]:
    """Header tokens with their start positions ("COORDINATOR (ID)" is one column)."""
    header = header.replace("COORDINATOR (ID)", "COORDINATOR_(ID)")
    return [(m.group(0).replace("_(", " ("), m.start()) for m in re.finditer(r"\S+", header)]


def _by_position(line: str, cols: list[tuple[str, int]]) -> dict[str, str | None] | None:
    """The row cut at the header's column starts, or None when the line is not laid out
    under the header. The tool prints each column left-aligned, padded to the width of its
    longest value (at least the header's) and one space, so a value starts at its column
    and may hold single spaces (a client.id "order service"); a value wider than a
    fixed-width column (a 16-digit offset under CURRENT-OFFSET) shifts the rest of the line
    by its overflow. A value that starts off its column, holds a tab or a run of spaces
    (two values run together), or overflows while holding a space, is a line laid out
    otherwise: the caller cannot place its words by position."""
    row, shift = {}, 0
    for i, (name, start) in enumerate(cols):
        start += shift
        end = cols[i + 1][1] + shift - 1 if i + 1 < len(cols) else len(line)
        if start >= len(line):
            row[name] = None  # the line ends before this column
            continue
        if end < len(line) and not line[end].isspace():  # runs past its column
            if _SPACE.search(line, start, end):
                return None
            overflow = _WORD.match(line, end).end() - end
            end, shift = end + overflow, shift + overflow
        value = line[start:end].rstrip()
        if value != value.lstrip() or "\t" in value or "  " in value:
            return None
        row[name] = value
    return row


_SPACE, _WORD = re.compile(r"\s"), re.compile(r"\S*")


def _split(line: str, cols: list[tuple[str, int]], rest_from: str | None = None,
           blank_ok: tuple[str, ...] = ()) -> dict[str, str]:
    """A row as {column: value}. A line laid out under the header is read by position
    (`_by_position`): that keeps a column the tool leaves blank (GROUP-INSTANCE-ID of a
    dynamic member) in its place, and a value holding spaces whole. Other lines (tabs,
    spaces collapsed by a copy) are split at whitespace, where a blank cannot be told from
    a missing value, nor a value's words from the next column's: a line with more words
    than columns is refused, unless `rest_from` is its last column and the words can only
    be its own (`_rest_is_last`).
    `blank_ok` = columns the tool may leave blank: any other empty value means the line
    was cut or garbled. Raises ValueError naming why."""
    names = [name for name, _ in cols]
    rest = rest_from is not None and names[-1] == rest_from
    row = _by_position(line, cols)
    if row is None:
        return _by_whitespace(line, names, rest, [n for n in blank_ok if n in names])
    values: dict[str, str] = {}
    for name in names:  # None: the line ends before the column (after any overflow)
        value = row[name]
        if not value and name not in blank_ok:
            raise ValueError(f"line ends before column {name}" if value is None
                             else f"no value in column {name}")
        values[name] = value or ""
    return values


def _rest_is_last(names: list[str], tokens: list[str]) -> bool:
    """Whether the words beyond the columns can only be the last column's: ASSIGNMENT's
    items each end in a comma but the last (`t(0), u(1)`); a CLIENT-ID after HOST, when
    HOST's word is an address as the tool prints it (`/10.0.0.1`): a member id holding a
    space (`order service-1-<uuid>`) would have put a word of it there. A member id
    without one (a static member's, a KIP-848 group's random id) leaves the client.id's
    spaces at the line's end."""
    last = len(names) - 1
    if names[last] == "ASSIGNMENT":
        return all(t.endswith(",") for t in tokens[last:-1])
    return (names[last] == "CLIENT-ID" and names[last - 1] == "HOST"
            and tokens[last - 1].startswith("/"))


def _by_whitespace(line: str, names: list[str], rest: bool,
                   blank_ok: list[str] | None = None) -> dict[str, str]:
    """A line not laid out under the header, split at whitespace (`_split`). Words beyond
    the columns belong to the last (`rest`) only where they can be no other's
    (`_rest_is_last`); else a value's words cannot be placed. A line one word short may
    have lost a column the tool leaves blank (`blank_ok`): the reason says so, as
    "line ends before" alone read as a cut line whose values were all there."""
    tokens = line.split()
    if len(tokens) < len(names):
        lost = (f"; or its blank {' or '.join(blank_ok)} was lost with the spacing (tabs, "
                "spaces collapsed by a copy): save the tool's output as it prints it"
                if blank_ok else "")
        raise ValueError(f"line ends before column {names[len(tokens)]} "
                         f"({len(tokens)} of {len(names)} values){lost}")
    last = len(names) - 1
    if len(tokens) > len(names) and not (rest and _rest_is_last(names, tokens)):
        raise ValueError(f"{len(tokens)} words for the {len(names)} columns "
                         f"{' '.join(names)}: the line is not laid out under the header, "
                         "so a value holding a space cannot be told from two values")
    return dict(zip(names, [*tokens[:last], " ".join(tokens[last:])], strict=True))


def header_kind(line: str) -> str | None:
    """'offsets', 'members' or 'state' for a header line of the tool (with or without the
    GROUP column Kafka 2.3 added), 'unknown' for a GROUP line of none of them, else None."""
    tokens = line.split()
    if not tokens:
        return None
    kind = ("offsets" if {"PARTITION", "CURRENT-OFFSET"} <= set(tokens)
            else "members" if "#PARTITIONS" in tokens
            else "state" if "ASSIGNMENT-STRATEGY" in tokens else None)
    if tokens[0] == "GROUP":
        return kind or "unknown"
    return kind if kind and FIRST_BEFORE_2_3[kind] == tokens[0] else None


def group_from_name(path: str, kind: str) -> str:
    """The group of a file printed before Kafka 2.3, from the file's name
    (`offsets_<group>.txt`, `members_`, `state_`): the tool printed it nowhere. A name with
    a space or parentheses (a copy's `offsets_orders (1).txt`) is refused, not guessed."""
    m = NAMED_FILE.match(Path(path).name)
    if m and not re.search(r"[\s()]", m.group(2)):
        return m.group(2)
    raise CaptureError(
        f"{path}: kafka-consumer-groups.sh of Kafka 2.2 or older (the header has no GROUP "
        f"column) does not print the group, and the file's name does not give it: name the "
        f"file {kind}_<group>.txt (e.g. {kind}_orders.txt), or save the output of the tool "
        "of Kafka 2.3 or later, which prints the group")


def import_kafka_consumer_groups(state: ImportState, path: str, text: str,
                                 layout: str | None = None) -> None:
    """Add one kafka-consumer-groups.sh output file (any of the describe layouts; each
    header says which). `layout` (offsets, members, state: `--format kafka-<layout>`)
    refuses a header of another: the file was read by its header whatever --format
    said, so the wrong file was imported without a word."""
    snap = state.snapshot
    cols: list[tuple[str, int]] | None = None
    kind = group = None
    indent = 0  # the header's: a pasted block's lines share it
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if STATE_LINE.match(line.strip()):
            snap.warn(f"{path} line {number}: {line.strip()}")
            continue
        if (kind_here := header_kind(line)) is not None:  # tabs too: via a spreadsheet
            indent = len(line) - len(line.lstrip())
            line = line.lstrip()
            cols, kind = _columns(line), kind_here
            if layout is not None and kind not in (layout, "unknown"):
                raise CaptureError(
                    f"{path} line {number}: --format kafka-{layout}, but the header is "
                    f"kafka-consumer-groups.sh's {kind} layout: give --format kafka-{kind}, "
                    "or leave --format out (each header says its layout)")
            if kind == "unknown":
                snap.reject(path, number, "unknown kafka-consumer-groups header", line)
                cols = None
            elif cols[0][0] != "GROUP":
                if group is not None:  # the tool describes one group per call
                    raise CaptureError(
                        f"{path} line {number}: a second output of kafka-consumer-groups.sh "
                        "of Kafka 2.2 or older, which prints no group: its rows could be "
                        "another group's, so save each output in a file of its own, named "
                        f"{kind}_<group>.txt")
                group = group_from_name(path, kind)
            continue
        if cols is None:
            snap.reject(path, number, "row before any kafka-consumer-groups header", line)
            continue
        # under an indented header, its columns start `indent` further right
        line = line[indent:] if not line[:indent].strip() else line.lstrip()
        try:
            if kind == "offsets":
                _offsets_row(state, path, number, line, cols, group)
            elif kind == "members":
                _members_row(state, path, number, line, cols, group)
            else:
                _state_row(state, path, number, line, cols, group)
        except (ValueError, KeyError) as exc:
            snap.reject(path, number, f"unreadable {kind} row: {exc}", line)
            if kind == "members":  # a member left out: its group is written whole or not
                name = _group_of(line, cols) if group is None else group
                state.kafka_group(name).unread_members.append(f"{path} line {number}")


def _group_of(line: str, cols: list[tuple[str, int]]) -> str:
    """The GROUP of a row that cannot be read: by position, else its first word."""
    row = _by_position(line, cols)
    return (row or {}).get("GROUP") or line.split()[0]


def _offsets_row(state: ImportState, path: str, number: int, line: str,
                 cols: list[tuple[str, int]], group_name: str | None = None) -> None:
    """One partition of a group (or a member holding nothing: `-` topic and partition).
    The tool prints `-` for every missing value, so a blank column is a cut line. The
    whole row is checked before it changes the state: a rejected line adds nothing."""
    row = _split(line, cols, "CLIENT-ID")
    name, member_id, topic = row.get("GROUP", group_name), row["CONSUMER-ID"], row["TOPIC"]
    partition = _number(row, "PARTITION", bits=32)
    if (topic == MISSING) != (partition is None):
        raise ValueError(f"TOPIC {topic} with PARTITION {row['PARTITION']}")
    if partition is not None and partition < 0:
        raise ValueError(f"negative partition {partition}")
    committed, log_end = _number(row, "CURRENT-OFFSET"), _number(row, "LOG-END-OFFSET")
    _number(row, "LAG")  # unused, but a garbled LAG is a garbled line
    for column, value in (("CURRENT-OFFSET", committed), ("LOG-END-OFFSET", log_end)):
        if value is not None and value < 0:
            raise ValueError(f"negative {column} {value}")

    group = state.kafka_group(name)
    if member_id != MISSING:
        m = group.member(member_id)
        m.host = m.host or (row["HOST"].lstrip("/") if row["HOST"] != MISSING else None)
        m.client_name = m.client_name or (row["CLIENT-ID"] if row["CLIENT-ID"] != MISSING
                                          else None)
    if partition is None:
        return  # a member that holds nothing
    key = (topic, partition)
    group.partitions.add(key)
    owner, where = f"group {name} topic {topic} partition {partition}", f"{path} line {number}"
    for column, values, value in (("CURRENT-OFFSET", group.committed, committed),
                                  ("LOG-END-OFFSET", group.log_end, log_end)):
        if value is not None:
            state.keep_larger(values, key, value, _differs(owner, column), where=where)
    if member_id != MISSING:
        group.member(member_id).assigned.add(key)


def _differs(owner: str, column: str) -> ReadingsWarning:
    """The warning for a partition whose offset was read with different values."""
    def warning(readings: list[Reading]) -> str:
        said = spoken([f"{value} ({where})" for value, where in readings])
        kept = "larger" if len(readings) == 2 else "largest"
        return f"{owner}: {column} read as {said}; the {kept}, {readings[-1][0]}, is kept"
    return warning


def _partitions(text: str) -> list[int]:
    return [whole_number(p, "partition", bits=32) for p in text.split(",") if p]


def _parse_assignment(value: str) -> tuple[str, list[tuple[str | None, int]]]:
    """(layout, [(topic or None, partition)]) of one ASSIGNMENT / CURRENT-ASSIGNMENT value."""
    value = value.strip()
    if value in ("", MISSING):
        return "empty", []
    out: list[tuple[str | None, int]] = []
    if ";" in value or NEW_ASSIGNMENT.match(value):
        for part in value.split(";"):
            m = NEW_ASSIGNMENT.match(part.strip())
            if not m:
                raise ValueError(f"bad assignment {part!r}")
            out += [(m.group(1), p) for p in _partitions(m.group(2))]
        return "4.0", out
    layout = None
    for part in value.split(", "):
        part = part.strip()
        if m := OLD_ASSIGNMENT.match(part):
            out += [(m.group(1), p) for p in _partitions(m.group(2))]
            layout = layout or "3.7"
        elif m := TOPICLESS.match(part):
            out += [(None, p) for p in _partitions(m.group(1))]
            layout = "3.8"
        else:
            raise ValueError(f"bad assignment {part!r}")
    return layout or "3.7", out


def _members_row(state: ImportState, path: str, number: int, line: str,
                 cols: list[tuple[str, int]], group_name: str | None = None) -> None:
    """One member. GROUP-INSTANCE-ID is blank for a dynamic member when another member is
    static. The whole row is checked before it changes the state."""
    row = _split(line, cols, "ASSIGNMENT", blank_ok=("GROUP-INSTANCE-ID",))
    instance = row.get("GROUP-INSTANCE-ID", "")
    if "/" in instance and "/" not in row["HOST"]:
        # the tool prints HOST as /address: here a blank GROUP-INSTANCE-ID was lost with
        # the spacing and every later column read one to the left (a client.id's words
        # filling the gap), which no count of the words can tell
        raise ValueError(f"GROUP-INSTANCE-ID reads {instance} and HOST {row['HOST']}: the "
                         "tool prints the host as /address, so a blank GROUP-INSTANCE-ID "
                         "was lost with the spacing (tabs, spaces collapsed by a copy) and "
                         "the columns after it moved; save the tool's output as it prints it")
    member_id = row["CONSUMER-ID"]
    count = whole_number(row["#PARTITIONS"], "#PARTITIONS")
    value = row.get("ASSIGNMENT", row.get("CURRENT-ASSIGNMENT"))
    layout, parts = _parse_assignment(value) if value is not None else (None, [])
    if value is not None and len(parts) != count:
        raise ValueError(f"#PARTITIONS {count} but the assignment lists {len(parts)}")

    group = state.kafka_group(row.get("GROUP", group_name))
    member = group.member(member_id)
    member.host = row["HOST"].lstrip("/") or None
    member.instance_id = instance if instance not in ("", MISSING) else member.instance_id
    member.client_name = row["CLIENT-ID"] if row["CLIENT-ID"] != MISSING else None
    if layout == "3.8":
        state.snapshot.warn(
            f"{path}: kafka-consumer-groups 3.8-3.9 prints assignments without topic names; "
            "membership and partition counts are imported, the partitions only where an "
            "--describe --offsets file of the same group names the topic")
        for topic, partition in parts:
            if topic is None:
                state.snapshot.reject(path, number, f"member {member_id}: partition "
                                      f"{partition} without a topic name (3.8-3.9 layout)",
                                      line)
        return
    for topic, partition in parts:
        assert topic is not None
        member.assigned.add((topic, partition))
        group.partitions.add((topic, partition))


def _state_row(state: ImportState, path: str, number: int, line: str,
               cols: list[tuple[str, int]], group_name: str | None = None) -> None:
    """The group's assignor. Split at whitespace after the coordinator (which holds a
    space); ASSIGNMENT-STRATEGY is blank for a group without members up to Kafka 3.x
    (ConsumerGroupCommand printed the empty protocol name; 4.0 prints `-`)."""
    names = [name for name, _ in cols]
    m = (STATE_ROW if names[0] == "GROUP" else STATE_ROW_BEFORE_2_3).match(line)
    if not m:
        raise ValueError(f"expected {' '.join(names[:3])} ...")
    names = names[names.index("COORDINATOR (ID)") + 1:]
    values = m.group(4).split()
    if len(values) == len(names) - 1 and "ASSIGNMENT-STRATEGY" in names:
        values.insert(names.index("ASSIGNMENT-STRATEGY"), "")
    if len(values) != len(names):
        raise ValueError(f"{len(values)} values after the coordinator for the columns "
                         f"{' '.join(names)}")
    row = dict(zip(names, values, strict=True))
    whole_number(row["#MEMBERS"], "#MEMBERS")
    group = m.group(1) or group_name
    strategy, group_state = row["ASSIGNMENT-STRATEGY"], row["STATE"]
    g = state.kafka_group(group)
    if strategy not in ("", MISSING):
        g.strategies.add(strategy)
    elif group_state.upper() not in ("EMPTY", "DEAD"):
        state.snapshot.warn(f"{path} line {number}: group {group} ({group_state}) shows no "
                            "assignment strategy")
