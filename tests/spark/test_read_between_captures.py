"""A run reads its inputs at one point between captures, never half-way through one."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from capture.tables import CAPTURE_LOCK, Snapshot, write_snapshot
from jobs import read
from jobs.persist import Persisted
from jobs.read import InputPaths, read_inputs
from storage import locks
from storage.delta import DeltaStore
from vocabulary.errors import TableError

pytestmark = pytest.mark.spark


def _snapshot(queues: int, clients: int) -> Snapshot:
    snap = Snapshot("s", "c")
    at = datetime(2026, 11, 1, tzinfo=UTC)
    for q in range(queues):
        snap.add("queues", captured_at=at, topic="t", broker_name="b", queue_id=q,
                 readable=True, broker_room=None, max_offset=0, in_rate=None)
    for k in range(clients):
        snap.add("members", consumer_group="g", client_id=f"c{k}", topic="t", strategy="AVG",
                 message_model=None, client_room=None, client_addr=None,
                 strategy_params=None, client_name=None, client_host=None)
    return snap


def _paths(folder: Path) -> InputPaths:
    return InputPaths(str(folder / "queues"), str(folder / "members"))


def test_a_run_waits_for_a_capture_half_way_and_reads_all_of_it(spark, tmp_path, monkeypatch,
                                                                 caplog):
    # a re-capture of snapshot s has emptied queues and rewritten members (2 rows); a run
    # reading now would leave the snapshot out. It waits, then reads both new.
    import deltalake

    write_snapshot(tmp_path, _snapshot(4, 1))
    half_way, resume = threading.Event(), threading.Event()
    write = deltalake.write_deltalake

    def pause_after_members(path, data, **kwargs):
        written = write(path, data, **kwargs)
        if path.endswith("members"):  # written before queues
            half_way.set()
            resume.wait(60)
        return written

    monkeypatch.setattr(deltalake, "write_deltalake", pause_after_members)
    monkeypatch.setattr(logging.getLogger("rebalance_audit"), "propagate", True)
    caplog.set_level(logging.INFO, logger="rebalance_audit")
    capture = threading.Thread(target=write_snapshot, args=(tmp_path, _snapshot(8, 2)))
    capture.start()
    assert half_way.wait(60)
    store, opened = DeltaStore(spark, "offline"), []
    table_of = store.read

    def noting_when(path, name, snapshots=None):  # the moment each table is resolved
        opened.append((name, "after the capture" if resume.is_set() else "during it"))
        return table_of(path, name, snapshots)

    store.read = noting_when
    got: dict = {}
    reader = threading.Thread(target=lambda: got.update(
        inputs=read_inputs(store, _paths(tmp_path), (), Persisted())))
    reader.start()
    reader.join(3.0)  # time enough to open both tables, had it not waited
    resume.set()
    capture.join(60)
    reader.join(120)
    assert opened == [("queues", "after the capture"), ("members", "after the capture")]
    assert f"a capture is writing {tmp_path}: waiting for it to end" in caplog.text
    assert (got["inputs"].queues.count(), got["inputs"].members.count()) == (8, 2)


def test_a_capture_that_never_ends_stops_the_run_with_its_folder_named(spark, tmp_path,
                                                                         monkeypatch):
    write_snapshot(tmp_path, _snapshot(4, 1))
    monkeypatch.setattr(read, "CAPTURE_WAIT_SECONDS", 0.2)
    with locks.exclusive(tmp_path / CAPTURE_LOCK), pytest.raises(
            TableError, match=rf"a capture has been writing the inputs under {tmp_path} "
                              r"for that long; nothing was read or written"):
        read_inputs(DeltaStore(spark, "offline"), _paths(tmp_path), (), Persisted())


def test_inputs_outside_a_capture_folder_get_no_lock_file(spark, tmp_path) -> None:
    from tests.support.delta_inputs import read_written, write_inputs
    from tests.support.outputs import member_rows, queue_rows

    paths = write_inputs(spark, tmp_path, queues=queue_rows(["A"]), members=member_rows(["A"]))
    assert read_written(spark, paths, Persisted()).queues.count() == 4
    assert not (tmp_path / CAPTURE_LOCK).exists()


def test_a_lock_file_this_user_cannot_open_is_a_warning(spark, tmp_path, monkeypatch,
                                                        caplog) -> None:
    # e.g. made by another user under a umask of 077 (root here opens any file: the
    # refusal is the lock's own, as the kernel would give it)
    def refused(file, wait_seconds=0, on_wait=None):
        raise PermissionError(13, "Permission denied", str(file))

    write_snapshot(tmp_path, _snapshot(4, 1))
    monkeypatch.setattr(locks, "shared_if_present", refused)
    # the command line's logging stops at its own handler: let caplog's see the lines
    monkeypatch.setattr(logging.getLogger("rebalance_audit"), "propagate", True)
    inputs = read_inputs(DeltaStore(spark, "offline"), _paths(tmp_path), (), Persisted())
    assert inputs.queues.count() == 4
    assert ("Permission denied; the inputs under " f"{tmp_path} are read without waiting for a "
            "capture there") in caplog.text
