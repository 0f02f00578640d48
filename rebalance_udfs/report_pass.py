"""Every per-group report of one bucket of consumer groups, from its assignment rows and
member rows, in one call: the pure function behind the assign-and-report UDF.

The kernels already hold a bucket's groups whole, and each report is a per-group
computation, so they run where the rows are, one after the other:

1. the claim facts of the assignment rows (`rebalance_udfs.claim_facts`);
2. consumer_load and group_balance figures and findings (`rebalance_udfs.group_figures`);
3. the what-if candidates (`rebalance_udfs.what_if`) of the groups the run simulates:
   every group (`all`), those whose whole-group row has a finding (`findings`; groups
   with observed rows too, when the run has them: OBSERVED_DRIFT is known only after
   the drift comparison, so those groups are simulated and the rows of the ones without
   a finding dropped in Spark), or none (`off`);
4. each simulated group's what-if line (`rebalance_udfs.what_if_lines`), on its
   whole-group balance row, for the recommendation and the run's summary;
5. churn against each group's previous snapshot (`rebalance_udfs.churn_link`,
   `rebalance_udfs.churn`): the bucket holds every snapshot of its groups, and the
   predecessor's rows from the output come along.

No Spark here (testable with plain Arrow tables); the Spark glue is
`rebalance_udfs.spark.report_pass`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rebalance_udfs.churn import churn_totals
from rebalance_udfs.churn_link import CLIENT_ROW_COLUMNS, churn_inputs
from rebalance_udfs.churn_link import ROW_COLUMNS as CHURN_ROW_COLUMNS
from rebalance_udfs.claim_facts import ROW_COLUMNS, claim_facts
from rebalance_udfs.group_figures import MEMBER_COLUMNS as FIGURE_MEMBER_COLUMNS
from rebalance_udfs.group_figures import group_figures
from rebalance_udfs.what_if import (
    ASSIGNED_COLUMNS,
    TODAY_NO_OPTION,
    UNCLAIMED,
    WHAT_IF_MEMBER_COLUMNS,
    typed_arrow,
    what_if_bucket,
)
from rebalance_udfs.what_if_lines import LINE, what_if_lines
from vocabulary.columns import GROUP_KEYS, WHAT_IF_MODES
from vocabulary.schemas import (
    BALANCE_FIGURES_WITH_LINE_ARROW_SCHEMA,
    CHURN_TOTALS_ARROW_SCHEMA,
    LOAD_FIGURES_ARROW_SCHEMA,
    WHAT_IF_ARROW_SCHEMA,
)

# members: a group with observed rows (a candidate for OBSERVED_DRIFT, see above)
OBSERVED = "_observed"
# what the pass reads of the member rows (OBSERVED too, when the run has observed rows)
MEMBER_COLUMNS = list(dict.fromkeys([*FIGURE_MEMBER_COLUMNS, *WHAT_IF_MEMBER_COLUMNS]))
# what it reads of the assignment rows
ASSIGNMENT_COLUMNS = list(dict.fromkeys([*ROW_COLUMNS, *ASSIGNED_COLUMNS,
                                         *CHURN_ROW_COLUMNS]))
# group_balance figures: the group's what-if line (`rebalance_udfs.what_if_lines`)
LINE_COLUMN = "_what_if_line"
# the tables it returns (churn: the totals per compared group, given the pairs)
TABLES = ("consumer_load", "group_balance", "what_if", "churn")
SCHEMAS = dict(zip(TABLES, (LOAD_FIGURES_ARROW_SCHEMA, BALANCE_FIGURES_WITH_LINE_ARROW_SCHEMA,
                            WHAT_IF_ARROW_SCHEMA, CHURN_TOTALS_ARROW_SCHEMA), strict=True))

def report_bucket(rows: pa.Table, members: pa.Table, what_if: str,
                  pairs: pa.Table | None = None, prior_rows: pa.Table | None = None,
                  prior_clients: pa.Table | None = None) -> dict[str, pa.Table]:
    """consumer_load and group_balance figures (rates still exact decimals), what-if rows
    and, given `pairs`, churn totals of the groups in the bucket, each table in its
    schema (`SCHEMAS`).

    `rows`: the bucket's assignment rows (ASSIGNMENT_COLUMNS); `members`: its member rows
    (MEMBER_COLUMNS); `what_if`: one of WHAT_IF_MODES; `pairs`, `prior_rows`,
    `prior_clients`: the compared snapshots and the predecessor's rows from the output
    (`rebalance_udfs.churn_link.churn_inputs`)."""
    if what_if not in WHAT_IF_MODES:
        raise ValueError(f"what_if must be one of {WHAT_IF_MODES}, not {what_if!r}")
    load, balance = group_figures(claim_facts(rows.select(ROW_COLUMNS)),
                                  members.select(FIGURE_MEMBER_COLUMNS))
    simulated, unclaimed, no_option = _what_if(rows, members,
                                               _simulated_groups(balance, members, what_if))
    tables = {"consumer_load": load,
              "group_balance": _with_lines(balance, what_if_lines(simulated, unclaimed,
                                                                  no_option)),
              "what_if": simulated}
    if pairs is not None:
        tables["churn"] = churn_totals(*churn_inputs(
            rows.select(CHURN_ROW_COLUMNS), load.select(CLIENT_ROW_COLUMNS), prior_rows,
            prior_clients, pairs))
    return tables


def _with_lines(balance: pa.Table, lines: pa.Table) -> pa.Table:
    """`balance` with LINE_COLUMN: its group's what-if line on a whole-group row."""
    n = balance.num_rows
    at = pa.array(np.arange(n, dtype=np.int64))
    whole = balance.select(GROUP_KEYS).append_column("_at", at).filter(
        pc.is_null(balance.column("topic")))
    matched = whole.join(lines, GROUP_KEYS, join_type="inner", use_threads=False)
    source = np.full(n, -1, np.int64)
    source[matched.column("_at").to_numpy()] = np.arange(matched.num_rows)
    line = matched.column(LINE).take(pa.array(source, mask=source < 0))
    return balance.append_column(LINE_COLUMN, line).cast(
        BALANCE_FIGURES_WITH_LINE_ARROW_SCHEMA)


