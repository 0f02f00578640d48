"""The one exception the capture CLI maps to exit code 2."""

from __future__ import annotations


class CaptureError(Exception):
    """A capture cannot proceed (broker unreachable, timeout, not authorized, unrecognised
    file); the message names the cause and what to do."""
