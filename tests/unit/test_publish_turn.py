"""The output root's publish lock (`jobs.write.publish_turn`), without Spark."""

from __future__ import annotations

import pytest

from jobs import write
from storage import locks
from vocabulary.errors import TableError

REFUSED = r"another run has been landing in .* not published \(no runs rows\), run it again"


def test_a_turn_held_past_the_wait_publishes_nothing_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(write, "PUBLISH_WAIT_SECONDS", 0.2)
    lock = tmp_path / locks.PUBLISH_LOCK
    with (locks.exclusive(lock),  # another run's turn
          pytest.raises(TableError, match=REFUSED),
          write.publish_turn(f"file://{tmp_path}")):
        pytest.fail("the turn was not waited for")
    with write.publish_turn(str(tmp_path)):  # that turn ended: taken at once
        assert not locks.is_free(lock)
    assert locks.is_free(lock)


def test_a_lock_timeout_inside_the_turn_is_not_mistaken_for_the_turns(tmp_path):
    with (pytest.raises(locks.LockTimeout, match="a table's"),
          write.publish_turn(str(tmp_path))):
        raise locks.LockTimeout("a table's commit lock")


def test_a_remote_root_has_no_lock_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with write.publish_turn("s3a://bucket/out"):
        pass
    assert list(tmp_path.iterdir()) == []