def _simulated_groups(balance: pa.Table, members: pa.Table, what_if: str) -> pa.Table:
    """GROUP_KEYS of the groups whose what-if candidates the run computes."""
    if what_if == "off":
        return balance.select(GROUP_KEYS).slice(0, 0)
    whole = balance.filter(pc.is_null(balance.column("topic")))
    if what_if == "findings":
        found = pc.greater(pc.fill_null(pc.list_value_length(whole.column("findings")), 0), 0)
        chosen = whole.filter(found).select(GROUP_KEYS)
        if OBSERVED in members.column_names:
            seen = members.filter(pc.fill_null(members.column(OBSERVED), False))
            chosen = pa.concat_tables([chosen, seen.select(GROUP_KEYS)])
        return chosen.group_by(GROUP_KEYS, use_threads=False).aggregate([])
    return whole.select(GROUP_KEYS)


def _what_if(rows: pa.Table, members: pa.Table,
             chosen: pa.Table) -> tuple[pa.Table, pa.Array | None, pa.Array | None]:
    """what_if rows (WHAT_IF_ARROW_SCHEMA) of the `chosen` groups, and per row the queues
    it leaves unconsumed and whether its group's today row is no option
    (`what_if.UNCLAIMED`, `what_if.TODAY_NO_OPTION`: for the lines, not in the table)."""
    if not chosen.num_rows:
        return WHAT_IF_ARROW_SCHEMA.empty_table(), None, None
    assigned = _of_groups(rows.select(ASSIGNED_COLUMNS), chosen)
    simulated = _of_groups(members.select(WHAT_IF_MEMBER_COLUMNS), chosen)
    frame = what_if_bucket(_pandas(assigned), _pandas(simulated))
    return (typed_arrow(frame, WHAT_IF_ARROW_SCHEMA),
            pa.array(frame[UNCLAIMED].to_numpy(np.int64), pa.int64()),
            pa.array(frame[TODAY_NO_OPTION].to_numpy(bool), pa.bool_()))


def _of_groups(table: pa.Table, groups: pa.Table) -> pa.Table:
    """The rows of `table` whose group is in `groups` (GROUP_KEYS, distinct), in order."""
    index = pa.array(np.arange(table.num_rows, dtype=np.int64))
    keyed = table.select(GROUP_KEYS).append_column("_at", index)
    at = keyed.join(groups, GROUP_KEYS, join_type="left semi", use_threads=False)
    return table.take(pa.array(np.sort(at.column("_at").to_numpy()), pa.int64()))


def _pandas(table: pa.Table) -> pd.DataFrame:
    """As a pandas UDF receives it (nullable integers as floats, strings as objects)."""
    return table.to_pandas(date_as_object=True)
