"""A file that is not the format asked for, or that its name says, is said to be so first;
a rename is asked for only when the content is the format and its name misses the group or
topic; a copy's ` (1)` is refused saying why, naming the file to rename it to."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from capture.errors import CaptureError
from capture.importers import import_files
from jobs import cli as jobs_cli

DATA = Path(__file__).parent.parent / "data" / "capture"
ROUTE = DATA / "dashboard" / "route_TopicOrder.json"
AT = datetime(2026, 11, 23, 10, 16, tzinfo=UTC)


def run(*paths: Path, fmt: str | None = None):
    return import_files([str(p) for p in paths], cluster="c", snapshot_id="s",
                        captured_at=AT, fmt=fmt)


def copy(source: Path, tmp_path: Path, name: str) -> Path:
    return Path(shutil.copy(source, tmp_path / name))


@pytest.mark.parametrize("name", ["route_TopicOrder.json", "consumerProgress_G.json"])
def test_a_dashboard_route_forced_as_consumer_progress_is_said_to_be_a_route(
        tmp_path, capsys, name):
    """Before: "cannot tell which group ... Name the file consumerProgress_<group>.json",
    and after that rename "no queue, member, offset or holder row read; 43 rejected"."""
    path = copy(ROUTE, tmp_path, name)
    assert jobs_cli.main(["capture", "import", str(path), "--format",
                          "mqadmin-consumerProgress", "--output", str(tmp_path / "o"),
                          "--cluster", "c"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"rebalance-audit: error: {path}: the file does not look like `mqadmin "
        "consumerProgress` output (--format mqadmin-consumerProgress): it reads as a "
        "rocketmq-dashboard topic route response. Drop --format (each file's format is then "
        "told from its content), or pass --format dashboard-topicRoute\n")


@pytest.mark.parametrize(("source", "name", "fmt", "found"), [
    (DATA / "consumerProgress_OrderGroup.txt", "consumerConnection_G.txt",
     "mqadmin-consumerConnection", "mqadmin-consumerProgress"),
    (DATA / "topicRoute_TopicOrder.json", "consumerConnection_G.json",
     "dashboard-consumerConnection", "mqadmin-topicRoute"),
    (DATA / "dashboard" / "consumerConnection_OrderGroup.json", "route_T.json",
     "dashboard-topicRoute", "dashboard-consumerConnection"),
    (DATA / "kcg_offsets.txt", "topicStatus_T.txt", "mqadmin-topicStatus", "kafka-offsets"),
])
def test_content_of_another_format_than_the_one_forced_names_it(tmp_path, source, name, fmt,
                                                                  found):
    with pytest.raises(CaptureError, match=re.escape(
            f"(--format {fmt}): it reads as ") + f".*or pass --format {found}$"):
        run(copy(source, tmp_path, name), fmt=fmt)


def test_json_forced_as_a_text_format_is_said_to_be_json(tmp_path):
    path = tmp_path / "consumerProgress_G.txt"
    path.write_text('{"foo": 1}')
    with pytest.raises(CaptureError, match=re.escape(
            f"{path}: the file does not look like `mqadmin consumerProgress` output "
            "(--format mqadmin-consumerProgress): it is a JSON document, not that tool's "
            "text")):
        run(path, fmt="mqadmin-consumerProgress")


def test_a_failed_dashboard_response_forced_stays_a_reject(tmp_path):
    """A failed response reads alike whichever request it answered: not another format."""
    path = tmp_path / "consumerConnection_G.json"
    path.write_text('{"status": 1, "errMsg": "boom", "data": null}')
    snap = run(path, fmt="dashboard-consumerConnection")
    assert snap.table("rejects").column("reason").to_pylist() == [
        "dashboard answered status 1: boom"]


def test_forced_formats_of_correctly_named_files_import_as_before(tmp_path):
    snap = run(ROUTE, fmt="dashboard-topicRoute")
    assert snap.table("queues").num_rows > 0 and snap.table("rejects").num_rows == 0
    snap = run(DATA / "consumerProgress_OrderGroup.txt", fmt="mqadmin-consumerProgress")
    assert snap.table("offsets").num_rows > 0


def test_a_name_saying_another_command_than_the_content_is_said_first(tmp_path):
    """Without --format: the name says consumerProgress, the content is a route."""
    path = copy(ROUTE, tmp_path, "consumerProgress_G.json")
    with pytest.raises(CaptureError, match=re.escape(
            f"{path}: the file's name says consumerProgress, but its content is not "
            "consumerProgress output: it reads as a rocketmq-dashboard topic route response, "
            "which does not print the topic it is about. If that is the file meant, name it "
            "route_<topic>.json")):
        run(path)


def test_a_rename_is_asked_for_when_only_the_name_is_missing(tmp_path):
    path = copy(DATA / "consumerConnection_OrderGroup.txt", tmp_path, "out.txt")
    with pytest.raises(CaptureError, match=re.escape(
            f"{path}: cannot tell which group this file is about; the tool does not print "
            "it. Name the file consumerConnection_<group>.txt (e.g. "
            "consumerConnection_MyName.txt)")):
        run(path)
    # a dashboard route asks for the name docs/capture.md gives it, an mqadmin one for its
    for source, example in ((ROUTE, "route_<topic>.json"),
                            (DATA / "topicRoute_TopicOrder.json", "topicRoute_<topic>.json")):
        with pytest.raises(CaptureError, match=re.escape(f"Name the file {example}")):
            run(copy(source, tmp_path, "saved.json"))


@pytest.mark.parametrize(("source", "name", "rename"), [
    (ROUTE, "route_TopicOrder (1).json", "route_TopicOrder.json"),
    (DATA / "topicRoute_TopicOrder.json", "topicRoute_TopicOrder (2).json",
     "topicRoute_TopicOrder.json"),
])
def test_a_copys_mark_is_refused_saying_why_and_naming_the_file(tmp_path, capsys, source,
                                                                 name, rename):
    path = copy(source, tmp_path, name)
    assert jobs_cli.main(["capture", "import", str(path), "--output", str(tmp_path / "o"),
                          "--cluster", "c"]) == 2
    mark = re.search(r" \(\d\)", name).group(0)
    assert capsys.readouterr().err == (
        f"rebalance-audit: error: {path}: the file's name gives the topic "
        f"'TopicOrder{mark}', which is no RocketMQ topic name (letters, digits, %, |, _ and "
        f"- only): '{mark}' is what a browser or file manager adds to a second copy's name, "
        "and the topic is not guessed from it. If this is the topic TopicOrder, rename the "
        f"file {rename} (import one copy of one capture)\n")


def test_a_name_that_is_no_rocketmq_name_asks_for_the_files_own_prefix(tmp_path):
    path = copy(ROUTE, tmp_path, "route_Topic Order.json")
    with pytest.raises(CaptureError, match=re.escape(
            "which is no RocketMQ topic name (letters, digits, %, |, _ and - only): rename "
            "the file route_<topic>.json, as the topic is spelled on the broker")):
        run(path)
