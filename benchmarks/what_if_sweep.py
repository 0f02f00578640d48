"""Cost of the what-if table's candidates (`what_if_bucket`) on synthetic groups (no Spark).

    python benchmarks/what_if_sweep.py [--groups 2000] [--seed 7] [--repeat 1]
                                       [--baseline REV] [--no-baseline]

Builds one bucket of `--groups` seeded synthetic consumer groups (1-64 clients, most 2-16;
90% one topic, the rest 2-4; RocketMQ topics of 1-8 brokers x 4-32 queues, Kafka topics of
4-256 partitions; AVG 72%, AVG_BY_CIRCLE 9%, CONSISTENT_HASH 9% (half with 20 virtual
nodes), Kafka range 6% / roundrobin 4%; some clients without the last topic, offsets for
the duplicate estimate), computes today's assignment with `allocate_bucket`, then times
`what_if_bucket` over all groups at once (as `--what-if all` would).

The baseline is `rebalance_udfs/what_if.py` as it was at git revision REV (default: the
newest commit whose what_if.py still simulated every candidate with the kernels), loaded
from `git show` into a temporary module; both versions run on the same bucket and the
time ratio is printed. Their tables are compared cell by cell: a speed-up must leave
them identical; where they differ (a change of the candidates or the rule) the tool says
which candidate rows one of them lacks and which columns differ, and exits 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rebalance_udfs import what_if  # noqa: E402
from rebalance_udfs.allocate import MEMBER_COLUMNS, QUEUE_COLUMNS, allocate_bucket  # noqa: E402

MODULE = "rebalance_udfs/what_if.py"
# the newest what_if.py with this marker computes closed-form candidates without the kernels
MARKER = "def _closed_form_applies"
CLIENT_BANDS = [((1, 1), 0.08), ((2, 2), 0.17), ((3, 4), 0.2), ((5, 8), 0.25),
                ((9, 16), 0.18), ((17, 32), 0.08), ((33, 64), 0.04)]
TOPICS_PER_GROUP = [(1, 0.9), (2, 0.07), (3, 0.02), (4, 0.01)]
RMQ_BROKERS = [(1, 0.2), (2, 0.4), (4, 0.3), (8, 0.1)]
RMQ_PER_BROKER = [(4, 0.25), (8, 0.45), (16, 0.2), (32, 0.1)]
KAFKA_PARTITIONS = [(4, 0.1), (6, 0.1), (8, 0.15), (12, 0.15), (16, 0.15), (24, 0.1),
                    (32, 0.1), (64, 0.1), (128, 0.03), (256, 0.02)]
RMQ_STRATEGIES = [("AVG", 0.8), ("AVG_BY_CIRCLE", 0.1), ("CONSISTENT_HASH", 0.1)]
KAFKA_STRATEGIES = [("range", 0.6), ("roundrobin", 0.4)]


def _pick(rng: np.random.Generator, table: list) -> object:
    values, weights = zip(*table, strict=True)
    return values[int(rng.choice(len(values), p=np.array(weights) / sum(weights)))]


def synthetic_bucket(groups: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(assigned, members) of `groups` groups, as `what_if_bucket` receives them."""
    rng = np.random.default_rng(seed)
    queues, members = [], []
    for g in range(groups):
        group = f"GID_{g:05d}"
        kafka = rng.random() < 0.1
        lo, hi = _pick(rng, CLIENT_BANDS)
        n_clients = int(rng.integers(lo, hi + 1))
        strategy = _pick(rng, KAFKA_STRATEGIES if kafka else RMQ_STRATEGIES)
        vnodes = 20 if strategy == "CONSISTENT_HASH" and rng.random() < 0.5 else None
        topics = [f"topic-{g}-{t}" for t in range(_pick(rng, TOPICS_PER_GROUP))]
        for topic in topics:
            if kafka:
                layout = [(None, p) for p in range(_pick(rng, KAFKA_PARTITIONS))]
            else:
                brokers, per = _pick(rng, RMQ_BROKERS), _pick(rng, RMQ_PER_BROKER)
                layout = [(f"broker-{b}", q) for b in range(brokers) for q in range(per)]
            for broker, qid in layout:
                committed = int(rng.integers(0, 10**9))
                consumed = committed + int(rng.integers(0, 500)) if rng.random() < 0.7 else None
                queues.append(("bench", "c1", group, topic, broker, qid, None, committed,
                               consumed))
        if kafka:
            clients = [f"consumer-{group}-{k}-{rng.integers(16**8):08x}"
                       for k in range(n_clients)]
        else:
            clients = [f"10.{g % 250}.{k // 250}.{k % 250}@{int(rng.integers(1024, 65536))}"
                       for k in range(n_clients)]
        partial = len(topics) > 1 and n_clients > 1 and rng.random() < 0.1
        for k, client in enumerate(clients):
            mine = topics[:-1] if partial and k == n_clients - 1 else topics
            members.extend(("bench", "c1", group, client, None, topic, strategy, None, None,
                             vnodes, None, None) for topic in mine)
    q = pd.DataFrame(queues, columns=[*QUEUE_COLUMNS, "committed_offset", "consumed_offset"])
    q["consumed_offset"] = q["consumed_offset"].astype("Int64")
    m = pd.DataFrame(members, columns=MEMBER_COLUMNS)
    today = allocate_bucket(q, m)
    m["allocation_mode"] = None
    m["pop_share_queue_num"] = None
    return today[what_if.ASSIGNED_COLUMNS], m[what_if.WHAT_IF_MEMBER_COLUMNS]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def default_baseline() -> str:
    """The newest commit whose what_if.py has no closed-form path (the kernel-only sweep)."""
    for rev in _git("log", "--format=%H", "--", MODULE).split():
        if MARKER not in _git("show", f"{rev}:{MODULE}"):
            return rev
    raise SystemExit(f"no commit of {MODULE} without {MARKER!r}: pass --baseline REV")


