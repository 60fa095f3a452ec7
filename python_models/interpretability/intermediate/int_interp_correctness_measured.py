"""Interpretability correctness per training run (thin wrapper over
tsrate.suites.interpretability.marts.correctness_table; measures documented there and in
int_interp_correctness_measured.yml)."""

from tsrate.suites.interpretability.marts import correctness_table


def model(dbt, session):
    dbt.config(materialized="table")
    runs = dbt.ref("int_interp_runs_selected").df()
    attention = dbt.ref("int_interp_attention_selected").df()
    truth = dbt.ref("stg_interp_truth").df()
    return correctness_table(runs, attention, truth)
