"""Drift: queues whose observed holders differ from the recomputed (expected) ones.

Pure pandas, no Spark: the audit's drift step calls `drift_rows` per batch of groups (it
is vectorized: one sort, two group-bys and one merge, no Python loop over rows).

kind, per queue whose sorted holder sets differ:
* NOT_HELD       — someone is expected, nobody is observed;
* HELD_TWICE     — two or more clients are observed holding it;
* NOT_EXPECTED   — one client is observed, nobody is expected (e.g. an unreadable queue,
  or a client that claims a queue the recomputation leaves unclaimed);
* HELD_BY_OTHER  — one client is observed, but not the expected one(s).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rebalance_udfs.ordering import java_rank

KEYS = ["snapshot_id", "cluster", "consumer_group", "topic", "broker_name", "queue_id"]
COLUMNS = [*KEYS, "expected_clients", "observed_clients", "kind"]
_NULL = "\x00"  # sorts before every broker name, as null sorts as ""
KINDS = ("NOT_HELD", "HELD_BY_OTHER", "HELD_TWICE", "NOT_EXPECTED")


def _holders(df: pd.DataFrame, rank: pd.Series, name: str) -> pd.DataFrame:
    """Per queue key: the distinct non-null client ids as a Java-sorted list."""
    held = df.assign(_rank=rank).dropna(subset=["client_id"])
    held = held.drop_duplicates([*KEYS, "client_id"]).sort_values([*KEYS, "_rank"], kind="stable")
    lists = held.groupby(KEYS, dropna=False, sort=False)["client_id"].agg(list).rename(name)
    queues = df[KEYS].drop_duplicates()
    out = queues.merge(lists.reset_index(), on=KEYS, how="left")
    out[name] = out[name].map(lambda v: v if isinstance(v, list) else [])
    return out


def drift_rows(expected: pd.DataFrame, observed: pd.DataFrame) -> pd.DataFrame:
    """One row per queue whose observed holders differ from the expected ones.

    expected: KEYS + client_id (null = a queue nobody is expected to hold);
    observed: KEYS + client_id (who really holds it). Lists are sorted in Java
    `String.compareTo` order; rows are sorted by the keys."""
    exp = expected[[*KEYS, "client_id"]].copy()
    obs = observed[[*KEYS, "client_id"]].copy()
    for df in (exp, obs):
        df["queue_id"] = df["queue_id"].astype("int64")
        # null broker (Kafka) as a sentinel: group-by/merge keys then keep one dtype
        df["broker_name"] = df["broker_name"].astype(object).where(df["broker_name"].notna(),
                                                                   _NULL)
    ids = pd.concat([exp["client_id"], obs["client_id"]], ignore_index=True)
    present = ids.notna().to_numpy()
    ranks = np.full(len(ids), -1, dtype=np.int64)
    if present.any():
        ranks[present] = java_rank(ids[present].to_numpy(dtype=object))
    exp_sets = _holders(exp, pd.Series(ranks[:len(exp)], index=exp.index), "expected_clients")
    obs_sets = _holders(obs, pd.Series(ranks[len(exp):], index=obs.index), "observed_clients")
    both = exp_sets.merge(obs_sets, on=KEYS, how="outer")
    for col in ("expected_clients", "observed_clients"):
        both[col] = both[col].map(lambda v: v if isinstance(v, list) else [])
    n_exp = both["expected_clients"].str.len()
    n_obs = both["observed_clients"].str.len()
    same = (n_exp == n_obs) & (both["expected_clients"].map(tuple)
                               == both["observed_clients"].map(tuple))
    out = both.loc[~same].copy()
    n_exp, n_obs = n_exp[~same], n_obs[~same]
    out["kind"] = np.select(
        [n_obs == 0, n_obs >= 2, n_exp == 0],
        ["NOT_HELD", "HELD_TWICE", "NOT_EXPECTED"], default="HELD_BY_OTHER")
    out = out.sort_values(KEYS, kind="stable").reset_index(drop=True)
    out["broker_name"] = out["broker_name"].astype(object).replace({_NULL: None})
    return out[COLUMNS]
