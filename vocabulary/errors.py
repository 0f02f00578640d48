"""One exception hierarchy: every user mistake is an `AuditError`.

The command line catches `AuditError` once and exits 2 with its message; anything else
is a bug (exit 1, traceback). Each subclass names the layer that found the problem, and
its message names the table, column, setting or file to fix.
"""

from __future__ import annotations


class AuditError(Exception):
    """A run cannot proceed because of its inputs, settings or storage (exit 2)."""


class ConfigError(AuditError):
    """The configuration is unusable; the message says which setting and why."""


class InputError(AuditError):
    """An input table has the wrong shape; the message names the table and column."""


class TableError(AuditError):
    """A table cannot be read or written; the message names the table and what to do."""


class CaptureError(AuditError):
    """A capture cannot proceed (broker unreachable, timeout, not authorized, unrecognised
    file); the message names the cause and what to do."""


class NoOutputError(AuditError):
    """The output root holds no complete run to report on."""


def first_line(exc: BaseException) -> str:
    """The first line of an error, for a message that names the table: no JVM stack, no
    page of text (500 characters at most), the error's type when it says nothing."""
    text = str(exc).strip().splitlines()
    return text[0][:500] if text else type(exc).__name__
