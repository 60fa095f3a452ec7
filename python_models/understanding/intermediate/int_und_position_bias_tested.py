"""Position bias of the understanding suite as a significance test (thin wrapper over
tsrate.suites.understanding.marts.position_bias_table)."""

from tsrate.suites.understanding.marts import position_bias_table


def model(dbt, session):
    dbt.config(materialized="table")
    return position_bias_table(dbt.ref("int_und_answers_scored").df())