def load_revision(rev: str):
    """`what_if.py` at `rev` as a module of its own (it imports today's kernels)."""
    source = _git("show", f"{rev}:{MODULE}")
    path = Path(tempfile.mkdtemp(prefix="what_if_baseline_")) / "what_if_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("what_if_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn, repeat: int) -> tuple[float, pd.DataFrame]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


CANDIDATE_KEYS = ["consumer_group", "is_current", "split_by_topic", "strategy", "clients",
                  "virtual_nodes"]


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(CANDIDATE_KEYS, kind="stable").reset_index(drop=True)


def differences(new: pd.DataFrame, old: pd.DataFrame) -> str | None:
    """None where both tables hold the same rows and values, else what differs: candidate
    rows only in one of them, and of the shared candidates how many differ in which
    column (a changed candidate set is a result to read, not a crash)."""
    try:
        pd.testing.assert_frame_equal(_canonical(new), _canonical(old), check_dtype=False)
        return None
    except AssertionError:
        pass
    keyed = [frame.assign(virtual_nodes=frame["virtual_nodes"].fillna(-1))
             for frame in (new, old)]
    both = keyed[0].merge(keyed[1], on=CANDIDATE_KEYS, how="outer", indicator=True,
                          suffixes=("", "_old"))
    parts = [f"{(both['_merge'] == 'left_only').sum():,} candidate rows only in this version",
             f"{(both['_merge'] == 'right_only').sum():,} only in the baseline"]
    for alone, where in ((new.columns.difference(old.columns), "this version"),
                         (old.columns.difference(new.columns), "the baseline")):
        if len(alone):
            parts.append(f"columns only in {where}: {', '.join(alone)}")
    shared = both[both["_merge"] == "both"]
    changed = {}
    for column in (c for c in new.columns if c in old.columns and c not in CANDIDATE_KEYS):
        a, b = shared[column], shared[f"{column}_old"]
        differ = ~((a == b) | (a.isna() & b.isna()))
        if differ.any():
            changed[column] = int(differ.sum())
    parts.append("of the shared, " + (", ".join(f"{n:,} differ in {c}"
                                                for c, n in changed.items()) or "none differs"))
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs of each version")
    parser.add_argument("--baseline", metavar="REV", help="git revision of the old what_if.py")
    parser.add_argument("--no-baseline", action="store_true", help="time this version only")
    args = parser.parse_args()

    start = time.perf_counter()
    assigned, members = synthetic_bucket(args.groups, args.seed)
    strategies = members.drop_duplicates("consumer_group")["strategy"].value_counts()
    print(f"synthetic bucket: {args.groups} groups, {len(assigned):,} assignment rows, "
          f"{len(members):,} member rows (built in {time.perf_counter() - start:.1f}s); "
          + ", ".join(f"{k} {v}" for k, v in strategies.items()))

    new_s, new = timed(lambda: what_if.what_if_bucket(assigned, members), args.repeat)
    print(f"this version          : {new_s:8.2f} s  {len(new):,} what_if rows")
    if args.no_baseline:
        return
    rev = args.baseline or default_baseline()
    old_module = load_revision(rev)
    old_s, old = timed(lambda: old_module.what_if_bucket(assigned, members), args.repeat)
    print(f"baseline {rev[:12]}  : {old_s:8.2f} s  {len(old):,} what_if rows")
    print(f"speed-up              : {old_s / new_s:8.1f}x")
    differ = differences(new, old)
    if differ is not None:
        print(f"tables identical      : no: {differ}")
        sys.exit(1)
    print("tables identical      : yes (every row and value)")


if __name__ == "__main__":
    main()
