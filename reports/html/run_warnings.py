"""A run's warnings, kept beside its tables so that every page showing its snapshots lists
them, not only the page the run itself wrote.

The warnings say what the tables cannot: an input missing a snapshot, groups whose lag
stays unknown, rows a left-out option removed, a later snapshot to audit again. No output
table has a place for them (the tables are a fixed contract), so each run writes
`OUTPUT/_warnings/<run_id>.json` once it has landed; a page reads the files of the runs
whose snapshots it shows. A file goes when no snapshot names its run any more.

A run can warn about a snapshot it did not audit: a backfill names the snapshot already
in the output right after the one it adds, whose churn now compares with the wrong one
until it is audited again. The file says which snapshot and cluster each warning is
about (`about`), and a page showing that snapshot lists the warning too, from any run
that landed after the shown snapshot's (`load_about`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

Key = tuple[str | None, str | None]  # (snapshot_id, cluster) a warning is about

FOLDER = "_warnings"
SUFFIX = ".json"


@dataclass
class RunWarnings:
    """The warnings of the shown runs, by run id (sorted: a default id starts with its
    run's start time); `unrecorded`: shown runs with no file (audited before runs kept
    their warnings, or stopped between landing and writing it); `unreadable`: shown runs
    whose file is there but cannot be read (damaged, cut, not readable by this user).
    The warnings of either are not known to be none."""

    by_run: dict[str, list[str]] = field(default_factory=dict)
    unrecorded: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    # what runs that landed after a shown snapshot's run said about it, by run id
    # (`load_about`)
    about_shown: dict[str, list[str]] = field(default_factory=dict)

    def count(self) -> int:
        return sum(len(texts) for texts in self.by_run.values())

    def count_about(self) -> int:
        return sum(len(texts) for texts in self.about_shown.values())


def _path(output: str, run_id: str) -> str:
    """The run's file: its id percent-encoded, so an id a scheduler passed with `--run-id`
    (`dag/2026-12-02`, `..`) names one file in the folder and nothing outside it."""
    return os.path.join(output, FOLDER, quote(run_id, safe="") + SUFFIX)


def save(output: str, run_id: str, warnings: Sequence[str],
         about: Sequence[Key] | None = None) -> str:
    """Write the run's warnings (none is a record too), with the (snapshot_id, cluster)
    each is about when given (`about`, one per warning; (None, None): no snapshot); the
    file's path. Raises OSError."""
    from reports.html import write_atomically

    record: dict = {"run_id": run_id, "warnings": list(warnings)}
    if about is not None:
        if len(about) != len(warnings):
            raise ValueError(f"{len(about)} 'about' keys for {len(warnings)} warnings")
        record["about"] = [list(key) for key in about]
    path = _path(output, run_id)
    write_atomically(path, json.dumps(record, indent=1, ensure_ascii=False))
    return path


def load(output: str, run_ids: Iterable[str]) -> RunWarnings:
    """The warnings each of `run_ids` recorded; a file missing or that cannot be read is
    said on the page (`unrecorded`, `unreadable`), never a failed page."""
    found = RunWarnings()
    for run_id in sorted(set(run_ids)):
        try:
            with open(_path(output, run_id), encoding="utf-8") as f:
                texts = json.load(f)["warnings"]
        except FileNotFoundError:
            found.unrecorded.append(run_id)
            continue
        # RecursionError: a file of nested brackets deeper than the parser's stack
        # (`[[[[…`) is as damaged as a cut one
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            texts = None
        if isinstance(texts, list):
            found.by_run[run_id] = [str(t) for t in texts]
        else:
            found.unreadable.append(run_id)
    return found


def load_about(output: str, wanted: dict[str, set[Key]]) -> dict[str, list[str]]:
    """Per run of `wanted`, the warnings its file says are about one of the (snapshot_id,
    cluster) keys wanted of it, in the run's order; runs with none are left out. A file
    missing, unreadable or without `about` (a run from before files kept it) gives none:
    these are extra words beside the shown runs' own, whose gaps `load` names."""
    found: dict[str, list[str]] = {}
    for run_id in sorted(wanted):
        try:
            with open(_path(output, run_id), encoding="utf-8") as f:
                record = json.load(f)
            texts, about = record["warnings"], record["about"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        if not (isinstance(texts, list) and isinstance(about, list)
                and len(texts) == len(about)):
            continue
        # a key of a damaged file may hold anything JSON does (a list is no set member)
        kept = [str(text) for text, key in zip(texts, about, strict=True)
                if isinstance(key, list) and len(key) == 2
                and all(k is None or isinstance(k, str) for k in key)
                and (key[0], key[1]) in wanted[run_id]]
        if kept:
            found[run_id] = kept
    return found


def prune(output: str) -> list[str]:
    """Remove the files of runs that no snapshot names any more (their snapshots were
    audited again, or a run audited none) and partial files of writers that died; the
    names removed.

    The folder is listed before `runs` is read: a file is written after its run landed,
    so every file listed belongs to a run that `runs` already shows if it is current."""
    from reports.html import dead_writers_partial
    from reports.html.data import complete_runs
    from vocabulary.errors import NoOutputError

    folder = os.path.join(output, FOLDER)
    if not os.path.isdir(folder):
        return []
    entries = os.listdir(folder)
    try:
        current = set(complete_runs(output)["run_id"])
    except NoOutputError:  # no complete run: no snapshot names any run
        current = set()
    removed = []
    for entry in entries:
        name = entry.rpartition(".tmp-")[0]
        if name.endswith(SUFFIX):  # a writer's partial file
            stale = dead_writers_partial(entry, name)
        else:
            stale = (entry.endswith(SUFFIX)
                     and unquote(entry.removesuffix(SUFFIX)) not in current)
        if stale:
            with suppress(OSError):
                os.remove(os.path.join(folder, entry))
                removed.append(entry)
    return removed
