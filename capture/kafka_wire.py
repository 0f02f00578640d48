"""A minimal Kafka wire client for the one request the maintained clients do not expose:
DescribeGroups with the members' raw metadata and assignment bytes (librdkafka decodes the
assignment but drops the subscription). PLAINTEXT only; non-flexible versions only
(ApiVersions v0, FindCoordinator v1-v2, DescribeGroups v0-v4), chosen from what the broker
says it supports.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass

from capture.kafka_protocol import ProtocolError, _Reader

API_VERSIONS, FIND_COORDINATOR, DESCRIBE_GROUPS = 18, 10, 15
GROUP_ID_NOT_FOUND = 69
DEFAULT_PORT = 9092  # librdkafka's, for an address without one


class WireError(Exception):
    """The broker could not be asked (connection, timeout, unsupported versions, error code)."""


@dataclass(frozen=True)
class RawMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class RawGroup:
    group_id: str
    error_code: int
    state: str
    protocol_type: str
    protocol: str
    members: list[RawMember]


def _str(value: str | None) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    data = value.encode("utf-8")
    return struct.pack(">h", len(data)) + data


def connect(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to host:port within `timeout` seconds, the name lookup included.
    `socket.create_connection` bounds the connect only: a resolver that does not answer
    held the capture for as long as its own retries last (resolv.conf's), past
    --timeout. The lookup runs in a thread of its own, left behind if it overruns."""
    deadline = time.monotonic() + timeout
    found: list = []
    failed: list[OSError] = []

    def lookup() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            failed.append(exc)

    worker = threading.Thread(target=lookup, name=f"lookup {host}", daemon=True)
    worker.start()
    worker.join(timeout)
    if failed:
        raise failed[0]
    if not found:
        raise TimeoutError(f"no address for {host} within {timeout:g} s (name lookup)")
    last: OSError | None = None
    for family, kind, proto, _, address in found[0]:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock = socket.socket(family, kind, proto)
        sock.settimeout(left)
        try:
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last or TimeoutError(f"cannot connect to {host}:{port} within {timeout:g} s")


class Connection:
    """One blocking socket to one broker; requests are sent one at a time."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        try:
            self.sock = connect(host, port, timeout)
        except OSError as exc:
            raise WireError(f"cannot connect to {host}:{port}: {exc}") from exc
        self.timeout = timeout
        self.deadline = 0.0
        self.correlation = 0

    def close(self) -> None:
        self.sock.close()

    def _recv(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:  # a broker trickling bytes: the request as a whole times out
                raise WireError(f"no complete response within {self.timeout:g} s")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(left)
            if not chunk:
                raise WireError("connection closed by the broker")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def request(self, api_key: int, version: int, body: bytes) -> _Reader:
        self.correlation += 1
        header = struct.pack(">hhi", api_key, version, self.correlation) + _str("rebalance-audit")
        payload = header + body
        self.deadline = time.monotonic() + self.timeout  # the whole request, like librdkafka
        self.sock.settimeout(self.timeout)
        try:
            self.sock.sendall(struct.pack(">i", len(payload)) + payload)
            size = struct.unpack(">i", self._recv(4))[0]
            data = self._recv(size)
        except OSError as exc:  # includes socket.timeout
            raise WireError(f"request {api_key} v{version} failed: {exc}") from exc
        reader = _Reader(data)
        if reader.int32() != self.correlation:
            raise WireError("response does not match the request (correlation id)")
        return reader

    def api_versions(self) -> dict[int, tuple[int, int]]:
        r = self.request(API_VERSIONS, 0, b"")
        error = r.int16()
        versions = {k: (lo, hi) for k, lo, hi in r.array(lambda: (r.int16(), r.int16(), r.int16()))}
        if error != 0 and not versions:
            raise WireError(f"ApiVersions error code {error}")
        return versions


def _pick(versions: dict[int, tuple[int, int]], api: int, ours: range) -> int:
    lo, hi = versions.get(api, (-1, -2))
    usable = [v for v in ours if lo <= v <= hi]
    if not usable:
        raise WireError(f"broker supports api {api} versions {lo}..{hi}, we speak "
                        f"{ours.start}..{ours.stop - 1}")
    return max(usable)


def _find_coordinator(conn: Connection, version: int, group: str) -> tuple[str, int]:
    r = conn.request(FIND_COORDINATOR, version, _str(group) + struct.pack(">b", 0))
    r.int32()  # throttle
    error, message = r.int16(), r.string()
    r.int32()  # node id
    host, port = r.string() or "", r.int32()
    if error != 0:
        raise WireError(f"FindCoordinator for group {group!r}: error code {error} {message or ''}")
    return host, port


def _describe(conn: Connection, version: int, groups: list[str]) -> list[RawGroup]:
    body = struct.pack(">i", len(groups)) + b"".join(_str(g) for g in groups)
    if version >= 3:
        body += struct.pack(">b", 0)
    r = conn.request(DESCRIBE_GROUPS, version, body)
    if version >= 1:
        r.int32()  # throttle

    def member() -> RawMember:
        member_id = r.string() or ""
        instance = r.string() if version >= 4 else None
        client_id, host = r.string() or "", r.string() or ""
        return RawMember(member_id, instance, client_id, host, r.bytes_() or b"", r.bytes_() or b"")

    def group() -> RawGroup:
        error, group_id = r.int16(), r.string() or ""
        state, ptype, proto = r.string() or "", r.string() or "", r.string() or ""
        members = r.array(member)
        if version >= 3:
            r.int32()  # authorized operations
        return RawGroup(group_id, error, state, ptype, proto, members)

    return r.array(group)


def addresses(bootstrap: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a --bootstrap-servers list, read as librdkafka reads them:
    comma-separated, an optional `PLAINTEXT://`, port 9092 when none is given."""
    out = []
    for item in bootstrap.split(","):
        item = item.strip()
        if item.lower().startswith("plaintext://"):
            item = item[len("plaintext://"):]
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or "]" in port:  # no port: `host`, `[::1]`
            host, port = item, str(DEFAULT_PORT)
        if not port.isdigit() or not host:
            raise WireError(f"cannot read the broker address {item!r} (want HOST:PORT)")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise WireError(f"no broker address in {bootstrap!r}")
    return out


