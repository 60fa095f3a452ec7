"""A rating is a property of the forecasts, not of the price unit, the tickers' symbols or
the order of the price file's rows.

Four real ``tsrate run --file`` runs of one small study (four skfolio S&P tickers in two
industries, naive, seasonal_naive and random: systems whose forecasts scale with the prices;
random draws uniformly within each company's study range, so x c draws x c exactly): the
price file as skfolio gives it; every close x 100 (rows shuffled); every close x 0.01
(below unit scale, where the floating-noise rule of tsrate.methods.noise is absolute); the
tickers renamed (other symbols in the same sorted order, the same industries and company
names in the file's own columns; rows shuffled).

Scaled runs: every published mart that carries a rating or a score holds the same ratings,
shares, separable flags, ranks, counts and unit-free scores (SMAPE, MASE, sign accuracy,
WRS and its t-tests, skill scores, WQL, MSIS, coverage, and APE / PIE % on the unit-free
outcomes) to 1e-9 relative, and its price-unit numbers (R^max, CRPS, and APE / PIE % /
their intervals and spreads on the R^max outcome, whose PIE % is | |APE_o| - |APE_m| | x 100
in price units) exactly x the factor, to the same tolerance. Values within floating noise of
0 (1e-12 of the column's largest) compare as 0.

Renamed run: random's draws are seeded by the ticker symbol and the company confounder
distributions are named (and their treatment draws seeded) by it (docs/ratings.md,
"Invariances"), so renaming redraws them by design: random's windows differ, and so may
every rating ranked against random. What depends on the deterministic systems' own forecasts
alone is the same: their window errors, accuracy scores, WRS pairs and scores, industry APE /
PIE % (and their bootstrap intervals).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.config import project_dir

pytestmark = pytest.mark.slow

INDUSTRY = {"AAPL": "Technology", "MSFT": "Technology", "JPM": "Financials", "BAC": "Financials"}
#: other symbols for the same companies, in the same sorted order (AAPL < BAC < JPM < MSFT)
RENAMED = {"AAPL": "AA", "BAC": "BB", "JPM": "JJ", "MSFT": "MM"}
STUDY = ["--start", "2022-06-01", "--end", "2022-10-31", "--context-length", "30",
         "--horizon", "6", "--perturbations", "P0,P1,P2,P3",
         "--systems", "naive,seasonal_naive,arima,random", "--workers", "1"]  # fmt: skip
#: ARIMA included: it fits a unit-free copy of each window (tsrate.systems.arima)
DETERMINISTIC = ["naive", "seasonal_naive", "arima"]
RTOL = 1e-9
NOISE = 1e-12


def _ape_pie(frame: pd.DataFrame) -> pd.Series:
    return frame["metric"].str.match(r"(ape|pie)_")


def _on_rmax(frame: pd.DataFrame) -> pd.Series:
    return frame["outcome"] == "max_abs_residual"


class Mart:
    """How one mart is compared: its row key, its numbers, of which ``scaled`` are in price
    units on the rows ``price`` picks (every other number is unit-free), its other columns
    (equal as they are; ``texts`` quote the scaled numbers, so they are compared with their
    numbers left out on those rows), and ``own``: the columns that depend on one system's
    forecasts alone, not on the other systems' scores (``*``: every column), compared for the
    renamed run."""

    def __init__(
        self,
        keys: list[str],
        numbers: list[str],
        equal: list[str],
        price: Callable[[pd.DataFrame], pd.Series] | None = None,
        scaled: tuple[str, ...] = (),
        texts: tuple[str, ...] = (),
        own: tuple[str, ...] = (),
    ):
        self.keys, self.numbers, self.equal = keys, numbers, equal
        self.price, self.scaled, self.texts, self.own = price, scaled, texts, own


#: every mart that carries a rating or a score, and the window errors they rest on
MARTS = {
    "window_errors": Mart(
        ["system_id", "ticker", "window_end_date", "perturbation_id"],
        [
            "max_abs_residual",
            "last_context_value",
            "relative_max_abs_residual",
            "mean_residual",
            "smape",
            "mase",
            "sign_accuracy",
            "wql",
            "coverage_error_80",
        ],
        ["company_name", "industry", "n_steps"],
        price=lambda f: f["perturbation_id"].notna(),
        scaled=("max_abs_residual", "last_context_value", "mean_residual"),
        own=("*",),
    ),  # fmt: skip
    "accuracy_scores": Mart(
        ["system_id", "perturbation_id", "metric"], ["mean", "std"], ["n"], own=("*",)
    ),
    "ratings": Mart(
        ["metric", "outcome", "perturbation_id", "system_id"],
        ["raw_score", "score_spread"],
        [
            "rating",
            "rank",
            "n_systems",
            "rating_levels",
            "separable",
            "higher_is_better",
            "is_default_outcome",
            "rating_reason",
            "systems_rated_together",
        ],
        price=lambda f: _ape_pie(f) & _on_rmax(f),
        scaled=("raw_score", "score_spread"),
        texts=("separation_reason",),
        own=("raw_score", "score_spread"),
    ),  # fmt: skip
    "rating_stability": Mart(
        ["metric", "outcome", "system_id", "perturbation_id", "rating_level"],
        ["raw_score", "ci_low", "ci_high", "share"],
        ["rating", "n_resamples", "n_valid", "separable", "block_length", "confidence"],
        price=lambda f: _ape_pie(f) & _on_rmax(f),
        scaled=("raw_score", "ci_low", "ci_high"),
        texts=("separation_reason",),
        own=("raw_score", "ci_low", "ci_high", "n_resamples", "n_valid"),
    ),
    "robustness_scores": Mart(
        ["system_id", "perturbation_id", "metric", "outcome"],
        [
            "raw_score",
            "oracle_score",
            "oracle_error",
            "score_spread",
            "max_score",
            "oracle_rank_correlation",
        ],
        [
            "n_pairs",
            "n_distributions",
            "worst_distribution_id",
            "n_draws",
            "n_draws_left_out",
            "n_systems",
            "separates_systems",
            "aggregation",
            "estimand",
            "is_default_outcome",
        ],
        price=lambda f: _ape_pie(f) & _on_rmax(f),
        scaled=("raw_score", "oracle_score", "oracle_error", "score_spread"),
        texts=("separation_reason", "score_reason"),
        own=(
            "raw_score",
            "oracle_score",
            "oracle_error",
            "score_spread",
            "max_score",
            "oracle_rank_correlation",
            "n_pairs",
            "worst_distribution_id",
        ),
    ),  # fmt: skip
    "wrs_pairs": Mart(
        [
            "analysis",
            "outcome",
            "system_id",
            "perturbation_id",
            "within_group",
            "group_a",
            "group_b",
            "confidence",
        ],
        [
            "mean_a",
            "mean_b",
            "t_statistic",
            "p_value",
            "weight",
            "alpha",
            "t_critical",
            "weighted_rejection",
        ],
        ["n_a", "n_b", "dof", "rejected"],
        price=_on_rmax,
        scaled=("mean_a", "mean_b"),
        own=("*",),
    ),  # fmt: skip
    "perturbation_effects": Mart(
        ["system_id", "distribution_id", "perturbation_set", "perturbation_id", "outcome"],
        [
            "ape_observational",
            "ape_matched",
            "ape_oracle",
            "matching_error",
            "pie_percent",
            "ape_observational_sd",
            "ape_matched_sd",
            "pie_percent_sd",
        ],
        [
            "confounder",
            "favored_value",
            "n_treated",
            "n_control",
            "strata_without_overlap",
            "n_strata",
            "estimand",
            "n_draws",
            "n_draws_left_out",
        ],
        price=_on_rmax,
        scaled=(
            "ape_observational",
            "ape_matched",
            "ape_oracle",
            "matching_error",
            "pie_percent",
            "ape_observational_sd",
            "ape_matched_sd",
            "pie_percent_sd",
        ),
        own=("*",),
    ),  # fmt: skip
    "rating_leave_one_out": Mart(
        ["metric", "outcome", "perturbation_id", "system_id"],
        [],
        [
            "rating",
            "n_systems",
            "rating_min_one_removed",
            "rating_max_one_removed",
            "n_removals_changing",
            "changed_by_removing",
            "changes_if_one_removed",
            "rating_min_one_added",
            "rating_max_one_added",
            "changes_if_one_added",
        ],
    ),  # fmt: skip
    "system_summary": Mart(
        ["system_id", "metric"],
        ["avg_raw_score", "min_raw_score", "max_raw_score", "avg_rating"],
        ["n_perturbations", "perturbation_ids", "rating_levels"],
        price=_ape_pie,  # the default outcome, R^max
        scaled=("avg_raw_score", "min_raw_score", "max_raw_score"),
    ),
    "perturbation_summary": Mart(
        ["perturbation_id", "metric"],
        ["avg_raw_score", "min_raw_score", "max_raw_score", "avg_rating"],
        ["n_systems", "system_ids", "rating_levels"],
        price=_ape_pie,
        scaled=("avg_raw_score", "min_raw_score", "max_raw_score"),
    ),
    "partial_orders": Mart(
        ["metric", "perturbation_id", "system_id"],
        ["raw_score"],
        ["rank", "n_systems"],
        price=_ape_pie,
        scaled=("raw_score",),
    ),
    "leaderboard": Mart(
        ["scope", "metric", "system_id"],
        [
            "skill_score",
            "skill_score_lower",
            "skill_score_upper",
            "win_rate",
            "win_rate_lower",
            "win_rate_upper",
            "average_rank",
        ],
        ["n_tasks", "num_failures", "n_tasks_zero_baseline", "baseline_system_id", "reason"],
    ),  # fmt: skip
    "leaderboard_tasks": Mart(
        ["metric", "ticker", "perturbation_id", "system_id"],
        ["test_error"],
        ["n_windows"],
        price=lambda f: f["metric"] == "crps",
        scaled=("test_error",),
    ),
    "probabilistic_scores": Mart(
        ["system_id", "perturbation_id", "metric"],
        ["mean", "std", "ideal_value"],
        ["n", "reason", "n_quantile_steps", "n_crossed_steps"],
        price=lambda f: f["metric"] == "crps",
        scaled=("mean", "std"),
    ),
    "quantile_calibration": Mart(
        ["system_id", "perturbation_id", "quantile_level"],
        ["observed_share", "calibration_error"],
        ["n_steps", "reason"],
    ),
    "uncertainty_effects": Mart(
        ["system_id", "perturbation_id", "outcome"],
        [
            "mean_clean",
            "mean_perturbed",
            "mean_change",
            "change_se",
            "change_ci_low",
            "change_ci_high",
            "coverage_80_change",
            "ape_industry",
            "ape_industry_spread",
            "ape_company",
            "ape_company_spread",
        ],
        ["n_windows", "n_clusters", "beyond_noise", "reason"],
    ),  # fmt: skip
}


def skfolio_prices() -> pd.DataFrame:
    """The four tickers' closes from skfolio's own loader, as a price file's rows."""
    from skfolio.datasets import load_sp500_dataset

    wide = load_sp500_dataset().loc["2022-03-01":"2022-12-28", list(INDUSTRY)]
    long = (
        wide.rename_axis("date").reset_index().melt("date", var_name="ticker", value_name="close")
    )
    long["date"] = long["date"].dt.strftime("%Y-%m-%d")
    long["industry"] = long["ticker"].map(INDUSTRY)
    return long.dropna(subset=["close"])[["ticker", "date", "industry", "close"]]


