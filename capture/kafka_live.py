"""Live capture of Kafka consumer groups through confluent-kafka (librdkafka).

What each table comes from:
* members  — DescribeGroups member metadata (the subscription), decoded by
  `kafka_protocol`; strategy = the group's protocol (the assignor the leader ran);
* observed — each member's assignment bytes (DescribeGroups), else librdkafka's decoded
  assignment; source `kafka-describe`;
* queues   — every partition of the subscribed, assigned or committed topics (metadata),
  max_offset = high watermark (ListOffsets latest);
* offsets  — committed offsets (OffsetFetch).
librdkafka does not expose the subscription bytes, so `kafka_wire` asks DescribeGroups
itself (PLAINTEXT listeners only). What the broker leaves out is reported as a warning and
a rejects row, never guessed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from capture.errors import CaptureError
from capture.kafka_protocol import ProtocolError, decode_assignment, decode_subscription
from capture.kafka_racks import RackedGroup, partition_racks, rack_aware_topics
from capture.kafka_wire import RawGroup, WireError, addresses, connect, describe_groups
from capture.static_members import static_order_warning
from capture.tables import Snapshot
from vocabulary.columns import KAFKA_STRATEGIES, RACK_AWARE_ASSIGNORS

log = logging.getLogger(__name__)
SOURCE = "kafka-describe"
KNOWN_ASSIGNORS = (*KAFKA_STRATEGIES, "uniform")


@dataclass(frozen=True)
class KafkaCaptureOptions:
    bootstrap_servers: str
    cluster: str | None  # None: the cluster id the brokers report (`cluster_name`)
    snapshot_id: str
    captured_at: datetime
    groups: list[str] = field(default_factory=list)
    client_config: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0


def read_client_config(path: str | Path) -> dict[str, str]:
    """librdkafka properties file: `key=value` lines, `#` comments and blank lines."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CaptureError(f"cannot read --client-config {path}: {exc}") from exc
    except UnicodeDecodeError as exc:  # librdkafka properties are UTF-8 text
        raise CaptureError(f"--client-config {path} is not UTF-8 text (byte {exc.start}: "
                           f"{exc.object[exc.start:exc.start + 1]!r})") from exc
    config: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise CaptureError(f"--client-config {path} line {number}: expected key=value")
        config[key.strip()] = value.strip()
    return config


def _kafka_error(what: str, exc: Any) -> CaptureError:
    """A KafkaException, a bare KafkaError (ListGroups' errors) or another exception, with
    a hint at the likely cause."""
    err = exc.args[0] if getattr(exc, "args", None) else exc
    name = getattr(err, "name", lambda: type(exc).__name__)()
    text = getattr(err, "str", lambda: str(exc))()
    hint = ""
    if "AUTHORIZATION" in str(name):
        hint = " (the principal lacks Describe/Read ACLs on the cluster, group or topic)"
    elif name in ("_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN", "_RESOLVE"):
        hint = " (is the broker reachable at --bootstrap-servers? raise --timeout?)"
    return CaptureError(f"{what}: {name}: {text}{hint}")


def _result(future: Any, what: str, timeout: float) -> Any:
    """A librdkafka future's result; its errors (and a wait past the request timeout) as
    CaptureError."""
    try:
        return future.result(timeout=timeout + 5)
    except Exception as exc:  # KafkaException, concurrent.futures.TimeoutError
        raise _kafka_error(what, exc) from exc


BOOTSTRAP_KEYS = ("bootstrap.servers", "metadata.broker.list")
WATERMARKS_NAMED = 5  # partitions without a high watermark named in the warning


def cluster_name(cluster_id: str | None, bootstrap_servers: str) -> str:
    """The cluster's name when --cluster gives none: the id its brokers report (Kafka's
    `cluster.id`, the same through any of its brokers), else the bootstrap servers. The
    bootstrap string alone named one cluster two ways (`a:1,b:2` and `b:2`), which churn
    took for two clusters."""
    return cluster_id or bootstrap_servers


