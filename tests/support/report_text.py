"""Hand-made report data for the report text tests: seeded systems rated on robustness and
accuracy over P0-P3, and the page's text without its tags. No test here."""

from __future__ import annotations

import re
from collections import defaultdict

import pandas as pd

from tsrate.robustness.report.data import ReportData

RUN = "r9"
ROBUSTNESS = (
    "wrs_industry",
    "wrs_company",
    "ape_industry",
    "ape_company",
    "pie_industry",
    "pie_company",
)
ACCURACY = ("smape", "mase", "sign_accuracy")
SEED = ["zeta", "alpha", "mid"]  # seed order, not alphabetical
PERTURBATIONS = ["P0", "P1", "P2", "P3"]


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def rating_rows(levels: dict[str, dict[str, list[int]]]) -> pd.DataFrame:
    """marts.ratings rows: ``levels[system][metric]`` lists the rating at P0..P3 (robustness
    metrics other than WRS have no P0 row, as in the mart)."""
    rows = []
    for system, by_metric in levels.items():
        for metric, ratings in by_metric.items():
            perturbations = (
                PERTURBATIONS if not metric.startswith(("ape", "pie")) else PERTURBATIONS[1:]
            )
            for perturbation, rating in zip(perturbations, ratings, strict=True):
                rows.append(
                    dict(
                        run_id=RUN,
                        metric=metric,
                        perturbation_id=perturbation,
                        system_id=system,
                        raw_score=float(rating),
                        rating=int(rating) if metric in ROBUSTNESS else 1,
                        rating_levels=4,
                        higher_is_better=metric == "sign_accuracy",
                    )
                )
    return pd.DataFrame(rows)


def summaries(ratings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """system_summary and perturbation_summary by loops over the rating rows (plain means)."""
    by_system: dict[tuple, list] = defaultdict(list)
    by_perturbation: dict[tuple, list] = defaultdict(list)
    for row in ratings.itertuples():
        by_system[(row.system_id, row.metric)].append(row)
        by_perturbation[(row.perturbation_id, row.metric)].append(row)
    system_summary = pd.DataFrame(
        [
            dict(
                run_id=RUN,
                system_id=system,
                metric=metric,
                avg_raw_score=sum(r.raw_score for r in rows) / len(rows),
                avg_rating=sum(r.rating for r in rows) / len(rows),
                rating_levels=max(r.rating_levels for r in rows),
                higher_is_better=rows[0].higher_is_better,
            )
            for (system, metric), rows in by_system.items()
        ]
    )
    perturbation_summary = pd.DataFrame(
        [
            dict(
                run_id=RUN,
                perturbation_id=perturbation,
                metric=metric,
                avg_raw_score=sum(r.raw_score for r in rows) / len(rows),
                higher_is_better=rows[0].higher_is_better,
            )
            for (perturbation, metric), rows in by_perturbation.items()
        ]
    )
    return system_summary, perturbation_summary


def report_data(ratings: pd.DataFrame, **overrides) -> ReportData:
    system_summary, perturbation_summary = summaries(ratings)
    systems = pd.DataFrame(
        [
            dict(system_id=s, display_name=s.title(), implementation="m", modality="numeric",
                 family="f", purpose="p", architecture="a", is_foundation_model=False,
                 paper_symbol=None, description=f"{s} runs")
            for s in SEED
        ]
    )  # fmt: skip
    values = dict(
        run_id=RUN,
        published_at="2026-01-01 00:00:00",
        study=dict(tickers=["AAA"], systems=SEED, perturbations=PERTURBATIONS),
        ratings=ratings,
        system_summary=system_summary,
        perturbation_summary=perturbation_summary,
        confounder_comparison=pd.DataFrame(),
        group_comparisons=pd.DataFrame(),
        modality_pairs=pd.DataFrame(),
        systems=systems,
        perturbations=pd.DataFrame(),
        companies=pd.DataFrame(),
        windows=pd.DataFrame(columns=["ticker", "n_windows"]),
    )
    values.update(overrides)
    return ReportData(**values)


def uniform(level: int, smape: float = 10.0, mase: float = 1.0, sign: float = 50.0) -> dict:
    """Every robustness metric at ``level`` on every perturbation; the accuracy metrics at
    the given raw score everywhere."""
    out = {m: [level] * (4 if m.startswith("wrs") else 3) for m in ROBUSTNESS}
    out.update(smape=[smape] * 4, mase=[mase] * 4, sign_accuracy=[sign] * 4)
    return out


def three_systems() -> dict:
    """zeta, alpha, mid with distinct mean robustness ratings worked out by hand below."""
    zeta = uniform(2, smape=30.0, mase=1.5, sign=40.0)
    zeta["wrs_industry"] = [1, 1, 2, 2]
    alpha = uniform(1, smape=20.0, mase=2.0, sign=60.0)
    alpha["ape_company"] = [3, 3, 3]
    mid = uniform(4, smape=40.0, mase=0.5, sign=55.0)
    mid["pie_company"] = [1, 1, 1]
    return {"zeta": zeta, "alpha": alpha, "mid": mid}
