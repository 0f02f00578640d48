"""Drift: queues whose observed holders differ from the recomputed (expected) ones.

Pure pandas, no Spark: the audit calls `drift_rows` once per bucket of groups
(reports/drift.py); tests call it on imported captures.
Vectorized: whether a queue drifts is decided from three counts per queue (expected
holders, observed holders, holders in both) — sets are equal exactly when the three are
equal — so no Python runs per row; the sorted holder lists are built only for the
drifting queues (normally few).

A group whose members all run a Kafka sticky assignor is compared by the properties its
assignment must have (SPEC §3: valid, balanced), not holder by holder: which
balanced assignment the sticky assignors settle on depends on the partitions each member
owned before, history the snapshots do not hold (the generations before the first one,
and between two). Its observed assignment is taken as expected when it is one they could
have made (`_sticky_verdicts`); any other is compared queue by queue as before.

kind, per queue whose holder sets differ:
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
from vocabulary.columns import (
    DRIFT_COLUMNS,
    GROUP_KEYS,
    HELD_BY_OTHER,
    HELD_TWICE,
    NOT_EXPECTED,
    NOT_HELD,
    QUEUE_KEYS,
    STICKY_BREAK,
    STICKY_STRATEGIES,
)

_NULL = "\x00"  # a null broker (Kafka) as a key value; sorts first, as null sorts as ""


def _prepare(df: pd.DataFrame) -> pd.DataFrame:
    out = df[[*QUEUE_KEYS, "client_id"]].copy()
    for col in ("snapshot_id", "cluster", "consumer_group", "topic", "client_id"):
        out[col] = out[col].astype(object)
    out["queue_id"] = out["queue_id"].astype("int64")
    out["broker_name"] = out["broker_name"].astype(object).where(out["broker_name"].notna(),
                                                                 _NULL)
    return out


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy's hash-based unique is several times slower on int64)."""
    values = np.sort(values, kind="stable")
    keep = np.ones(len(values), dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def _holder_lists(q: np.ndarray, clients: np.ndarray, wanted: np.ndarray,
                  n_queues: int) -> list[list[str]]:
    """Java-sorted distinct holder lists of the `wanted` queue codes ([] where none)."""
    pick = np.isin(q, wanted)
    held = pd.DataFrame({"q": q[pick], "client_id": clients[pick]}).drop_duplicates()
    lists: dict[int, list[str]] = {}
    if not held.empty:
        held["_rank"] = java_rank(held["client_id"].to_numpy(dtype=object))
        held = held.sort_values(["q", "_rank"], kind="stable")
        lists = held.groupby("q", sort=False)["client_id"].agg(list).to_dict()
    return [lists.get(int(code), []) for code in wanted]


def _sticky_verdicts(exp: pd.DataFrame, obs: pd.DataFrame,
                     members: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Which sticky groups' observed assignments the sticky assignors could have made
    (upstream's own check, verifyValidityAndBalance), and why the others could not be.

    A group qualifies when every member (`members`: GROUP_KEYS, topic, client_id,
    strategy; one row per member and subscribed topic) runs `sticky` or
    `cooperative-sticky`. It is settled when its observed holders hold every queue the
    recomputation has claimed and no other, each once, each by a member subscribing its
    topic, and no holder of a topic's queue holds two or more queues more than a member
    subscribing that topic (which could take one). Returns (settled: GROUP_KEYS; breaks:
    GROUP_KEYS + STICKY_BREAK, the failing properties of each other qualifying group in
    words, which the OBSERVED_DRIFT sentence quotes). All by groupby and merge, no Python
    per group."""
    none = pd.DataFrame(columns=GROUP_KEYS), pd.DataFrame(columns=[*GROUP_KEYS, STICKY_BREAK])
    if obs.empty or members.empty:
        return none
    other = (~members["strategy"].isin(STICKY_STRATEGIES)).groupby(
        [members[k] for k in GROUP_KEYS], sort=False).sum()
    sticky = other[other == 0].index.to_frame(index=False)
    if sticky.empty:
        return none
    holder = [*QUEUE_KEYS, "client_id"]  # a holder read twice is one, as below
    exp_q = exp[exp["client_id"].notna()].merge(sticky, on=GROUP_KEYS).drop_duplicates(holder)
    obs_q = obs[obs["client_id"].notna()].merge(sticky, on=GROUP_KEYS).drop_duplicates(holder)
    subscribers = members[members["topic"].notna()].merge(sticky, on=GROUP_KEYS)[
        [*GROUP_KEYS, "topic", "client_id"]].drop_duplicates()
    bad = []  # per failing property: GROUP_KEYS + STICKY_BREAK, sorted within its group

    def said(rows: pd.DataFrame, words: pd.Series | str) -> None:  # a group's first case
        bad.append(rows[GROUP_KEYS].assign(**{STICKY_BREAK: words}).drop_duplicates(
            GROUP_KEYS))

    n = obs_q.groupby(QUEUE_KEYS, sort=False).size()
    said(n[n > 1].index.to_frame(index=False), "a queue is held by two or more clients")
    queues = exp_q[QUEUE_KEYS].drop_duplicates().merge(
        obs_q[QUEUE_KEYS].drop_duplicates(), on=QUEUE_KEYS, how="outer", indicator=True)
    said(queues[queues["_merge"] == "left_only"], "a queue is held by nobody")
    said(queues[queues["_merge"] == "right_only"],
         "a queue the recomputation leaves unassigned is held")
    held = obs_q[[*GROUP_KEYS, "topic", "client_id"]].drop_duplicates().merge(
        subscribers, how="left", indicator=True)
    outsiders = held[held["_merge"] == "left_only"].sort_values(["topic", "client_id"])
    said(outsiders, "client " + outsiders["client_id"] + " holds queues of "
         + outsiders["topic"] + " without subscribing it")
    # balance: per topic, the most loaded holder against the least loaded subscriber
    load = obs_q.groupby([*GROUP_KEYS, "client_id"], sort=False).size().rename("n")
    loads = subscribers.merge(load.reset_index(), how="left").fillna({"n": 0})
    held_loads = held[held["_merge"] == "both"].drop(columns="_merge").merge(
        load.reset_index())
    by_topic = [*GROUP_KEYS, "topic"]
    most = held_loads.sort_values(["n", "client_id"], ascending=[False, True]) \
        .drop_duplicates(by_topic)
    least = loads.sort_values(["n", "client_id"]).drop_duplicates(by_topic)
    gap = most.merge(least, on=by_topic, suffixes=("", "_least"))
    gap = gap[gap["n"] - gap["n_least"] >= 2].sort_values(["topic"])
    said(gap, "client " + gap["client_id"] + " holds " + gap["n"].astype(int).astype(str)
         + " queues and " + gap["client_id_least"] + " only "
         + gap["n_least"].astype(int).astype(str) + ", though " + gap["client_id_least"]
         + " subscribes " + gap["topic"] + ", whose queues " + gap["client_id"]
         + " holds (a balanced assignment moves one to " + gap["client_id_least"] + ")")
    breaks = pd.concat(bad, ignore_index=True).groupby(GROUP_KEYS, sort=False)[
        STICKY_BREAK].agg("; ".join).reset_index()
    settled = sticky.merge(breaks[GROUP_KEYS], how="left", indicator=True)
    return settled[settled["_merge"] == "left_only"][GROUP_KEYS], breaks


def _as_observed(exp: pd.DataFrame, obs: pd.DataFrame, settled: pd.DataFrame) -> pd.DataFrame:
    """`exp` with the `settled` groups' expected rows replaced by their observed ones."""
    if settled.empty:
        return exp
    kept = exp.merge(settled, how="left", indicator=True)
    kept = kept[kept["_merge"] == "left_only"].drop(columns="_merge")
    return pd.concat([kept, obs.merge(settled, on=GROUP_KEYS)[kept.columns]],
                     ignore_index=True)


def drift_rows(expected: pd.DataFrame, observed: pd.DataFrame,
               members: pd.DataFrame | None = None, *, explained: bool = False
               ) -> pd.DataFrame:
    """One row per queue whose observed holders differ from the expected ones.

    expected: QUEUE_KEYS + client_id (null = a queue nobody is expected to hold);
    observed: QUEUE_KEYS + client_id (who really holds it); members, when given: the
    groups' members (GROUP_KEYS, topic, client_id, strategy), by which a group on the
    sticky assignors is compared by its properties (`_sticky_verdicts`); `explained`
    adds STICKY_BREAK, why such a group's assignment is not one they could settle on
    (null for other groups). Lists are sorted in Java `String.compareTo` order; rows are
    sorted by the keys."""
    exp, obs = _prepare(expected), _prepare(observed)
    breaks = pd.DataFrame(columns=[*GROUP_KEYS, STICKY_BREAK])
    if members is not None:
        settled, breaks = _sticky_verdicts(exp, obs, members.astype({"topic": object,
                                                                     "client_id": object}))
        exp = _as_observed(exp, obs, settled)
    keys = pd.concat([exp[QUEUE_KEYS], obs[QUEUE_KEYS]], ignore_index=True)
    qcode = keys.groupby(QUEUE_KEYS, sort=False).ngroup().to_numpy(dtype=np.int64)
    n_queues = int(qcode.max()) + 1 if len(qcode) else 0
    ccode, _ = pd.factorize(pd.concat([exp["client_id"], obs["client_id"]],
                                      ignore_index=True))
    n_clients = max(int(ccode.max()) + 1, 1) if len(ccode) else 1
    split = len(exp)

    def pairs(sl: slice) -> np.ndarray:  # distinct (queue, client) codes with a holder
        q, c = qcode[sl], ccode[sl]
        return _sorted_unique(q[c >= 0] * n_clients + c[c >= 0])

    e_pairs, o_pairs = pairs(slice(0, split)), pairs(slice(split, None))
    n_exp = np.bincount(e_pairs // n_clients, minlength=n_queues)
    n_obs = np.bincount(o_pairs // n_clients, minlength=n_queues)
    n_both = np.bincount(np.intersect1d(e_pairs, o_pairs, assume_unique=True) // n_clients,
                         minlength=n_queues)
    drifting = np.flatnonzero((n_exp != n_obs) | (n_obs != n_both))
    order = np.argsort(qcode, kind="stable")  # first row of every queue code
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = qcode[order][1:] != qcode[order][:-1]
    first = order[starts]
    out = keys.iloc[first[drifting]].reset_index(drop=True)
    ne, no = n_exp[drifting], n_obs[drifting]
    out["kind"] = np.select([no == 0, no >= 2, ne == 0],
                            [NOT_HELD, HELD_TWICE, NOT_EXPECTED], default=HELD_BY_OTHER)
    clients = pd.concat([exp["client_id"], obs["client_id"]], ignore_index=True).to_numpy(
        dtype=object)
    has = ccode >= 0
    e_has, o_has = has.copy(), has.copy()
    e_has[split:], o_has[:split] = False, False
    out["expected_clients"] = _holder_lists(qcode[e_has], clients[e_has], drifting, n_queues)
    out["observed_clients"] = _holder_lists(qcode[o_has], clients[o_has], drifting, n_queues)
    out = out.sort_values(QUEUE_KEYS, kind="stable").reset_index(drop=True)
    out["broker_name"] = out["broker_name"].astype(object).replace({_NULL: None})
    if not explained:
        return out[DRIFT_COLUMNS]
    return out[DRIFT_COLUMNS].merge(breaks.astype(object), on=GROUP_KEYS, how="left")
