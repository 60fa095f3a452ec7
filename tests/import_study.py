"""The study the import tests share (unit and integration): two tickers, four months, one
baseline, so a full prediction grid is small. One definition; the fixtures on it are in
tests/unit/conftest.py."""

from __future__ import annotations

from tsrate.config import Study

STUDY = Study.from_mapping(
    dict(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=30,
        horizon=5,
        systems=["naive"],
    )
)
