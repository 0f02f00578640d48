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
Group state lines the tool prints on stderr ("... is rebalancing.", "... has no active
members.") are kept as warnings when they are in the file.
"""

from __future__ import annotations

import re

from capture.importers.state import ImportState

STATE_LINE = re.compile(r"(Consumer group '.*' (has no active members|does not exist)\.|"
                        r"Warning: Consumer group '.*' is rebalancing\.|Error: .*)$")
OLD_ASSIGNMENT = re.compile(r"^([A-Za-z0-9._-]+)\(([0-9,]*)\)$")
TOPICLESS = re.compile(r"^\(([0-9,]*)\)$")
NEW_ASSIGNMENT = re.compile(r"^([A-Za-z0-9._-]+):([0-9,]*)$")
MISSING = "-"


def _int(value: str) -> int | None:
    return None if value == MISSING else int(value)


def _columns(header: str) -> list[tuple[str, int]]:
    """Header tokens with their start positions ("COORDINATOR (ID)" is one column)."""
    header = header.replace("COORDINATOR (ID)", "COORDINATOR_(ID)")
    return [(m.group(0).replace("_(", " ("), m.start()) for m in re.finditer(r"\S+", header)]


def _split(line: str, cols: list[tuple[str, int]], rest_from: str | None) -> dict[str, str]:
    """A row as {column: value}: by whitespace when the token count fits the header (the
    tool pads with spaces), else by the header's column positions (an empty value, e.g. a
    blank GROUP-INSTANCE-ID, leaves only spaces). `rest_from` = a last column whose value
    may hold spaces."""
    names = [c for c, _ in cols]
    if rest_from is not None:
        fixed = names.index(rest_from)
        tokens = line.split(None, fixed)
        if len(tokens) == fixed + 1:
            return dict(zip(names, [*tokens[:fixed], tokens[fixed].strip()], strict=True))
    else:
        tokens = line.split()
        if len(tokens) == len(names):
            return dict(zip(names, tokens, strict=True))
    starts = [s for _, s in cols] + [None]
    return {name: line[starts[i]:starts[i + 1]].strip() for i, name in enumerate(names)}


def import_kafka_consumer_groups(state: ImportState, path: str, text: str) -> None:
    """Add one kafka-consumer-groups.sh output file (any of the describe layouts)."""
    snap = state.snapshot
    cols: list[tuple[str, int]] | None = None
    kind = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if STATE_LINE.match(line.strip()):
            snap.warn(f"{path} line {number}: {line.strip()}")
            continue
        if line.startswith("GROUP "):
            cols = _columns(line)
            names = [c for c, _ in cols]
            kind = ("offsets" if "PARTITION" in names else "members" if "#PARTITIONS" in names
                    else "state" if "ASSIGNMENT-STRATEGY" in names else None)
            if kind is None:
                snap.reject(path, number, "unknown kafka-consumer-groups header", line)
                cols = None
            continue
        if cols is None:
            snap.reject(path, number, "row before any kafka-consumer-groups header", line)
            continue
        try:
            if kind == "offsets":
                _offsets_row(state, path, number, line, cols)
            elif kind == "members":
                _members_row(state, path, number, line, cols)
            else:
                _state_row(state, path, number, line, cols)
        except (ValueError, KeyError) as exc:
            snap.reject(path, number, f"unreadable {kind} row: {exc}", line)


def _offsets_row(state: ImportState, path: str, number: int, line: str,
                 cols: list[tuple[str, int]]) -> None:
    row = _split(line, cols, "CLIENT-ID")
    group = state.kafka_group(row["GROUP"])
    member_id = row["CONSUMER-ID"]
    if member_id not in ("", MISSING):
        m = group.member(member_id)
        m.host = m.host or (row["HOST"].lstrip("/") if row["HOST"] != MISSING else None)
        m.client_name = m.client_name or (row["CLIENT-ID"] if row["CLIENT-ID"] != MISSING
                                          else None)
    if row["TOPIC"] == MISSING and row["PARTITION"] == MISSING:
        return  # a member that holds nothing
    topic, partition = row["TOPIC"], int(row["PARTITION"])
    if partition < 0:
        raise ValueError(f"negative partition {partition}")
    committed, log_end = _int(row["CURRENT-OFFSET"]), _int(row["LOG-END-OFFSET"])
    key = (topic, partition)
    group.partitions.add(key)
    if committed is not None:
        group.committed[key] = committed
    if log_end is not None:
        group.log_end[key] = log_end
    if member_id not in ("", MISSING):
        group.member(member_id).assigned.add(key)


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
            out += [(m.group(1), int(p)) for p in m.group(2).split(",") if p]
        return "4.0", out
    layout = None
    for part in value.split(", "):
        part = part.strip()
        if m := OLD_ASSIGNMENT.match(part):
            out += [(m.group(1), int(p)) for p in m.group(2).split(",") if p]
            layout = layout or "3.7"
        elif m := TOPICLESS.match(part):
            out += [(None, int(p)) for p in m.group(1).split(",") if p]
            layout = "3.8"
        else:
            raise ValueError(f"bad assignment {part!r}")
    return layout or "3.7", out


def _members_row(state: ImportState, path: str, number: int, line: str,
                 cols: list[tuple[str, int]]) -> None:
    names = [c for c, _ in cols]
    last = "ASSIGNMENT" if "ASSIGNMENT" in names else None
    row = _split(line, cols, last)
    group = state.kafka_group(row["GROUP"])
    member = group.member(row["CONSUMER-ID"])
    member.host = row["HOST"].lstrip("/") or None
    member.client_name = row["CLIENT-ID"] if row["CLIENT-ID"] != MISSING else None
    count = int(row["#PARTITIONS"])
    value = row.get("ASSIGNMENT", row.get("CURRENT-ASSIGNMENT"))
    if value is None:
        return  # not --verbose: membership only
    layout, parts = _parse_assignment(value)
    if len(parts) != count:
        raise ValueError(f"#PARTITIONS {count} but the assignment lists {len(parts)}")
    if layout == "3.8":
        state.snapshot.warn(
            f"{path}: kafka-consumer-groups 3.8-3.9 prints assignments without topic names; "
            "membership and partition counts are imported, the partitions only where an "
            "--describe --offsets file of the same group names the topic")
        for topic, partition in parts:
            if topic is None:
                state.snapshot.reject(path, number, f"member {row['CONSUMER-ID']}: partition "
                                      f"{partition} without a topic name (3.8-3.9 layout)",
                                      line)
        return
    for topic, partition in parts:
        assert topic is not None
        member.assigned.add((topic, partition))
        group.partitions.add((topic, partition))


def _state_row(state: ImportState, path: str, number: int, line: str,
               cols: list[tuple[str, int]]) -> None:
    m = re.match(r"^(\S+)\s+(\S+)\s+\((\S+)\)\s+(\S+)\s+(\S+)\s+", line)
    if not m:
        raise ValueError("expected GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE ...")
    group, strategy, group_state = m.group(1), m.group(4), m.group(5)
    g = state.kafka_group(group)
    if strategy != MISSING:
        g.strategy = strategy
    elif group_state.upper() not in ("EMPTY", "DEAD"):
        state.snapshot.warn(f"{path} line {number}: group {group} ({group_state}) shows no "
                            "assignment strategy")
