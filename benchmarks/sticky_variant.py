"""The benchmark inputs with their Kafka groups on the sticky assignors (no Spark).

    python -m benchmarks.sticky_variant [--size 1M]

`benchmarks.generate` gives the Kafka cluster's groups range and roundrobin. This writes
`benchmarks/data/<size>-sticky/`: the same queues and offsets (links to the generated
tables) and members whose range / roundrobin rows run `sticky` or `cooperative-sticky`
instead (half the groups each, by a CRC of the group name), so an audit of it measures
what groups on the sticky assignors cost beside the generated ones:

    ./spark-submit.sh --master 'local[2]' audit --queues benchmarks/data/1M-sticky/queues \\
        --members benchmarks/data/1M-sticky/members \\
        --offsets benchmarks/data/1M-sticky/offsets --output /tmp/sticky-audit
"""

from __future__ import annotations

import argparse
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake

DATA = Path(__file__).resolve().parent / "data"


def sticky_members(members: pa.Table) -> pa.Table:
    """`members` with every range / roundrobin row on a sticky assignor: cooperative-sticky
    for the groups whose name's CRC-32 is even, sticky for the others."""
    strategy = members.column("strategy")
    kafka = pc.fill_null(pc.is_in(strategy, value_set=pa.array(["range", "roundrobin"])),
                         False)
    names, codes = np.unique(members.column("consumer_group").to_numpy(zero_copy_only=False),
                             return_inverse=True)
    even = np.array([zlib.crc32(str(n).encode()) % 2 == 0 for n in names])[codes]
    chosen = pc.if_else(pa.array(even), "cooperative-sticky", "sticky")
    return members.set_column(members.schema.get_field_index("strategy"), "strategy",
                              pc.if_else(kafka, chosen, strategy).cast(strategy.type))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1M", help="a size benchmarks.generate made")
    args = parser.parse_args()
    source, target = DATA / args.size, DATA / f"{args.size}-sticky"
    if not (source / "members").exists():
        raise SystemExit(f"no {source}: run python -m benchmarks.generate --size {args.size}")
    target.mkdir(parents=True, exist_ok=True)
    for name in ("queues", "offsets"):
        link = target / name
        if not link.exists():
            link.symlink_to(source / name)
    members = sticky_members(DeltaTable(str(source / "members")).to_pyarrow_table())
    write_deltalake(str(target / "members"), members, mode="overwrite")
    switched = pc.sum(pc.is_in(members.column("strategy"),
                               value_set=pa.array(["sticky", "cooperative-sticky"]))).as_py()
    print(f"{target}: {switched:,} of {members.num_rows:,} member rows on a sticky assignor")


if __name__ == "__main__":
    main()