def capture_kafka(opts: KafkaCaptureOptions) -> Snapshot:
    """Capture one snapshot of the cluster's consumer groups. Raises CaptureError."""
    for key in BOOTSTRAP_KEYS:
        # librdkafka would take it over --bootstrap-servers, which the wire DescribeGroups
        # and the cluster name use: one snapshot would mix two clusters
        if key in opts.client_config:
            raise CaptureError(f"--client-config sets {key}: pass the brokers as "
                               "--bootstrap-servers instead")
    try:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
        from confluent_kafka.admin import AdminClient, OffsetSpec
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise CaptureError("confluent-kafka is not installed (pip install -e .)") from exc

    origin = f"kafka://{opts.bootstrap_servers}"
    config = {"bootstrap.servers": opts.bootstrap_servers, **opts.client_config,
              "logger": logging.getLogger("capture.librdkafka")}
    try:
        admin = AdminClient(config)
    except Exception as exc:
        raise _kafka_error("cannot create the Kafka admin client (check --client-config)",
                           exc) from exc
    refused = _every_address_refuses(opts.bootstrap_servers, opts.timeout)
    if refused:
        raise CaptureError(f"cannot reach {opts.bootstrap_servers}: {refused} (is a broker "
                           "listening at --bootstrap-servers?)")
    try:
        metadata = admin.list_topics(timeout=opts.timeout)
    except Exception as exc:
        raise _kafka_error(f"cannot reach {opts.bootstrap_servers}", exc) from exc
    snap = Snapshot(opts.snapshot_id, opts.cluster or cluster_name(metadata.cluster_id,
                                                                   opts.bootstrap_servers))
    if opts.cluster is None and not metadata.cluster_id:
        snap.warn(f"the brokers report no cluster id (Kafka before 0.10.1): the cluster is "
                  f"named {opts.bootstrap_servers!r}, as --bootstrap-servers gives it; pass "
                  "--cluster to name it alike in every capture, so churn links them")

    groups = list(dict.fromkeys(opts.groups))
    if not groups:
        listed = _result(admin.list_consumer_groups(request_timeout=opts.timeout),
                         "ListGroups", opts.timeout)
        if listed.errors:  # an incomplete list would replace a good snapshot with less
            raise _kafka_error(f"ListGroups ({len(listed.errors)} error(s); the group list "
                               "is incomplete)", listed.errors[0])
        groups = sorted(g.group_id for g in listed.valid if not g.is_simple_consumer_group)
    if not groups:
        snap.warn(f"no consumer groups on {opts.bootstrap_servers}: nothing but an empty "
                  "snapshot to write")
    described: dict[str, Any] = {}
    if groups:
        futures = admin.describe_consumer_groups(groups, request_timeout=opts.timeout)
        for g, fut in futures.items():
            described[g] = _result(fut, f"describing group {g!r}", opts.timeout)
    raw = _raw_describe(opts, groups, snap)

    topics: set[str] = set()
    racked: list[RackedGroup] = []
    memberless: dict[str, str] = {}  # group → its state, when it has no active member
    for g in groups:
        touched, racks, idle_state = _capture_group(snap, origin, g, described.get(g),
                                                    None if raw is None else raw.get(g),
                                                    metadata_asked=raw is not None)
        topics |= touched
        racked.extend([racks] if racks else [])
        if idle_state is not None:
            memberless[g] = idle_state
    if racked:
        _warn_rack_aware(snap, racked, metadata, _broker_racks(admin, opts))

    # committed offsets: one request per group, all in flight at once
    offset_futures = {
        g: admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)],
                                             request_timeout=opts.timeout)[g]
        for g in groups}
    for g, fut in offset_futures.items():
        for tp in _result(fut, f"committed offsets of group {g!r}", opts.timeout).topic_partitions:
            if tp.error is not None:
                snap.reject(origin, None, f"group {g}: offset of {tp.topic}-{tp.partition}: "
                            f"{tp.error}")
                continue
            if tp.offset < 0:  # no commit (OFFSET_INVALID)
                continue
            topics.add(tp.topic)
            snap.add("offsets", consumer_group=g, topic=tp.topic, broker_name=None,
                     queue_id=tp.partition, committed_offset=tp.offset, consumed_offset=None)

    _warn_memberless(snap, opts, memberless)

    partitions = []
    for topic in sorted(topics):
        meta = metadata.topics.get(topic)
        if meta is None or meta.error is not None:
            reason = meta.error if meta is not None else "not in the cluster metadata"
            snap.reject(origin, None, f"topic {topic}: {reason}")
            continue
        partitions.extend(TopicPartition(topic, p) for p in sorted(meta.partitions))
    watermarks: dict[tuple[str, int], int | None] = {}
    if partitions:
        listed = admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions},
                                    request_timeout=opts.timeout)
        for tp, fut in listed.items():
            watermarks[(tp.topic, tp.partition)] = _watermark(snap, origin, tp, fut, opts)
        _warn_missing_watermarks(snap, [tp for tp in partitions
                                        if watermarks.get((tp.topic, tp.partition)) is None])
    for tp in partitions:
        snap.add("queues", captured_at=opts.captured_at, topic=tp.topic, broker_name=None,
                 queue_id=tp.partition, readable=True, broker_room=None,
                 max_offset=watermarks.get((tp.topic, tp.partition)), in_rate=None)
    return snap


