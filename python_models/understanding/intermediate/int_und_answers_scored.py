"""Every answer of the selected understanding suite run scored against its prompt (thin
wrapper over tsrate.suites.understanding.marts.score_table)."""

from tsrate.suites.understanding.marts import score_table


def model(dbt, session):
    dbt.config(materialized="table")
    return score_table(dbt.ref("int_und_answers_selected").df())
