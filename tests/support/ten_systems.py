"""Ten systems with long names rated on every core metric under four perturbations, as
hand-made report marts (no dbt build): the page the core report's browser tests open.
Scores and stability shares are seeded draws; the ratings follow the scores' ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.robustness.report.render import ReportData

RUN = "r10"
METRICS = ["wrs_industry", "wrs_company", "ape_industry", "ape_company", "pie_industry",
           "pie_company", "smape", "mase", "sign_accuracy"]  # fmt: skip
#: long ids on purpose: labels must not be truncated nor push the page wide
SYSTEMS = [f"system_with_a_long_name_{i:02d}" for i in range(10)]


def ten_systems() -> ReportData:
    rng = np.random.default_rng(3)
    rows = []
    for perturbation in ("P0", "P1", "P2", "P3"):
        for metric in METRICS:
            if perturbation == "P0" and metric.startswith(("ape", "pie")):
                continue
            scores = rng.uniform(1, 10, len(SYSTEMS))
            ranks = pd.Series(scores).rank(method="min").astype(int).to_numpy()
            for system, score, rank in zip(SYSTEMS, scores, ranks, strict=True):
                rows.append(dict(run_id=RUN, metric=metric, perturbation_id=perturbation,
                                 system_id=system, raw_score=float(score), rank=int(rank),
                                 rating=int(min(3, 1 + (rank - 1) * 3 // 10)), rating_levels=3,
                                 higher_is_better=metric == "sign_accuracy",
                                 metric_family="accuracy" if metric in METRICS[6:]
                                 else "robustness"))  # fmt: skip
    ratings = pd.DataFrame(rows)
    stability = ratings[["metric", "perturbation_id", "system_id", "rating"]].assign(
        share=rng.uniform(0.3, 1.0, len(ratings)),
        ci_low=ratings["raw_score"] * 0.9,
        ci_high=ratings["raw_score"] * 1.1,
        n_valid=200,
        n_resamples=200,
        confidence=0.95,
    )
    summary = (
        ratings.groupby(["run_id", "system_id", "metric"])
        .agg(avg_raw_score=("raw_score", "mean"), avg_rating=("rating", "mean"),
             rating_levels=("rating_levels", "max"), higher_is_better=("higher_is_better", "all"))
        .reset_index()
    )  # fmt: skip
    per_perturbation = (
        ratings.groupby(["run_id", "perturbation_id", "metric"])
        .agg(avg_raw_score=("raw_score", "mean"), higher_is_better=("higher_is_better", "all"))
        .reset_index()
    )
    systems = pd.DataFrame(
        [dict(system_id=s, display_name=f"System {i}", implementation="m", base_model=None,
              modality="numeric", description="runs") for i, s in enumerate(SYSTEMS)]
    )  # fmt: skip
    return ReportData(
        run_id=RUN,
        published_at="2026-01-01 00:00:00",
        study=dict(tickers=["AAA"], start="2022-01-03", end="2022-12-30", systems=SYSTEMS,
                   perturbations=["P0", "P1", "P2", "P3"], context_length=80, horizon=20),
        ratings=ratings,
        system_summary=summary,
        perturbation_summary=per_perturbation,
        confounder_comparison=pd.DataFrame(),
        group_comparisons=pd.DataFrame(),
        modality_pairs=pd.DataFrame(),
        systems=systems,
        perturbations=pd.DataFrame(),
        companies=pd.DataFrame([dict(ticker="AAA", company_name="A Corp", industry="Tech")]),
        windows=pd.DataFrame([dict(ticker="AAA", n_windows=10, first_window="x", last_window="y")]),
        stability=stability,
    )  # fmt: skip