MAX_PORT = 65_535


def _every_address_refuses(bootstrap: str, timeout: float) -> str | None:
    """Why no --bootstrap-servers address takes a TCP connection, when every one refused
    it; else None (one answers, or one only times out or has no name: librdkafka's own
    wait says so). librdkafka retries a refused connection until --timeout runs out
    (30 s by default), and then names no address; a refusal is known at once."""
    refusals = []
    for item in bootstrap.split(","):
        _, sep, rest = item.strip().partition("://")  # SSL://, SASL_SSL://, PLAINTEXT://
        try:
            ((host, port),) = addresses(rest if sep else item)
        except (WireError, ValueError):
            return None  # librdkafka says what it makes of it
        if not 0 < port <= MAX_PORT:  # the resolver takes it modulo 65,536
            refusals.append(f"{host}:{port} names no TCP port (1 to {MAX_PORT:,})")
            continue
        try:
            connect(host, port, min(timeout, 10.0)).close()
        except ConnectionRefusedError:
            refusals.append(f"{host}:{port} refused the connection")
            continue
        except OSError:
            return None
        return None
    return "; ".join(refusals) or None


def _warn_memberless(snap: Snapshot, opts: KafkaCaptureOptions,
                     memberless: dict[str, str]) -> None:
    """Groups with no active member: their committed offsets are all a capture has of them.
    One without any is nothing the broker can tell from a group that never existed (a
    mistyped --group); when every --group named is so, the capture stops before writing,
    since its empty snapshot would replace an earlier capture of the same id."""
    committed: dict[str, int] = {}
    for row in snap.rows["offsets"]:
        committed[row["consumer_group"]] = committed.get(row["consumer_group"], 0) + 1
    nothing = [g for g in memberless if not committed.get(g)]
    for g, state in memberless.items():
        if committed.get(g):
            snap.warn(f"group {g}: no active members (state {state}); only its "
                      f"{committed[g]} committed offset(s) are captured")
    if opts.groups and set(nothing) == set(opts.groups):
        raise CaptureError(
            f"--group {', '.join(nothing)}: no active member and no committed offset on "
            f"{opts.bootstrap_servers} (a group that does not exist reads so; check the "
            "name): nothing was written")
    if nothing:
        snap.warn(f"{len(nothing)} group(s) have no active member and no committed offset, "
                  f"so nothing of them is captured ({', '.join(nothing)}"
                  f"{'; check the --group names' if opts.groups else ''})")


def _watermark(snap: Snapshot, origin: str, tp: Any, future: Any,
               opts: KafkaCaptureOptions) -> int | None:
    """A partition's high watermark, or None with a rejects row. librdkafka reports a
    timed-out or dropped ListOffsets as offset -1001 rather than an error, and a negative
    watermark is never real."""
    what = f"high watermark of {tp.topic}-{tp.partition}"
    try:
        offset = _result(future, what, opts.timeout).offset
    except CaptureError as err:
        if "AUTHORIZATION" in str(err):
            raise
        snap.reject(origin, None, str(err))
        return None
    if offset < 0:
        snap.reject(origin, None, f"{what}: the broker gave no high watermark within "
                    f"--timeout {opts.timeout:g} s (librdkafka offset {offset})")
        return None
    return offset


def _warn_missing_watermarks(snap: Snapshot, missing: list[Any]) -> None:
    """One warning counting the partitions written with max_offset null."""
    if missing:
        named = ", ".join(f"{tp.topic}-{tp.partition}" for tp in missing[:WATERMARKS_NAMED])
        more = ", ..." if len(missing) > WATERMARKS_NAMED else ""
        snap.warn(f"{len(missing)} partition(s) have no high watermark ({named}{more}): "
                  "written with max_offset null, see rejects (the audit cannot use them)")


