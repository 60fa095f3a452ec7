"""Studies as stored entities (tsrate.robustness.studies): ids from definitions, runs that
join their study, and warehouses of the previous release migrated with nothing lost."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pandas as pd
import pytest

from tests.support.warehouses import OLD_RUNS_DDL
from tsrate import TsrateError
from tsrate.config import Study, load_companies
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness import studies
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.sources import load_skfolio_sp500

STUDY = Study.from_mapping(
    dict(
        study_tickers=["JPM", "AAPL"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=30,
        horizon=5,
        systems=["naive"],
    )
)
COMPANIES = pd.DataFrame(
    {
        "ticker": ["AAPL", "JPM", "XOM"],
        "company_name": ["Apple Inc.", "JPMorgan", "Exxon"],
        "industry": ["Technology", "Banking", "Energy"],
        "biased_offset": [0, 500, 9],
    }
)


def expected_id(study: Study, companies: dict[str, tuple]) -> str:
    """The id computed by hand: SHA-256 of the sorted-key compact JSON, 16 hex digits."""
    definition = {
        "arima_order": list(study.arima_order),
        "companies": [
            {"biased_offset": companies[t][2], "company_name": companies[t][0],
             "industry": companies[t][1], "ticker": t}
            for t in sorted(study.tickers)
        ],
        "context_length": study.context_length,
        "end": str(study.end),
        "horizon": study.horizon,
        "perturbation_phase": study.perturbation_phase,
        "perturbations": sorted(study.perturbations),
        "random_seed": study.seed,
        "start": str(study.start),
        "stride": study.stride,
        "tickers": sorted(study.tickers),
    }  # fmt: skip
    text = json.dumps(definition, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_the_id_hashes_the_definition_but_not_the_systems():
    by_hand = {"AAPL": ("Apple Inc.", "Technology", 0.0), "JPM": ("JPMorgan", "Banking", 500.0)}
    got = studies.study_id_of(studies.study_definition(STUDY, COMPANIES))
    assert got == expected_id(STUDY, by_hand)
    more_systems = Study.from_mapping({**_values(STUDY), "systems": ["naive", "arima"]})
    assert studies.study_id_of(studies.study_definition(more_systems, COMPANIES)) == got
    reordered = Study.from_mapping({**_values(STUDY), "study_tickers": ["AAPL", "JPM"]})
    assert studies.study_id_of(studies.study_definition(reordered, COMPANIES)) == got
    strided = Study.from_mapping({**_values(STUDY), "stride": 2})
    assert studies.study_id_of(studies.study_definition(strided, COMPANIES)) != got
    moved = COMPANIES.assign(industry=["Technology", "Finance", "Energy"])
    assert studies.study_id_of(studies.study_definition(STUDY, moved)) != got


def _values(study: Study) -> dict:
    return dict(
        study_tickers=list(study.tickers), study_start=str(study.start),
        study_end=str(study.end), context_length=study.context_length,
        horizon=study.horizon, stride=study.stride, systems=list(study.systems),
    )  # fmt: skip


def _old_run(con, run_id: str, study: Study, started: str) -> None:
    con.execute(
        "insert into raw.runs values (?, ?::timestamp, ?::timestamp, 'succeeded', ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, 'old')",
        [run_id, started, started, study.study_hash, study.to_json(), list(study.tickers),
         list(study.systems), list(study.perturbations), study.start, study.end,
         study.context_length, study.horizon, study.stride, study.perturbation_phase],
    )  # fmt: skip


def test_a_warehouse_of_the_previous_release_gets_its_studies_with_nothing_lost(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(OLD_RUNS_DDL)
    other = Study.from_mapping({**_values(STUDY), "stride": 3})
    _old_run(con, "r1", STUDY, "2026-01-01 10:00")
    _old_run(con, "r2", Study.from_mapping({**_values(STUDY), "systems": ["arima"]}), "2026-01-02")
    _old_run(con, "r3", other, "2026-01-03")
    before = con.execute("select * from raw.runs order by run_id").fetchall()

    assigned = dict(studies.ensure_studies(con))

    seed = load_companies()
    by_hand = {
        row.ticker: (row.company_name, row.industry, float(row.biased_offset))
        for row in seed.itertuples()
    }
    first, third = expected_id(STUDY, by_hand), expected_id(other, by_hand)
    assert assigned == {"r1": first, "r2": first, "r3": third}
    after = con.execute("select * exclude (study_id) from raw.runs order by run_id").fetchall()
    assert after == before  # every run and every column kept
    assert con.execute("select count(*) from raw.studies").fetchone()[0] == 2
    assert studies.ensure_studies(con) == []  # migrated once
    listed = {s["study_id"]: s for s in studies.list_studies(con)}
    assert listed[first]["systems"] == ["arima", "naive"] and listed[first]["n_runs"] == 2
    assert studies.resolve_study(con, first[:6]) == first
    name = listed[third]["study_name"]
    assert studies.resolve_study(con, name) == third
    with pytest.raises(TsrateError, match="no study 'nope'; known studies"):
        studies.resolve_study(con, "nope")
    con.close()


def test_a_run_joins_the_study_of_its_definition(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["AAPL", "JPM"]), "skfolio")
        summary = run_forecasts(con, STUDY, COMPANIES, workers=1, progress=lambda m: None)
        finish_run(con, summary.run_id, "forecasted")
        row = con.execute(
            "select r.study_id, s.companies from raw.runs r join raw.studies s using (study_id) "
            "where run_id = ?",
            [summary.run_id],
        ).fetchone()
    by_hand = {"AAPL": ("Apple Inc.", "Technology", 0.0), "JPM": ("JPMorgan", "Banking", 500.0)}
    assert row[0] == expected_id(STUDY, by_hand)
    assert [c["industry"] for c in json.loads(row[1])] == ["Technology", "Banking"]
    with connect(warehouse, read_only=True) as con:  # no stray study of the seed's companies
        assert con.execute("select count(*) from raw.studies").fetchone()[0] == 1


def test_the_report_names_the_study_and_the_systems_rated_together():
    from tsrate.robustness.report.ratings import rated_together_note

    ratings = pd.DataFrame(
        {"study_id": "abc123", "system_id": ["naive", "mine", "naive", "mine", "arima"],
         "n_systems": [3, 3, 2, 2, 3]}
    )  # fmt: skip
    note = rated_together_note(ratings)
    assert "abc123" in note and "3 systems rated together" in note
    assert "arima, mine, naive" in note and "down to 2" in note
    assert rated_together_note(ratings.drop(columns="study_id")) == ""


def test_the_current_study_is_the_newest_runs_without_its_imported_systems(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute(OLD_RUNS_DDL)
    other = Study.from_mapping({**_values(STUDY), "stride": 3})
    assert studies.current_study(con) is None
    _old_run(con, "r1", other, "2026-01-01")
    imported = Study.from_mapping({**_values(STUDY), "systems": ["naive", "ext"]})
    _old_run(con, "r2", imported, "2026-01-02")
    current = studies.current_study(con)  # read before any migration: no study tables yet
    assert (current.stride, current.systems) == (1, ("naive", "ext"))
    studies.ensure_studies(con)
    con.execute("insert into raw.study_imports values ('r2', 's', 'ext', 'f.csv', 'x', now())")
    assert studies.current_study(con).systems == ("naive",)
    named = studies.list_studies(con)[-1]["study_name"]  # r1's study, updated first
    assert studies.current_study(con, named).stride == 3
    con.close()
