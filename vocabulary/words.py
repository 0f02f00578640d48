"""How a count reads in the job's words: `1 client`, `16 clients` (a candidate's label,
the console's lines)."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and its noun, singular for one (`rebalance_udfs.what_if_lines` applies the same
    rule to a whole Arrow column)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
