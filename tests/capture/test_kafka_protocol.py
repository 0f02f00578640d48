"""The consumer-protocol decoder, on bytes made by an independent encoder (kafka-python's
consumer-protocol structures, generated from Kafka's own JSON schemas), never our own."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KpAssignment
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription
from kafka.protocol.old.consumer_protocol import (
    ConsumerProtocolMemberAssignment_v0,
    ConsumerProtocolMemberMetadata_v0,
)

from capture.kafka_protocol import ProtocolError, decode_assignment, decode_subscription


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_every_version(version):
    owned = [KpSubscription.TopicPartition(topic="orders", partitions=[2, 0])]
    data = KpSubscription(version=version, topics=["orders", "päyments"], user_data=b"\x01\x02",
                          owned_partitions=owned, generation_id=42, rack_id="rack-7").encode()
    sub = decode_subscription(data)
    assert sub.version == version
    assert sub.topics == ["orders", "päyments"]
    assert sub.user_data == b"\x01\x02"
    assert sub.owned_partitions == ([("orders", 2), ("orders", 0)] if version >= 1 else [])
    assert sub.generation_id == (42 if version >= 2 else None)
    assert sub.rack_id == ("rack-7" if version >= 3 else None)


def test_subscription_null_user_data_and_legacy_struct():
    data = KpSubscription(version=1, topics=["t"], user_data=None, owned_partitions=[]).encode()
    assert decode_subscription(data).user_data is None
    legacy = ConsumerProtocolMemberMetadata_v0(0, ["a", "b"], b"").encode()
    assert decode_subscription(legacy).topics == ["a", "b"]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_every_version(version):
    parts = [KpAssignment.TopicPartition(topic="orders", partitions=[0, 1]),
             KpAssignment.TopicPartition(topic="payments", partitions=[3])]
    data = KpAssignment(version=version, assigned_partitions=parts, user_data=b"u").encode()
    a = decode_assignment(data)
    assert a.version == version
    assert a.partitions == [("orders", 0), ("orders", 1), ("payments", 3)]
    assert a.user_data == b"u"


def test_assignment_legacy_struct_and_empty():
    data = ConsumerProtocolMemberAssignment_v0(0, [("t", [5, 6])], b"").encode()
    assert decode_assignment(data).partitions == [("t", 5), ("t", 6)]
    assert decode_assignment(b"").partitions == []


def test_garbage_and_truncation_raise():
    data = KpSubscription(version=0, topics=["orders"], user_data=b"").encode()
    with pytest.raises(ProtocolError):
        decode_subscription(data[:-3])
    with pytest.raises(ProtocolError):
        decode_subscription(b"")
    with pytest.raises(ProtocolError):
        decode_assignment(b"\x00\x00\x7f\xff\xff\xff")
