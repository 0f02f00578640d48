"""Issue 11 over every upstream example scenario plus three hand-made groups, in one
audit run: every imbalance has a named cause, what-if names a change that fixes the seed
and CONSISTENT_HASH groups, and POP groups share their queues by design."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from deltalake import DeltaTable

from jobs.audit import run
from jobs.config import AuditConfig
from reports.what_if import COLUMNS as WHAT_IF_COLUMNS
from tests.e2e.test_cli_examples import _as_member_rows, all_cases
from tests.support.delta_inputs import write_inputs
from vocabulary.columns import KAFKA_STRATEGIES, POOLED_ASSIGNORS
from vocabulary.findings import BROKER_STRATEGIES

pytestmark = pytest.mark.spark

# codes that name why a group or topic is uneven (IDLE_CLIENTS & co. are symptoms)
CAUSES = {"MULTI_TOPIC_SKEW", "STRATEGY_IMBALANCE", "UNEVEN_SUBSCRIPTIONS",
          "INCONSISTENT_SUBSCRIPTION", "MIXED_STRATEGIES", "DUPLICATE_CLIENT_ID",
          "CONTENDED_QUEUES", "BROKER_UNSUPPORTED_STRATEGY"}
SEED = "rocketmq_averagely.json:seed_multitopic_skew_2x2q_4c"


def _extra_groups() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The issue's CONSISTENT_HASH group (14 clients, 3 topics x 32 queues), a POP group
    (popShareQueueNum 1, 3 clients, 8 queues), a broker asked for CONSISTENT_HASH and a
    RocketMQ group whose second client does not subscribe S2."""
    q, m = [], []

    def group(snapshot, name, clients, topics, strategy, mode=None, params=None):
        for t, n in topics.items():
            q.extend({"snapshot_id": snapshot, "cluster": "c", "topic": t,
                      "broker_name": "broker-a", "queue_id": i} for i in range(n))
        m.extend({"snapshot_id": snapshot, "cluster": "c", "consumer_group": name,
                  "client_id": cid, "topic": t, "strategy": strategy,
                  "allocation_mode": mode, "strategy_params": params}
                 for cid in clients for t in topics)

    group("issue-ch", "GID_hash", [f"10.0.0.{i}@{9000 + i}" for i in range(1, 15)],
          {"t1": 32, "t2": 32, "t3": 32}, "CONSISTENT_HASH")
    group("pop", "GID_pop", ["a", "b", "c"], {"P": 8}, "AVG", "POP",
          {"pop_share_queue_num": "1"})
    group("broker", "GID_broker", ["a", "b"], {"B": 4}, "CONSISTENT_HASH", "BROKER")
    m.append({"snapshot_id": "broker", "cluster": "c", "consumer_group": "GID_broker",
              "client_id": "z", "topic": "B", "strategy": "AVG", "allocation_mode": "PUSH"})
    group("subs", "GID_subs", ["a", "b"], {"S1": 4, "S2": 2}, "AVG")
    m[:] = [r for r in m if not (r["consumer_group"] == "GID_subs" and r["client_id"] == "b"
                                 and r["topic"] == "S2")]
    return pd.DataFrame(q), pd.DataFrame(m)


@pytest.fixture(scope="module")
def audited(spark, tmp_path_factory) -> dict[str, pd.DataFrame]:
    root = tmp_path_factory.mktemp("findings")
    cases = all_cases()
    queues = pd.concat([c.queues for c in cases], ignore_index=True)
    queues = queues.drop(columns="consumer_group").drop_duplicates()
    members = _as_member_rows(pd.concat([c.members for c in cases], ignore_index=True))
    extra_q, extra_m = _extra_groups()
    members = pd.concat([members, extra_m], ignore_index=True)
    paths = write_inputs(spark, Path(root) / "in",
                         queues=pd.concat([queues, extra_q], ignore_index=True),
                         members=members)
    out = Path(root) / "out"
    result = run(AuditConfig(queues=paths["queues"], members=paths["members"],
                             output=str(out), engine="offline", what_if="all"), spark=spark)
    tables = {name: DeltaTable(str(out / name)).to_pandas()
              for name in ("group_balance", "what_if", "assignments", "rejects")}
    tables["worst"] = pd.DataFrame(result.worst_groups)
    tables["members"] = members
    return tables


