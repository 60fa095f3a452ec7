"""The core's SQL that no earlier round swept (round 12 of the mutation sweep; survivors in
tests/planted/sweep12_sql.json): forecast_traces, run_provenance, system_catalog,
stg_study_companies and the project's grain test ``unique_combination``.

forecast_traces has one rule with a token to change (``median(forecast)`` over the same
ticker, window, perturbation and step); the integration tests of the report read it on real
runs where a consensus over the wrong partition or a mean instead of a median moves a plot,
not a number any test reads. Its hand-computed unit case
``forecast_traces_consensus_per_ticker_window_perturbation_and_step`` gives three systems
whose mean and median differ, a step with two systems, a second perturbation, ticker and
window whose pooling would move the median. run_provenance and system_catalog are casts and
column lists only: their unit cases pass one row whose values all differ (errors planted by
hand: a column published under a neighbour's name, which a contract's names and types
cannot see).

The core's thirteen other staging models (stg_forecasts, stg_forecast_quantiles, stg_windows,
stg_runs, ...) are casts and renames only; each has a unit case passing one raw row whose
values all differ (``<model>_every_column_under_its_own_name``), so a quantile, a date or a
count cast under a neighbour's name fails it.

stg_study_companies unnests raw.studies' companies JSON (``recursive := true``: one column
per company field); no test read it directly. Here two studies are stored in raw.studies
(one with a company without a name, one sharing a ticker with the first) and the view is
built and read: one row per study and ticker with each field under its own name. The grain
test ``unique_combination`` fails a build on two rows sharing study and ticker (a pair of
duplicates is the edge: ``count(*) > 1``).

Each test builds on an empty warehouse (see ``tests/integration/builds.unit_cases_pass``
for the unit cases, forced on)."""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.raw_schema import create_raw_tables

pytestmark = pytest.mark.slow


def test_public_faces_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", "+forecast_traces", "+run_provenance", "+system_catalog"]
    unit_cases_pass([*selection, "--exclude", "test_type:data"], tmp_path, dbt_target, monkeypatch)


#: The core's staging models whose unit cases pass one raw row with every value different.
STAGING = (
    "stg_forecast_failures stg_forecast_partitions stg_forecast_quantiles stg_forecasts "
    "stg_model_checkpoints stg_perturbed_inputs stg_prices stg_run_partitions "
    "stg_run_skipped_systems stg_runs stg_sentiments stg_study_withdrawals stg_windows"
)


def test_staging_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    selection = ["--select", *STAGING.split(), "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)


def _store_studies(warehouse, studies: dict[str, list[dict]]) -> None:
    """raw.studies rows with these companies (the other columns as a study stores them)."""
    with duckdb.connect(str(warehouse)) as con:
        create_raw_tables(con)
        for study_id, companies in studies.items():
            tickers = [company["ticker"] for company in companies]
            con.execute(
                "insert into raw.studies values (?, ?, '{}', ?, date '2024-01-01', "
                "date '2024-06-30', 30, 5, 5, 0, ['P0', 'P1'], ?, 'seed', now()::timestamp)",
                [study_id, f"name-{study_id}", tickers, json.dumps(companies)],
            )


def _build_study_companies(tmp_path, dbt_target) -> None:
    dbt.run_dbt(
        ["build", "--select", "stg_study_companies"],
        None,
        tmp_path / "tsrate.duckdb",
        None,
        dbt_target,
    )


def test_stg_study_companies_one_row_per_study_and_ticker(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    _store_studies(
        warehouse,
        {
            "st1": [
                {"ticker": "AAA", "company_name": "Alpha Inc", "industry": "Tech"},
                {"ticker": "BBB", "company_name": None, "industry": "Bank", "biased_offset": 2.5},
            ],
            "st2": [{"ticker": "AAA", "company_name": "Alpha Two", "industry": "Energy"}],
        },
    )
    _build_study_companies(tmp_path, dbt_target)  # with its data tests: they pass
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select study_id, ticker, company_name, industry, biased_offset "
            "from staging.stg_study_companies order by study_id, ticker"
        ).fetchall()
    assert rows == [
        ("st1", "AAA", "Alpha Inc", "Tech", None),
        ("st1", "BBB", None, "Bank", 2.5),
        ("st2", "AAA", "Alpha Two", "Energy", None),
    ]


def test_unique_combination_fails_a_pair_of_duplicates(tmp_path, dbt_target):
    _store_studies(
        tmp_path / "tsrate.duckdb",
        {
            "st1": [
                {"ticker": "AAA", "company_name": "Alpha Inc", "industry": "Tech"},
                {"ticker": "AAA", "company_name": "Alpha again", "industry": "Tech"},
                {"ticker": "BBB", "company_name": "Beta", "industry": "Bank"},
            ]
        },
    )
    with pytest.raises(dbt.DbtError, match="unique_combination"):
        _build_study_companies(tmp_path, dbt_target)