def tsrate_run(folder: Path, prices: pd.DataFrame) -> Path:
    """``tsrate run --file`` of the study on ``prices`` into a new warehouse in ``folder``."""
    folder.mkdir()
    path = folder / "prices.csv"
    prices.to_csv(path, index=False)  # shortest round-trip repr: no digits lost
    warehouse = folder / "tsrate.duckdb"
    tickers = ",".join(sorted(prices["ticker"].unique()))
    result = subprocess.run(
        [sys.executable, "-m", "tsrate.cli", "run", "--file", str(path), "--tickers", tickers,
         *STUDY],
        env=dict(os.environ, TSRATE_WAREHOUSE=str(warehouse)), cwd=project_dir(),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return warehouse


def read_marts(warehouse: Path) -> dict[str, pd.DataFrame]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return {name: con.execute(f"select * from marts.{name}").df() for name in MARTS}
    finally:
        con.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict[str, pd.DataFrame]]:
    folder = tmp_path_factory.mktemp("invariance")
    prices = skfolio_prices()
    prices["company_name"] = prices["ticker"] + " company"
    shuffled = prices.sample(frac=1.0, random_state=45)
    renamed = prices.assign(ticker=prices["ticker"].map(RENAMED)).sample(frac=1.0, random_state=7)[
        ["close", "company_name", "industry", "date", "ticker"]
    ]
    variants = {
        "base": prices,
        "x100": shuffled.assign(close=shuffled["close"] * 100.0),
        "x0.01": prices.assign(close=prices["close"] * 0.01),
        "renamed": renamed,
    }
    started = time.perf_counter()
    out = {name: read_marts(tsrate_run(folder / name, frame)) for name, frame in variants.items()}
    print(f"4 tsrate runs in {time.perf_counter() - started:.0f} s")
    return out