def _uncaused(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[[not (set(f) & CAUSES) for f in rows["findings"]]]


def test_every_imbalance_over_all_examples_has_a_cause(audited) -> None:
    b = audited["group_balance"]
    per_topic = b[b["topic"].notna() & (b["max_queues"] > b["ideal_max"])]
    whole = b[b["topic"].isna() & (b["skew"] > 0)]
    assert len(per_topic) > 10 and len(whole) > 10
    shared = {"GID_pop"}  # queues shared by design: no load findings there
    per_topic = per_topic[~per_topic["consumer_group"].isin(shared)]
    # a topic of Kafka's pooled assignors: its balance is the group's total (its skew)
    members = audited["members"]
    topic = ["snapshot_id", "consumer_group", "topic"]
    pooled = members["strategy"].isin(POOLED_ASSIGNORS).groupby(
        [members[k] for k in topic]).all()
    pooled = set(pooled[pooled].index)
    per_topic = per_topic[[key not in pooled for key in zip(
        *(per_topic[k] for k in topic), strict=True)]]
    whole = whole[~whole["consumer_group"].isin(shared)]
    cols = ["snapshot_id", "consumer_group", "topic", "max_queues", "ideal_max", "findings"]
    assert _uncaused(per_topic).empty, _uncaused(per_topic)[cols].head(10).to_string()
    assert _uncaused(whole).empty, _uncaused(whole)[[*cols, "skew"]].head(10).to_string()


def test_seed_group_what_if_reaches_max_1(audited) -> None:
    w = audited["what_if"]
    assert list(w.columns) == [*WHAT_IF_COLUMNS, "run_id"]
    seed = w[w["snapshot_id"] == SEED]
    now = seed[seed["is_current"]].iloc[0]
    best = seed[seed["recommended"]].iloc[0]
    assert (now["max_queues"], now["skew"]) == (2, 1)
    assert best["max_queues"] == 1 and not best["is_current"]
    b = audited["group_balance"]
    whole = b[(b["snapshot_id"] == SEED) & b["topic"].isna()].iloc[0]
    assert "What-if: " in whole["recommendation"]
    assert "max 1 queue per client instead of 2" in whole["recommendation"]


def test_consistent_hash_group_gets_strategy_imbalance_and_a_fix(audited) -> None:
    b = audited["group_balance"]
    g = b[b["snapshot_id"] == "issue-ch"]
    whole = g[g["topic"].isna()].iloc[0]
    assert "STRATEGY_IMBALANCE" in whole["findings"] and whole["skew"] > 0
    assert "where AVG over the same clients would not" in whole["recommendation"]
    uneven = g[g["topic"].notna() & (g["max_queues"] > g["ideal_max"])]
    assert len(uneven) and all("STRATEGY_IMBALANCE" in f for f in uneven["findings"])
    w = audited["what_if"]
    w = w[w["snapshot_id"] == "issue-ch"]
    at_14 = w[(w["clients"] == 14) & ~w["is_current"] & ~w["split_by_topic"]]
    fixes = at_14[at_14["skew"] == 0]
    assert len(fixes) and set(fixes["strategy"]) - {"CONSISTENT_HASH"}
    assert w["recommended"].sum() == 1


def test_pop_group_is_shared_and_broker_unsupported_strategy_flagged(audited) -> None:
    a = audited["assignments"]
    pop = a[a["snapshot_id"] == "pop"]
    assert set(pop["status"]) == {"SHARED"} and len(pop) == 16
    b = audited["group_balance"]
    pop_whole = b[(b["snapshot_id"] == "pop") & b["topic"].isna()].iloc[0]
    assert pop_whole["contended_queues"] == 0 and list(pop_whole["findings"]) == []
    broker = b[(b["snapshot_id"] == "broker") & b["topic"].isna()].iloc[0]
    assert "BROKER_UNSUPPORTED_STRATEGY" in broker["findings"]
    assert "knows only AVG and AVG_BY_CIRCLE" in broker["recommendation"]
    rejects = audited["rejects"]
    bad = rejects[rejects["snapshot_id"] == "broker"]
    assert len(bad) == 1 and "allocation_mode must be one of" in bad["reason"].iloc[0]


def test_pop_group_what_if_shares_queues_as_the_broker_does(audited) -> None:
    """GID_pop (3 clients, 8 queues, AVG, popShareQueueNum 1) pops 3+3, 3+2 and 2+3 queues
    today (max 6). The broker would hand 4 clients 2+2 each (max 4, not the client-side
    2), 2 clients or 1 all 8; AVG at 3 clients is today's own assignment, not a row of
    its own; nothing at today's count beats today, so today's row is recommended."""
    w = audited["what_if"]
    w = w[w["consumer_group"] == "GID_pop"].set_index("candidate")
    assert w.loc["today: 3 clients, AVG", "max_queues"] == 6
    assert (w.loc["4 clients, AVG", ["max_queues", "min_queues"]] == [4, 4]).all()
    assert w.loc["2 clients, AVG", "max_queues"] == w.loc["1 client, AVG", "max_queues"] == 8
    assert "3 clients, AVG" not in w.index
    assert w["recommended"].sum() == 1 and w.loc["today: 3 clients, AVG", "recommended"]


def test_every_group_is_recommended_its_best_row_it_could_run(audited) -> None:
    """Over every group audited: one recommended row, with no more clients than today, a
    strategy its allocator has (Kafka's assignors for Kafka groups, AVG / AVG_BY_CIRCLE
    where the broker allocates, RocketMQ's for the others; today's unless the broker is
    asked for another) and the least max load of such rows; rows with more clients or
    other strategies are listed, never chosen."""
    w = audited["what_if"]
    keys = ["snapshot_id", "cluster", "consumer_group"]
    now = w[w["is_current"]].set_index(keys)
    kafka_today = now["strategy"].str.split("/").map(lambda s: set(s) <= set(KAFKA_STRATEGIES))
    m = audited["members"].assign(cluster=audited["members"]["cluster"].fillna("c"))
    by_broker = set(m[m["allocation_mode"].isin(["BROKER", "POP"])][keys].itertuples(
        index=False, name=None))
    w = (w.join(now["clients"].rename("today"), on=keys)
         .join(kafka_today.rename("kafka"), on=keys))
    w["by_broker"] = [k in by_broker for k in w[keys].itertuples(index=False, name=None)]
    assert w["kafka"].any() and (~w["kafka"]).any() and w["by_broker"].any()
    assert (w.groupby(keys)["recommended"].sum() == 1).all()
    broker_has = w["strategy"].str.split("/").map(lambda s: set(s) <= set(BROKER_STRATEGIES))
    client_has = w["is_current"] | (w["strategy"].isin(KAFKA_STRATEGIES) == w["kafka"])
    native = broker_has.where(w["by_broker"], client_has)
    popped = w["consumer_group"] == "GID_pop"  # shared queues: today's count only
    runnable = native & (w["clients"] <= w["today"]) & (~popped | (w["clients"] == w["today"]))
    best = w[w["recommended"]].set_index(keys)
    assert runnable[w["recommended"]].all()
    # the fewest queues left unconsumed first: a row with max 0 claims none (0 virtual
    # nodes); every simulated row that claims any claims every queue, and today's row
    # leaves the group_balance's unconsumed_queues. Of the groups that consume every
    # queue today, the least max of the runnable rows that claim; of the others, the
    # least max of the runnable simulated rows that claim
    b = audited["group_balance"]
    unconsumed = b[b["topic"].isna()].set_index(keys)["unconsumed_queues"]
    w = w.join(unconsumed.rename("today_unconsumed"), on=keys)
    claims = w["max_queues"] > 0
    pool = runnable & claims & ((w["today_unconsumed"] == 0) | ~w["is_current"])
    least = w[pool].groupby(keys)["max_queues"].min()
    assert best["max_queues"].sort_index().tolist() == least.sort_index().tolist()
    short = best.join(unconsumed.rename("u"))
    assert short["u"].gt(0).any()  # the rule matters: some group leaves queues today
    assert not short.loc[short["u"] > 0, "is_current"].any()
    assert (w["clients"] > w["today"]).any()
    # the rule matters: some listed row of the other system beats a group's recommendation
    rec_max = w.join(best["max_queues"].rename("rec_max"), on=keys)["rec_max"]
    assert (~native & (w["clients"] <= w["today"]) & (w["max_queues"] < rec_max)).any()


def test_summary_groups_carry_their_what_if_line(audited) -> None:
    worst = audited["worst"]
    assert "what_if_line" in worst.columns and worst["what_if_line"].notna().any()


def test_members_subscribing_different_topics_are_explained_as_their_client_assigns(
        audited) -> None:
    """RocketMQ clients split each topic over every client of the group (a non-subscriber's
    share goes unconsumed); Kafka's leader assigns a topic among its subscribers only."""
    members = _as_member_rows(pd.concat([c.members for c in all_cases()], ignore_index=True))
    strategies = members.groupby(["snapshot_id", "consumer_group"])["strategy"].agg(set)
    kafka_groups = {k for k, s in strategies.items() if s <= set(KAFKA_STRATEGIES)}
    b = audited["group_balance"]
    b = b[[("INCONSISTENT_SUBSCRIPTION" in f) for f in b["findings"]]]
    keys = zip(b["snapshot_id"], b["consumer_group"], strict=True)
    kafka = pd.Series([k in kafka_groups for k in keys], index=b.index)
    said = {"kafka": "Kafka assigns each topic among its own subscribers",
            "rocketmq": "RocketMQ splits each topic over all clients of the group"}
    assert kafka.any() and (~kafka).any()
    for rec in b[kafka]["recommendation"]:
        assert said["kafka"] in rec and said["rocketmq"] not in rec
    for rec in b[~kafka]["recommendation"]:
        assert said["rocketmq"] in rec and said["kafka"] not in rec
