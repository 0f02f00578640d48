"""`capture kafka` when the broker stalls one request type: a Tansu broker of its own per
test, advertised behind a frame proxy (`stall_proxy`) that never passes that request on.
librdkafka then times out after --timeout (2 s here); the capture must say so, never
write a made-up value or an incomplete snapshot as if it were whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from deltalake import DeltaTable

from capture.kafka_wire import describe_groups
from jobs import cli as jobs_cli
from tests.support.tansu import (
    QUIET,
    create_topics,
    free_port,
    produce,
    stall_proxy,
    tansu_broker,
)

pytestmark = pytest.mark.broker
LIST_OFFSETS, DESCRIBE_GROUPS, LIST_GROUPS = 2, 15, 16


def cli(*argv: str) -> int:
    return jobs_cli.main(["capture", *argv])


def capture_g_lo(boot: str, out) -> int:
    """`capture kafka` of group g-lo with a 2 s timeout, as each stalled test runs it."""
    return cli("kafka", "--bootstrap-servers", boot, "--output", str(out), "--group", "g-lo",
               "--timeout", "2")


@pytest.fixture
def stalling(tmp_path) -> Iterator[Callable[[], tuple[str, set[int]]]]:
    """A broker behind a proxy, with topic t (2 partitions, 2 records on t-0) and group
    g-lo's commit of t-0 at 1 (no members). Yields a starter returning the bootstrap
    address and the set of api keys to stall (add to it at any time)."""
    from confluent_kafka import Consumer, TopicPartition

    with ExitStack() as stack:
        def start() -> tuple[str, set[int]]:
            port, stalled = free_port(), set()
            upstream = stack.enter_context(tansu_broker(tmp_path / "tansu.log", port))
            stack.enter_context(stall_proxy(port, upstream, stalled))
            boot = f"127.0.0.1:{port}"
            create_topics(boot, {"t": 2})
            produce(boot, {("t", 0): 2})
            consumer = Consumer({"bootstrap.servers": boot, "group.id": "g-lo", "logger": QUIET})
            consumer.commit(offsets=[TopicPartition("t", 0, 1)], asynchronous=False)
            consumer.close()
            return boot, stalled

        yield start


def test_list_offsets_timeout_is_a_null_watermark_with_a_reject(stalling, tmp_path, capsys):
    # librdkafka answered the timed-out ListOffsets with offset -1001, written as max_offset
    boot, stalled = stalling()
    stalled.add(LIST_OFFSETS)
    out = tmp_path / "o"
    assert capture_g_lo(boot, out) == 0
    queues = DeltaTable(str(out / "queues")).to_pandas()
    assert sorted(queues.queue_id) == [0, 1] and queues.max_offset.isna().all()
    reasons = sorted(DeltaTable(str(out / "rejects")).to_pandas().reason)
    assert [r.split(":")[0] for r in reasons] == ["high watermark of t-0",
                                                   "high watermark of t-1"]
    assert all("no high watermark within --timeout 2 s" in r for r in reasons)
    assert "warning: 2 partition(s) have no high watermark (t-0, t-1)" in capsys.readouterr().err


def test_list_groups_error_is_exit_2_and_keeps_the_earlier_snapshot(stalling, tmp_path,
                                                                    capsys):
    # the errors were warnings: an empty snapshot replaced the good one, exit 0
    boot, stalled = stalling()
    out = tmp_path / "o"
    args = ["kafka", "--bootstrap-servers", boot, "--output", str(out), "--snapshot", "s",
            "--timeout", "2"]
    assert cli(*args) == 0
    stalled.add(LIST_GROUPS)
    capsys.readouterr()
    assert cli(*args) == 2
    err = capsys.readouterr().err
    assert "ListGroups" in err and "the group list is incomplete" in err
    assert "_TIMED_OUT" in err and "Traceback" not in err
    offsets = DeltaTable(str(out / "offsets")).to_pandas()
    assert list(offsets.consumer_group) == ["g-lo"]  # the earlier capture, untouched


def test_wire_describe_groups_failure_is_exit_2(stalling, tmp_path, capsys):
    # was a warning, every member dropped, exit 0 (librdkafka asks Tansu with api 69, so
    # only our wire DescribeGroups stalls here)
    boot, stalled = stalling()
    stalled.add(DESCRIBE_GROUPS)
    out = tmp_path / "o"
    assert capture_g_lo(boot, out) == 2
    err = capsys.readouterr().err
    assert "DescribeGroups (member metadata)" in err and "Traceback" not in err
    assert not out.exists()


def test_wire_client_tries_each_bootstrap_address(tansu):
    # only the first address was tried, and PLAINTEXT:// was read as the host
    dead = free_port()
    servers = f"127.0.0.1:{dead}, PLAINTEXT://{tansu}"
    assert set(describe_groups(servers, ["nobody"], 2)) == {"nobody"}