def _numbers_out(text: object) -> object:
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", text) if isinstance(text, str) else text


def _paired(name: str, base: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The two runs' rows side by side on the mart's key (suffixes _a, _b); every key in
    both, once."""
    keys = MARTS[name].keys
    assert not base.duplicated(keys).any(), f"{name}: key {keys} is not unique"
    assert len(base) == len(other) > 0, f"{name}: {len(base)} rows, then {len(other)}"
    for key in keys:  # an all-null key column reads as float in one run, text in another
        base[key], other[key] = base[key].astype(object), other[key].astype(object)
    paired = base.merge(other, on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    lost = paired[paired["_merge"] != "both"]
    assert lost.empty, f"{name}: rows of one run only:\n{lost[keys + ['_merge']].head()}"
    return paired


def assert_numbers(name: str, paired: pd.DataFrame, column: str, factor: np.ndarray) -> None:
    """``column``'s values of run b are run a's x ``factor`` (per row) to :data:`RTOL`,
    values within floating noise of 0 (NOISE x the column's largest |value|) as 0."""
    a = paired[f"{column}_a"].to_numpy(dtype=float)
    b = paired[f"{column}_b"].to_numpy(dtype=float)
    expected = a * factor
    assert (np.isnan(a) == np.isnan(b)).all(), f"{name}.{column}: null in one run only"
    scale = np.nanmax(np.abs(expected), initial=0.0)
    off = ~np.isnan(a) & ~np.isclose(b, expected, rtol=RTOL, atol=NOISE * scale)
    shown = paired.loc[off, MARTS[name].keys + [f"{column}_a", f"{column}_b"]]
    assert not off.any(), f"{name}.{column}: {off.sum()} rows not x {set(factor[off])}:\n{shown}"


def assert_same(name: str, paired: pd.DataFrame, column: str, price: np.ndarray) -> None:
    """``column`` is the same in both runs (a text's numbers left out on price-unit rows)."""
    a, b = paired[f"{column}_a"].astype(object), paired[f"{column}_b"].astype(object)
    if column in MARTS[name].texts:
        a = a.where(~price, a.map(_numbers_out))
        b = b.where(~price, b.map(_numbers_out))
    same = (a.isna() & b.isna()) | (a == b).fillna(False).astype(bool)
    shown = paired.loc[~same, MARTS[name].keys + [f"{column}_a", f"{column}_b"]]
    assert same.all(), f"{name}.{column} differs in {(~same).sum()} rows:\n{shown}"


@pytest.mark.parametrize("variant,factor", [("x100", 100.0), ("x0.01", 0.01)])
def test_scaled_prices_give_the_same_ratings_and_scaled_price_unit_scores(runs, variant, factor):
    for name, mart in MARTS.items():
        paired = _paired(name, runs["base"][name].copy(), runs[variant][name].copy())
        price = (
            mart.price(paired).fillna(False).to_numpy(dtype=bool)
            if mart.price
            else np.zeros(len(paired), dtype=bool)
        )
        for column in mart.numbers:
            in_price = price & (column in mart.scaled)
            assert_numbers(name, paired, column, np.where(in_price, factor, 1.0))
        for column in [*mart.equal, *mart.texts]:
            assert_same(name, paired, column, price)
    ratings = runs["base"]["ratings"]
    assert ratings["rating"].notna().sum() > 100 and ratings["separable"].any()
    assert (runs["base"]["rating_stability"]["share"] > 0).sum() > 100


def _renamed_back(frame: pd.DataFrame) -> pd.DataFrame:
    back = {new: old for old, new in RENAMED.items()}
    pattern = re.compile(r"\b(" + "|".join(back) + r")\b")
    frame = frame.copy()
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            frame[column] = (
                frame[column]
                .astype(object)
                .map(
                    lambda v: (
                        pattern.sub(lambda m: back[m.group(1)], v) if isinstance(v, str) else v
                    )
                )
            )
    return frame


def _symbol_free(frame: pd.DataFrame) -> pd.DataFrame:
    """The deterministic systems' rows, without the company APE / PIE % (their treatment
    draws are seeded by the company's symbol)."""
    rows = frame["system_id"].isin(DETERMINISTIC)
    for column in ("metric", "distribution_id"):
        if column in frame.columns:
            rows &= ~frame[column].fillna("").str.match(r"(ape|pie)_company|company:")
    return frame.loc[rows].reset_index(drop=True)


def test_renamed_tickers_change_only_what_their_symbols_seed(runs):
    base, renamed = runs["base"], runs["renamed"]
    compared = 0
    for name, mart in MARTS.items():
        if not mart.own:
            continue
        a = _symbol_free(base[name])
        b = _symbol_free(_renamed_back(renamed[name]))
        paired = _paired(name, a, b)
        columns = [*mart.numbers, *mart.equal] if mart.own == ("*",) else list(mart.own)
        for column in columns:
            if column in mart.numbers:
                assert_numbers(name, paired, column, np.ones(len(paired)))
            else:
                assert_same(name, paired, column, np.zeros(len(paired), dtype=bool))
            compared += 1
    assert compared > 50
    # the company names came from each file's own column, under the new symbols
    names = set(renamed["window_errors"]["company_name"])
    assert names == {f"{old} company" for old in RENAMED}
    # by design, random's draws are seeded by the symbol: another symbol, other draws
    errors = _renamed_back(renamed["window_errors"])
    keys = MARTS["window_errors"].keys
    random = base["window_errors"].merge(errors, on=keys, suffixes=("_a", "_b"))
    random = random[random["system_id"] == "random"]
    assert (
        len(random) > 0
        and (random["max_abs_residual_a"] != random["max_abs_residual_b"]).mean() > 0.9
    )


def test_quantile_tie_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    """The hand-computed dbt unit cases of a tie between an actual and its quantile forecast
    one ulp apart (as a run at prices x 100 stores it): observed_share counts it at or below,
    is_covered_80 inside; an actual 1e-6 (1e-9) of its value beyond is not. With the ties
    compared exactly, the x 100 run's naive median share was 1/1704 lower than the base's."""
    selection = ["--select", "+quantile_calibration", "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch)
