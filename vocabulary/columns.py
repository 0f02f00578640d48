"""Column names, key lists and the string values of the table contracts (SPEC), spelled
once: kernels, Spark glue, reports and jobs import them instead of re-typing literals."""

from __future__ import annotations

# --- keys -----------------------------------------------------------------------------------
SNAPSHOT_KEYS = ["snapshot_id", "cluster"]
GROUP_KEYS = [*SNAPSHOT_KEYS, "consumer_group"]
# one allocation unit: a group's queues of one topic
UNIT_KEYS = [*GROUP_KEYS, "topic"]
# one queue of a group (broker_name is null for Kafka: compare it null-safe)
QUEUE_KEYS = [*UNIT_KEYS, "broker_name", "queue_id"]
CLIENT_KEYS = [*GROUP_KEYS, "client_id"]
# assignment rows: true on a queue's first row, where reports count the queue's own facts
QUEUE_FIRST = "queue_first"

# --- message models (members.message_model; null means CLUSTERING) ---------------------------
CLUSTERING, BROADCASTING = "CLUSTERING", "BROADCASTING"
MESSAGE_MODELS = (CLUSTERING, BROADCASTING)

# --- allocation modes (members.allocation_mode, SPEC §6: who allocates; null means CLIENT) ----
CLIENT, BROKER, POP, MESSAGE = "CLIENT", "BROKER", "POP", "MESSAGE"
ALLOCATION_MODES = (CLIENT, BROKER, POP, MESSAGE)
# modes where several clients read one queue by design (status SHARED, not CONTENDED)
SHARED_MODES = (POP, MESSAGE)
# modes where the broker computes the allocation (it knows only findings.BROKER_STRATEGIES)
BROKER_MODES = (BROKER, POP)
# optional member columns the kernels read when present
MODE_COLUMNS = ["allocation_mode", "pop_share_queue_num"]
# RocketMQ's retry topics (%RETRY%<group>): the broker never pops them (it allocates them
# as a PULL group's, QueryAssignmentProcessor), and their queue count is the group's
# retryQueueNums (default 1), not a topic's read queues. No Kafka topic holds a '%'.
RETRY_TOPIC_PREFIX = "%RETRY%"

# --- claim statuses (assignments.status) -------------------------------------------------------
OK, CONTENDED, SHARED = "OK", "CONTENDED", "SHARED"
UNCONSUMED, BROADCAST = "UNCONSUMED", "BROADCAST"
# a clustering client's claim on a queue (BROADCAST claims and UNCONSUMED rows are not)
CLAIM_STATUSES = (OK, CONTENDED, SHARED)

# --- strategies that depend on the previous assignment (chained per group, not batched) ---------
STICKY, COOPERATIVE_STICKY = "sticky", "cooperative-sticky"
STICKY_STRATEGIES = (STICKY, COOPERATIVE_STICKY)
# Kafka's client assignors: a group's leader assigns each topic among its subscribers only
KAFKA_STRATEGIES = ("range", "roundrobin", *STICKY_STRATEGIES)
# Kafka's assignors that balance a member's total over all the group's topics, not each
# topic on its own (range does each topic)
POOLED_ASSIGNORS = ("roundrobin", *STICKY_STRATEGIES)
# the Kafka assignors that assign by rack since Kafka 3.5 (KIP-881), which the audit does
# not recompute (`capture.kafka_racks`, `rebalance_udfs.racks`)
RACK_AWARE_ASSIGNORS = ("range", *STICKY_STRATEGIES)
# the Kafka assignors that support only the eager rebalance protocol: a rebalance revokes
# every partition of every member before it assigns them again (cooperative-sticky's
# protocol revokes only the partitions that move)
EAGER_ASSIGNORS = ("range", "roundrobin", STICKY)

# --- which groups get what-if candidates (reports.what_if) -----------------------------------
WHAT_IF_MODES = ("all", "findings", "off")

# MessageQueue.queueId (and a Kafka partition) is a Java int
MAX_QUEUE_ID = 2**31 - 1

# offsets at or past this no real queue reaches (10 million messages a second for 28
# years); the audit rejects them as sentinels (Long.MAX_VALUE for "unknown"), which would
# end the run on a lag sum beyond a long. Under it a client needs 1,024 such queues
OFFSET_LIMIT = 2**53

# the first year a captured_at may be in: the audit rejects earlier ones (a tool's zero
# time for "unknown"), and capture refuses them (`jobs.validate`, `capture.cli`)
FIRST_CAPTURE_YEAR = 1900

# --- drift (observed holders against the recomputed assignment) ------------------------------
NOT_HELD, HELD_BY_OTHER, HELD_TWICE, NOT_EXPECTED = (
    "NOT_HELD", "HELD_BY_OTHER", "HELD_TWICE", "NOT_EXPECTED")
DRIFT_COLUMNS = [*QUEUE_KEYS, "expected_clients", "observed_clients", "kind"]
# not a drift table column: why a sticky group's observed assignment is not one its
# assignor could settle on, in words (OBSERVED_DRIFT's sentence quotes it)
STICKY_BREAK = "_sticky_break"
