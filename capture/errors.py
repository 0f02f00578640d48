"""Capture's user-facing error: part of the one hierarchy (`vocabulary.errors`)."""

from __future__ import annotations

from vocabulary.errors import CaptureError

__all__ = ["CaptureError"]
