"""Benchmark: what the probabilistic outcomes (wql, coverage_error_80) add to the Python
models of the robustness analysis on a default-study-sized window_errors.

Times the library calls of wrs_pairs (tsrate.methods.wrs.wrs_pair_table) and
perturbation_effects (tsrate.methods.causal.effects.study_effects, var treatment_draws
draws over the derived distributions) with the paper's two R^max outcomes, then with the
four outcomes of var robustness_outcomes, on a synthetic frame of the default study's shape
(6 tickers in 3 industries x 153 windows x P0-P3 x 6 systems = 22,032 rows). Median of
``--repeats`` runs of each, alternated.

    .venv/bin/python benchmarks/bench_uncertainty_outcomes.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tsrate.config import project_vars
from tsrate.methods.causal.distributions import study_distributions
from tsrate.methods.causal.effects import study_effects
from tsrate.methods.wrs import wrs_pair_table

TICKERS = {"AAPL": "Tech", "MSFT": "Tech", "PFE": "Pharma", "MRK": "Pharma", "JPM": "Fin"}
TICKERS |= {"BAC": "Fin"}
SYSTEMS = ["naive", "seasonal_naive", "arima", "random", "biased", "fracast"]
PERTS = ["P0", "P1", "P2", "P3"]
LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.6], "weight": [1.0, 0.8, 0.6]})


def window_errors(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2022-03-01", periods=153)
    frames = []
    for system in SYSTEMS:
        for ticker, industry in TICKERS.items():
            level = rng.uniform(30, 300)
            for k, pert in enumerate(PERTS):
                y = level / 30 * rng.gamma(2.0, 0.5 + 0.1 * k, dates.size)
                covered = rng.binomial(20, 0.8 - 0.05 * k, dates.size)
                frames.append(
                    pd.DataFrame(
                        {
                            "run_id": "r1",
                            "system_id": system,
                            "ticker": ticker,
                            "industry": industry,
                            "window_end_date": dates,
                            "perturbation_id": pert,
                            "max_abs_residual": y,
                            "relative_max_abs_residual": y / level,
                            "wql": 0.3 * y / level,
                            "coverage_error_80": np.abs(covered / 20 - 0.8),
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def run(errors: pd.DataFrame, outcomes: list[str], draws: int, seed: int) -> float:
    sets = pd.DataFrame(
        {"run_id": "r1", "system_id": SYSTEMS, "perturbation_set": " ".join(PERTS)}
    ).assign(has_effects=True)
    companies = pd.DataFrame({"ticker": list(TICKERS), "industry": list(TICKERS.values())})
    started = time.perf_counter()
    wrs_pair_table(errors, LEVELS, outcomes)
    study_effects(
        errors, sets, study_distributions(companies), seed, draws=draws, outcomes=outcomes
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    values = project_vars()
    draws, seed = int(values["treatment_draws"]), int(values["causal_seed"])
    four = [str(o) for o in values["robustness_outcomes"]]
    two = ["max_abs_residual", "relative_max_abs_residual"]
    errors = window_errors()
    print(f"load before: {Path('/proc/loadavg').read_text().split()[:3]}")
    print(f"{len(errors):,d} rows, {draws} draws, outcomes {four}")
    times: dict[str, list[float]] = {"two": [], "four": []}
    for _ in range(args.repeats):
        times["two"].append(run(errors, two, draws, seed))
        times["four"].append(run(errors, four, draws, seed))
    for name, values_s in times.items():
        print(f"{name} outcomes: median {statistics.median(values_s):.2f} s  {values_s}")
    extra = statistics.median(times["four"]) - statistics.median(times["two"])
    print(f"added by wql + coverage_error_80: {extra:.2f} s")
    print(f"load after: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