def _raw_describe(opts: KafkaCaptureOptions, groups: list[str],
                  snap: Snapshot) -> dict[str, RawGroup] | None:
    """DescribeGroups with the raw member bytes, where our wire client can speak to the
    listener (PLAINTEXT); None elsewhere (subscriptions not captured, said in a warning).
    A failure on PLAINTEXT is a CaptureError: without it no member could be written."""
    protocol = opts.client_config.get("security.protocol", "plaintext").lower()
    if not groups:
        return {}
    if protocol != "plaintext":
        snap.warn(f"security.protocol={protocol}: member subscriptions are not captured "
                  "(librdkafka does not expose them and our DescribeGroups speaks PLAINTEXT "
                  "only); observed comes from librdkafka's decoded assignments")
        return None
    try:
        return describe_groups(opts.bootstrap_servers, groups, opts.timeout)
    except WireError as exc:
        raise CaptureError(f"DescribeGroups (member metadata) at {opts.bootstrap_servers}: "
                           f"{exc} (is the broker reachable? raise --timeout?)") from exc


def _member_views(described: Any, raw: RawGroup | None) -> list[dict[str, Any]]:
    """One dict per member, merging librdkafka's description and the raw one by member id."""
    views: dict[str, dict[str, Any]] = {}
    for m in getattr(described, "members", None) or []:
        views[m.member_id] = {
            "member_id": m.member_id, "client_id": m.client_id, "host": m.host,
            "instance": getattr(m, "group_instance_id", None), "metadata": b"",
            "assignment": b"",
            "decoded": [(tp.topic, tp.partition)
                        for tp in (m.assignment.topic_partitions if m.assignment else [])],
        }
    for m in raw.members if raw else []:
        view = views.setdefault(m.member_id, {"member_id": m.member_id, "decoded": None})
        view.update(metadata=m.metadata, assignment=m.assignment,
                    client_id=view.get("client_id") or m.client_id,
                    host=view.get("host") or m.client_host,
                    instance=view.get("instance") or m.group_instance_id)
    return sorted(views.values(), key=lambda v: v["member_id"])


def _assignor(described: Any, raw: RawGroup | None) -> str | None:
    for name in ((raw.protocol if raw else None), getattr(described, "partition_assignor", None)):
        if name and name in KNOWN_ASSIGNORS:
            return name
    if raw and raw.protocol:  # a custom assignor: keep its name, the audit will reject it
        return raw.protocol
    return None


def _subscription(snap: Snapshot, origin: str, who: str, metadata: bytes,
                  asked: bool) -> tuple[list[str] | None, str | None, str | None]:
    """(topics, rack, None) from a member's metadata, or (None, None, why unknown) with a
    rejects row."""
    if not asked:
        snap.reject(origin, None, f"{who}: subscription not captured (security.protocol is "
                    "not PLAINTEXT)")
        return None, None, "not captured"
    if not metadata:
        snap.reject(origin, None, f"{who}: the broker returned no member metadata "
                    "(subscription unknown)")
        return None, None, "the broker returned no member metadata"
    try:
        subscription = decode_subscription(metadata)
    except ProtocolError as exc:
        snap.reject(origin, None, f"{who}: undecodable member metadata: {exc}", metadata.hex())
        return None, None, "undecodable member metadata"
    return sorted(set(subscription.topics)), subscription.rack_id or None, None


