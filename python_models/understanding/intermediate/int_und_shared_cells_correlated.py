"""Correlations of the format table's cells that ask about the same series (thin wrapper
over tsrate.suites.understanding.shared_series.shared_cell_correlations)."""

from tsrate.suites.understanding.shared_series import shared_cell_correlations


def model(dbt, session):
    dbt.config(materialized="table")
    scored = dbt.ref("int_und_answers_scored").df()
    options = dbt.ref("stg_und_prompts").df()[["prompt_key", "options"]]
    return shared_cell_correlations(scored, options)
