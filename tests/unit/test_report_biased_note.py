"""The report's study section says what the Biased baseline is (the actual future plus a
per-company offset) whenever it is rated, naming the study's companies with offset 0, so its
top sign-accuracy rating is not read as a model's merit; a report without it says nothing."""

from __future__ import annotations

import re

import pandas as pd

from tests.support.report_frames import two_systems
from tsrate.robustness.report.sections import study_section


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _with_biased(offsets: dict[str, float] | None):
    data = two_systems()
    data.ratings = pd.concat(
        [data.ratings, data.ratings[data.ratings["system_id"] == "bad"].assign(system_id="biased")]
    ).reset_index(drop=True)
    data.study = {**data.study, "tickers": ["AAA", "BBB", "CCC"]}
    rows = [dict(ticker=t, company_name=t, industry="Tech") for t in ("AAA", "BBB", "CCC", "ZZZ")]
    companies = pd.DataFrame(rows)
    if offsets is not None:
        companies["biased_offset"] = companies["ticker"].map(offsets)
    data.companies = companies
    return data


def test_a_rated_biased_baseline_is_explained_with_its_offset_zero_companies():
    text = _plain(study_section(_with_biased({"AAA": 0.0, "BBB": 200.0, "CCC": 0.0, "ZZZ": 0})))
    assert "biased is the truth plus an offset, not a model." in text
    assert "the actual future plus a fixed per-company offset" in text
    # the study's companies with offset 0, not ZZZ (offset 0 but not in the study)
    assert "AAA, CCC have offset 0" in text and "ZZZ" not in text
    assert "sign accuracy is near 100 % on every company" in text


def test_one_offset_zero_company_and_no_offsets_at_all():
    one = _plain(study_section(_with_biased({"AAA": 0.0, "BBB": 200.0, "CCC": 300.0})))
    assert "AAA has offset 0" in one
    unknown = _plain(study_section(_with_biased(None)))
    assert "a company with offset 0 gets the actual future itself" in unknown


def test_no_note_without_the_biased_baseline():
    assert "truth plus an offset" not in _plain(study_section(two_systems()))
