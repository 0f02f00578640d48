"""The report pass's figures (`rebalance_udfs.report_pass`: claim facts and group figures
in the call that assigns the queues) against the Spark aggregations they replaced
(`tests/support/facts_oracle.py`, `tests/support/balance_oracle.py`): the same
consumer_load and group_balance rows, exactly, on every upstream example and random
groups built to hit the edge cases (rates that are not exact in binary, unknown lags and
rates, broadcasting and POP members, duplicated client ids, members that subscribe
nothing, CONFIG claims on topics nobody subscribes) — computed in the assigning call, as
for most groups, and over rows assigned elsewhere, as for sticky groups."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.persist import Persisted
from rebalance_udfs.spark.assign import assign
from rebalance_udfs.spark.report_pass import assign_and_report, assignment_rows, report, unpack
from reports.assignments import snapshot_times
from reports.consumer_load import consumer_load_report
from reports.group_balance import group_balance_report
from tests.e2e.test_cli_examples import _as_member_rows, all_cases
from tests.support.balance_oracle import oracle_reports
from tests.support.delta_inputs import read_written, write_inputs
from vocabulary.columns import SNAPSHOT_KEYS

pytestmark = pytest.mark.spark

BUCKETS = 3


def _both(spark, paths: dict[str, str]) -> tuple[list[dict[str, DataFrame]],
                                                 dict[str, DataFrame]]:
    """(pass tables both ways, oracle tables) of the inputs at `paths`."""
    persist = Persisted()
    inputs = read_written(spark, paths, persist)
    times = persist(snapshot_times(inputs.queues))
    assigned = persist(assign(inputs.queues, inputs.members, inputs.offsets, BUCKETS))
    one_pass = persist(assign_and_report(inputs.queues, inputs.members, inputs.offsets,
                                         BUCKETS, "off"))
    # the assigning call's rows are the kernel's
    assert_df_equality(assignment_rows(one_pass), assigned, ignore_row_order=True)
    apart = persist(report(assigned, inputs.members, BUCKETS, "off"))
    for name in ("consumer_load", "group_balance"):  # decoded in one task: the same rows
        gathered = unpack(one_pass, name, tasks=1)
        assert gathered.rdd.getNumPartitions() == 1
        assert_df_equality(_comparable(gathered), _comparable(unpack(one_pass, name)),
                           ignore_row_order=True)
    ours = [{"consumer_load": consumer_load_report(unpack(packed, "consumer_load"), times),
             "group_balance": group_balance_report(unpack(packed, "group_balance"), times)}
            for packed in (one_pass, apart)]
    lag = F.col("max_offset") - F.col("committed_offset")
    rows = assigned.withColumn("lag", lag).join(times, SNAPSHOT_KEYS, "left")
    return ours, oracle_reports(rows, inputs.members, times)


def _assert_same(passes: list[dict[str, DataFrame]], oracle: dict[str, DataFrame]) -> None:
    for ours in passes:
        for name in ("consumer_load", "group_balance"):
            assert ours[name].columns == oracle[name].columns, name
            assert [_declared(f) for f in ours[name].schema] == \
                [_declared(f) for f in oracle[name].schema], name
            # nullability compared above
            assert_df_equality(_comparable(ours[name]), _comparable(oracle[name]),
                               ignore_row_order=True, ignore_nullable=True)


def _declared(field: T.StructField) -> tuple:
    """A column's type and nullability; the recommendation is nullable in the table (the
    what-if line is appended to it, the oracle has none)."""
    return field.dataType, field.nullable or field.name == "recommendation"


def _comparable(df: DataFrame) -> DataFrame:
    """Maps as sorted entry arrays (Spark cannot sort rows by a map)."""
    return df.withColumns({f.name: F.array_sort(F.map_entries(f.name))
                           for f in df.schema if isinstance(f.dataType, T.MapType)})


def test_examples_give_the_oracle_figures(spark, tmp_path) -> None:
    cases = all_cases()
    queues = pd.concat([c.queues for c in cases], ignore_index=True)
    queues = queues.drop(columns="consumer_group").drop_duplicates()
    members = _as_member_rows(pd.concat([c.members for c in cases], ignore_index=True))
    members = members[~members["strategy"].isin(["sticky", "cooperative-sticky"])]
    paths = write_inputs(spark, Path(tmp_path), queues=queues, members=members)
    _assert_same(*_both(spark, paths))


def _random_cluster(seed: int) -> dict[str, pd.DataFrame]:
    rnd = random.Random(seed)
    queues, members, offsets = [], [], []
    rates = [0.1, 0.2, 0.3, 1 / 3, 2 / 3, 438.96, 1e-10, 123456.789, 7.0, 0.0, None, 5e9,
             3.3e12]
    for s in ("s1", "s2"):
        topics = {f"t{t}": rnd.randint(0, 6) for t in range(4)}
        for t, n in topics.items():
            for b in ("broker-a", "broker-b"):
                for i in range(n):
                    queues.append({
                        "snapshot_id": s, "cluster": "c", "topic": t, "broker_name": b,
                        "queue_id": i, "readable": rnd.random() > 0.05,
                        "max_offset": rnd.choice([None, rnd.randint(0, 10**6)]),
                        "in_rate": rnd.choice(rates), "broker_room": rnd.choice(["r1", "r2"])})
        for g in range(6):
            group = f"g{g}"
            n_clients = rnd.randint(1, 5)
            subscribed = rnd.sample(sorted(topics), rnd.randint(1, 3))
            for c in range(n_clients):
                cid = f"10.0.0.{c}@{rnd.choice(['x', 'ÿ', 'a'])}"
                own = subscribed if rnd.random() > 0.2 else subscribed[:1]
                strategy = rnd.choice(["AVG", "AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH",
                                       "CONFIG", "range", "roundrobin"])
                params = None
                if strategy == "CONSISTENT_HASH" and rnd.random() > 0.5:
                    params = {"virtual_nodes": str(rnd.randint(0, 4))}
                if strategy == "CONFIG":
                    params = {"queues": f"{rnd.choice(sorted(topics))}@broker-a:0"}
                model = rnd.choice([None, None, None, "CLUSTERING", "BROADCASTING"])
                mode = rnd.choice([None, None, None, "POP", "BROKER", "MESSAGE"])
                addrs = [f"h{c}"] + ([f"h{c}b"] if rnd.random() < 0.1 else [])
                for addr in addrs:
                    for t in (own if rnd.random() > 0.1 else [None]):
                        members.append({
                            "snapshot_id": s, "cluster": "c", "consumer_group": group,
                            "client_id": cid, "topic": t, "strategy": strategy,
                            "message_model": model, "allocation_mode": mode,
                            "client_addr": addr, "client_room": rnd.choice([None, "r1", "r2"]),
                            "strategy_params": params})
            for t in subscribed:
                for b in ("broker-a", "broker-b"):
                    for i in range(topics[t]):
                        if rnd.random() < 0.7:
                            offsets.append({
                                "snapshot_id": s, "cluster": "c", "consumer_group": group,
                                "topic": t, "broker_name": b, "queue_id": i,
                                "committed_offset": rnd.choice([None, rnd.randint(0, 1000)]),
                                "consumed_offset": None})
    return {"queues": pd.DataFrame(queues).astype({"max_offset": "Int64"}),
            "members": pd.DataFrame(members),
            "offsets": pd.DataFrame(offsets).astype({"committed_offset": "Int64",
                                                     "consumed_offset": "Int64"})}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_groups_give_the_oracle_figures(spark, tmp_path, seed) -> None:
    paths = write_inputs(spark, Path(tmp_path), **_random_cluster(seed))
    _assert_same(*_both(spark, paths))
