"""The study check (``tsrate.robustness.study.check_study``) at its stated edges.

A mutation sweep of the module left these untested: the bounds are the ones its docstring
states (start strictly before end; context_length >= 3, horizon and stride >= 1; the phase in
[0, context_length); at least context_length + horizon trading days, counted inclusively at
both ends of the period), a broken setting is one problem line and never a crash in a later
check, a ticker with no day in the period is reported with 0 days, the fallbacks used when
``dbt_project.yml`` lacks a var equal the project's own defaults, and the small-study warning
counts a ticker's windows as (days - needed) // stride + 1 and prices its draws by the
documented union bound (written out here from the docstring, not taken from the module).
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tsrate.robustness.study import check_study


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return tmp_path / "warehouse" / "tsrate.duckdb"  # absent: nothing stored


START, END = dt.date(2022, 6, 1), dt.date(2022, 12, 28)
STUDY = dict(
    study_tickers="AAPL,KO",
    study_start=str(START),
    study_end=str(END),
    context_length=40,
    horizon=10,
    systems="naive",
    perturbations="P0,P1,P2,P3",
)


def price_file(tmp_path, days: dict[str, list[dt.date]]) -> Path:
    rows = [
        (ticker, day, 100.0 + i) for ticker, dates in days.items() for i, day in enumerate(dates)
    ]
    path = tmp_path / "prices.csv"
    pd.DataFrame(rows, columns=["ticker", "date", "close"]).to_csv(path, index=False)
    return path


def business_days(first: dt.date, count: int) -> list[dt.date]:
    return [d.date() for d in pd.bdate_range(first, periods=count)]


def check(warehouse, source="auto", path=None, warnings=None, **overrides) -> list[str]:
    return check_study({**STUDY, **overrides}, source, path, warehouse, warnings=warnings)


def test_the_period_must_start_strictly_before_it_ends(project, warehouse):
    same = check(warehouse, study_start=str(END))
    assert [p for p in same if "is not before its end" in p]
    assert not [p for p in same if "trading days" in p]  # the period is unknown: not counted
    one_day = check(warehouse, study_start=str(END - dt.timedelta(days=1)))
    assert not [p for p in one_day if "is not before its end" in p]


def test_a_broken_date_or_length_is_one_line_not_a_crash(project, warehouse, tmp_path):
    """Each later check skips what a broken setting leaves unknown."""
    for source in ("skfolio", "auto"):
        problems = check(warehouse, source=source, study_start="June 1st")
        assert len(problems) == 1 and "study_start" in problems[0], problems
    path = price_file(tmp_path, {"AAPL": business_days(START, 60), "KO": business_days(START, 60)})
    problems = check(warehouse, source="file", path=path, study_end="soon")
    assert len(problems) == 1 and "study_end" in problems[0], problems
    problems = check(warehouse, context_length="forty")
    assert len(problems) == 1 and "context_length" in problems[0], problems


def test_the_window_settings_lower_bounds(project, warehouse):
    assert check(warehouse, context_length=3, horizon=1, stride=1, perturbation_phase=2) == []
    assert check(warehouse, stride=0) == ["stride (--stride) must be at least 1, got 0"]
    assert check(warehouse, horizon=0) == ["horizon (--horizon) must be at least 1, got 0"]
    # the phase lies in [0, context_length): checked only for a valid context
    too_late = check(warehouse, context_length=3, horizon=1, perturbation_phase=3)
    assert too_late == ["perturbation_phase (--phase) must lie in [0, 3) (context_length), got 3"]
    short = check(warehouse, context_length=2, perturbation_phase=5)
    assert short == ["context_length (--context-length) must be at least 3, got 2"]


def test_trading_days_are_counted_inclusively_and_zero_days_are_reported(
    project, warehouse, tmp_path
):
    """context 40 + horizon 10 = 50 days: a file whose 50 days start on the first day of the
    period and end on its last passes; 49 days inside does not; a ticker whose prices all lie
    before the period has 0 days."""
    first = business_days(START, 1)[0]
    last = business_days(END - dt.timedelta(days=80), 60)
    inside_end = [d for d in last if d <= END][-50:]  # END is a Wednesday: a trading day
    days = {"AAPL": business_days(first, 50), "KO": inside_end}
    assert days["KO"][-1] == END and len(days["KO"]) == 50
    path = price_file(tmp_path, days)
    assert check(warehouse, source="file", path=path, study_end=str(END)) == []
    problems = check(
        warehouse, source="file", path=path, study_start=str(first + dt.timedelta(days=1))
    )
    assert [p for p in problems if "'AAPL' has 49 trading days" in p], problems
    early = price_file(
        tmp_path,
        {"AAPL": business_days(dt.date(2021, 1, 4), 60), "KO": business_days(START, 60)},
    )
    problems = check(warehouse, source="file", path=early)
    assert [p for p in problems if "ticker 'AAPL' has 0 trading days" in p], problems


def test_the_fallbacks_equal_the_projects_defaults(project, warehouse, tmp_path):
    """dbt_project.yml's window vars removed: the check falls back to 80 + 20 days, stride
    1 and 16 draws, as the project defines them."""
    config = yaml.safe_load((project / "dbt_project.yml").read_text())
    defaults = config["vars"]
    assert (defaults["context_length"], defaults["horizon"], defaults["stride"]) == (80, 20, 1)
    for name in ("context_length", "horizon", "stride", "treatment_draws"):
        del config["vars"][name]
    (project / "dbt_project.yml").write_text(yaml.safe_dump(config))
    study = {k: v for k, v in STUDY.items() if k not in ("context_length", "horizon")}
    path = price_file(tmp_path, {"AAPL": business_days(START, 99), "KO": business_days(START, 99)})
    problems = check_study(study, "file", path, warehouse)
    assert [p for p in problems if "context_length + horizon = 100" in p], problems
    warnings: list[str] = []
    path = price_file(
        tmp_path, {"AAPL": business_days(START, 102), "KO": business_days(START, 102)}
    )
    assert check_study(study, "file", path, warehouse, warnings=warnings) == []
    assert warnings and "its 16 treatment draws: with 3 windows per ticker" in warnings[0]


def union_bound(
    windows: dict[str, int], industry: dict[str, str], k: int, draws: int, companies: int = 24
) -> float:
    """expected_empty_arm_draws' docstring: favoured windows draw P0 with c / (c + k t), each
    treatment t / (c + k t) (c = 1, t = 2), the others 1 / (k + 1); an arm is empty with
    prod (1 - p); summed over the k + 1 arms (capped at 1), times the draws, over one
    distribution per industry and one per company."""
    groups = [[t for t in windows if industry[t] == i] for i in sorted(set(industry.values()))]
    total = 0.0
    for favoured in groups + [[t] for t in sorted(windows)][:companies]:
        inside = sum(windows[t] for t in favoured)
        outside = sum(windows.values()) - inside
        arms = [1 / (1 + 2 * k)] + [2 / (1 + 2 * k)] * k
        p = sum(min(1.0, (1 - a) ** inside * (1 - 1 / (k + 1)) ** outside) for a in arms)
        total += min(1.0, p) * draws
    return total


def test_the_small_study_warning_counts_windows_by_stride_and_prices_the_draws(
    project, warehouse, tmp_path
):
    """AAPL (Technology) with 57 days and KO (Consumer Staples) with exactly 50, context 40
    + horizon 10, stride 3: (57 - 50) // 3 + 1 = 3 windows and (50 - 50) // 3 + 1 = 1."""
    path = price_file(tmp_path, {"AAPL": business_days(START, 57), "KO": business_days(START, 50)})
    warnings: list[str] = []
    assert check(warehouse, source="file", path=path, warnings=warnings, stride=3) == []
    expected = union_bound(
        {"AAPL": 3, "KO": 1}, {"AAPL": "Technology", "KO": "Consumer Staples"}, 3, 16
    )
    assert len(warnings) == 1
    assert f"with 1 windows per ticker about {expected:.1f} draws" in warnings[0]
    # two tickers of one industry: one industry distribution, so a different expectation
    warnings = []
    path = price_file(
        tmp_path, {"AAPL": business_days(START, 57), "MSFT": business_days(START, 57)}
    )
    check(warehouse, "file", path, warnings, stride=3, study_tickers="AAPL,MSFT")
    expected = union_bound({"AAPL": 3, "MSFT": 3}, {"AAPL": "T", "MSFT": "T"}, 3, 16)
    assert f"with 3 windows per ticker about {expected:.1f} draws" in warnings[0]
    assert check(warehouse, "file", path, None, stride=3, study_tickers="AAPL,MSFT") == []
    # treatment_draws 0 is priced as one draw (the paper's single draw)
    warnings = []
    check(warehouse, "file", path, warnings, stride=3, study_tickers="AAPL,MSFT", treatment_draws=0)
    expected = union_bound({"AAPL": 3, "MSFT": 3}, {"AAPL": "T", "MSFT": "T"}, 3, 1)
    assert f"its 1 treatment draws: with 3 windows per ticker about {expected:.1f}" in warnings[0]


