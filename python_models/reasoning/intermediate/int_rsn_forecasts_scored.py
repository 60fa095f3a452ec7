"""Normalised forecast errors of the reasoning suite, per parsed forecast (thin wrapper over
tsrate.suites.reasoning.marts.forecast_errors; conventions documented there and in
int_rsn_forecasts_scored.yml)."""

from tsrate.suites.reasoning.marts import forecast_errors


def model(dbt, session):
    dbt.config(materialized="table")
    responses = dbt.ref("int_rsn_responses_scored").df()
    return forecast_errors(responses)
