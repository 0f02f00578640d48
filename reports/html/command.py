"""`spark-submit.sh report`: render report.html again from any run's Delta outputs.

Reads with delta-rs only (no Spark, no JVM): seconds, and it works where Java is absent."""

from __future__ import annotations

import argparse

from vocabulary.arguments import non_blank, path, positive_int


def add_report_parser(sub) -> argparse.ArgumentParser:
    report = sub.add_parser(
        "report", help="render report.html from an output root (no Spark needed)",
        description="Render the self-contained report.html (charts inlined, opens without "
                    "network) from the Delta tables of an audit's output root. Default: "
                    "the latest complete snapshot of each cluster in the runs table.",
    )
    report.add_argument("--output", required=True, type=path, metavar="DIR",
                        help="output root of an audit run (holds runs, group_balance, ...)")
    report.add_argument("--snapshot", type=non_blank, metavar="ID", action="append",
                        dest="snapshots",
                        help="show this snapshot (repeatable); default: latest per cluster")
    report.add_argument("--group", type=non_blank, metavar="G", action="append",
                        dest="groups",
                        help="show only this consumer group (repeatable), findings or not")
    report.add_argument("--html", type=path, metavar="PATH",
                        help="where to write the page (default: DIR/report.html)")
    report.add_argument("--top", type=positive_int, metavar="N",
                        help="groups needing attention to show (default 25); every group "
                             "named with --group is shown")
    return report


def run_report(args: argparse.Namespace) -> int:
    from reports.html import write_report

    print(write_report(args.output, args.html, args.snapshots, args.groups, args.top))
    return 0
