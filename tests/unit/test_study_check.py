"""The study check of ``tsrate run``: every problem kind on its own line, before Prefect starts.

Each test builds a real (temporary) project copy, warehouse or price file and asks
:func:`tsrate.robustness.study.check_study` about one broken study; the last tests run the CLI in a
fresh interpreter and look at what it imported.
"""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.support.study_inputs import SMALL, walk_prices
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.blackbox.predictions import register_system, system_metadata
from tsrate.robustness.study import StudyCheckError, check_study, did_you_mean, require_valid_study
from tsrate.robustness.study_inputs import skfolio_trading_days
from tsrate.systems.registered import read_registrations


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return tmp_path / "warehouse" / "tsrate.duckdb"  # absent: nothing stored


def _edit_seed(path: Path, edit) -> None:
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    fields = list(rows[0])
    rows = edit(rows)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _check(warehouse: Path, source: str = "auto", path=None, **overrides) -> list[str]:
    return check_study({**SMALL, **overrides}, source, path, warehouse)


def _only(problems: list[str], *fragments: str) -> str:
    """The one problem line containing every fragment (and assert there is exactly one)."""
    matches = [p for p in problems if all(f in p for f in fragments)]
    assert len(matches) == 1, (fragments, problems)
    assert "\n" not in matches[0]
    return matches[0]


# ----------------------------------------------------------------------------- valid studies


def test_the_default_study_and_a_small_one_pass(project, warehouse):
    assert check_study({}, "auto", None, warehouse) == []
    assert _check(warehouse) == []
    assert require_valid_study(SMALL, "auto", None, warehouse).tickers == ("AAPL", "MSFT")


def test_bundled_sample_trading_days_match_skfolio_own_loader():
    """The csv-module reader counts the same closes as skfolio's pandas loader."""
    from skfolio.datasets import load_sp500_dataset

    wide = load_sp500_dataset()
    expected = wide.loc["2022-06-01":"2022-12-28"].notna().sum()
    got = skfolio_trading_days(pd.Timestamp("2022-06-01").date(), pd.Timestamp("2022-12-28").date())
    assert got == {str(t): int(n) for t, n in expected.items()}


# ----------------------------------------------------------------------------- one line per kind


def test_unknown_system_gets_a_did_you_mean(project, warehouse):
    problems = _check(warehouse, systems="arma,naive")
    line = _only(problems, "unknown system 'arma'")
    assert "did you mean 'arima'?" in line and "--systems" in line
    assert len(problems) == 1
    far = _only(_check(warehouse, systems="xyzzy"), "unknown system 'xyzzy'")
    assert "did you mean" not in far


def test_an_unknown_id_waits_for_the_lock_while_registrations_cannot_be_read(project, warehouse):
    """A writer holds the file (here: a read-write connection of this process, which
    refuses the check's read-only open as another process's lock would): a well-formed id
    may be a registered language model, so the check leaves it to the run, which checks it
    again once it holds the warehouse (a cron run waiting with --lock-timeout is not refused
    as unknown); a malformed one is still refused, and without a writer the id is unknown."""
    with connect(warehouse):
        pass  # the file exists: nothing registered in it
    assert "unknown system 'myllm'" in _only(_check(warehouse, systems="naive,myllm"), "myllm")
    writer = duckdb.connect(str(warehouse))
    try:
        assert read_registrations(warehouse) is None
        assert _check(warehouse, systems="naive,myllm") == []
        _only(_check(warehouse, systems="naive,MyLLM"), "unknown system 'MyLLM'")
    finally:
        writer.close()


def test_system_without_an_implementation_and_an_imported_one(project, warehouse):
    def blank_naive(rows):
        for row in rows:
            if row["system_id"] == "naive":
                row["implementation"] = ""
        return rows

    _edit_seed(project / "seeds" / "systems.csv", blank_naive)
    with connect(warehouse) as con:
        register_system(con, system_metadata("mymodel", {}, ["P0"], "preds.csv"), "preds.csv")
    problems = _check(warehouse, systems="naive,mymodel,mymodl")
    assert "cannot run in this version" in _only(problems, "system 'naive'")
    assert "tsrate import" in _only(problems, "system 'mymodel' was registered")
    assert "did you mean 'mymodel'?" in _only(problems, "unknown system 'mymodl'")
    assert len(problems) == 3


