"""The KIP-881 cases both rack tests use: the pass's kernel without Spark
(`tests/unit/test_racks.py`) and the audit's warning (`tests/spark/test_member_warnings.py`).
Kafka's rule: a member's rack where some partition is, over partitions on more than one
rack; range per topic, the sticky assignors over the group's topics, roundrobin never."""

from __future__ import annotations

# partition racks per topic, a partition each
TOPIC_RACKS = {"T": ["r1", "r2"], "U": ["r1", "r1"], "V": ["r2", "r2"], "W": ["r1", "r1"]}

# group: (strategy, [(client, client rack, topic)])
RACK_GROUPS = {
    "by-rack-range": ("range", [("a", "r1", "T"), ("b", "r2", "T")]),
    "one-rack-range": ("range", [("a", "r1", "W"), ("b", "r1", "W")]),
    "by-rack-sticky": ("cooperative-sticky", [("a", "r1", "U"), ("a", "r1", "V"),
                                              ("b", "r2", "U"), ("b", "r2", "V")]),
    "roundrobin": ("roundrobin", [("a", "r1", "T"), ("b", "r2", "T")]),
    "other-racks": ("range", [("a", "r7", "T"), ("b", "r8", "T")]),
    "no-racks": ("range", [("a", None, "T"), ("b", None, "T")]),
}

# the groups of RACK_GROUPS Kafka's clients assign by rack, sorted
BY_RACK = ["by-rack-range", "by-rack-sticky"]
