"""Which Delta engine a session gets (`storage.delta.resolve_engine`): the offline engine
only where every task writes the driver's disk, since its commit moves the files the tasks
wrote there; elsewhere the run stops (exit 2) before it reads anything."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jobs.audit import run
from jobs.config import AuditConfig
from storage.delta import TableError, resolve_engine, shares_the_drivers_disk


def _session(master: str, delta_jars: bool) -> SimpleNamespace:
    """What `resolve_engine` asks of a session: its master, and whether the JVM finds
    Delta's data source class."""
    def for_name(name: str) -> str:
        if not delta_jars:
            raise RuntimeError(f"ClassNotFoundException: {name}")
        return name

    jvm = SimpleNamespace(java=SimpleNamespace(lang=SimpleNamespace(
        Class=SimpleNamespace(forName=for_name))))
    return SimpleNamespace(sparkContext=SimpleNamespace(master=master), _jvm=jvm)


@pytest.mark.parametrize(("master", "shares"), [
    ("local", True), ("local[*]", True), ("local[2,3]", True),
    ("local-cluster[2,1,3072]", True),
    ("yarn", False), ("spark://host:7077", False), ("k8s://https://api:6443", False),
])
def test_which_masters_write_the_drivers_disk(master, shares) -> None:
    assert shares_the_drivers_disk(master) is shares


@pytest.mark.parametrize(("master", "jars", "requested", "engine"), [
    ("local[*]", False, "auto", "offline"),
    ("local[*]", True, "auto", "native"),
    ("local[2]", False, "offline", "offline"),
    ("yarn", True, "auto", "native"),
    ("yarn", True, "native", "native"),
])
def test_the_engine_a_session_gets(master, jars, requested, engine) -> None:
    assert resolve_engine(_session(master, jars), requested) == engine


@pytest.mark.parametrize(("master", "jars", "requested"), [
    ("yarn", False, "auto"),
    ("yarn", True, "offline"),
    ("spark://host:7077", False, "offline"),
])
def test_offline_on_a_cluster_is_refused_with_what_to_do(master, jars, requested) -> None:
    with pytest.raises(TableError, match=rf"engine 'offline' writes this machine's disk, "
                                         rf"and master {master} runs tasks on other machines"
                                         r".*delta-spark's jars on the cluster"):
        resolve_engine(_session(master, jars), requested)


def test_a_run_on_a_cluster_without_delta_jars_stops_before_reading(tmp_path) -> None:
    """The whole run, on a session whose master is a cluster's (without Delta's jars): a
    TableError, which the CLI prints as exit 2, and no output table created."""
    config = AuditConfig(queues=str(tmp_path / "in" / "queues"),
                         members=str(tmp_path / "in" / "members"),
                         output=str(tmp_path / "out"), engine="auto", run_id="r")
    with pytest.raises(TableError, match="master yarn runs tasks on other machines"):
        run(config, spark=_session("yarn", False))
    assert not (tmp_path / "out").exists()  # nothing created, not even the root's folder