def test_perturbations_unknown_and_without_control(project, warehouse):
    problems = _check(warehouse, perturbations="P1,p2")
    assert "did you mean 'P2'?" in _only(problems, "unknown perturbation 'p2'")
    _only(problems, "must include the control P0")
    assert len(problems) == 2


def test_bad_dates_and_an_empty_period(project, warehouse):
    problems = _check(warehouse, study_start="2022-13-01", study_end="tomorrow")
    assert "--start" in _only(problems, "study_start", "'2022-13-01' is not a date")
    assert "--end" in _only(problems, "study_end", "'tomorrow' is not a date")
    reversed_period = _check(warehouse, study_start="2022-12-28", study_end="2022-06-01")
    assert reversed_period == [
        "study start 2022-12-28 is not before its end 2022-06-01 (--start, --end)"
    ]


def test_window_shape(project, warehouse):
    problems = _check(warehouse, context_length=2, horizon=0, stride="x")
    _only(problems, "context_length (--context-length) must be at least 3, got 2")
    _only(problems, "horizon (--horizon) must be at least 1, got 0")
    _only(problems, "stride (--stride): 'x' is not a whole number")
    phase = _check(warehouse, perturbation_phase=40)
    assert phase == ["perturbation_phase (--phase) must lie in [0, 40) (context_length), got 40"]


def test_tickers_twice_and_not_in_the_companies_seed(project, warehouse):
    problems = _check(warehouse, study_tickers="AAPL,APPL,aapl")
    _only(problems, "names tickers twice: AAPL")
    assert "did you mean 'AAPL'?" in _only(problems, "'APPL' has no row in seeds/companies.csv")
    # APPL is also in no price source: its own line, with the same suggestion
    assert "did you mean 'AAPL'?" in _only(problems, "no prices for ticker 'APPL'")
    assert len(problems) == 3


def test_biased_needs_an_offset_for_every_ticker(project, warehouse):
    def drop_offset(rows):
        for row in rows:
            if row["ticker"] == "MSFT":
                row["biased_offset"] = ""
        return rows

    _edit_seed(project / "seeds" / "companies.csv", drop_offset)
    problems = _check(warehouse)
    assert "'biased' system" in _only(problems, "'MSFT' has no biased_offset")
    # every place an offset can come from is named, not the bundled seed alone
    assert "the --companies file or the price file's biased_offset column" in problems[0]
    assert len(problems) == 1
    assert _check(warehouse, systems="naive") == []  # only biased needs it


def test_prices_stored_source_none_and_too_few_days(project, warehouse):
    with connect(warehouse) as con:
        store_prices(con, walk_prices("AAPL", "2022-06-01", 45), "test")  # 45 < 40 + 10
    problems = _check(warehouse, source="none")
    line = _only(problems, "ticker 'AAPL' has 45 trading days in 2022-06-01..2022-12-28")
    assert "context_length + horizon = 50" in line
    assert "--source none" in _only(problems, "no prices for ticker 'MSFT'")
    assert len(problems) == 2
    # auto: MSFT comes from the bundled sample, AAPL's stored prices are the ones used
    assert [p for p in _check(warehouse) if "AAPL" in p] == [line]
    assert _check(warehouse, horizon=5) == []


def test_too_few_days_in_the_bundled_sample(project, warehouse):
    problems = _check(warehouse, source="skfolio", study_start="2022-12-01")
    assert len(problems) == 2
    _only(problems, "ticker 'AAPL' has 19 trading days")


def test_a_price_file_source(project, warehouse, tmp_path):
    path = tmp_path / "prices.csv"
    frame = pd.concat(
        [walk_prices("XYZ", "2022-06-01", 120), walk_prices("AAPL", "2022-06-01", 20)]
    )
    frame.rename(columns={"price_date": "date"}).to_csv(path, index=False)
    problems = _check(warehouse, source="file", path=path, study_tickers="XYZ,AAPL,MSFT")
    _only(problems, "'XYZ' has no row in seeds/companies.csv")  # priced, but no company row
    _only(problems, "ticker 'AAPL' has 20 trading days")  # the file replaces the sample
    _only(problems, "no prices for ticker 'MSFT' in the warehouse or", str(path))
    assert len(problems) == 3
    broken = tmp_path / "broken.csv"
    broken.write_text("ticker,close\nAAPL,1\n")
    assert "missing column(s) ['date']" in _only(
        _check(warehouse, source="file", path=broken), f"--file {broken}"
    )


