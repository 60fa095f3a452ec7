"""What the core report's text tests share (tests/unit/test_sweep9_report_text_verdict.py,
test_sweep9_report_text_study.py, test_sweep9_report_text_reading.py): every printed number
formatted by the documented precision rule (>= 1000 no decimals, >= 1 two, below 1 three
significant), the numbers a fragment names with their mart rows, rating-stability rows at
given shares, and perturbation summary rows. No test here.
"""

from __future__ import annotations

import json
import re

import pandas as pd

from tests.support.report_text import (
    RUN,
)


def fmt(value: float) -> str:
    """The documented precision: >= 1000 no decimals, >= 1 two, below 1 three significant."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def nums(html: str) -> list[dict]:
    """Every traceable number: its mart, column, where, value and printed text."""
    out = []
    for attrs, text in re.findall(r'<span class="num"([^>]*)>([^<]*)</span>', html):
        found = dict(re.findall(r' (data-[a-z-]+)="([^"]*)"', attrs))
        where = json.loads(found["data-where"].replace("&quot;", '"'))
        out.append(
            dict(
                mart=found["data-mart"],
                column=found["data-column"],
                where=where,
                value=float(found["data-value"]),
                agg=found.get("data-agg", ""),
                text=text,
            )
        )
    return out


def stability_of(ratings: pd.DataFrame, shares: dict[tuple[str, str, str], float]) -> pd.DataFrame:
    """rating_stability at each published rating: share 0.9 unless ``shares`` says otherwise
    (keys: metric, perturbation, system)."""
    return pd.DataFrame(
        [
            dict(
                metric=r.metric,
                perturbation_id=r.perturbation_id,
                system_id=r.system_id,
                rating=r.rating,
                share=shares.get((r.metric, r.perturbation_id, r.system_id), 0.9),
            )
            for r in ratings.itertuples()
        ]
    )


def perturbation_frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id=RUN, perturbation_id=p, metric=m, avg_raw_score=v,
                 higher_is_better=m == "sign_accuracy")
            for p, m, v in rows
        ]
    )  # fmt: skip
