"""Which snapshots a run audits, and what it says about the ones it cannot.

A snapshot is audited when both queues and members hold usable rows for it; only audited
snapshots are replaced in the output tables. A snapshot present in one input and absent
from another is a warning, and each row the run cannot use for it a `rejects` row saying
what is missing, never a deletion of earlier good output. One small aggregate answers all
of it: the key columns of every row read from the files, less the rejects. The same
aggregate estimates how many (group, topic) the members subscribe, which sizes the
assignment's join (`jobs.sizing`).
"""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from jobs.read import SUBSCRIPTION, UNREAD_PARAMS
from rebalance_udfs.spark.report_pass import NamedGroups
from vocabulary.contracts import STRATEGY_PARAM_KEYS
from vocabulary.words import EMPTY_TOPICS, NAMED, listed, named


@dataclass(frozen=True)
class Note:
    """A condition the user must see: a warning, and a `rejects` row when it has a table;
    with `unused`, every usable row of that input for its snapshot and cluster (which the
    run leaves out) is a `rejects` row with its reason instead: one row saying how many
    was no input row, and the console counted it as one."""

    table: str | None
    snapshot_id: str | None
    cluster: str | None
    reason: str
    unused: str | None = None

    def text(self) -> str:
        where = f"snapshot {named(self.snapshot_id or '')}" + (
            f" (cluster {named(self.cluster)})" if self.cluster is not None else "")
        return f"{where}: {self.reason}" if self.snapshot_id is not None else self.reason

    def reject_row(self) -> tuple:
        row = json.dumps({"snapshot_id": self.snapshot_id, "cluster": self.cluster})
        return (self.snapshot_id, self.cluster, self.table, row, self.reason)


@dataclass
class Scope:
    audited: list[str]
    # snapshots read but not audited (missing input, every row rejected)
    not_audited: list[str]
    # clusters of each snapshot the run read (any row), and those with usable rows
    clusters: dict[str | None, list[str | None]]
    usable_clusters: dict[str, list[str | None]] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    # whether the run read rows with a null snapshot_id (it read the whole inputs)
    reads_null_snapshot: bool = True
    # (snapshot, cluster, group, topic) the member rows of the audited snapshots name,
    # rejected rows included: a HyperLogLog estimate (2% over at 10M: 315,600 for 309,272)
    subscriptions: int = 0
    # (snapshot, cluster)s an optional input given to the run has no usable rows of
    missing_from: dict[str, set[tuple[str, str | None]]] = field(default_factory=dict)
    # the snapshots `--snapshot` named, once each, and those of them in none of the inputs
    requested: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    # whether members rows of an audited snapshot were rejected: the groups they name get
    # a sentence saying their figures leave those rows out (`reports.group_balance`)
    members_rejected: bool = False
    # the same of queues rows: the group_balance rows of their topics say so
    queues_rejected: bool = False
    # (snapshot, cluster)s of audited snapshots with usable queues or members rows but not
    # both: not audited (recomputed without its members, every observed holder was drift)
    partial: list[tuple[str, str | None]] = field(default_factory=list)
    # captured_at of the not-audited snapshots' clusters with usable queue rows, for
    # their `runs` rows (`jobs.audit`: read only when there are such snapshots)
    not_audited_times: dict[tuple[str, str | None], object] = field(default_factory=dict)
    # strategy_params keys no strategy reads, a warning per audited snapshot and cluster;
    # not an input problem `--strict` fails on (a key may be the user's own)
    unread_params: list[Note] = field(default_factory=list)

    def audited_clusters(self, snapshot: str) -> list[str | None]:
        """The clusters of an audited snapshot this run audits: usable queues and members."""
        return [c for c in self.usable_clusters.get(snapshot, [])
                if (snapshot, c) not in self.partial]

    def summary(self) -> str:
        """The validate step's detail: snapshots audited, and what of the read ones is not
        (whole snapshots; clusters of audited ones, which a warning each names)."""
        left_out = sum(1 for s in self.audited for c in self.clusters.get(s, [])
                       if c not in self.audited_clusters(s))
        return (f"{len(self.audited)} snapshot(s) audited"
                + (f", {len(self.not_audited)} not" if self.not_audited else "")
                + (f"; {left_out} cluster(s) of them not (see the warnings)"
                   if left_out else ""))

    @property
    def read_clusters(self) -> list[str | None]:
        return sorted({c for cs in self.clusters.values() for c in cs},
                      key=lambda c: (c is not None, c or ""))


