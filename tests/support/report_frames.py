"""A small report's marts for the report builder tests: two systems (a robust 'good', a
fragile 'bad'), P0-P2, every metric. No test here."""

from __future__ import annotations

import pandas as pd

from tsrate.robustness.report.render import (
    ReportData,
)

RUN = "r1"
ROBUSTNESS = ["wrs_industry", "wrs_company", "ape_industry", "ape_company", "pie_industry"]


def two_systems(**overrides) -> ReportData:
    """Two systems (a robust 'good', a fragile 'bad'), P0-P2, every metric."""
    rows = []
    for perturbation in ["P0", "P1", "P2"]:
        for metric in [*ROBUSTNESS, "smape", "mase", "sign_accuracy"]:
            if perturbation == "P0" and not metric.startswith("wrs") and metric in ROBUSTNESS:
                continue
            higher = metric == "sign_accuracy"
            penalty = {"P0": 0.0, "P1": 1.0, "P2": 5.0}[perturbation]
            for system, base in (("good", 1.0), ("bad", 3.0)):
                score = base + penalty if not higher else 100 - base * 10
                rows.append(
                    dict(
                        run_id=RUN,
                        metric=metric,
                        metric_family="accuracy"
                        if metric in ("smape", "mase", "sign_accuracy")
                        else "robustness",
                        perturbation_id=perturbation,
                        system_id=system,
                        raw_score=score,
                        rating_levels=3,
                        higher_is_better=higher,
                    )
                )
    ratings = pd.DataFrame(rows)
    ratings["rank"] = (
        ratings.groupby(["metric", "perturbation_id"])["raw_score"].rank(method="min").astype(int)
    )
    ratings["rating"] = ratings["rank"].map({1: 1, 2: 3})
    group = ["run_id", "system_id", "metric"]
    system_summary = (
        ratings.groupby(group)
        .agg(
            avg_raw_score=("raw_score", "mean"),
            avg_rating=("rating", "mean"),
            rating_levels=("rating_levels", "max"),
            higher_is_better=("higher_is_better", "all"),
        )
        .reset_index()
    )
    perturbation_summary = (
        ratings.groupby(["run_id", "perturbation_id", "metric"])
        .agg(avg_raw_score=("raw_score", "mean"), higher_is_better=("higher_is_better", "all"))
        .reset_index()
    )
    confounder = pd.DataFrame(
        [
            dict(
                run_id=RUN,
                grouped_by="all",
                system_id=None,
                perturbation_id=None,
                measure="ape",
                industry_avg=6.0,
                company_avg=2.0,
                more_biased_confounder="industry",
            ),
            dict(
                run_id=RUN,
                grouped_by="system",
                system_id="good",
                perturbation_id=None,
                measure="ape",
                industry_avg=4.0,
                company_avg=1.0,
                more_biased_confounder="industry",
            ),
        ]
    )
    groups = pd.DataFrame(
        [
            dict(
                run_id=RUN,
                system_scope="all_systems",
                comparison="foundation",
                group_name="non-foundation",
                metric="smape",
                avg_raw_score=2.0,
                system_ids="bad good",
            )
        ]
    )
    systems = pd.DataFrame(
        [
            dict(system_id="good", display_name="Good", implementation="m", base_model=None,
                 modality="numeric", description="runs"),
            dict(system_id="bad", display_name="Bad", implementation="m", base_model=None,
                 modality="numeric", description="runs"),
            dict(system_id="ghost_a", display_name="Ghost A", implementation=None,
                 base_model="ghost", modality="numeric", description="Needs ghost weights."),
            dict(system_id="ghost_b", display_name="Ghost B", implementation="",
                 base_model="ghost", modality="numeric+image", description="Needs a ghost API."),
        ]
    )  # fmt: skip
    perturbations = pd.DataFrame(
        [
            dict(perturbation_id=p, name=p, family="f", modality=m, description="d")
            for p, m in [("P0", "numeric"), ("P1", "numeric"), ("P2", "numeric"), ("P4", "image")]
        ]
    )
    values = dict(
        run_id=RUN,
        published_at="2026-01-01 00:00:00",
        study=dict(tickers=["AAA"], start="2022-01-03", end="2022-12-30", systems=["good", "bad"],
                   perturbations=["P0", "P1", "P2"], context_length=80, horizon=20),
        ratings=ratings,
        system_summary=system_summary,
        perturbation_summary=perturbation_summary,
        confounder_comparison=confounder,
        group_comparisons=groups,
        modality_pairs=pd.DataFrame(),
        systems=systems,
        perturbations=perturbations,
        companies=pd.DataFrame([dict(ticker="AAA", company_name="A Corp", industry="Tech")]),
        windows=pd.DataFrame([dict(ticker="AAA", n_windows=10, first_window="x", last_window="y")]),
    )  # fmt: skip
    values.update(overrides)
    return ReportData(**values)
