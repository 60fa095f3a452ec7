"""What the report builder tests share (tests/unit/test_report_builders_*.py): the start
tags of an HTML fragment, and rating-stability rows at each published rating of a small
report's marts (tests/support/report_frames.py). No test here.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd

from tsrate.robustness.report.render import (
    ReportData,
)

# ----------------------------------------------------------------------------- html


class TagParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def html_tags(html: str) -> list[tuple[str, dict]]:
    parser = TagParser()
    parser.feed(html)
    return parser.tags


def stability_rows(data: ReportData, shares: dict) -> pd.DataFrame:
    """rating_stability rows at each published rating; share 1 unless given in ``shares``."""
    frame = data.ratings[["metric", "perturbation_id", "system_id", "rating", "raw_score"]].copy()
    frame["share"] = [
        shares.get((r.metric, r.perturbation_id, r.system_id), 1.0) for r in frame.itertuples()
    ]
    frame["ci_low"] = frame["raw_score"] - 0.5
    frame["ci_high"] = frame["raw_score"] + 0.5
    frame["n_valid"] = frame["n_resamples"] = 200
    frame["confidence"] = 0.95
    return frame.drop(columns="raw_score")
