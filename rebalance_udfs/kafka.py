"""Kafka client assignors, vectorized. Only members subscribing a topic take part."""

from __future__ import annotations

from rebalance_udfs.rocketmq import averagely_share

# RangeAssignor with no racks: per topic, contiguous ranges over the members subscribing it,
# sorted by member id, the first n % c members one larger: RocketMQ's AVG block arithmetic.
range_share = averagely_share
