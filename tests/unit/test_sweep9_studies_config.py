"""The study definition (``tsrate.config``) at the edges a mutation sweep found untested.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json). What is pinned, against values written out here from the
docstrings and ``dbt_project.yml``: where the project and the warehouse are found (the
environment, a folder holding both ``dbt_project.yml`` and ``src/tsrate``, else the checkout
this code lives in; a relative warehouse under the project); the companies seed refusing
duplicate tickers by name; every fallback of ``Study`` and ``Study.from_mapping`` equal to the
project's vars; each bound of the study at its exact value on both sides (start strictly
before end, horizon and stride at least 1, context_length at least 3, the phase in
[0, context_length)) with a one-line message naming the offending value; the canonical JSON
(sorted keys) and the 16-digit hash of it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from tsrate import TsrateError
from tsrate.config import (
    Study,
    load_companies,
    project_dir,
    project_vars,
    warehouse_path,
)

#: the checkout these tests belong to (tests/unit/ is two folders below it)
CHECKOUT = Path(__file__).resolve().parents[2]


def _vars() -> dict:
    with open(CHECKOUT / "dbt_project.yml") as handle:
        return yaml.safe_load(handle)["vars"]


BASE = dict(study_tickers="AAPL", study_start="2022-01-03", study_end="2022-12-28")


def _study(**changes) -> Study:
    return Study.from_mapping({**BASE, **changes})


# --- where the project is ----------------------------------------------------------------------


def test_a_folder_with_dbt_project_but_no_tsrate_source_is_not_the_project(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_PROJECT_DIR", raising=False)
    other = tmp_path / "someone_elses_dbt"
    other.mkdir()
    (other / "dbt_project.yml").write_text("name: other\n")
    monkeypatch.chdir(other)
    assert project_dir() == CHECKOUT  # the checkout this code is installed from
    (other / "src" / "tsrate").mkdir(parents=True)
    assert project_dir() == other
    monkeypatch.chdir(tmp_path)  # no project here or above: the checkout again
    assert project_dir() == CHECKOUT


def test_the_environment_names_the_project_and_must_hold_dbt_project(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    with pytest.raises(TsrateError, match=f"TSRATE_PROJECT_DIR={tmp_path} holds no dbt_project"):
        project_dir()
    (tmp_path / "dbt_project.yml").write_text("name: x\n")
    assert project_dir() == tmp_path.resolve()


def test_a_relative_warehouse_lies_in_the_project_an_absolute_one_where_it_says(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(CHECKOUT))
    monkeypatch.delenv("TSRATE_WAREHOUSE", raising=False)
    assert warehouse_path() == CHECKOUT / "warehouse" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", "elsewhere/w.duckdb")
    assert warehouse_path() == CHECKOUT / "elsewhere" / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    assert warehouse_path() == tmp_path / "w.duckdb"


def test_the_vars_are_read_again_when_the_file_changes(tmp_path, monkeypatch):
    (tmp_path / "dbt_project.yml").write_text("vars:\n  horizon: 7\n")
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    assert project_vars() == {"horizon": 7}
    project_vars()["horizon"] = 99  # a fresh copy each time
    assert project_vars() == {"horizon": 7}
    (tmp_path / "dbt_project.yml").write_text("vars:\n  horizon: 12\n  stride: 2\n")
    assert project_vars() == {"horizon": 12, "stride": 2}
    (tmp_path / "dbt_project.yml").write_text("name: novars\n")
    assert project_vars() == {}


# --- the companies seed ---------------------------------------------------------------------------


def test_the_companies_seed_refuses_a_duplicate_ticker_by_name(tmp_path):
    path = tmp_path / "companies.csv"
    path.write_text(
        "ticker,company_name,industry,biased_offset\nAAA,A,X,0\nBBB,B,Y,0\nAAA,A2,X,0\n"
    )
    with pytest.raises(TsrateError, match=r"duplicate tickers \['AAA'\]"):
        load_companies(path)
    path.write_text("ticker,company_name,biased_offset\nAAA,A,0\n")
    with pytest.raises(TsrateError, match=r"missing columns \['industry'\]"):
        load_companies(path)
    path.write_text("ticker,company_name,industry,biased_offset\nAAA,A,X,0\nBBB,B,Y,1\n")
    assert list(load_companies(path)["ticker"]) == ["AAA", "BBB"]


def test_the_default_companies_are_the_projects_seed(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(CHECKOUT))
    seed = (CHECKOUT / "seeds" / "companies.csv").read_text().splitlines()
    assert list(load_companies()["ticker"]) == [line.split(",")[0] for line in seed[1:]]


# --- defaults ---------------------------------------------------------------------------------


def test_every_fallback_of_the_study_is_the_projects_var():
    project = _vars()
    expected = dict(
        context_length=int(project["context_length"]),
        horizon=int(project["horizon"]),
        stride=int(project["stride"]),
        perturbation_phase=int(project["perturbation_phase"]),
        seed=int(project["random_seed"]),
        arima_order=tuple(int(x) for x in project["arima_order"]),
        perturbations=tuple(project["perturbations"]),
    )
    bare = Study(tickers=("AAPL",), start=dt.date(2022, 1, 3), end=dt.date(2022, 12, 28))
    mapped = _study()
    for name, value in expected.items():
        assert getattr(bare, name) == value, name
        assert getattr(mapped, name) == value, name
    assert mapped.systems == bare.systems


# --- bounds -----------------------------------------------------------------------------------


def test_start_must_be_strictly_before_end():
    with pytest.raises(
        TsrateError, match="study start 2022-05-02 is not before its end 2022-05-02"
    ):
        _study(study_start="2022-05-02", study_end="2022-05-02")
    with pytest.raises(TsrateError, match="is not before"):
        _study(study_start="2022-05-03", study_end="2022-05-02")
    assert _study(study_start="2022-05-01", study_end="2022-05-02").end == dt.date(2022, 5, 2)


@pytest.mark.parametrize("name", ["horizon", "stride"])
def test_horizon_and_stride_are_at_least_one(name):
    assert getattr(_study(**{name: 1}), name) == 1
    with pytest.raises(TsrateError, match=f"^{name} must be at least 1, got 0$"):
        _study(**{name: 0})
    with pytest.raises(TsrateError, match=f"^{name} must be at least 1, got -2$"):
        _study(**{name: -2})


def test_context_length_is_at_least_three():
    assert _study(context_length=3).context_length == 3
    with pytest.raises(TsrateError, match="^context_length must be at least 3$"):
        _study(context_length=2)
    with pytest.raises(TsrateError, match="^context_length must be at least 1, got 0$"):
        _study(context_length=0)


def test_the_phase_lies_in_zero_to_context_length():
    assert _study(context_length=5, perturbation_phase=0).perturbation_phase == 0
    assert _study(context_length=5, perturbation_phase=4).perturbation_phase == 4
    for phase in (5, -1):
        with pytest.raises(TsrateError, match=rf"lie in \[0, 5\), got {phase}$"):
            _study(context_length=5, perturbation_phase=phase)


def test_duplicates_and_a_missing_control_are_refused_naming_them():
    with pytest.raises(TsrateError, match=r"names a ticker twice: \['AAPL', 'KO', 'AAPL'\]"):
        _study(study_tickers="aapl,KO,AAPL")
    with pytest.raises(TsrateError, match=r"perturbation twice: \['P0', 'P1', 'P1'\]"):
        _study(perturbations="P0,P1,P1")
    with pytest.raises(TsrateError, match="control perturbation P0"):
        _study(perturbations="P1,P2")
    with pytest.raises(TsrateError, match="names no tickers"):
        _study(study_tickers=" , ")


def test_overrides_that_are_none_leave_the_vars_alone():
    project = _vars()
    study = Study.from_vars({"horizon": None, "stride": 3})
    assert study.horizon == int(project["horizon"]) and study.stride == 3
    assert study.tickers == tuple(t.upper() for t in project["study_tickers"])


# --- JSON and hash ------------------------------------------------------------------------------


def test_the_json_is_canonical_and_the_hash_its_first_sixteen_hex_digits():
    study = _study(study_tickers="KO,AAPL", stride=2)
    fields = {
        "tickers": ["KO", "AAPL"], "start": "2022-01-03", "end": "2022-12-28",
        "context_length": study.context_length, "horizon": study.horizon, "stride": 2,
        "perturbation_phase": study.perturbation_phase,
        "perturbations": list(study.perturbations), "systems": list(study.systems),
        "seed": study.seed, "arima_order": list(study.arima_order),
    }  # fmt: skip
    text = json.dumps(fields, sort_keys=True)
    assert study.to_json() == text
    assert study.study_hash == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert Study.from_json(text) == study
