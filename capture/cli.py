"""`capture kafka` and `capture import`: the command-line face of the capture package.

jobs/cli.py mounts it with `add_capture_parser(sub)` and dispatches `args.job == "capture"`
to `run_capture(args)`. Exit codes: 0 written; 2 a capture error (broker unreachable,
timeout, not authorized, unrecognised file, unwritable output) with the cause.
Starts no JVM.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from capture.errors import CaptureError
from storage.paths import (
    delta_table_holding,
    existing_ancestor,
    is_local,
    without_file_scheme,
)
from vocabulary.arguments import non_blank, path, snapshot_id
from vocabulary.columns import FIRST_CAPTURE_YEAR

if TYPE_CHECKING:
    from capture.tables import Snapshot


def add_capture_parser(subparsers: argparse._SubParsersAction,
                       prog: str | None = None) -> argparse.ArgumentParser:
    """Add the `capture` job (sub-commands `kafka` and `import`) to a sub-parser set;
    `prog` names it when it is the command itself (`python -m capture.cli`)."""
    named = {"prog": prog} if prog else {}
    parser = subparsers.add_parser(
        "capture", **named, help="capture a cluster's consumer groups into the input tables",
        description="Write queues, members, offsets, observed and rejects Delta tables "
                    "(one snapshot per call) from a live Kafka cluster or from the output "
                    "of kafka-consumer-groups.sh, mqadmin or rocketmq-dashboard.")
    sub = parser.add_subparsers(dest="capture_command", required=True, metavar="SOURCE")
    kafka = sub.add_parser("kafka", help="live capture from a Kafka cluster")
    # blank (an unset variable): librdkafka said "cannot reach : _TRANSPORT"
    kafka.add_argument("--bootstrap-servers", type=non_blank, required=True,
                       metavar="HOST:PORT")
    kafka.add_argument("--output", type=_local_folder, required=True, metavar="DIR",
                       help="folder of the input tables (queues, members, offsets, "
                            "observed, rejects), the audit's --queues ... below it")
    kafka.add_argument("--cluster", type=non_blank, metavar="NAME",
                       help="cluster name in the tables (default: the cluster id its brokers "
                       "report)")
    kafka.add_argument("--group", type=non_blank, action="append", dest="groups", default=[],
                       metavar="G",
                       help="capture only this group (repeatable; default: all groups)")
    kafka.add_argument("--snapshot", type=snapshot_id, metavar="ID",
                       help="snapshot id (default: capture time)")
    kafka.add_argument("--client-config", type=path, metavar="FILE",
                       help="librdkafka properties (key=value lines): security, SASL, TLS")
    kafka.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS",
                       help="per-request timeout (default 30)")
    imp = sub.add_parser("import", help="import admin-tool output files")
    imp.add_argument("files", nargs="+", type=path, metavar="FILE",
                     help="admin-tool outputs of one cluster at one time (formats detected)")
    imp.add_argument("--output", type=_local_folder, required=True, metavar="DIR",
                     help="folder of the input tables (queues, members, offsets, "
                          "observed, rejects), the audit's --queues ... below it")
    imp.add_argument("--cluster", type=non_blank, required=True, metavar="NAME",
                     help="cluster name in the tables (the files do not say it)")
    imp.add_argument("--snapshot", type=snapshot_id, metavar="ID",
                     help="snapshot id (default: capture time)")
    imp.add_argument("--captured-at", metavar="TS",
                     help="when the files were taken (ISO 8601; default: now, UTC)")
    from capture.importers import FORMATS

    imp.add_argument("--format", choices=FORMATS, metavar="F",
                     help="force one format for every file (default: detected); one of "
                          + ", ".join(FORMATS))
    return parser


def _local_folder(text: str) -> str:
    """--output: a local folder (captures take turns there under a file lock, which
    remote storage has no equivalent of; an `s3://` path became a local `s3:` folder
    name). `file:` URLs are taken as the path they name; `~` is expanded
    (`vocabulary.arguments.path`)."""
    text = path(text)
    if not is_local(text):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a capture writes a local folder; capture there, then copy the "
            "folder to the remote storage the audit reads")
    if (table := delta_table_holding(text)) is not None:
        raise argparse.ArgumentTypeError(
            f"{text!r} lies in the Delta table at {table}, whose VACUUM would delete the "
            "capture's tables (files its log does not name): capture into a folder of its "
            "own")
    ancestor = existing_ancestor(Path(without_file_scheme(text)))
    if ancestor.exists() and not ancestor.is_dir():  # said "[Errno 17] File exists"
        raise argparse.ArgumentTypeError(
            f"{text!r}: {ancestor} is a file, not a folder; point --output at a folder")
    return without_file_scheme(text)


MAX_TIMEOUT = 3600  # librdkafka's request timeout limit (0..3600000 ms)
MIN_TIMEOUT = 0.001


def _seconds(text: str) -> float:
    """--timeout: a positive, finite number of seconds (librdkafka waits forever on -1),
    at most librdkafka's limit (beyond it: a traceback, or an overflow read as a timeout)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    if value < MIN_TIMEOUT:  # librdkafka counts whole milliseconds: less would be 0 ms
        raise argparse.ArgumentTypeError(
            f"{text!r}: at least {MIN_TIMEOUT} seconds (librdkafka counts milliseconds)")
    if value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"{text!r}: at most {MAX_TIMEOUT} seconds (librdkafka's request timeout limit)")
    return value


