"""Which groups the report shows, and in what order (the pandas twin of the run summary's
choice in jobs/audit.py `_worst_groups`; both weigh by `vocabulary.severity`)."""

from __future__ import annotations

import pandas as pd

from vocabulary.severity import SEVERITY_WEIGHTS

DEFAULT_TOP = 25


def whole_group_rows(balance: pd.DataFrame) -> pd.DataFrame:
    """group_balance rows with a null topic: one per group per snapshot."""
    if balance.empty or "topic" not in balance.columns:
        return balance
    return balance[balance["topic"].isna()]


def severity(rows: pd.DataFrame) -> pd.Series:
    """The weighted sum of SEVERITY_WEIGHTS (missing or null figures count 0)."""
    total = pd.Series(0.0, index=rows.index)
    for column, weight in SEVERITY_WEIGHTS.items():
        if column in rows.columns:
            total += pd.to_numeric(rows[column], errors="coerce").fillna(0) * weight
    return total


def has_findings(rows: pd.DataFrame) -> pd.Series:
    """Rows with at least one finding (`findings`: the list, or how many there are)."""
    if "findings" not in rows.columns:
        return pd.Series(False, index=rows.index)
    if pd.api.types.is_numeric_dtype(rows["findings"]):
        return rows["findings"].fillna(0) > 0
    return rows["findings"].map(lambda f: f is not None and len(f) > 0)


def latest_per_group(rows: pd.DataFrame) -> pd.DataFrame:
    """Each (cluster, group) at its latest shown snapshot."""
    if rows.empty:
        return rows
    ordered = rows.sort_values(["captured_at", "snapshot_id"], na_position="first")
    return ordered.groupby(["cluster", "consumer_group"], dropna=False).tail(1)


def groups_needing_attention(balance: pd.DataFrame, top: int = DEFAULT_TOP,
                             everything: bool = False) -> pd.DataFrame:
    """Whole-group rows with findings, worst first, at most `top`; with `everything`
    (the groups asked for by --group) all rows, findings or not, however many."""
    rows = latest_per_group(whole_group_rows(balance))
    if rows.empty:
        return rows
    if not everything:
        rows = rows[has_findings(rows)]
    return most_severe(rows.assign(severity=severity(rows)), None if everything else top)


def most_severe(rows: pd.DataFrame, top: int | None) -> pd.DataFrame:
    """The `top` rows (None: all) by `severity` (worst first), then snapshot, cluster
    and group."""
    rows = rows.sort_values(["severity", "snapshot_id", "cluster", "consumer_group"],
                            ascending=[False, True, True, True], kind="stable")
    return (rows if top is None else rows.head(top)).reset_index(drop=True)


def skew_counts(skews: pd.Series) -> pd.Series:
    """How many groups have each skew (skew value → groups; nulls left out)."""
    values = pd.to_numeric(skews, errors="coerce").dropna().astype("int64")
    return values.value_counts().sort_index()
