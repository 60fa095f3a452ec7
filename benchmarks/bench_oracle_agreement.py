"""Benchmark: how well APE tracks the oracle, and how many WRS scores saturate, per outcome.

Reads a warehouse already built by ``tsrate run`` (default: ``$TSRATE_WAREHOUSE``), read-only,
and recomputes APE with tsrate's own library for several numbers of treatment draws R (the
``treatment_draws`` var) on its ``marts.window_errors``:

* per outcome (the paper's R^max and the scale-free relative R^max), confounder and treatment:
  Spearman's rho between the systems' APE raw score (max over distributions of |mean APE_m|)
  and their oracle score (the same aggregation of the true effect) -- where the oracle
  effects differ between systems -- and the time the estimate took;
* the number of WRS scores at their maximum, per outcome, from ``marts.robustness_scores``
  (the build's own draws and settings).

    TSRATE_WAREHOUSE=/tmp/h15/tsrate.duckdb .venv/bin/python benchmarks/bench_oracle_agreement.py
    .venv/bin/python benchmarks/bench_oracle_agreement.py --warehouse W --draws 1 4 16 64 --check

The default study's figures are in docs/ratings.md.
"""

from __future__ import annotations

import argparse
import os
import time

import duckdb
import numpy as np
import pandas as pd
from scipy import stats as sps

from tsrate.config import project_vars
from tsrate.methods.causal.effects import effect_scores, study_effects
from tsrate.methods.causal.estimators import study_distributions

OUTCOMES = ["max_abs_residual", "relative_max_abs_residual"]


def agreement(scores: pd.DataFrame) -> pd.DataFrame:
    """Spearman(raw_score, oracle_score) over systems per outcome, metric and perturbation."""
    rows = []
    ape = scores.loc[scores["measure"] == "ape"]
    for (outcome, metric, pert), block in ape.groupby(["outcome", "metric", "perturbation_id"]):
        oracle = block["oracle_score"].round(12)
        rho = np.nan
        if oracle.nunique() > 1 and block["raw_score"].nunique() > 1:
            rho = float(sps.spearmanr(block["raw_score"], oracle).statistic)
        rows.append(
            {
                "outcome": outcome,
                "metric": metric,
                "perturbation_id": pert,
                "spearman": rho,
                "oracle_differs": oracle.nunique() > 1,
                "n_systems": len(block),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", default=os.environ.get("TSRATE_WAREHOUSE"))
    parser.add_argument("--draws", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless, at the default treatment_draws, the company-confounded APE with "
        "the paper's outcome has Spearman >= 0.9 with the oracle for every treatment whose "
        "oracle effects differ",
    )
    args = parser.parse_args()
    if not args.warehouse:
        parser.error("give --warehouse or set TSRATE_WAREHOUSE")
    con = duckdb.connect(args.warehouse, read_only=True)
    try:
        errors = con.execute("select * from marts.window_errors").df()
        sets = con.execute("select * from intermediate.int_perturbation_sets_derived").df()
        built = con.execute("select * from marts.robustness_scores").df()
    finally:
        con.close()
    settings = project_vars()
    seed = int(settings["causal_seed"])
    companies = errors[["ticker", "industry"]].drop_duplicates()
    dists = study_distributions(
        companies, max_company_distributions=int(settings["max_company_distributions"])
    )
    print(
        f"warehouse {args.warehouse}: {errors['system_id'].nunique()} systems, "
        f"{len(companies)} tickers, {errors['window_end_date'].nunique()} windows, "
        f"{len(dists)} distributions, load {os.getloadavg()[0]:.1f}"
    )

    wrs = built.loc[built["measure"] == "wrs"]
    at_max = wrs["raw_score"] >= wrs["max_score"] - 1e-9
    print("\nWRS scores at their maximum, per outcome (this build):")
    print(
        wrs.assign(at_max=at_max)
        .groupby("outcome")["at_max"]
        .agg(at_max="sum", scores="size")
        .to_string()
    )

    for draws in args.draws:
        started = time.perf_counter()
        effects = study_effects(
            errors, sets, dists, seed, draws=draws, estimand="ATE", outcomes=OUTCOMES
        )
        seconds = time.perf_counter() - started
        table = agreement(effect_scores(effects, "max"))
        wide = table.pivot_table(
            index=["outcome", "metric"], columns="perturbation_id", values="spearman"
        )
        print(f"\nR = {draws} draws ({seconds:.1f} s): Spearman(APE raw score, oracle score)")
        print(wide.round(2).to_string())

    if args.check:
        default = int(settings["treatment_draws"])
        effects = study_effects(
            errors, sets, dists, seed, draws=default, estimand="ATE", outcomes=OUTCOMES[:1]
        )
        table = agreement(effect_scores(effects, "max"))
        company = table[(table["metric"] == "ape_company") & table["oracle_differs"]]
        failing = company[~(company["spearman"] >= 0.9)]
        print(
            f"\ncheck (R = {default}): company-confounded APE vs oracle, Spearman per treatment "
            + ", ".join(f"{r.perturbation_id} {r.spearman:.2f}" for r in company.itertuples())
        )
        if failing.empty and not company.empty:
            print("PASS: Spearman >= 0.9 for every treatment whose oracle effects differ")
        else:
            print("FAIL: Spearman < 0.9 (or no treatment to check)")
            raise SystemExit(1)


if __name__ == "__main__":
    main()
