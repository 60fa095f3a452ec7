"""Bootstrap intervals of the reasoning suite's mean forecast errors (thin wrapper over
tsrate.suites.reasoning.marts.forecast_intervals)."""

from tsrate.suites.reasoning.marts import forecast_intervals


def model(dbt, session):
    dbt.config(materialized="table")
    return forecast_intervals(dbt.ref("int_rsn_forecasts_scored").df())