def _sources(inputs) -> DataFrame:
    """(table, snapshot_id, cluster, read, rejected, SUBSCRIPTION): one row per input row
    read from the files (read = 1) and per rejected row (rejected = 1). Every row read is
    either usable or a reject with its own snapshot_id and cluster (`jobs.validate`), so a
    key's usable rows are read − rejected: the usable rows' columns are never scanned
    again (at 10M the count over the materialized rows took 7.7 s, the files' two key
    columns and the rejects 4.4 s). SUBSCRIPTION: a member row's (group, topic) hashed
    (`jobs.read`), null for the others and the rejects."""
    rejects = inputs.rejects.select(F.col("source_table").alias("table"), "snapshot_id",
                                    "cluster", F.lit(0).alias("read"),
                                    F.lit(1).alias("rejected"),
                                    F.lit(None).cast("long").alias(SUBSCRIPTION),
                                    F.lit(None).cast("array<string>").alias(UNREAD_PARAMS))
    read = inputs.read_keys.select("table", "snapshot_id", "cluster", F.lit(1).alias("read"),
                                   F.lit(0).alias("rejected"), SUBSCRIPTION, UNREAD_PARAMS)
    return read.unionByName(rejects)


def _unread_params_note(row) -> Note:
    """The warning for a snapshot and cluster whose members rows hold strategy_params keys
    no strategy reads: a misspelt key ran the strategy with its default, silently."""
    keys = sorted({k for keys in row.unread_params for k in keys})
    named = listed([k + (f" (is it {near[0]}?)" if (near := difflib.get_close_matches(
        k, STRATEGY_PARAM_KEYS, n=1, cutoff=0.6)) else "") for k in keys[:10]], len(keys))
    return Note(None, row.snapshot_id, row.cluster, (
        f"strategy_params of {row.unread_rows} members row(s) hold key(s) no strategy reads: "
        f"{named}; their values are "
        f"not used (the keys read: {', '.join(STRATEGY_PARAM_KEYS)})"))