def test_many_problems_one_line_each_in_the_error(project, warehouse):
    with pytest.raises(StudyCheckError) as caught:
        require_valid_study(
            {**SMALL, "systems": "arma", "study_tickers": "APPL", "perturbations": "P9,P0"},
            "auto",
            None,
            warehouse,
        )
    error = caught.value
    assert len(error.problems) == 4
    lines = str(error).splitlines()
    assert lines[0] == "the study has 4 problems; nothing was run:"
    assert lines[1:] == [f"  - {p}" for p in error.problems]


def test_one_problem_is_one_line_naming_it_and_its_hint(project, warehouse, monkeypatch, capsys):
    # one problem took two lines: a header, then the problem on a line of its own
    with pytest.raises(StudyCheckError) as caught:
        require_valid_study({**SMALL, "systems": "arma"}, "auto", None, warehouse)
    (problem,) = caught.value.problems
    assert str(caught.value) == f"the study has 1 problem; nothing was run: {problem}"

    from tsrate import cli

    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert cli.main(["run", "--systems", "arma"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "tsrate: error: the study has 1 problem; nothing was run: unknown system 'arma' "
        "(did you mean 'arima'?); see `tsrate systems` (--systems, seeds/systems.csv)"
    ]


def test_did_you_mean_ignores_case_and_keeps_the_spelling():
    assert did_you_mean("ARMA", ["arima", "naive"]) == " (did you mean 'arima'?)"
    assert did_you_mean("aapl", ["AAPL"]) == " (did you mean 'AAPL'?)"
    assert did_you_mean("zzz", ["AAPL"]) == ""


# ----------------------------------------------------------------------------- distributions


def test_a_good_distribution_override_passes_and_derived_needs_no_seed(project, warehouse):
    assert _check(warehouse, confounder_distributions="seed") == []
    (project / "seeds" / "confounder_distributions.csv").unlink()
    assert _check(warehouse, confounder_distributions="derived") == []  # the default
    assert "is missing" in _only(
        _check(warehouse, confounder_distributions="seed"), "seeds/confounder_distributions.csv"
    )


def test_a_bad_distribution_override_fails_in_the_check_one_line_each(project, warehouse):
    def break_rows(rows):
        for row in rows:
            if row["distribution_id"] == "DC3":
                row["treated_weight"] = "-2"
            if row["distribution_id"] == "DC4":
                row["control_weight"] = ""
            if row["distribution_id"] == "DC5":
                row["confounder"] = "sector"
        return [*rows, {**rows[0]}]  # DI1 twice

    _edit_seed(project / "seeds" / "confounder_distributions.csv", break_rows)
    assert _check(warehouse) == []  # derived (the default) ignores the seed
    problems = _check(warehouse, confounder_distributions="seed")
    assert all(p.startswith("seeds/confounder_distributions.csv") for p in problems)
    _only(problems, "duplicate distribution_id ['DI1']")
    assert "(got '-2')" in _only(problems, "DC3", "treated_weight must be a number > 0")
    _only(problems, "DC4", "control_weight must be a number > 0")
    _only(problems, "DC5", "unknown confounder 'sector'")
    assert len(problems) == 4


def test_an_override_without_the_study_companies_names_each_confounder(project, warehouse):
    def keep_other_companies(rows):
        # AAPL and MSFT (Technology) lose their company and industry distributions
        return [r for r in rows if r["favored_value"] not in ("AAPL", "MSFT", "Technology")]

    _edit_seed(project / "seeds" / "confounder_distributions.csv", keep_other_companies)
    problems = _check(warehouse, confounder_distributions="seed")
    assert "ape_industry and pie_industry" in _only(problems, "no industry distribution")
    assert "ape_company and pie_company" in _only(problems, "no company distribution")
    assert len(problems) == 2
    # a study of Financials companies is still covered by the rest of the seed
    assert _check(warehouse, confounder_distributions="seed", study_tickers="JPM,BAC") == []


def test_an_unknown_distribution_source_gets_a_did_you_mean(project, warehouse):
    line = _only(_check(warehouse, confounder_distributions="seeds"), "confounder_distributions")
    assert "unknown confounder_distributions 'seeds' (did you mean 'seed'?)" in line
