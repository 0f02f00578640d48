"""Value types the command line's flags share (`audit`, `report`, `capture`): a value
they refuse is argparse's usage error, exit 2, before anything runs."""

from __future__ import annotations

import argparse
import os

from vocabulary.partitions import shown_id, unfit_reason


def non_blank(text: str) -> str:
    """A name or id, not blank: `--cluster "$CLUSTER"` with the variable unset wrote rows
    of an empty cluster name, `--snapshot ""` asked for a snapshot no input can hold, and
    `--run-id ""` was quietly replaced by a new id; a path flag (`--offsets "$OFFSETS"`)
    was taken as given and read as no table."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be blank")
    return text


def run_id(text: str) -> str:
    """A run id: not blank, and no control character (a newline split the console's lines
    and stamped itself into every row of the run)."""
    non_blank(text)
    if any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} holds a control character (a newline, a tab): the run id is stamped "
            "on every row and printed; use visible characters")
    return text


def positive_int(text: str) -> int:
    """A whole number of 1 or more (a count of things to show)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def snapshot_id(text: str) -> str:
    """A snapshot id an output partition can hold: `capture --snapshot` of one no audit
    could write, or `audit --snapshot` whose rows the rejects' null partition would gain
    again on every re-run, stopped here instead."""
    non_blank(text)
    why = unfit_reason(text)
    if why is not None:
        raise argparse.ArgumentTypeError(f"{shown_id(text)} is {why}")
    return text


def path(text: str) -> str:
    """A file or table path, not blank, `~` expanded: the shell leaves a quoted `~` to the
    program, and Spark took it as a folder named `~` where delta-rs read the home folder
    (the run wrote one place and read another)."""
    non_blank(text)
    return os.path.expanduser(text)