def find_scope(inputs, requested: tuple[str, ...]) -> Scope:
    """Classify every snapshot the inputs hold (one Spark job, a few rows to the driver)."""
    sources = _sources(inputs)
    # the inputs are read in the run's partitions (`jobs.audit._size`), and their union
    # has the sum of them (hundreds at 10M for an aggregate of a few rows): two tasks
    # per core do the same scan with less overhead per task
    sources = sources.coalesce(max(1, 2 * sources.sparkSession.sparkContext.defaultParallelism))
    rows = (sources.groupBy("table", "snapshot_id", "cluster")
            .agg(F.sum("read").alias("read"), F.sum("rejected").alias("rejected"),
                 F.approx_count_distinct(SUBSCRIPTION).alias("subscriptions"),
                 # the distinct key lists (one or two in practice), not one per row
                 F.collect_set(F.when(F.size(UNREAD_PARAMS) > 0, F.col(UNREAD_PARAMS)))
                 .alias("unread_params"),
                 F.count(F.when(F.size(UNREAD_PARAMS) > 0, 1)).alias("unread_rows"))
            .collect())
    unread = [r for r in rows if r.unread_rows]
    rejected = {(r.table, r.snapshot_id, r.cluster): r.rejected for r in rows if r.rejected}
    usable: dict[str, dict[tuple, int]] = defaultdict(dict)
    clusters: dict[str | None, set] = defaultdict(set)
    for r in rows:
        clusters[r.snapshot_id].add(r.cluster)
        if r.read > r.rejected:
            usable[r.table][(r.snapshot_id, r.cluster)] = r.read - r.rejected
    queues, members = usable["queues"], usable["members"]
    queue_snaps = {s for s, _ in queues}
    member_snaps = {s for s, _ in members}
    audited = sorted(queue_snaps & member_snaps)
    subscribed = {(r.snapshot_id, r.cluster): r.subscriptions for r in rows
                  if r.table == "members"}
    subscriptions = sum(n for (s, _), n in subscribed.items() if s in audited)
    members_rejected = any(r.rejected for r in rows
                           if r.table == "members" and r.snapshot_id in audited)
    queues_rejected = any(r.rejected for r in rows
                          if r.table == "queues" and r.snapshot_id in audited)
    seen = sorted(s for s in clusters if s is not None)
    not_audited = [s for s in seen if s not in audited]
    notes: list[Note] = []
    missing_from: dict[str, set[tuple[str, str | None]]] = {}
    partial: list[tuple[str, str | None]] = []
    for present, missing, rows, other in (("queues", "members", queues, members),
                                          ("members", "queues", members, queues)):
        for (s, c), n in sorted(rows.items(), key=_key):
            if (s, c) not in other:
                if s in audited:
                    partial.append((s, c))
                notes.append(Note(None, s, c, unused=present, reason=(
                    f"{missing} has no usable rows, {present} has {n}: not audited (earlier "
                    "output of it is kept)" if s not in audited else
                    f"{missing} has no usable rows for this cluster, {present} has {n}: the "
                    "cluster is not audited")))
    partial.sort(key=lambda k: (k[0] or "", k[1] or ""))
    for table in ("offsets", "observed"):
        # the offsets and observed rows of a snapshot or cluster not audited are left out
        # of the audit with it: rejects rows (a snapshot neither queues nor members holds
        # is below, with the rows of a snapshot whose every row was rejected)
        for (s, c), n in sorted(usable.get(table, {}).items(), key=_key):
            if ((s, c) in queues and (s, c) in members) or (
                    s not in queue_snaps and s not in member_snaps):
                continue
            notes.append(Note(None, s, c, unused=table, reason=(
                "the cluster is not audited (queues or members has no usable rows of "
                f"it), {table} has {n}" if s in audited else
                "the snapshot is not audited (queues or members has no usable rows of it), "
                f"{table} has {n}: earlier output of it is kept")))
    for (s, c), n in sorted(members.items(), key=_key):
        if (s, c) in queues and not subscribed[(s, c)]:  # usable in both: audited
            notes.append(Note("members", s, c, (
                f"topic is null in all {n} usable members rows: no client subscribes "
                "anything, so no queue is assigned (a members table without a topic "
                "column, or with it under another name, reads so)")))
    for s in not_audited:
        if s in queue_snaps or s in member_snaps:
            continue
        # rows of an input no audit of the snapshot uses: rejects rows (a warning alone
        # left them out of the rejects)
        unused = [Note(None, s, c, unused=table, reason=(
                       f"queues and members have no usable rows, {table} has {n}: not "
                       "audited (earlier output of it is kept)"))
                  for table in ("offsets", "observed")
                  for (snapshot, c), n in sorted(usable.get(table, {}).items(), key=_key)
                  if snapshot == s]
        # every row of it rejected: say which tables held them (a snapshot only an offsets
        # row named was said to have had its queues and members rows rejected)
        counts: dict[str, int] = defaultdict(int)
        for (table, snapshot, _), n in rejected.items():
            if snapshot == s:
                counts[table] += n
        held = ", ".join(f"{table} {counts[table]}" for table in sorted(counts))
        notes.extend(unused or [Note(None, s, None, f"every row of it was rejected ({held}; "
                                                    "see rejects): not audited")])
    for table, given, unknown in (
            ("offsets", inputs.offsets, "lag and duplicate estimates are unknown"),
            ("observed", inputs.observed, "drift is not checked (the drift table has no "
                                          "rows of it)")):
        if given is None:
            continue
        present = usable.get(table, {})
        for key in sorted(set(queues) & set(members), key=lambda k: (k[0] or "", k[1] or "")):
            if key not in present:
                missing_from.setdefault(table, set()).add(key)
                # its rows may all be rejects: "no rows" sent users looking for a lost write
                n = rejected.get((table, *key), 0)
                had = (f"no usable rows for it (its {n} row(s) were rejected: see rejects)"
                       if n else "no rows for it")
                notes.append(Note(None, key[0], key[1], f"{table} has {had}: {unknown}"))
    asked = list(dict.fromkeys(requested))
    absent = [s for s in asked if s not in clusters]
    notes.extend(Note(None, None, None, f"snapshot {s} is in none of the inputs")
                 for s in absent)
    # with --snapshot only those snapshots' rows are read: "at all" sent users looking
    # for rows the other snapshots have
    of = (f"of the --snapshot(s) given ({listed([named(s) for s in asked[:NAMED]], len(asked))})"
          if asked
          else "at all")
    if not queues and not members:
        notes.append(Note(None, None, None, "the queues and members inputs have no usable "
                                            f"rows {of}: nothing to audit"))
    elif not queues:
        notes.append(Note(None, None, None, f"the queues input has no usable rows {of}"))
    elif not members:
        notes.append(Note(None, None, None, f"the members input has no usable rows {of}"))
    usable_clusters: dict[str, set] = defaultdict(set)
    for s, c in (*queues, *members):
        usable_clusters[s].add(c)
    return Scope(audited, not_audited, _sorted_values(clusters), _sorted_values(usable_clusters),
                 notes, reads_null_snapshot=not requested, subscriptions=subscriptions,
                 missing_from=missing_from, requested=asked, absent=absent,
                 members_rejected=members_rejected, queues_rejected=queues_rejected,
                 partial=partial, unread_params=[
                     _unread_params_note(r) for r in sorted(unread, key=_row_order)
                     if r.snapshot_id in audited])


