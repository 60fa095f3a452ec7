"""Weighted Rejection Score per run x analysis x outcome x system x perturbation (paper eq. 1).

Thin wrapper over tsrate.methods.wrs.wrs_table applied to int_wrs_pairs_tested (the rows of
the mart wrs_pairs). Feeds the wrs_industry / wrs_company rows of robustness_scores (a
pipeline step, not a public mart).
"""

from tsrate.methods.wrs import wrs_table
from tsrate.platform.marts_io import read_columns

PAIR_INPUT = ["run_id", "analysis", "outcome", "system_id", "perturbation_id", "confidence"]
PAIR_INPUT += ["weight", "weighted_rejection"]


def model(dbt, session):
    return wrs_table(read_columns(dbt.ref("int_wrs_pairs_tested"), PAIR_INPUT))
