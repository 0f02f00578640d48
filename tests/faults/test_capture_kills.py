"""A capture killed between two table commits is never audited half-way.

A re-capture of a snapshot replaces its rows table by table (delta-rs has no commit
across tables). It removes queues first and writes them last, so while a cluster of the
snapshot has queues rows every table holds exactly one capture's rows of it, and a
capture that died part-way leaves the cluster without queues: not audited, said so. The
kills are a real SIGKILL of the CLI at each commit (jobs/faults.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from capture.tables import TABLES
from jobs.audit import run
from jobs.config import AuditConfig
from tests.support.outputs import complete_run, table

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "capture"
KILL_POINTS = [f"capture:deleted:{t}" for t in TABLES] + [f"capture:written:{t}"
                                                          for t in TABLES]


def _files(folder: Path, group: str) -> list[str]:
    """kafka-consumer-groups output of one group: its members and its offsets."""
    folder.mkdir()
    names = []
    for name in ("kcg_members_3.7.txt", "kcg_offsets.txt"):
        (folder / name).write_text((DATA / name).read_text().replace("orders-range", group))
        names.append(str(folder / name))
    return names


def capture(files: list[str], out: Path, at: str, kill_at: str | None = None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("REBALANCE_AUDIT_KILL_AT", None)
    if kill_at:
        env["REBALANCE_AUDIT_KILL_AT"] = kill_at
    return subprocess.run(
        [sys.executable, "-m", "jobs.cli", "capture", "import", *files, "--output", str(out),
         "--cluster", "prod", "--snapshot", "s1", "--captured-at", at],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def rows(out: Path) -> dict[str, list]:
    """Every table's rows, each as a sorted list of value tuples."""
    return {name: sorted(tuple(map(str, r)) for r in table(out, name).itertuples(index=False))
            for name in TABLES}


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> dict:
    """`old`: a capture of s1 (group old-g); `new`: the same folder captured again (group
    new-g, another time): every table but the empty rejects differs between the two."""
    root = tmp_path_factory.mktemp("captures")
    old_files, new_files = _files(root / "old_files", "old-g"), _files(root / "new_files", "new-g")
    old = root / "old"
    assert capture(old_files, old, "2026-11-23T10:00:00Z").returncode == 0
    new = root / "new"
    shutil.copytree(old, new)
    assert capture(new_files, new, "2026-11-23T11:00:00Z").returncode == 0
    return {"old": old, "new": new, "new_files": new_files, "old_rows": rows(old),
            "new_rows": rows(new)}


def test_a_capture_killed_at_any_commit_leaves_one_capture_or_no_queues(captures,
                                                                       tmp_path) -> None:
    old_rows, new_rows = captures["old_rows"], captures["new_rows"]
    for name in ("queues", "members", "offsets", "observed"):
        assert old_rows[name] and new_rows[name] and old_rows[name] != new_rows[name], name
    for point in KILL_POINTS:
        out = tmp_path / point.replace(":", "_")
        shutil.copytree(captures["old"], out)
        proc = capture(captures["new_files"], out, "2026-11-23T11:00:00Z", kill_at=point)
        assert proc.returncode == -9, (point, proc.stdout + proc.stderr)
        got = rows(out)
        if point == "capture:written:queues":  # the last commit: the new capture whole
            assert got == new_rows
        else:  # queues removed first, written last
            assert got["queues"] == [], (point, got["queues"])
        for name in TABLES:
            assert got[name] in (old_rows[name], new_rows[name], []), (point, name)
        # and a capture run again repairs it
        assert capture(captures["new_files"], out, "2026-11-23T11:00:00Z").returncode == 0
        assert rows(out) == new_rows, point


def test_an_audit_after_the_kill_leaves_the_cluster_out_and_keeps_its_output(
        spark, captures, tmp_path) -> None:
    inputs = tmp_path / "in"
    shutil.copytree(captures["old"], inputs)
    out = tmp_path / "out"

    def audit(run_id: str):
        config = AuditConfig(
            queues=str(inputs / "queues"), members=str(inputs / "members"),
            offsets=str(inputs / "offsets"), observed=str(inputs / "observed"),
            output=str(out), engine="offline", run_id=run_id)
        return run(config, spark=spark)

    audit("first")
    assert complete_run(out, "s1") == "first"
    lags = table(out, "group_balance")["lag_total"].dropna()
    assert not lags.empty
    # killed once members, offsets and observed hold the new capture: the old order
    # (queues written first) left new queues and members without offsets there, and the
    # audit wrote every lag null over the good earlier rows
    proc = capture(captures["new_files"], inputs, "2026-11-23T11:00:00Z",
                   kill_at="capture:written:members")
    assert proc.returncode == -9, proc.stdout + proc.stderr

    result = audit("second")

    assert result.snapshots == [] and result.not_audited == ["s1"]
    said = "\n".join(result.warnings)
    assert "snapshot s1" in said and "queues has no usable rows, members has" in said, said
    assert complete_run(out, "s1") == "first"
    assert set(table(out, "group_balance")["run_id"]) == {"first"}
    assert table(out, "group_balance")["lag_total"].dropna().tolist() == lags.tolist()