def _sorted_values(mapping: dict) -> dict:
    return {k: sorted(v, key=lambda c: (c is not None, c or "")) for k, v in mapping.items()}


def _key(item) -> tuple:
    (s, c), _ = item
    return (s or "", c or "")


def _row_order(row: Row) -> tuple:
    """A row of a snapshot and cluster in the notes' order: by snapshot, then cluster."""
    return (row.snapshot_id or "", row.cluster or "")


def _named_per_snapshot(rows: DataFrame, name: Column, say: Callable[[Row, str], str],
                        named: int = NAMED, joiner: str = ", ",
                        **figures: Column) -> list[Note]:
    """A note per snapshot and cluster of `rows` (one Spark job, a few rows to the
    driver): `say(row, listed)` with `row.n` the rows counted, `listed` the first `named`
    values of `name` in sort order joined by `joiner` ("and N more" past them), and any
    `figures` aggregated beside."""
    keys = ["snapshot_id", "cluster"]
    found = (rows.groupBy(*keys)
             .agg(F.count(F.lit(1)).alias("n"),
                  F.slice(F.array_sort(F.collect_list(name)), 1, named).alias("first"),
                  *[figure.alias(alias) for alias, figure in figures.items()])
             .collect())
    notes = []
    for r in sorted(found, key=_row_order):
        notes.append(Note(None, r.snapshot_id, r.cluster, say(r, listed(r.first, r.n, joiner))))
    return notes


def groups_not_observed(members: DataFrame, observed: DataFrame) -> list[Note]:
    """A note per snapshot and cluster whose observed rows name none of some of its member
    groups (one Spark job, a few rows to the driver): drift is checked per group that has
    observed rows, so those groups pass unchecked. It happens when a capture saved the
    holders of some groups only (mqadmin consumerProgress per group), or when a group's
    members held nothing at the time (a Kafka group mid-rebalance)."""
    keys = ["snapshot_id", "cluster"]
    observed_groups = observed.select("snapshot_id", "cluster", "consumer_group").distinct()
    unchecked = (members.select("snapshot_id", "cluster", "consumer_group").distinct()
                 .join(observed_groups.select(*keys).distinct(), keys, "left_semi")
                 .join(observed_groups, [*keys, "consumer_group"], "left_anti"))
    return _named_per_snapshot(unchecked, F.col("consumer_group"), lambda r, listed: (
        f"observed has no rows for {r.n} of its member group(s) ({listed}): their drift "
        "is not checked"))