def _parse_time(text: str | None) -> datetime:
    if text is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except ValueError as exc:
        raise CaptureError(f"--captured-at {text!r} is not an ISO 8601 time") from exc
    except OverflowError as exc:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise CaptureError(f"--captured-at {text!r} is out of range in UTC") from exc
    if value.year < FIRST_CAPTURE_YEAR:  # the audit would reject every row of it
        raise CaptureError(f"--captured-at {text!r} is before {FIRST_CAPTURE_YEAR}: no "
                           "capture time (leave it out to take the current time)")
    return value


def _snapshot_id(given: str | None, at: datetime) -> str:
    return given or at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _refuse_nothing_read(source: str, snapshot: Snapshot,
                         nothing: str = "a header without rows, or nothing the importers "
                                        "read") -> None:
    """A capture is written as a whole snapshot of its cluster, replacing an earlier one of
    the same id: a capture that gave no queue, member, offset or holder row (files of a
    header without rows or lines all rejected; `--group`s whose members the broker does
    not describe and that committed nothing) would replace it by nothing. Refused, naming
    `source` and why (`nothing` when no row was rejected either)."""
    from capture.tables import TABLES

    if any(snapshot.rows[name] for name in TABLES if name != "rejects"):
        return
    rejected = snapshot.rows["rejects"]
    why = (f"; {len(rejected)} rejected, the first: {rejected[0]['reason']}"
           if rejected else f" ({nothing})")
    raise CaptureError(f"{source}: no queue, member, offset or holder row read{why}. "
                       "Nothing was written: no earlier capture of snapshot "
                       f"{snapshot.snapshot_id} is replaced")


def _unauditable(snapshot: Snapshot, written: dict[str, int]) -> list[str]:
    """A capture with no members row cannot be audited: an audit finds no group in it and
    sends its queues and offsets rows to rejects (their lag with them). Said now, not
    after an audit that exits 0 having audited nothing."""
    if written.get("members", 0):
        return []
    rejected = snapshot.rows["rejects"]
    why = (f" ({len(rejected)} rejects row(s), the first: {rejected[0]['reason']})"
           if rejected else "")
    return [f"snapshot {snapshot.snapshot_id} of cluster {snapshot.cluster} has no members "
            f"row{why}. An audit of it has no group to assign: it audits nothing and sends "
            "its queues and offsets rows to rejects"]


def run_capture(args: argparse.Namespace) -> int:
    """Run `capture kafka` or `capture import`; print one line per table written."""
    logging.getLogger("capture.librdkafka").setLevel(logging.CRITICAL)
    from capture.tables import LOCK_WAIT_SECONDS, write_snapshot

    if args.capture_command == "kafka":
        from capture.kafka_live import KafkaCaptureOptions, capture_kafka, read_client_config

        at = _parse_time(None)
        opts = KafkaCaptureOptions(
            bootstrap_servers=args.bootstrap_servers,
            cluster=args.cluster,
            snapshot_id=_snapshot_id(args.snapshot, at), captured_at=at,
            groups=list(args.groups or []),
            client_config=read_client_config(args.client_config) if args.client_config
            else {},
            timeout=args.timeout)
        snapshot = capture_kafka(opts)
        groups = f" (--group {', '.join(opts.groups)})" if opts.groups else ""
        _refuse_nothing_read(f"{opts.bootstrap_servers}{groups}", snapshot,
                             "no consumer group listed has a committed offset or a member "
                             "whose subscription the broker describes: a capture takes a "
                             "group's topics from those")
    else:
        from capture.importers import import_files

        at = _parse_time(args.captured_at)
        snapshot = import_files(args.files, cluster=args.cluster,
                                snapshot_id=_snapshot_id(args.snapshot, at),
                                captured_at=at, fmt=args.format)
        _refuse_nothing_read(", ".join(args.files), snapshot)
    written = write_snapshot(args.output, snapshot, on_wait=partial(
        print, f"another capture is writing {args.output}: waiting for it to end (at most "
               f"{LOCK_WAIT_SECONDS / 60:g} minutes)", file=sys.stderr, flush=True))
    for warning in [*snapshot.warnings, *_unauditable(snapshot, written)]:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"snapshot {snapshot.snapshot_id} of cluster {snapshot.cluster}")
    for table, rows in written.items():
        print(f"  {table:<9} {rows:>8} rows  {args.output.rstrip('/')}/{table}")
    return 0


if __name__ == "__main__":
    # `python -m capture.cli kafka|import ...` is `spark-submit.sh capture ...`: the one
    # command line, whose exit codes and messages a user mistake gets
    from jobs.cli import main

    sys.exit(main(["capture", *sys.argv[1:]]))