def _bootstrap(bootstrap: str, timeout: float) -> tuple[Connection, dict[int, tuple[int, int]]]:
    """A connection to the first address that answers ApiVersions, and the versions:
    librdkafka tries each address too."""
    failures = []
    for host, port in addresses(bootstrap):
        try:
            conn = Connection(host, port, timeout)
        except WireError as exc:
            failures.append(str(exc))
            continue
        try:
            return conn, conn.api_versions()
        except (WireError, ProtocolError) as exc:
            conn.close()
            failures.append(f"{host}:{port}: {exc}")
    raise WireError("; ".join(failures))


def describe_groups(bootstrap: str, groups: list[str], timeout: float) -> dict[str, RawGroup]:
    """DescribeGroups for `groups`, each asked at the coordinator FindCoordinator names
    (asked of the first bootstrap broker that answers). Each socket call waits at most
    `timeout`. Raises WireError, also for a group the coordinator answers with an error
    code (its members would be missing)."""
    out: dict[str, RawGroup] = {}
    boot, versions = _bootstrap(bootstrap, timeout)
    try:
        fc = _pick(versions, FIND_COORDINATOR, range(1, 3))
        dg = _pick(versions, DESCRIBE_GROUPS, range(0, 5))
        by_coordinator: dict[tuple[str, int], list[str]] = {}
        for g in groups:
            by_coordinator.setdefault(_find_coordinator(boot, fc, g), []).append(g)
        for (chost, cport), members in by_coordinator.items():
            conn = Connection(chost, cport, timeout)
            try:
                for raw in _describe(conn, dg, members):
                    if raw.error_code == GROUP_ID_NOT_FOUND:
                        # not a classic group: Kafka 4 answers so for one of the consumer
                        # protocol (KIP-848), whose members DescribeGroups does not list;
                        # left out, its members are "no member metadata" (kafka_live)
                        continue
                    if raw.error_code != 0:
                        raise WireError(f"DescribeGroups for group {raw.group_id!r}: error "
                                        f"code {raw.error_code}")
                    out[raw.group_id] = raw
            finally:
                conn.close()
    except ProtocolError as exc:
        raise WireError(f"unreadable response: {exc}") from exc
    finally:
        boot.close()
    return out
