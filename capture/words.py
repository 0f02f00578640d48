"""Lists in the capture's messages, as a sentence says them."""

from __future__ import annotations


def spoken(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