def config_queues_not_readable(members: DataFrame, queues: DataFrame) -> list[Note]:
    """A note per snapshot and cluster whose CONFIG members list queues that are no readable
    queue of it (a queue id past the topic's count, a misspelt or unreadable broker):
    AllocateMessageQueueByConfig hands a client its list unchecked, so the client pulls
    from queues that do not exist or cannot be read, while the audit, which allocates
    the readable queues only, gives it none of them. The caller asks only when some
    member runs CONFIG: one job over the lists' entries and the queues of the topics they
    name (a broadcast filter, no shuffle of the queues)."""
    config = members.where((F.col("strategy") == "CONFIG") & F.col("config_queues").isNotNull())
    keys = ["snapshot_id", "cluster"]
    queue = ["topic", "broker_name", "queue_id"]
    # as rebalance_udfs.rocketmq.parse_config_queues reads an entry: the topic up to the
    # first '@', the queue id after the last ':' (validation rejected malformed lists)
    entries = (config.select(*keys, "consumer_group", "client_id", F.explode(
        F.split("config_queues", ",")).alias("entry"))
        .withColumn("entry", F.trim("entry")).where(F.col("entry") != "")
        .withColumns({"topic": F.regexp_extract("entry", r"^([^@]+)@", 1),
                      "broker_name": F.regexp_extract("entry", r"^[^@]+@(.+):[0-9]+$", 1),
                      "queue_id": F.regexp_extract("entry", r":([0-9]+)$", 1).cast("int")})
        .distinct())
    named = entries.select(*keys, "topic").distinct()
    readable = (queues.where(F.coalesce(F.col("readable"), F.lit(True)))
                .join(F.broadcast(named), [*keys, "topic"], "left_semi")
                .select(*keys, *queue))
    missing = entries.join(readable, [*keys, *queue], "left_anti")
    return _named_per_snapshot(
        missing, F.concat(F.lit("group "), F.col("consumer_group"), F.lit(" client "),
                          F.col("client_id"), F.lit(": "), F.col("entry")),
        lambda r, listed: (
            f"strategy_params.queues of {r.members} CONFIG member(s) name {r.n} "
            f"queue(s) this snapshot has no readable queue for ({listed}): the client "
            "pulls from queues that do not exist or cannot be read, and the audit assigns "
            "it none of them"),
        named=3, joiner="; ", members=F.countDistinct("consumer_group", "client_id"))


def groups_assigned_by_rack(found: dict[tuple[str | None, str | None], NamedGroups]
                            ) -> list[Note]:
    """A note per snapshot and cluster whose Kafka groups Kafka 3.5+ clients would assign
    by rack (KIP-881; `capture.kafka_racks`), which the audit does not recompute: `found`
    by the assign-and-report pass (`rebalance_udfs.racks`), where every group's member
    and queue rows already are."""
    return [Note(None, s, c, (
        f"{n.groups} Kafka group(s) ({_listed(n)}) have members with a client_room "
        "(client.rack) where some partition's broker_room is, over partitions on more than "
        "one rack: Kafka 3.5+ clients assign range and the sticky assignors by rack there "
        "(KIP-881), which the audit does not recompute, so their assignments, churn and "
        "drift may differ from the clients'"))
        for (s, c), n in sorted(found.items(), key=_key) if n.groups]


# queues rows of one snapshot stamped further apart than this are two captures, not one
# slow capture (a pipeline may stamp each row as it reads it, over a few minutes)
CAPTURE_SPREAD = timedelta(minutes=15)


def capture_time_spread(spans: list[Row]) -> list[Note]:
    """A note per snapshot and cluster whose queues rows hold captured_at values more than
    CAPTURE_SPREAD apart (rows of two captures under one id): the earliest orders it for
    churn and is the one the outputs show; the others were dropped without a word."""
    return [Note(None, r.snapshot_id, r.cluster, (
        f"its queues rows hold captured_at values from {r.captured_at:%Y-%m-%d %H:%M:%S} to "
        f"{r.last_captured_at:%Y-%m-%d %H:%M:%S} UTC, more than "
        f"{CAPTURE_SPREAD.seconds // 60} minutes apart: the earliest orders it for churn "
        "and is the one the outputs show; a snapshot id should name one capture"))
        for r in sorted(spans, key=_row_order)
        if r.captured_at is not None
        and r.last_captured_at - r.captured_at > CAPTURE_SPREAD]


# no Kafka or RocketMQ cluster ran before it: an earlier capture time is one in the wrong
# unit (epoch seconds or milliseconds written as a finer unit land in January 1970)
FIRST_PLAUSIBLE_CAPTURE = datetime(2000, 1, 1)


def implausible_capture_times(spans: list[Row]) -> list[Note]:
    """A note per snapshot and cluster captured before FIRST_PLAUSIBLE_CAPTURE. Such a
    time passes validation (1900 to 9999 are real dates) but orders churn and names the
    capture in every output, silently wrong."""
    return [Note(None, r.snapshot_id, r.cluster, (
        f"its captured_at is {r.captured_at:%Y-%m-%d %H:%M:%S} UTC, before any Kafka or "
        "RocketMQ cluster ran: likely epoch seconds or milliseconds written as a finer unit "
        "(they land in January 1970); it orders churn and is shown as given"))
        for r in sorted(spans, key=_row_order)
        if r.captured_at is not None and r.captured_at < FIRST_PLAUSIBLE_CAPTURE]


