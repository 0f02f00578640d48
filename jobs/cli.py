"""Command line: `spark-submit.sh audit [flags]` (or `python -m jobs.cli audit`), and
`report` (report.html from an output root, no Spark).

Exit codes: 0 the run succeeded; 2 a user mistake (config, input table, storage, capture:
any `vocabulary.errors.AuditError`) with a message saying what to fix; 1 an unexpected
failure (a bug: Python prints the traceback).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vocabulary.arguments import path, run_id, snapshot_id

if TYPE_CHECKING:
    from jobs.config import AuditConfig

EXIT_OK, EXIT_FAILED, EXIT_USER = 0, 1, 2
_GIVEN = "_values_given"  # the namespace's record of the single-value flags given
# set by spark-submit.sh (a wrapper of the user's may set its own name): the command's name
# in usage lines and errors, which `sys.argv[0]` cannot give (the launcher runs
# `python -m jobs.cli` and `spark-submit jobs/cli.py` itself)
PROG_ENV = "REBALANCE_AUDIT_PROG"
CAPTURE_MODULE = "python -m capture.cli"  # enters one level down, at `capture`


class _GivenOnce(argparse._StoreAction):
    """A flag of one value refuses a second, different one: argparse kept the last, so
    `--output prod ... --output scratch` (a flag added to a scheduled line) wrote to
    scratch without a word. The same value twice is no conflict."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = vars(namespace).setdefault(_GIVEN, {})
        if self.dest in given and given[self.dest][1] != values:
            first, before = given[self.dest]
            parser.error(f"argument {option_string}: given twice ({first} {before}, "
                         f"{option_string} {values}): give it once")
        given[self.dest] = (option_string, values)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """Every job's parser (sub-commands take the class of their parent's): plain stores
    are `_GivenOnce`."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _GivenOnce)
        self.register("action", "store", _GivenOnce)


def program_name(argv0: str | None = None) -> str:
    """The command as the user typed it, for usage lines and argparse's errors: they said
    `spark-submit.sh` under `python -m jobs.cli`, `python -m capture.cli` and the
    `rebalance-audit` script too, a command those users had not run."""
    if named := os.environ.get(PROG_ENV, "").strip():
        return named
    argv0 = sys.argv[0] if argv0 is None else argv0
    entry = os.path.normpath(argv0 or "").split(os.sep)
    if entry[-1:] == ["rebalance-audit"]:
        return "rebalance-audit"
    if entry[-2:] == ["jobs", "cli.py"]:
        return "python -m jobs.cli"
    if entry[-2:] == ["capture", "cli.py"]:
        return CAPTURE_MODULE
    return "spark-submit.sh"  # the README's command; also in-process callers (tests)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    prog = program_name() if prog is None else prog
    parser = _Parser(
        prog=prog,
        description="Recompute RocketMQ / Kafka consumer-group assignments exactly as the "
                    "clients do and write assignment, load, balance and rejects reports as "
                    "Delta tables.",
    )
    sub = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    audit = sub.add_parser(
        "audit", help="audit consumer groups (the main job)",
        description="Audit consumer-group rebalancing. With no --queues/--members it "
                    "generates the embedded demo cluster as local Delta tables and audits "
                    "it. Flags override the config file.",
    )
    # a path flag refuses a blank value (an unset shell variable): `--offsets ""` ran
    # without lag and without the warning a run without --offsets gets, `--config ""` and
    # `--queues "" --members ""` ran the demo
    audit.add_argument("--config", default=None, type=path, metavar="YAML",
                       help="settings file, e.g. conf/local.yaml (default: built-in "
                            "defaults, which equal conf/local.yaml)")
    audit.add_argument("--queues", type=path, metavar="PATH",
                       help="Delta table: queue topology")
    audit.add_argument("--members", type=path, metavar="PATH",
                       help="Delta table: group membership")
    audit.add_argument("--offsets", type=path, metavar="PATH",
                       help="Delta table: committed / consumed offsets (optional)")
    audit.add_argument("--observed", type=path, metavar="PATH",
                       help="Delta table: who really holds each queue (optional; from "
                            "`capture`); differences go to the drift table")
    audit.add_argument("--output", type=path, metavar="DIR",
                       help="output root; one Delta table per report below it")
    audit.add_argument("--snapshot", type=snapshot_id, metavar="ID", action="append",
                       dest="snapshots",
                       help="audit only this snapshot_id (repeatable); default: all")
    audit.add_argument("--engine", choices=["auto", "native", "offline"],
                       help="Delta engine: native = delta-spark jars on the classpath; "
                            "offline = delta-rs log + Spark parquet IO; auto picks (default)")
    audit.add_argument("--buckets", type=int, metavar="N",  # bounds: AuditConfig
                       help="groups are hashed into N pandas-UDF calls (default: sized from "
                            "the inputs' rows, see jobs/sizing.py)")
    audit.add_argument("--demo-groups", type=int, metavar="N",
                       help="ordinary groups in the generated demo cluster (default 300, "
                            "at most 50,000)")
    audit.add_argument("--compare-strategies", action=argparse.BooleanOptionalAction,
                       default=None,
                       help="also write strategy_comparison: the queue moves AVG, "
                            "AVG_BY_CIRCLE, CONSISTENT_HASH and sticky would have caused "
                            "between the run's snapshots (recomputes every group once per "
                            "strategy; always on for the demo)")
    audit.add_argument("--what-if", choices=["all", "findings", "off"], default=None,
                       dest="what_if",
                       help="what_if table: other client counts, strategies and a split by "
                            "topic simulated for the groups with a finding (default), every "
                            "group, or none")
    audit.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                       help="fail (exit 2, nothing written) when a snapshot is missing from "
                            "an input or an input is empty, instead of warning (on in "
                            "conf/cluster.yaml)")
    audit.add_argument("--spark-progress", action=argparse.BooleanOptionalAction,
                       default=None, dest="spark_progress",
                       help="show Spark's console progress bars (default off: the run prints "
                            "one line per step with its rows and time)")
    audit.add_argument("--run-id", type=run_id, metavar="ID",
                       help="run id stamped on every row (default: UTC time + random suffix)")
    from capture.cli import add_capture_parser

    add_capture_parser(sub, prog=prog if prog == CAPTURE_MODULE else None)
    from reports.html.command import add_report_parser

    add_report_parser(sub)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line's arguments. A flag the chosen job lacks is that job's usage error,
    with the closest flags it has: argparse reported it as the top-level parser's, with
    the top-level usage (`usage: spark-submit.sh [-h] JOB ...`) and no hint."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        job = _chosen(parser, args)
        near = sorted({match for extra in extras if extra.startswith("--")
                       for match in difflib.get_close_matches(
                           extra.split("=", 1)[0], job._option_string_actions, n=1)})
        job.error(f"unrecognized arguments: {' '.join(extras)}"
                  + (f" (did you mean {' or '.join(near)}?)" if near else ""))
    vars(args).pop(_GIVEN, None)
    return args


def _chosen(parser: argparse.ArgumentParser,
            args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest sub-command parser `args` went through (audit, report, capture import)."""
    while parser._subparsers is not None:
        [choices] = [a for a in parser._subparsers._group_actions
                     if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, choices.dest, None)
        if name not in choices.choices:
            break
        parser = choices.choices[name]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from jobs.progress import configure_logging
    from vocabulary.errors import AuditError

    configure_logging()
    try:
        return JOBS[args.job](args)
    except AuditError as exc:
        # a write that failed because the JVM or a worker was killed under it is that
        if (gone := _runtime_gone(exc)) is not None:
            return gone
        print(f"rebalance-audit: error: {exc}", file=sys.stderr)
        return EXIT_USER
    except KeyboardInterrupt as exc:
        from jobs.interrupt import EXIT_INTERRUPTED, RunInterrupted

        said = f": {exc}" if isinstance(exc, RunInterrupted) else ""
        print(f"rebalance-audit: interrupted{said}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        from jobs.resource_errors import resource_message

        # the JVM out of a resource is a setting to change (exit 2, as a user's); one
        # gone under the run is said as such (exit 1); anything else is a bug's traceback
        said = resource_message(exc)
        if said is None:
            if (gone := _runtime_gone(exc)) is not None:
                return gone
            raise
        print(f"rebalance-audit: error: {said}", file=sys.stderr)
        return EXIT_USER


def _runtime_gone(exc: BaseException) -> int | None:
    """EXIT_FAILED, with one line saying so, when `exc` comes of the JVM or a Python
    worker gone under the run (`jobs.resource_errors.gone_message`); None otherwise.
    py4j's own records of the calls that still try the JVM are muted first."""
    from jobs.resource_errors import gone_message, mute_py4j

    if (gone := gone_message(exc)) is None:
        return None
    mute_py4j()
    print(f"rebalance-audit: error: {gone}", file=sys.stderr)
    return EXIT_FAILED


def audit_config(args: argparse.Namespace) -> AuditConfig:
    """The run's configuration: the config file overridden by the flags."""
    from jobs.config import load_config

    return load_config(
        args.config, queues=args.queues, members=args.members, offsets=args.offsets,
        observed=args.observed, output=args.output, snapshots=args.snapshots,
        engine=args.engine, buckets=args.buckets, demo_groups=args.demo_groups,
        run_id=args.run_id, compare_strategies=args.compare_strategies, strict=args.strict,
        what_if=args.what_if, spark_progress=args.spark_progress,
    )


def ignored_flags(args: argparse.Namespace, config: AuditConfig) -> list[str]:
    """Flags given that this run does not use: said, not refused (a wrapper script may pass
    them always)."""
    if args.demo_groups is not None and not config.is_demo:
        return [f"--demo-groups {args.demo_groups} is for the demo only: this run audits "
                "--queues / --members and ignores it"]
    return []


def run_audit(args: argparse.Namespace) -> int:
    from jobs.preflight import check_output_place
    from jobs.sizing import driver_memory_env

    config = audit_config(args)
    for text in ignored_flags(args, config):
        print(f"warning: {text}", file=sys.stderr)
    check_output_place(config)  # before the JVM starts: seconds, not minutes
    driver_memory_env()  # a heap the JVM would refuse
    from jobs.audit import run
    from jobs.interrupt import for_command_line
    from reports.summary import print_summary

    for_command_line()
    print_summary(run(config))
    return EXIT_OK


def _capture(args: argparse.Namespace) -> int:
    from capture.cli import run_capture

    return run_capture(args)


def _report(args: argparse.Namespace) -> int:
    from reports.html.command import run_report

    return run_report(args)


JOBS = {"audit": run_audit, "capture": _capture, "report": _report}


if __name__ == "__main__":
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
