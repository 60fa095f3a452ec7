"""The understanding report written from hand-made detection F1 scores: the rating kit's
ratings, a stability table beside them and a warehouse holding both marts. No test here."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from tsrate.suites import rating as kit
from tsrate.suites.understanding import report as und_report


def und_report_page(
    folder: Path, f1: dict[str, dict[str, float]], half_width: float | None = None
) -> tuple[pd.DataFrame, str]:
    """(marts.und_ratings, the report's HTML) for ``f1`` (feature -> system -> detection F1)
    on 3 levels, every share at its rating 0.9; each rated score's interval raw +-
    ``half_width`` (None: a snapshot without intervals)."""
    scores = pd.DataFrame(
        [dict(suite_run_id="r", prompting="zero_shot", metric="detection_f1", feature=f,
              system_id=s, raw_score=v) for f, by in f1.items() for s, v in by.items()]
    )  # fmt: skip
    ratings = kit.rating_table(scores, "understanding",
                               ["suite_run_id", "prompting", "metric", "feature"], "system_id",
                               3)  # fmt: skip
    stability = ratings[["suite_run_id", "prompting", "metric", "feature", "system_id",
                         "raw_score", "rating", "rating_levels", "rating_reason"]].assign(
        share_at_rating=0.9, share_mc_se=0.01
    )  # fmt: skip
    if half_width is not None:
        stability = stability.assign(
            ci_low=stability["raw_score"] - half_width, ci_high=stability["raw_score"] + half_width
        )
    warehouse = Path(folder) / f"und-{half_width}.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
        con.register("r_frame", ratings.astype({"rating": "float", "rank": "float"}))
        con.register("s_frame", stability.astype({"rating": "float"}))
        con.execute("create table marts.und_ratings as select * from r_frame")
        con.execute("create table marts.und_rating_stability as select * from s_frame")
    page = und_report.write_report(warehouse, Path(folder) / "r.html").read_text(encoding="utf-8")
    return ratings, page