def idle_buckets(buckets: int | None, subscriptions: int) -> Note | None:
    """A note when `--buckets` asks for more than twice as many calls as the audited
    snapshots have (group, topic) subscriptions (`Scope.subscriptions`, an estimate):
    groups are hashed into the buckets, so the rest get none and each still costs a task
    (100,000 buckets for 28 groups ran for minutes without a word)."""
    if not buckets or not subscriptions or buckets <= 2 * subscriptions:
        return None
    return Note(None, None, None, (
        f"--buckets {buckets:,} is more than the about {subscriptions:,} (group, topic) "
        "subscriptions of the audited snapshots: groups are hashed into the buckets, so "
        "most get none and each still costs a task; leave it unset to size it from the "
        "data"))


def lookalike_columns(lookalikes: tuple[tuple[str, str, str], ...]) -> list[Note]:
    """A note per input table with columns the audit does not read that look like its
    own (`Inputs.lookalikes`): their values are not used, and the column they look like
    is null everywhere, which the run says nothing else of."""
    by_table: dict[str, list[str]] = {}
    for table, column, near in lookalikes:
        by_table.setdefault(table, []).append(f"{column} (is it {near}?)")
    return [Note(None, None, None, (
        f"{table} has column(s) the audit does not read, which look like its own: "
        f"{', '.join(found)}; their values are not used and the contract's column of that "
        "name is null everywhere: rename them to read them"))
        for table, found in by_table.items()]


def groups_without_lag(unknown: dict[tuple[str | None, str | None], NamedGroups],
                       named: set[tuple[str, str | None]]) -> list[Note]:
    """A note per snapshot and cluster with `unknown` groups (found by the assign-and-
    report pass when the run has offsets) that have queues and no known lag: offsets holds
    no committed offset for any of their queues (a capture saved the progress of some
    groups only, a group never committed), or their queues have no max_offset. The
    snapshots and clusters offsets has no rows of at all (`named`: `Scope.missing_from`)
    have a note of their own already."""
    return [Note(None, s, c, (
        f"lag is unknown for {u.groups} group(s) with queues ({_listed(u)}): none of their "
        "queues has both a committed_offset (offsets) and a max_offset (queues), so their "
        "lag columns (assignments, consumer_load, group_balance) are null; group_balance "
        "lists them all: its rows where topic is null, lag_total is null and queues > 0"))
        for (s, c), u in sorted(unknown.items(), key=_key) if u.groups and (s, c) not in named]


def groups_with_empty_topics(found: dict[tuple[str | None, str | None], NamedGroups]
                             ) -> list[Note]:
    """A note per snapshot and cluster whose groups subscribe a topic with no readable
    queue (`found` by the assign-and-report pass): a misspelt topic, one whose queues all
    lack read permission, one the capture missed. SPEC §3 reports such a topic and
    allocates nothing of it, and no finding code says so: its group_balance rows say it
    in their recommendation only, and a group whose other topics are even has no finding,
    so without this note the run and report.html called it balanced."""
    return [Note(None, s, c, (
        f"{n.groups} group(s) {EMPTY_TOPICS}, so nothing of "
        f"those topics is assigned: {_listed(n, '; ')}; the queues table has no readable "
        "row of them (a misspelt topic, one whose queues are all readable=false, or one "
        "the capture missed) and no finding code says so: group_balance lists them all, "
        "its rows where topic is not null and queues = 0"))
        for (s, c), n in sorted(found.items(), key=_key) if n.groups]


def groups_without_members(found: dict[tuple[str | None, str | None], NamedGroups]
                           ) -> list[Note]:
    """A note per snapshot and cluster with groups that committed offsets but have no
    member reading a queue (the assign-and-report pass's MEMBERLESS groups): every
    consumer of theirs gone, the stalled group an on-call engineer looks for first.
    Their offsets rows are rejects rows, which read as an input problem; no output table
    has a row of them."""
    return [Note(None, s, c, (
        f"{n.groups} group(s) have committed offsets but no usable member row subscribing "
        f"a topic of the queues table ({_listed(n)}): no consumer of theirs was seen, so "
        "if none is running, nobody consumes their queues and their backlog grows; no "
        "output table has a row of them, and their offsets rows are rejects rows"))
        for (s, c), n in sorted(found.items(), key=_key) if n.groups]


def _listed(named: NamedGroups, joiner: str = ", ") -> str:
    return listed(named.first, named.groups, joiner)
