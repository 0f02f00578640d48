"""Input rates as exact decimals, the way every report sums them.

Input rates are summed as exact decimals, then written as doubles. A sum of doubles
depends on the order Spark meets the rows in (partitioning, shuffle fetch order), so its
last bits changed from run to run and flipped the rate-skew sentence of a recommendation.
Decimal sums are exact, hence the same in any order; 9 decimals keep more than any rate
needs. A rate that is not a finite number below 1e29 (RATE_LIMIT) has no such decimal:
validation rejects its row (`jobs.validate`), so none reaches the cast. The cast is
Spark's own (`try_cast`), made before the rows reach the kernels, which sum its units
(`rebalance_udfs.exact`).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import types as T

EXACT_RATE = T.DecimalType(38, 9)
# the least rate EXACT_RATE cannot hold: 38 digits, 9 of them decimals
RATE_LIMIT = 1e29


def exact_rate(rate: Column) -> Column:
    """`rate` (double) as an exact decimal for summing (null when not representable)."""
    return rate.try_cast(EXACT_RATE)


def rate_out(rate: Column) -> Column:
    """An exact rate figure as the double the output tables hold."""
    return rate.cast("double")
