"""Scores per system, task, feature and format (thin wrapper over
tsrate.suites.understanding.marts.task_scores)."""

from tsrate.suites.understanding.marts import task_scores


def model(dbt, session):
    dbt.config(materialized="table")
    scored = dbt.ref("int_und_answers_scored").df()
    options = dbt.ref("stg_und_prompts").df()[["prompt_key", "options"]]
    return task_scores(scored, options)
