"""Value types the command line's flags share (`audit`, `report`, `capture`): a value
they refuse is argparse's usage error, exit 2, before anything runs."""

from __future__ import annotations

import argparse


def non_blank(text: str) -> str:
    """A name or id, not blank: `--cluster "$CLUSTER"` with the variable unset wrote rows
    of an empty cluster name, `--snapshot ""` asked for a snapshot no input can hold, and
    `--run-id ""` was quietly replaced by a new id."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be blank")
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
