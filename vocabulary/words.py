"""How a count or a name reads in the job's words: `1 client`, `16 clients` (a candidate's
label, the console's lines), a list cut to its first few (`a, b and 3 more`), and ids
quoted where bare they would not read as one."""

from __future__ import annotations

from collections.abc import Sequence


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and its noun, singular for one (`rebalance_udfs.what_if_lines` applies the same
    rule to a whole Arrow column)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


# how many names a message lists before it counts the rest: the warnings the pass counts
# (`rebalance_udfs.spark.report_pass`) and those `jobs.scope` finds name as many
NAMED = 5


def listed(first: Sequence[str], total: int, joiner: str = ", ") -> str:
    """The first few of `total` names, joined, then how many more there are: a message
    names a few and counts the rest (`a, b and 3 more`)."""
    more = total - len(first)
    return joiner.join(first) + (f" and {more} more" if more > 0 else "")


def named(name: str) -> str:
    """A snapshot, cluster or group id as a message shows it: bare, or quoted (Python's
    repr) when bare it would not read as one id: empty, or holding a blank or another
    whitespace or control character (`snapshot a b` read as two words, a tab as a gap)."""
    if name and name.isprintable() and not any(ch.isspace() for ch in name):
        return name
    return repr(name)


# how the run's warning, its console summary and report.html say that groups subscribe a
# topic the queues table has no readable row of (no finding code says so; SPEC §3 reports
# such a topic and allocates nothing of it): the page finds the warning by these words
EMPTY_TOPICS = "subscribe topic(s) with no readable queue"
