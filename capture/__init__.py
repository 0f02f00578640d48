"""Capture a cluster's consumer-group state into the audit's input tables.

No Spark here: captures are small and run where the operator is, so tables are built as
pyarrow tables and written with delta-rs.
"""