def _capture_group(snap: Snapshot, origin: str, group: str, described: Any,
                   raw: RawGroup | None, metadata_asked: bool = True,
                   ) -> tuple[set[str], RackedGroup | None, str | None]:
    """members and observed rows of one group; returns the topics it touches, its
    members' racks when it runs a rack-aware assignor and some member set client.rack, and
    its state when it has no active member (Empty, Dead).
    A group is written to members whole or not at all: the audit recomputes it over the
    members it is given, so a member left out would move its partitions (false drift)."""
    state_value = getattr(described, "state", None)
    state = (getattr(state_value, "name", None) or (str(state_value) if state_value else None)
             or (raw.state if raw else None) or "unknown")
    members = _member_views(described, raw)
    assignor = _assignor(described, raw)
    topics: set[str] = set()
    if not members:
        if "EMPTY" in state.upper() or "DEAD" in state.upper():
            return topics, None, state  # its offsets decide what to say (_warn_memberless)
        else:
            snap.warn(f"group {group}: the broker lists no members (state {state}); "
                      "members and observed are not captured for it, offsets are")
            snap.reject(origin, None, f"group {group}: no members in the group description "
                        f"(state {state})")
        return topics, None, None
    if assignor is None:
        snap.warn(f"group {group}: the broker does not say which assignor the group runs; "
                  "its members are not written (strategy is required)")
    known: list[tuple[dict[str, Any], list[str], str | None]] = []  # member, topics, rack
    unknown: dict[str, list[str]] = {}  # why → member ids
    for m in members:
        who = f"group {group} member {m['member_id']}"
        subscribed, rack, why = _subscription(snap, origin, who, m["metadata"], metadata_asked)
        if why is None:
            known.append((m, subscribed, rack))
            topics.update(subscribed)
        else:
            unknown.setdefault(why, []).append(m["member_id"])
        assigned: list[tuple[str, int]] | None = None
        if m["assignment"]:
            try:
                assigned = decode_assignment(m["assignment"]).partitions
            except ProtocolError as exc:
                snap.reject(origin, None, f"{who}: undecodable member assignment: {exc}",
                            m["assignment"].hex())
        if assigned is None and m.get("decoded"):
            assigned = m["decoded"]
        for topic, partition in sorted(set(assigned or [])):
            snap.add("observed", consumer_group=group, topic=topic, broker_name=None,
                     queue_id=partition, client_id=m["member_id"], source=SOURCE)
            topics.add(topic)
    if unknown:
        if metadata_asked:  # else the one security.protocol warning says it
            causes = "; ".join(f"{why}: {', '.join(ids)}" for why, ids in unknown.items())
            snap.warn(f"group {group}: the subscription of {sum(map(len, unknown.values()))} "
                      f"member(s) is unknown ({causes}); none of the group's members are "
                      "written (the audit would recompute the group without them)")
        return topics, None, None
    if assignor is None:
        return topics, None, None
    racks: dict[str, str] = {}  # member id → client.rack
    for m, subscribed, rack in known:
        host = (m.get("host") or "").lstrip("/") or None
        for topic in subscribed or [None]:
            snap.add("members", consumer_group=group, client_id=m["member_id"], topic=topic,
                     strategy=assignor, message_model=None, client_room=rack,
                     client_addr=host, strategy_params=None,
                     client_name=m.get("client_id") or None, client_host=host)
        if rack is not None:
            racks[m["member_id"]] = rack
    order = static_order_warning(group, {m["member_id"]: m.get("instance") for m in members},
                                 assignor)
    if order is not None:
        snap.warn(order)
    if racks and assignor in RACK_AWARE_ASSIGNORS:
        return topics, RackedGroup(group, assignor, racks,
                                   {m["member_id"]: subscribed for m, subscribed, _ in known}
                                   ), None
    return topics, None, None


def _broker_racks(admin: Any, opts: KafkaCaptureOptions) -> dict[int, str | None] | str:
    """Each broker's rack (DescribeCluster), or why they could not be read."""
    try:
        cluster = admin.describe_cluster(request_timeout=opts.timeout).result(
            timeout=opts.timeout + 5)
    except Exception as exc:  # KafkaException, TimeoutError, an old broker
        return str(_kafka_error("DescribeCluster", exc))
    return {node.id: node.rack or None for node in cluster.nodes}


def _warn_rack_aware(snap: Snapshot, racked: list[RackedGroup], metadata: Any,
                     brokers: dict[int, str | None] | str) -> None:
    """A warning per group Kafka 3.5+ clients assign by rack (`kafka_racks`), which the
    audit recomputes without racks; when the brokers' racks are unknown, per group whose
    members set racks, saying so."""
    replicas = {t: [list(p.replicas) for _, p in sorted(meta.partitions.items())]
                for t, meta in metadata.topics.items() if meta.error is None}
    racks = partition_racks(replicas, brokers) if isinstance(brokers, dict) else None
    for g in racked:
        members = f"group {g.group}: {len(g.racks)} member(s) set client.rack " \
                  f"({', '.join(g.rack_names())})"
        differs = (f"the audit recomputes {g.assignor} without racks, so its assignment may "
                   "differ from the group's (the drift table, from --observed, shows where)")
        if racks is None:
            snap.warn(f"{members}: Kafka 3.5+ clients running {g.assignor} assign rack-aware "
                      "(KIP-881) when some partition's replicas are not on every rack, and "
                      f"the brokers' racks could not be read ({brokers}); {differs}")
            continue
        topics = rack_aware_topics(g, racks)
        if topics:
            snap.warn(f"{members} and the replicas of topic(s) {', '.join(topics)} are not on "
                      f"every rack: Kafka 3.5+ clients running {g.assignor} assign them "
                      f"rack-aware (KIP-881); {differs}")
        else:
            log.info("%s, but no subscribed partition's replicas make Kafka assign by rack "
                     "(none on a member's rack, or each on every rack): %s is assigned "
                     "without racks, as the audit does", members, g.assignor)
