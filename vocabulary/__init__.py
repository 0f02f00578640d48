"""The names every layer shares (columns, keys, statuses, modes, schemas, contracts,
errors), defined once.

Imports nothing from the project, so kernels, Spark glue, reports and jobs can all depend
on it. `columns` is plain Python (safe for the pure kernels); `schemas` and `contracts`
need pyspark.
"""
