"""Allocation kernels: pure numpy / pandas functions over a bucket of groups, testable
without Spark. Their Spark glue lives apart, in `rebalance_udfs.spark`."""
