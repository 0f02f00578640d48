"""consumer_load and group_balance figures of one bucket of consumer groups, in one call.

Part of the report pass (`rebalance_udfs.report_pass`). It
receives a bucket's claim facts (`rebalance_udfs.claim_facts`: one row per (group,
topic, client) of the assignment rows, FACT_COLUMNS) and member rows (MEMBER_COLUMNS) and
returns every consumer_load row and every group_balance row of those groups: figures and
findings. Every figure is a per-group computation over rows already in the call, so Spark
shuffles a group's rows once instead of once per aggregation and join; the
recommendation's words stay Spark expressions over these figures (`reports.group_balance`).

Semantics are those of the Spark aggregations it replaced (kept as the tests' oracle,
`tests/support/balance_oracle.py`): counts and sums of longs are exact integers; input
rates are exact decimals (`rebalance_udfs.exact`) and a mean of rates is rounded half-up
to 9 decimals, as Spark's decimal average is; means of counts and lags are doubles of the
exact sums; strings sort in code-point order, which is Spark's byte order of UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.exact import (
    MEAN_DIGITS,
    MEAN_TYPE,
    RATE_SCALE,
    RATE_TYPE,
    Groups,
    decimal_array,
    decimal_units,
    first_of,
    mean_half_up,
    nullable,
    take,
)
from rebalance_udfs.key_codes import column_codes, key_codes
from vocabulary.columns import (
    BROKER_MODES,
    CLIENT,
    CLUSTERING,
    POOLED_ASSIGNORS,
    POP,
    RETRY_TOPIC_PREFIX,
    SHARED_MODES,
)
from vocabulary.findings import (
    BROKER_STRATEGIES,
    FINDINGS,
    LAG_SKEW_FACTOR,
    LOAD_FINDINGS,
    RETRY_BY_DESIGN,
    SPLIT_BRAIN,
)
from vocabulary.schemas import BALANCE_FIGURES_ARROW_SCHEMA, LOAD_FIGURES_ARROW_SCHEMA

GROUP = ["snapshot_id", "cluster", "consumer_group"]
FACT_INTS = ("rows", "lag_all", "lag_all_known", "rate_all_known", "contended", "claims",
             "claim_lag", "queues", "unconsumed_queues", "contended_queues", "queue_lag",
             "queue_lag_known", "queue_rate_known")
FACT_RATES = ("rate_all", "claim_rate", "queue_rate")
FACT_COLUMNS = [*GROUP, "topic", "client_id", *FACT_INTS, *FACT_RATES]
# `variant`: the strategy with its parameters as one comparable string (made in Spark)
MEMBER_COLUMNS = [*GROUP, "client_id", "topic", "strategy", "variant", "message_model",
                  "client_room", "client_addr", "allocation_mode"]


# ------------------------------------------------------------------------- small helpers
def _strings(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=object)


def _column(table: pa.Table, name: str) -> pa.Array:
    return table.column(name).combine_chunks()


def _is_in(values: pa.Array, choices: Iterable[str]) -> np.ndarray:
    """Whether each value is one of `choices` (null is not)."""
    found = pc.is_in(values, pa.array(sorted(choices), values.type))
    return np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)


def _ints(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values with 0 for null, known) of an integer column."""
    col = table.column(name)
    known = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(pc.fill_null(col, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    return values, known


def _joined(a: pa.Table, b: pa.Table, name: str) -> pa.ChunkedArray:
    """Column `name` of `a`'s rows then `b`'s."""
    first, second = a.column(name), b.column(name)
    return pa.chunked_array([*first.chunks, *second.cast(first.type).chunks], first.type)


def _joint_codes(a: pa.Table, b: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes of column `name` in `a` and in `b`, one numbering for both (null is a value
    of its own), so later groupings by it combine integers instead of hashing strings."""
    codes, _ = column_codes(_joined(a, b, name))
    return codes[:a.num_rows], codes[a.num_rows:]


def _pad(n: int, values: np.ndarray) -> np.ndarray:
    """`values` after n neutral rows (one per group, so every group code has a row)."""
    return np.r_[np.zeros(n, values.dtype), values]


def _per(codes: np.ndarray, n: int) -> tuple[Groups, np.ndarray]:
    """Groups of `codes` with one neutral row per code first, and which rows are real."""
    return (Groups(np.r_[np.arange(n), codes], n),
            np.r_[np.zeros(n, bool), np.ones(len(codes), bool)])


def _ranked(codes: np.ndarray, values: np.ndarray | pa.Array,
            keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """The distinct (code, value) pairs of the non-null `values` (where `keep`), sorted by
    code and then value in code-point order (Arrow compares UTF-8 bytes, which is Spark's
    string order): (code per pair, row in `text` of its value, `text`)."""
    text = (values.cast(pa.string()) if isinstance(values, pa.Array)
            else pa.array(values, pa.string(), from_pandas=True))
    ok = np.asarray(text.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    rows = np.flatnonzero(ok if keep is None else ok & keep)
    text = take(text, rows)
    if not len(rows):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), text
    rank = np.asarray(pc.rank(text, tiebreaker="dense").to_numpy(), dtype=np.int64) - 1
    size = int(rank.max()) + 1
    row_of_rank = np.empty(size, np.int64)
    row_of_rank[rank] = np.arange(len(rank))
    pair_code, pair_rank = np.divmod(np.unique(codes[rows] * size + rank), size)
    return pair_code, row_of_rank[pair_rank], text


def _sorted_sets(codes: np.ndarray, values: np.ndarray | pa.Array, n: int,
                 keep: np.ndarray | None = None) -> pa.ListArray:
    """Per code 0..n-1 the sorted distinct non-null `values` of its rows (where `keep`)."""
    pair_code, row, text = _ranked(codes, values, keep)
    offsets = np.r_[0, np.cumsum(np.bincount(pair_code, minlength=n))]
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), take(text, row))


def _distinct_count(codes: np.ndarray, values: np.ndarray, n: int,
                    keep: np.ndarray) -> np.ndarray:
    """Per code 0..n-1 the number of distinct `values` (null counts as one) where `keep`."""
    pairs, n_pairs = key_codes(codes[keep], values[keep])
    return np.bincount(codes[keep][first_of(pairs, n_pairs)], minlength=n)


def _max_string(codes: np.ndarray, values: np.ndarray | pa.Array, n: int) -> np.ndarray:
    """Per code the largest non-null value (None where all are null), as Spark's max."""
    out = np.full(n, None, dtype=object)
    pair_code, row, text = _ranked(codes, values, None)
    last = np.r_[pair_code[1:] != pair_code[:-1], True] if len(pair_code) else pair_code
    out[pair_code[last]] = np.asarray(take(text, row[last]).to_numpy(zero_copy_only=False),
                                      dtype=object)
    return out


def _only(lists: pa.ListArray, names: tuple[str, ...]) -> np.ndarray:
    """Per list: it has values, all of them in `names`."""
    outside = pc.invert(pc.is_in(pc.list_flatten(lists), value_set=pa.array(names)))
    parents = np.asarray(pc.list_parent_indices(lists).to_numpy(zero_copy_only=False))
    others = np.bincount(parents[np.asarray(outside.to_numpy(zero_copy_only=False), bool)],
                         minlength=len(lists))
    return (_lengths(lists) > 0) & (others == 0)


def _lengths(lists: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.list_value_length(lists), 0)
                      .to_numpy(zero_copy_only=False), dtype=np.int64)


def _set_keys(lists: pa.ListArray) -> np.ndarray:
    """One string per list that two lists share only when equal: each element prefixed
    with its length (no separator can be confused with a character of a topic; pandas
    hashes strings only up to a NUL, so none is used)."""
    values = lists.values
    tagged = pc.binary_join_element_wise(pc.cast(pc.utf8_length(values), pa.string()),
                                         values, ":")
    rebuilt = pa.ListArray.from_arrays(lists.offsets, tagged)
    return np.asarray(pc.binary_join(rebuilt, ",").to_numpy(zero_copy_only=False),
                      dtype=object)


def _or_null(lists: pa.Array, present: np.ndarray) -> pa.Array:
    """`lists` with null where not `present` (Spark's collect_list over no rows)."""
    return pc.if_else(pa.array(np.asarray(present, dtype=bool)), lists,
                      pa.scalar(None, lists.type))


def _to_double(units: np.ndarray, scale: int) -> np.ndarray:
    """Decimal `units` of 10**-scale as the nearest doubles (Spark's decimal → double)."""
    if units.dtype == object:
        return np.array([int(u) / 10**scale for u in units], dtype=np.float64)
    out = units.astype(np.float64) / 10.0**scale  # operands exact below 2**53: nearest
    for i in np.flatnonzero(np.abs(units) >= 2**53):
        out[i] = int(units[i]) / 10**scale
    return out


def _spread_columns(fig: dict, count: np.ndarray, mean_lag: np.ndarray,
                    mean_rate: np.ndarray, on: np.ndarray, lag_on: np.ndarray,
                    rate_on: np.ndarray) -> dict[str, pa.Array]:
    """min / max / mean queues, lag and in_rate over the subscribing clients (`fig`'s
    `min_*`, `max_*`, `sum_*`), each null where its mask says the figure is not known."""
    return {
        "min_queues": nullable(fig["min_queues"], on, pa.int32()),
        "max_queues": nullable(fig["max_queues"], on, pa.int32()),
        "mean_queues": nullable(fig["sum_queues"] / count, on, pa.float64()),
        "min_lag": nullable(fig["min_lag"], lag_on, pa.int64()),
        "max_lag": nullable(fig["max_lag"], lag_on, pa.int64()),
        "mean_lag": nullable(mean_lag, lag_on, pa.float64()),
        "min_in_rate": decimal_array(fig["min_rate"], rate_on),
        "max_in_rate": decimal_array(fig["max_rate"], rate_on),
        "mean_in_rate": decimal_array(mean_rate, rate_on, MEAN_TYPE),
    }


# ---------------------------------------------------------------- findings as bit masks
_BIT = {code: np.int64(1) << i for i, code in enumerate(FINDINGS)}


def _mask(codes: tuple[str, ...] | list[str]) -> np.int64:
    out = np.int64(0)
    for code in codes:
        out |= _BIT[code]
    return out


def _bits(rules: list[tuple[np.ndarray, str]], n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    for cond, code in rules:
        out |= np.where(cond, _BIT[code], np.int64(0))
    return out


def _finding_lists(bits: np.ndarray) -> pa.ListArray:
    """The codes of each row's bits, in the contract's order."""
    matrix = (bits[:, None] >> np.arange(len(FINDINGS), dtype=np.int64)) & 1
    rows, codes = np.nonzero(matrix)
    offsets = np.r_[0, np.cumsum(np.bincount(rows, minlength=len(bits)))]
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                    pa.array(np.asarray(FINDINGS, dtype=object)[codes],
                                             pa.string()))


# ------------------------------------------------------------------------------ the pass
def group_figures(facts: pa.Table, members: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(consumer_load, group_balance): every row of both of the groups in `members`, in
    LOAD_FIGURES_ARROW_SCHEMA and BALANCE_FIGURES_ARROW_SCHEMA (rates exact decimals)."""
    return _Pass(facts, members).tables()


class _Pass:
    """One bucket: member rows → clients → groups; claim facts joined to them by code."""

    def __init__(self, facts: pa.Table, members: pa.Table) -> None:
        self.members = members
        codes, n = key_codes(*[_joined(members, facts, k) for k in GROUP])
        m_codes, f_codes = codes[:members.num_rows], codes[members.num_rows:]
        # groups are the members' (facts of a group without members have no rows to go to)
        self.m_group, self.n_groups = key_codes(m_codes)
        to_group = np.full(n + 1, -1, np.int64)
        to_group[m_codes] = self.m_group
        f_group = to_group[f_codes]
        kept = np.flatnonzero(f_group >= 0)
        self.facts = take(facts, kept)
        self.f_group = f_group[kept]
        first = pa.array(first_of(self.m_group, self.n_groups), pa.int64())
        self.group_key = [_strings(members.select([k]).take(first), k) for k in GROUP]
        # client ids and topics coded once for members and facts alike
        self.m_client_code, self.f_client_code = _joint_codes(members, self.facts, "client_id")
        self.m_topic_code, self.f_topic_code = _joint_codes(members, self.facts, "topic")
        self._read_members()
        self._read_facts()

    def _read_members(self) -> None:
        m = self.members
        self.m_topic = _strings(m, "topic")
        self.m_strategy = _column(m, "strategy")
        self.m_variant = _strings(m, "variant")
        model = _strings(m, "message_model")
        mode = _strings(m, "allocation_mode")
        mode = np.where(pd.isna(mode), CLIENT, mode)
        self.m_clustering = np.where(pd.isna(model), CLUSTERING, model) == CLUSTERING
        # clients: (group, client_id), one row per member client
        self.m_cc, nc = key_codes(self.m_group, self.m_client_code)
        self.n_clients = nc
        clients = Groups(self.m_cc, nc)
        first = first_of(self.m_cc, nc)
        self.c_group = self.m_group[first]
        self.c_id = take(_column(m, "client_id"), first)
        self.c_id_code = self.m_client_code[first]
        self.c_clustering = clients.any(self.m_clustering)
        self.c_subscribes = clients.any(self.m_clustering & pd.notna(self.m_topic))
        self.c_model = _max_string(self.m_cc, _column(m, "message_model"), nc)
        self.c_room = _max_string(self.m_cc, _column(m, "client_room"), nc)
        self.c_strategies = _sorted_sets(self.m_cc, self.m_strategy, nc)
        self.c_topics = _sorted_sets(self.m_cc, _column(m, "topic"), nc)
        addr = _strings(m, "client_addr")
        self.c_connections = _distinct_count(self.m_cc, addr, nc, pd.notna(addr))
        self.c_by_broker = clients.any(np.isin(mode, list(BROKER_MODES)))
        # a POP member on a strategy the broker does not compute is as a BROKER one: its
        # queues have one owner each (`rebalance_udfs.batch`), so its idle is real
        shared = np.isin(mode, list(SHARED_MODES)) & ~(
            (mode == POP) & ~_is_in(self.m_strategy, BROKER_STRATEGIES))
        self.c_all_shared = ~clients.any(~shared)

    def _read_facts(self) -> None:
        f = self.facts
        self.f_topic = _strings(f, "topic")
        self.f_int = {name: _ints(f, name) for name in FACT_INTS}
        self.f_rate = {name: decimal_units(f.column(name)) for name in FACT_RATES}
        # the member client of each claim row (-1: none, e.g. a topic's unconsumed row)
        nc = self.n_clients
        codes, n = key_codes(np.r_[self.c_group, self.f_group],
                             np.r_[self.c_id_code, self.f_client_code])
        to_client = np.full(n, -1, np.int64)
        to_client[codes[:nc]] = np.arange(nc)
        self.f_cc = to_client[codes[nc:]]

    def tables(self) -> tuple[pa.Table, pa.Table]:
        load = self._consumer_load()
        group_facts = self._group_facts()
        topic_rows, rollup = self._topic_rows(group_facts)
        balance = pa.concat_tables([topic_rows, self._group_rows(group_facts, rollup)])
        return (load.select(LOAD_FIGURES_ARROW_SCHEMA.names).cast(LOAD_FIGURES_ARROW_SCHEMA),
                balance.select(BALANCE_FIGURES_ARROW_SCHEMA.names)
                .cast(BALANCE_FIGURES_ARROW_SCHEMA))

    # --- consumer_load: one row per member client ---------------------------------------
    def _consumer_load(self) -> pa.Table:
        nc = self.n_clients
        has = self.f_cc >= 0
        per, real = _per(self.f_cc[has], nc)

        def total(name: str) -> np.ndarray:
            return per.sum(_pad(nc, self.f_int[name][0][has]), real)

        queues = total("rows")
        units = self.f_rate["rate_all"][0]
        rate = per.sum(_pad(nc, units[has]), real)
        # queues per topic: the client's (topic, rows), sorted by topic
        frame = pd.DataFrame({"c": self.f_cc[has], "t": self.f_topic[has],
                              "n": self.f_int["rows"][0][has]}).sort_values(["c", "t"])
        offsets = np.r_[0, np.cumsum(np.bincount(frame["c"].to_numpy(np.int64),
                                                 minlength=nc))]
        by_topic = pa.MapArray.from_arrays(pa.array(offsets, pa.int32()),
                                           pa.array(frame["t"].to_numpy(object), pa.string()),
                                           pa.array(frame["n"].to_numpy(np.int64), pa.int32()))
        g = self.c_group
        return pa.table({
            "snapshot_id": pa.array(self.group_key[0][g], pa.string()),
            "cluster": pa.array(self.group_key[1][g], pa.string()),
            "consumer_group": pa.array(self.group_key[2][g], pa.string()),
            "client_id": self.c_id.cast(pa.string()),
            "strategies": self.c_strategies,
            "message_model": pa.array(np.where(pd.isna(self.c_model), CLUSTERING,
                                               self.c_model), pa.string()),
            "client_room": pa.array(self.c_room, pa.string()),
            "connections": pa.array(np.maximum(self.c_connections, 1), pa.int32()),
            "topics": self.c_topics,
            "queues": pa.array(queues, pa.int32()),
            "queues_by_topic": by_topic,
            "lag": nullable(total("lag_all"), total("lag_all_known") > 0, pa.int64()),
            "in_rate": decimal_array(rate, total("rate_all_known") > 0),
            "contended_queues": pa.array(total("contended"), pa.int32()),
            "idle": pa.array(queues == 0),
        })

    # --- group_balance ----------------------------------------------------------------
    def _group_facts(self) -> dict:
        """Per group (`reports.group_balance._group_facts` of the member clients)."""
        n, g, clustering = self.n_groups, self.c_group, self.c_clustering
        groups = Groups(g, n)
        broker_rows = (self.c_by_broker[self.m_cc]
                       & ~_is_in(self.m_strategy, BROKER_STRATEGIES))
        return {
            "shared": groups.any(clustering) & ~groups.any(clustering & ~self.c_all_shared),
            "unsupported": _sorted_sets(self.m_group, self.m_strategy, n, broker_rows),
            "clients": groups.count(np.ones(self.n_clients, bool)),
            "duplicate_ids": _sorted_sets(g, self.c_id, n, self.c_connections > 1),
            "topic_sets": _distinct_count(g, _set_keys(self.c_topics), n, clustering),
            "subscribing": groups.count(clustering & (_lengths(self.c_topics) > 0)),
            "clustering_clients": groups.count(clustering),
            "variants": _distinct_count(self.m_group, self.m_variant, n,
                                        pd.notna(self.m_variant)),
            "strategies": _sorted_sets(self.m_group, self.m_strategy, n),
        }

    def _topic_rows(self, gf: dict) -> tuple[pa.Table, dict]:
        """One row per (group, topic) some member subscribes: the member topics and the
        claim facts joined on (group, topic, client), then summed per topic."""
        m_idx = np.flatnonzero(pd.notna(self.m_topic))
        mt, n_mt = key_codes(self.m_group[m_idx], self.m_topic_code[m_idx],
                             self.m_client_code[m_idx])
        mt_first = m_idx[first_of(mt, n_mt)]
        mt_clustering = Groups(mt, n_mt).any(self.m_clustering[m_idx])
        nf = len(self.f_group)
        j_group = np.r_[self.m_group[mt_first], self.f_group]
        j_topic = np.r_[self.m_topic[mt_first], self.f_topic]
        j_topic_code = np.r_[self.m_topic_code[mt_first], self.f_topic_code]
        j_codes, n_j = key_codes(j_group, j_topic_code,
                                 np.r_[self.m_client_code[mt_first], self.f_client_code])
        j = Groups(j_codes, n_j)
        fact = np.r_[np.zeros(n_mt, bool), np.ones(nf, bool)]

        def sums(values: np.ndarray) -> np.ndarray:
            return j.sum(_pad(n_mt, values), fact)

        def known(mask: np.ndarray) -> np.ndarray:
            return j.any(fact & _pad(n_mt, mask))

        j_member = j.any(~fact)
        sub = j.any(~fact & np.r_[mt_clustering, np.zeros(nf, bool)])
        claims = sums(self.f_int["claims"][0])
        lag_known = known(self.f_int["claim_lag"][1])
        lag = np.where(lag_known, sums(self.f_int["claim_lag"][0]), 0)
        rate_units, rate_known_rows = self.f_rate["claim_rate"]
        rate_known = known(rate_known_rows)
        rate = np.where(rate_known, sums(rate_units), 0)
        # topics: (group, topic) of the joined rows
        j_first = first_of(j_codes, n_j)
        t_codes, n_t = key_codes(j_group[j_first], j_topic_code[j_first])
        t = Groups(t_codes, n_t)
        keep = np.flatnonzero(t.any(j_member))  # topics some member subscribes
        t_first = j_first[first_of(t_codes, n_t)][keep]
        tg, topic = j_group[t_first], j_topic[t_first]

        def per_topic(values: np.ndarray, reduce: str = "sum") -> np.ndarray:
            if reduce == "sum":
                return t.sum(values, sub)[keep]
            return getattr(t, reduce)(values, sub)[keep]

        def topic_total(name: str) -> np.ndarray:
            return t.sum(sums(self.f_int[name][0]))[keep]

        f = {
            "subscribing": t.count(sub)[keep],
            "min_queues": per_topic(claims, "min"), "max_queues": per_topic(claims, "max"),
            "sum_queues": per_topic(claims),
            "min_lag": per_topic(lag, "min"), "max_lag": per_topic(lag, "max"),
            "sum_lag": per_topic(lag),
            "min_rate": per_topic(rate, "min"), "max_rate": per_topic(rate, "max"),
            "sum_rate": per_topic(rate),
            "idle_clients": t.count(sub & (claims == 0))[keep],
            "queues": topic_total("queues"),
            "unconsumed_queues": topic_total("unconsumed_queues"),
            "contended_queues": topic_total("contended_queues"),
            "lag_total": topic_total("queue_lag"),
            "lag_known": topic_total("queue_lag_known") > 0,
            "rate_total": t.sum(sums(self.f_rate["queue_rate"][0]))[keep],
            "rate_known": topic_total("queue_rate_known") > 0,
            # the spreads: null where no subscribing client's claims have a known lag /
            # in_rate (an unconsumed queue's known lag is in lag_total, nobody's spread)
            "lag_spread_known": t.any(sub & lag_known)[keep],
            "rate_spread_known": t.any(sub & rate_known)[keep],
        }
        # the strategies of each kept topic's member rows
        k_codes, n_k = key_codes(np.r_[tg, self.m_group[m_idx]],
                                 np.r_[j_topic_code[t_first], self.m_topic_code[m_idx]])
        to_row = np.full(n_k, -1, np.int64)
        to_row[k_codes[:len(keep)]] = np.arange(len(keep))
        row_of_member = to_row[k_codes[len(keep):]]
        strategies = _sorted_sets(np.maximum(row_of_member, 0), take(self.m_strategy, m_idx),
                                  len(keep), row_of_member >= 0)
        return self._topic_table(gf, tg, topic, f, strategies)

    def _topic_table(self, gf: dict, tg: np.ndarray, topic: np.ndarray, f: dict,
                     strategies: pa.ListArray) -> tuple[pa.Table, dict]:
        n_rows = len(tg)
        subscribing, queues = f["subscribing"], f["queues"]
        has_sub = subscribing > 0
        count = np.maximum(subscribing, 1)
        ideal = -(-queues // count)
        bits = _bits([
            # a topic with no readable queue idles all its clients: the recommendation
            # and the run's warning name it, no finding code does (README)
            ((f["idle_clients"] > 0) & (queues > 0), "IDLE_CLIENTS"),
            ((subscribing > queues) & (queues > 0), "MORE_CLIENTS_THAN_QUEUES"),
            (subscribing < gf["clustering_clients"][tg], "INCONSISTENT_SUBSCRIPTION"),
            ((_lengths(strategies) > 1) | (gf["variants"][tg] > 1), "MIXED_STRATEGIES"),
            (_lengths(gf["duplicate_ids"])[tg] > 0, "DUPLICATE_CLIENT_ID"),
            (f["unconsumed_queues"] > 0, "UNCONSUMED_QUEUES"),
            (f["contended_queues"] > 0, "CONTENDED_QUEUES"),
            (_lengths(gf["unsupported"])[tg] > 0, "BROKER_UNSUPPORTED_STRATEGY"),
        ], n_rows)
        balanced = ~has_sub | (f["max_queues"] <= ideal)
        # the strategy itself is the cause: AVG over the same subscribing clients reaches
        # ideal_max (it always does), this topic does not, and no split brain explains it;
        # not for Kafka's pooled assignors, which balance a client's total over the
        # group's topics, not each topic (MULTI_TOPIC_SKEW says when the total is off)
        blame = (~balanced & ((bits & _mask(SPLIT_BRAIN)) == 0)
                 & ~_only(strategies, POOLED_ASSIGNORS))
        bits |= np.where(blame, _BIT["STRATEGY_IMBALANCE"], np.int64(0))
        bits &= np.where(gf["shared"][tg], ~_mask(LOAD_FINDINGS), np.int64(-1))
        # a retry topic has its group's retryQueueNums queues (default 1), not read queues
        # to add: fewer of them than clients, and clients without one, are by design
        retry = pc.fill_null(pc.starts_with(pa.array(topic, pa.string()), RETRY_TOPIC_PREFIX),
                             False).to_numpy(zero_copy_only=False)
        bits &= np.where(retry, ~_mask(RETRY_BY_DESIGN), np.int64(-1))
        lag_on, rate_on = f["lag_spread_known"], f["rate_spread_known"]
        empty = queues == 0
        table = self._balance_table(tg, pa.array(topic, pa.string()), {
            "subscribing_clients": pa.array(subscribing, pa.int32()),
            "queues": pa.array(queues, pa.int32()),
            "ideal_max": nullable(ideal, has_sub, pa.int32()),
            "idle_clients": pa.array(f["idle_clients"], pa.int32()),
            "unconsumed_queues": pa.array(f["unconsumed_queues"], pa.int32()),
            "contended_queues": pa.array(f["contended_queues"], pa.int32()),
            "lag_total": nullable(f["lag_total"], f["lag_known"], pa.int64()),
            "in_rate_total": decimal_array(f["rate_total"], f["rate_known"]),
            **_spread_columns(f, count, f["sum_lag"] / count,
                              mean_half_up(f["sum_rate"], count), has_sub, lag_on, rate_on),
            "pooled_max": pa.nulls(n_rows, pa.int32()),
            "skew": pa.nulls(n_rows, pa.int32()),
            "findings": _finding_lists(bits),
            "_topic_strategy_names": strategies,
            "_empty_topics": pa.ListArray.from_arrays(
                pa.array(np.r_[0, np.cumsum(empty)], pa.int32()),
                pa.array(topic[empty], pa.string()), mask=pa.array(~empty)),
            "_imbalanced_topics": pa.nulls(n_rows, pa.list_(pa.string())),
            "_top_lag_client": pa.nulls(n_rows, pa.string()),
            "_client_lag_sum": pa.nulls(n_rows, pa.int64()),
            "_top_rate_client": pa.nulls(n_rows, pa.string()),
            "_client_rate_sum": pa.nulls(n_rows, RATE_TYPE),
        }, gf)
        return table, self._rollup(tg, topic, f, has_sub, ideal, balanced, bits, strategies)

    def _rollup(self, tg: np.ndarray, topic: np.ndarray, f: dict, has_sub: np.ndarray,
                ideal: np.ndarray, balanced: np.ndarray, bits: np.ndarray,
                strategies: pa.ListArray) -> dict:
        """Per group, the sums and flags of its topic rows."""
        imbalanced = (bits & _BIT["STRATEGY_IMBALANCE"]) != 0
        n = self.n_groups
        per, real = _per(tg, n)
        lag_known, rate_known = _pad(n, f["lag_known"]), _pad(n, f["rate_known"])
        text = pc.binary_join_element_wise(
            pa.array(topic, pa.string()), " (", pc.binary_join(strategies, "/"), ": max ",
            pc.cast(pa.array(f["max_queues"]), pa.string()), " where ",
            pc.cast(pa.array(ideal), pa.string()), " is even)", "")
        text = np.asarray(text.to_numpy(zero_copy_only=False), dtype=object)
        return {
            "has_topics": per.any(real),
            "queues": per.sum(_pad(n, f["queues"]), real),
            "unconsumed_queues": per.sum(_pad(n, f["unconsumed_queues"]), real),
            "contended_queues": per.sum(_pad(n, f["contended_queues"]), real),
            "lag_total": per.sum(_pad(n, f["lag_total"]), real & lag_known),
            "lag_known": per.any(real & lag_known),
            "rate_total": per.sum(_pad(n, f["rate_total"]), real & rate_known),
            "rate_known": per.any(real & rate_known),
            "max_topic_ideal": per.max(_pad(n, ideal), real & _pad(n, has_sub)),
            "has_topic_ideal": per.any(real & _pad(n, has_sub)),
            "topics_with_queues": per.count(real & _pad(n, f["queues"] > 0)),
            "all_topics_balanced": ~per.any(real & ~_pad(n, balanced)),
            "topic_bits": per.bit_or(_pad(n, bits), real),
            "empty_topics": _sorted_sets(tg, topic, n, f["queues"] == 0),
            "imbalanced_topics": _sorted_sets(tg, text, n, imbalanced),
        }

    def _client_loads(self) -> dict:
        """Per group, the load over its clustering clients, all topics together."""
        n, nc = self.n_groups, self.n_clients
        claimed = (self.f_cc >= 0) & (self.f_int["claims"][0] > 0)
        per, real = _per(self.f_cc[claimed], nc)

        def total(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
            keep = real if mask is None else real & _pad(nc, mask[claimed])
            return per.sum(_pad(nc, values[claimed]), keep)

        claims = total(self.f_int["claims"][0])
        lag_v, lag_k = self.f_int["claim_lag"]
        rate_v, rate_k = self.f_rate["claim_rate"]
        lag_known = per.any(real & _pad(nc, lag_k[claimed]))
        rate_known = per.any(real & _pad(nc, rate_k[claimed]))
        lag = np.where(lag_known, total(lag_v, lag_k), 0)
        rate = np.where(rate_known, total(rate_v, rate_k), 0)
        cl = np.flatnonzero(self.c_clustering)
        g, real_g = _per(self.c_group[cl], n)
        sub = real_g & _pad(n, self.c_subscribes[cl])
        n_c, lag_c, rate_c = _pad(n, claims[cl]), _pad(n, lag[cl]), _pad(n, rate[cl])
        return {
            "subs": g.count(sub),
            "min_queues": g.min(n_c, sub), "max_queues": g.max(n_c, sub),
            "sum_queues": g.sum(n_c, sub),
            "min_lag": g.min(lag_c, sub), "max_lag": g.max(lag_c, sub),
            "sum_lag": g.sum(lag_c, sub),
            "min_rate": g.min(rate_c, sub), "max_rate": g.max(rate_c, sub),
            "sum_rate": g.sum(rate_c, sub),
            "lag_spread_known": g.any(sub & _pad(n, lag_known[cl])),
            "rate_spread_known": g.any(sub & _pad(n, rate_known[cl])),
            "idle_clients": g.count(real_g & (n_c == 0)),
            "top_lag": self._top(cl, lag[cl]),
            "lag_sum": g.sum(lag_c, real_g & _pad(n, lag_known[cl])),
            "lag_sum_known": g.any(real_g & _pad(n, lag_known[cl])),
            "top_rate": self._top(cl, rate[cl]),
            "rate_sum": g.sum(rate_c, real_g & _pad(n, rate_known[cl])),
            "rate_sum_known": g.any(real_g & _pad(n, rate_known[cl])),
        }

    def _top(self, clients: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Per group the client (of `clients`) with the largest `value`; of equal ones the
        smallest client id, so the name does not depend on row order. None: no client."""
        out = np.full(self.n_groups, None, dtype=object)
        group = self.c_group[clients]
        per, real = _per(group, self.n_groups)
        best = np.flatnonzero(value == per.max(_pad(self.n_groups, value), real)[group])
        best = best[np.lexsort((self._id_rank[clients[best]], group[best]))]
        first = best[np.r_[True, group[best][1:] != group[best][:-1]]] if len(best) else best
        out[group[first]] = take(self.c_id, clients[first]).to_numpy(zero_copy_only=False)
        return out

    @cached_property
    def _id_rank(self) -> np.ndarray:
        """Per client the rank of its id in code-point order (null last)."""
        ranks = pc.rank(self.c_id.cast(pa.string()), tiebreaker="dense")
        return np.asarray(ranks.to_numpy(), dtype=np.int64)

    def _group_rows(self, gf: dict, rollup: dict) -> pa.Table:
        """One whole-group row (null topic) per group."""
        n = self.n_groups
        load = self._client_loads()
        subscribing, queues = gf["subscribing"], rollup["queues"]
        has_sub = subscribing > 0
        ideal = -(-queues // np.maximum(subscribing, 1))
        low = np.iinfo(np.int64).min
        pooled_known = has_sub | rollup["has_topic_ideal"]
        pooled = np.maximum(np.where(has_sub, ideal, low),
                            np.where(rollup["has_topic_ideal"], rollup["max_topic_ideal"], low))
        has_load = load["subs"] > 0
        count = np.maximum(load["subs"], 1)
        skew_known = has_load & pooled_known
        skew = np.where(skew_known, load["max_queues"] - pooled, 0)
        skewed = skew_known & (skew > 0)
        mean_lag = load["sum_lag"] / count
        mean_rate = mean_half_up(load["sum_rate"], count)
        many = has_load & (subscribing > 1)
        lag_skew = many & (mean_lag > 0) & (load["max_lag"] > mean_lag * LAG_SKEW_FACTOR)
        rate_skew = many & (mean_rate > 0) & (
            _to_double(load["max_rate"], RATE_SCALE)
            > _to_double(mean_rate, RATE_SCALE + MEAN_DIGITS) * LAG_SKEW_FACTOR)
        # MULTI_TOPIC_SKEW: each topic allocated on its own, the first-sorted clients win
        # every one; not Kafka's pooled assignors, which deal the topics out together
        pooled_group = _only(gf["strategies"], POOLED_ASSIGNORS)
        bits = _bits([
            (skewed & (rollup["topics_with_queues"] >= 2) & rollup["has_topics"]
             & rollup["all_topics_balanced"] & ~pooled_group, "MULTI_TOPIC_SKEW"),
            (load["idle_clients"] > 0, "IDLE_CLIENTS"),
            (gf["topic_sets"] > 1, "INCONSISTENT_SUBSCRIPTION"),
            (gf["variants"] > 1, "MIXED_STRATEGIES"),
            (skewed & (gf["topic_sets"] > 1), "UNEVEN_SUBSCRIPTIONS"),
            (lag_skew | rate_skew, "LAG_SKEW"),
        ], n)
        # a topic with more clients than queues: for the group too, unless its members
        # all run the pooled assignors and none idles (they balance the total: a small
        # topic among larger ones leaves nobody short, its own row says it)
        rolled_up = np.where(pooled_group & (load["idle_clients"] == 0),
                             ~_mask(["IDLE_CLIENTS", "MORE_CLIENTS_THAN_QUEUES"]),
                             ~_BIT["IDLE_CLIENTS"])
        bits |= rollup["topic_bits"] & rolled_up
        bits &= np.where(gf["shared"], ~_mask(LOAD_FINDINGS), np.int64(-1))
        return self._balance_table(np.arange(n), pa.nulls(n, pa.string()), {
            "subscribing_clients": pa.array(subscribing, pa.int32()),
            "queues": pa.array(queues, pa.int32()),
            "ideal_max": nullable(ideal, has_sub, pa.int32()),
            "idle_clients": pa.array(load["idle_clients"], pa.int32()),
            "unconsumed_queues": pa.array(rollup["unconsumed_queues"], pa.int32()),
            "contended_queues": pa.array(rollup["contended_queues"], pa.int32()),
            "lag_total": nullable(rollup["lag_total"], rollup["lag_known"], pa.int64()),
            "in_rate_total": decimal_array(rollup["rate_total"], rollup["rate_known"]),
            # group rows: lag and rate spreads count a client's unknown figure as 0 (as the
            # Spark report did), and are null, not 0, where no client's is known
            **_spread_columns(load, count, mean_lag, mean_rate, has_load,
                              has_load & load["lag_spread_known"],
                              has_load & load["rate_spread_known"]),
            "pooled_max": nullable(pooled, pooled_known, pa.int32()),
            "skew": nullable(skew, skew_known, pa.int32()),
            "findings": _finding_lists(bits),
            "_topic_strategy_names": pa.nulls(n, pa.list_(pa.string())),
            "_empty_topics": _or_null(rollup["empty_topics"], rollup["has_topics"]),
            "_imbalanced_topics": _or_null(rollup["imbalanced_topics"], rollup["has_topics"]),
            "_top_lag_client": pa.array(load["top_lag"], pa.string()),
            "_client_lag_sum": nullable(load["lag_sum"], load["lag_sum_known"], pa.int64()),
            "_top_rate_client": pa.array(load["top_rate"], pa.string()),
            "_client_rate_sum": decimal_array(load["rate_sum"], load["rate_sum_known"]),
        }, gf)

    def _balance_table(self, g: np.ndarray, topic: pa.Array, columns: dict,
                       gf: dict) -> pa.Table:
        """group_balance rows of groups `g`: keys, `columns`, and the group facts the
        recommendation's words quote."""
        return pa.table({
            "snapshot_id": pa.array(self.group_key[0][g], pa.string()),
            "cluster": pa.array(self.group_key[1][g], pa.string()),
            "consumer_group": pa.array(self.group_key[2][g], pa.string()),
            "topic": topic,
            "clients": pa.array(gf["clients"][g], pa.int32()),
            **columns,
            "duplicate_ids": take(gf["duplicate_ids"], g),
            "strategies": take(gf["strategies"], g),
            "_unsupported": take(gf["unsupported"], g),
            "topic_sets": pa.array(gf["topic_sets"][g], pa.int64()),
        })