def test_a_company_without_industry_is_not_its_own_suggestion(project, warehouse, tmp_path):
    """A ticker whose company row lacks an industry gets no did-you-mean naming itself or
    another industry-less row; the message names the price file it came from."""
    seed = project / "seeds" / "companies.csv"
    with open(seed, newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows += [
        {"ticker": "AAPLX", "company_name": "X", "industry": "", "biased_offset": "0"},
        {"ticker": "AAPLXY", "company_name": "Y", "industry": "", "biased_offset": "0"},
    ]
    with open(seed, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    path = price_file(tmp_path, {"AAPLX": business_days(START, 60), "KO": business_days(START, 60)})
    problems = check(warehouse, "file", path, study_tickers="AAPLX,KO")
    (line,) = [p for p in problems if "'AAPLX' has no row" in p]
    # AAPLXY is closer to AAPLX than AAPL is (difflib 0.91 against 0.89), but has no industry
    assert "did you mean 'AAPL'?" in line and "AAPLXY" not in line and "'AAPLX'?" not in line
    assert f"the price file {path}" in line
    problems = check(warehouse, "auto", None, study_tickers="AAPLX,KO")
    (line,) = [p for p in problems if "'AAPLX' has no row" in p]
    assert "add company_name,industry columns to the price file (--file)" in line
    problems = check(warehouse, "file", None, study_tickers="AAPLX,KO")
    (line,) = [p for p in problems if "'AAPLX' has no row" in p]
    assert "to the price file (--file)" in line and "price file None" not in line


def test_the_expected_empty_draws_follow_the_documented_union_bound():
    """expected_empty_arm_draws against union_bound (the docstring written out) with its
    defaults (treated weight 2, control 1, at most 24 company distributions), at its edges
    (no treatment or no draw: 0; a study of one window a ticker, where the arms' sum passes 1
    and is capped) and with the company distributions capped."""
    from tsrate.robustness.empty_arms import expected_empty_arm_draws

    industry = {"AAPL": "T", "MSFT": "T", "KO": "S"}
    for windows in ({"AAPL": 4, "MSFT": 2, "KO": 3}, {"AAPL": 1, "MSFT": 1, "KO": 1}):
        for k, draws in ((3, 16), (1, 1), (2, 5)):
            got = expected_empty_arm_draws(windows, industry, k, draws)
            assert got == pytest.approx(union_bound(windows, industry, k, draws), rel=1e-12)
    ones = {"AAPL": 1, "MSFT": 1, "KO": 1}
    assert expected_empty_arm_draws(ones, industry, 3, 16) == pytest.approx(16 * 5)  # capped
    assert expected_empty_arm_draws(ones, industry, 0, 16) == 0.0
    assert expected_empty_arm_draws(ones, industry, 3, 0) == 0.0
    # the company distributions: at most max_company_distributions (default 24; 0: none)
    many = {f"T{i:02d}": 2 for i in range(26)}
    same = dict.fromkeys(many, "T")
    industry_only = union_bound(many, same, 3, 4, companies=0)
    per_company = (union_bound(many, same, 3, 4, companies=26) - industry_only) / 26
    assert expected_empty_arm_draws(many, same, 3, 4) == pytest.approx(
        industry_only + 24 * per_company, rel=1e-12
    )
    assert expected_empty_arm_draws(many, same, 3, 4, 0) == pytest.approx(industry_only)
    assert expected_empty_arm_draws(many, same, 3, 4, -2) == pytest.approx(industry_only)


def test_the_warning_threshold_is_inclusive_at_005_and_names_the_fewest_windows(monkeypatch):
    from tsrate.robustness import empty_arms

    industry = {"AAPL": "T", "KO": "S"}
    windows = {"AAPL": 30, "KO": 9}
    expected = union_bound(windows, industry, 3, 16)
    assert empty_arms.EMPTY_ARM_WARNING == 0.05
    line = empty_arms.empty_arm_warning(windows, industry, 3, 16)
    assert (line is not None) == (expected >= 0.05)
    # a study whose expectation lies between 0.05 and 0.1 is warned about
    between = next(n for n in range(1, 400) if 0.05 < union_bound({"A": n}, {"A": "T"}, 1, 1) < 0.1)
    assert empty_arms.empty_arm_warning({"A": between}, {"A": "T"}, 1, 1) is not None
    # at the threshold exactly: warned (only an expectation below it is quiet)
    monkeypatch.setattr(empty_arms, "EMPTY_ARM_WARNING", expected)
    line = empty_arms.empty_arm_warning(windows, industry, 3, 16)
    assert line is not None and "with 9 windows per ticker" in line
    # the default cap of 24 company distributions, as expected_empty_arm_draws'
    many = {f"T{i:02d}": 1 for i in range(26)}
    same = dict.fromkeys(many, "T")
    capped = union_bound(many, same, 3, 5000, companies=24)
    assert f"about {capped:.1f} draws" in empty_arms.empty_arm_warning(many, same, 3, 5000)
    for other in (23, 25):
        assert f"{capped:.1f}" != f"{union_bound(many, same, 3, 5000, companies=other):.1f}"


def test_a_large_study_gets_no_warning_line_and_a_small_one_reaches_the_callback(
    project, warehouse, tmp_path
):
    from tsrate.robustness.study import require_valid_study

    warnings: list[str] = []
    assert check(warehouse, warnings=warnings) == [] and warnings == []  # the bundled sample
    path = price_file(tmp_path, {"AAPL": business_days(START, 57), "KO": business_days(START, 50)})
    said: list[str] = []
    study = require_valid_study({**STUDY, "stride": 3}, "file", path, warehouse, warn=said.append)
    assert study.tickers == ("AAPL", "KO")
    assert len(said) == 1 and said[0].startswith("warning: the study is small")
    warnings = []
    check(warehouse, "file", path, warnings, stride=3, max_company_distributions=0)
    expected = union_bound(
        {"AAPL": 3, "KO": 1}, {"AAPL": "Technology", "KO": "Consumer Staples"}, 3, 16, 0
    )
    assert f"about {expected:.1f} draws" in warnings[0]


def test_stored_company_rows_are_read_beside_a_reader_and_blanks_never_override(
    project, warehouse, tmp_path
):
    """The check opens the warehouse read-only, as a dashboard holding it read-only does
    (a read-write open beside it fails, and the stored rows would be lost); a blank or 'nan'
    value in a companies file keeps the seed's; an unreadable warehouse is skipped."""
    import duckdb

    from tsrate.robustness.build_run import run_to_build
    from tsrate.robustness.companies import store_companies

    warehouse.parent.mkdir(parents=True)
    con = duckdb.connect(str(warehouse))
    con.execute("create schema raw")
    store_companies(
        con,
        pd.DataFrame(
            {
                "ticker": ["ZZZ"],
                "company_name": ["Z"],
                "industry": ["Energy"],
                "biased_offset": [1.0],
            }
        ),
        "test",
    )
    con.close()
    days = {"ZZZ": business_days(START, 60), "KO": business_days(START, 60)}
    path = price_file(tmp_path, days)
    reader = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert check(warehouse, "file", path, study_tickers="ZZZ,KO") == []
        with pytest.raises(Exception, match="no runs|nothing to build|tsrate run"):
            run_to_build(warehouse)  # read-only beside the reader: the error is about runs
    finally:
        reader.close()
    companies = tmp_path / "companies.csv"
    companies.write_text("ticker,company_name,industry,biased_offset\nKO,Coke,,\nAAPL,Apple,nan,\n")
    problems = check(warehouse, "file", path, study_tickers="ZZZ,KO,AAPL", companies_path=companies)
    assert not [p for p in problems if "no industry" in p], problems
    broken = tmp_path / "broken" / "tsrate.duckdb"
    broken.parent.mkdir()
    broken.write_bytes(b"not a duckdb file" * 100)
    problems = check(broken, "file", path, study_tickers="KO")
    assert isinstance(problems, list)


def test_stored_prices_are_counted_beside_a_reader_and_not_for_an_unknown_period(
    project, warehouse
):
    """Source 'none' (stored prices only): the check reads raw.prices read-only, so a
    dashboard holding the file read-only does not hide a ticker's shortfall; with a broken
    start date the period is unknown and no ticker is counted."""
    import duckdb

    warehouse.parent.mkdir(parents=True)
    con = duckdb.connect(str(warehouse))
    con.execute("create schema raw")
    con.execute("create table raw.prices (ticker varchar, price_date date, close double)")
    rows = [("AAPL", d, 1.0) for d in business_days(START, 30)]
    rows += [("KO", d, 1.0) for d in business_days(START, 60)]
    con.executemany("insert into raw.prices values (?, ?, ?)", rows)
    con.close()
    reader = duckdb.connect(str(warehouse), read_only=True)
    try:
        problems = check(warehouse, source="none")
        assert [p for p in problems if "ticker 'AAPL' has 30 trading days" in p], problems
        assert len(problems) == 1
        problems = check(warehouse, source="none", study_start="first of June")
        assert len(problems) == 1 and "study_start" in problems[0], problems
    finally:
        reader.close()


def test_company_values_from_files_and_the_distribution_cap_fallback(project, warehouse, tmp_path):
    """A price file's company columns name a ticker the seed lacks; a companies file's 'nan'
    keeps the seed's industry (AAPL and MSFT stay one Technology group in the warning); and
    without the var in dbt_project.yml at most 24 company distributions are priced."""
    days = {t: business_days(START, 57) for t in ("AAPL", "MSFT")}
    rows = [(t, d, 1.0, "", "") for t, ds in days.items() for d in ds]
    rows += [("NEWCO", d, 1.0, "New Co", "Energy") for d in business_days(START, 57)]
    path = tmp_path / "with_companies.csv"
    frame = pd.DataFrame(rows, columns=["ticker", "date", "close", "company_name", "industry"])
    frame.to_csv(path, index=False)
    assert check(warehouse, "file", path, study_tickers="NEWCO,KO") != []  # KO has no prices
    assert check(warehouse, "file", path, study_tickers="NEWCO,AAPL") == []
    companies = tmp_path / "companies.csv"
    companies.write_text("ticker,company_name,industry,biased_offset\nAAPL,Apple,nan,\n")
    warnings: list[str] = []
    check_study(
        {**STUDY, "study_tickers": "AAPL,MSFT", "stride": 3},
        "file",
        path,
        warehouse,
        warnings=warnings,
        companies_path=companies,
    )
    expected = union_bound({"AAPL": 3, "MSFT": 3}, {"AAPL": "T", "MSFT": "T"}, 3, 16)
    assert f"about {expected:.1f} draws" in warnings[0]
    # 25 tickers of one industry, the cap's var removed: 24 company distributions
    config = yaml.safe_load((project / "dbt_project.yml").read_text())
    del config["vars"]["max_company_distributions"]
    (project / "dbt_project.yml").write_text(yaml.safe_dump(config))
    tickers = [f"Q{i:02d}" for i in range(25)]
    rows = [(t, d, 1.0, t, "Energy") for t in tickers for d in business_days(START, 50)]
    many = tmp_path / "many.csv"
    pd.DataFrame(rows, columns=["ticker", "date", "close", "company_name", "industry"]).to_csv(
        many, index=False
    )
    warnings = []
    study = {**STUDY, "study_tickers": ",".join(tickers), "treatment_draws": 5000}
    assert check_study(study, "file", many, warehouse, warnings=warnings) == []
    windows, one = dict.fromkeys(tickers, 1), dict.fromkeys(tickers, "E")
    expected = union_bound(windows, one, 3, 5000, companies=24)
    assert f"about {expected:.1f} draws" in warnings[0]
    for other in (23, 25):
        assert f"{expected:.1f}" != f"{union_bound(windows, one, 3, 5000, other):.1f}"
