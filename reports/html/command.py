"""`spark-submit.sh report`: render report.html again from any run's Delta outputs.

Reads with delta-rs only (no Spark, no JVM): seconds, and it works where Java is absent."""

from __future__ import annotations

import argparse


def add_report_parser(sub) -> argparse.ArgumentParser:
    report = sub.add_parser(
        "report", help="render report.html from an output root (no Spark needed)",
        description="Render the self-contained report.html (charts inlined, opens without "
                    "network) from the Delta tables of an audit's output root. Default: "
                    "the latest complete snapshot of each cluster in the runs table.",
    )
    report.add_argument("--output", required=True, metavar="DIR",
                        help="output root of an audit run (holds runs, group_balance, ...)")
    report.add_argument("--snapshot", metavar="ID", action="append", dest="snapshots",
                        help="show this snapshot (repeatable); default: latest per cluster")
    report.add_argument("--group", metavar="G", action="append", dest="groups",
                        help="show only this consumer group (repeatable), findings or not")
    report.add_argument("--html", metavar="PATH",
                        help="where to write the page (default: DIR/report.html)")
    report.add_argument("--top", type=_positive, metavar="N",
                        help="groups needing attention to show (default 25); every group "
                             "named with --group is shown")
    return report


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def run_report(args: argparse.Namespace) -> int:
    from reports.html import write_report

    print(write_report(args.output, args.html, args.snapshots, args.groups, args.top))
    return 0
