"""Pairwise Student t-tests behind the Weighted Rejection Score (paper Algorithm 1).

Thin wrapper over tsrate.methods.wrs.wrs_pair_table: both analyses (industry pairs; company pairs
inside an industry) for every outcome of var robustness_outcomes. Tunables come from
int_wrs_pairs_tested.yml; the public mart wrs_pairs selects from it.

The table (8.3 million rows at the scale benchmark's size) is handed to DuckDB as an Arrow
table: the same columns and types as the pandas frame, written in about half the time
(6.3 million rows: 3.8 s instead of 7.0 s).
"""

import pyarrow as pa

from tsrate.methods.wrs import wrs_pair_table
from tsrate.platform.marts_io import read_columns


def model(dbt, session):
    # dbt registers config keys from plain dbt.config.get("...") calls only
    configured = dbt.config.get("robustness_outcomes")
    outcomes = str(configured or "").split()
    if not outcomes:
        raise ValueError(
            "int_wrs_pairs_tested: set config robustness_outcomes (var robustness_outcomes)"
        )
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry", *outcomes]
    window_errors = read_columns(dbt.ref("window_errors"), columns)
    table = wrs_pair_table(window_errors, dbt.ref("confidence_levels").df(), outcomes)
    return pa.Table.from_pandas(table, preserve_index=False)
