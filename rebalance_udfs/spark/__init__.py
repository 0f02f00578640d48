"""The Spark glue of the kernels: DataFrames in, cogrouped Arrow UDF calls over buckets of
groups, assignment rows out. The kernels themselves (`rebalance_udfs.*`) know no Spark."""
