"""Kafka groups their 3.5+ clients would assign by rack (KIP-881), which the audit does not
recompute: found per bucket in the assign-and-report pass, from the rows it holds anyway,
so the check costs no Spark job of its own (it cost nine, about a second at 1M).

Kafka's rule (`capture.kafka_racks`): members on `range` or a sticky assignor with a
`client_room` (client.rack) where some partition's `broker_room` is, over partitions on
more than one rack or some on none. `range` is judged per topic over its subscribers, the
sticky assignors once over all the topics the group's sticky members subscribe. Only
topics with readable partitions count: the others have no partition to place.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from vocabulary.columns import GROUP_KEYS, RACK_AWARE_ASSIGNORS, UNIT_KEYS

GROUPS_SCHEMA = pa.schema([(k, pa.string()) for k in GROUP_KEYS])


def rack_aware_groups(queues: pa.Table, members: pa.Table) -> pa.Table:
    """(snapshot_id, cluster, consumer_group), once each and sorted, of the groups of a
    bucket whose clients would assign by rack. `queues`: the readable queues of the
    (group, topic)s the members subscribe, with broker_room (a queue may appear more than
    once); `members`: the member rows with topic, strategy and client_room."""
    aware = members.select([*UNIT_KEYS, "strategy", "client_room"]).filter(
        pc.and_(pc.is_in(members.column("strategy"), pa.array(RACK_AWARE_ASSIGNORS)),
                pc.is_valid(members.column("topic"))))
    roomed = aware.filter(pc.is_valid(aware.column("client_room")))
    if not roomed.num_rows:
        return GROUPS_SCHEMA.empty_table()
    # the queues of the groups with a racked member only: most of a bucket's rows are not
    names = pc.unique(roomed.column("consumer_group"))
    rooms = (queues.filter(pc.is_in(queues.column("consumer_group"), names))
             .select([*UNIT_KEYS, "broker_room"])
             .group_by([*UNIT_KEYS, "broker_room"], use_threads=False).aggregate([])
             .to_pandas())
    subs = aware.to_pandas()
    found = pd.concat([_by_topic(rooms, subs[subs["strategy"] == "range"]),
                       _by_group(rooms, subs[subs["strategy"] != "range"])])
    found = found.drop_duplicates().sort_values(GROUP_KEYS, na_position="first")
    return pa.Table.from_pandas(found, GROUPS_SCHEMA, preserve_index=False)


def _by_rack(rooms: pd.DataFrame, subs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The `keys` rows (per topic, or per group) where some member's client_room is a rack
    of the partitions (`rooms`: one row per partition rack, None included) and those
    partitions are on more than one rack or some on none."""
    racked = subs[subs["client_room"].notna()][[*keys, "client_room"]].drop_duplicates()
    matched = racked.merge(rooms[[*keys, "broker_room"]].drop_duplicates(),
                           left_on=[*keys, "client_room"], right_on=[*keys, "broker_room"])
    spread = rooms.assign(unracked=rooms["broker_room"].isna()).groupby(
        keys, dropna=False, sort=False).agg(racks=("broker_room", "nunique"),
                                            unracked=("unracked", "any")).reset_index()
    spread = spread[(spread["racks"] > 1) | spread["unracked"]]
    return matched[keys].drop_duplicates().merge(spread[keys], on=keys)[GROUP_KEYS]


def _by_topic(rooms: pd.DataFrame, subs: pd.DataFrame) -> pd.DataFrame:
    """`range`: each topic over its subscribers and its own partitions."""
    return _by_rack(rooms, subs, UNIT_KEYS)


def _by_group(rooms: pd.DataFrame, subs: pd.DataFrame) -> pd.DataFrame:
    """The sticky assignors: the group's sticky members over the partitions of every topic
    they subscribe, at once; a member counts only through a topic with partitions."""
    topics = subs[UNIT_KEYS].drop_duplicates()
    group_rooms = rooms.merge(topics, on=UNIT_KEYS)[[*GROUP_KEYS, "broker_room"]]
    members = subs.merge(rooms[UNIT_KEYS].drop_duplicates(), on=UNIT_KEYS)
    return _by_rack(group_rooms, members, GROUP_KEYS)
