"""The rating tables' rows say what a reader needs without the caption: sign accuracy's row
says in words that higher is better and its top rating is best (its neighbours' 1 is best),
and a reason every system of a row shares is said once per row, each cell marked †, while
a reason of one system stays in its cell. Pure functions over small hand-made frames."""

from __future__ import annotations

import json
import re

import pandas as pd

from tests.support.report_builders import html_tags
from tests.support.report_frames import two_systems
from tsrate.methods.ratings import REASON_TIED_IDEAL
from tsrate.robustness.report.ratings import ROW_REASON_MARK, rating_tables_section

LONE = "only one system rated: rated by its distance from the ideal value"


def _rows(html: str) -> list[str]:
    return re.findall(r"<tr>(.*?)</tr>", html, re.S)


def _cells(row: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _with_reasons(outcome_rows: bool = False):
    """two_systems(): WRS company under P1 tied for both systems (the shared reason), WRS
    industry under P2 with a reason for 'bad' only; the same at a second outcome."""
    data = two_systems()
    ratings = data.ratings.copy()
    ratings["rating_reason"] = None
    tied = (ratings["metric"] == "wrs_company") & (ratings["perturbation_id"] == "P1")
    ratings.loc[tied, "rating_reason"] = REASON_TIED_IDEAL
    alone = (
        (ratings["metric"] == "wrs_industry")
        & (ratings["perturbation_id"] == "P2")
        & (ratings["system_id"] == "bad")
    )
    ratings.loc[alone, "rating_reason"] = LONE
    data.ratings = ratings
    if outcome_rows:
        robust = ratings[ratings["metric"].str.startswith("wrs")].copy()
        data.outcome_ratings = robust.assign(outcome="relative_max_abs_residual")
    return data


def test_sign_accuracy_rows_say_higher_is_better_and_which_rating_is_best():
    html = rating_tables_section(two_systems())
    rows = _rows(html)
    sign = [_plain(_cells(r)[0]) for r in rows if "Sign accuracy" in r]
    assert sign == ["Sign accuracy % ↑ higher is better; 3 is best"] * 3
    smape = [_plain(_cells(r)[0]) for r in rows if "SMAPE" in r]
    assert smape == ["SMAPE ↓"] * 3


def test_sign_accuracy_rows_name_the_top_level_of_the_build():
    data = two_systems()
    data.ratings = data.ratings.assign(rating_levels=5)
    label = [_plain(_cells(r)[0]) for r in _rows(rating_tables_section(data)) if "Sign" in r]
    assert label and all(text.endswith("higher is better; 5 is best") for text in label)


def _reason_flags(row: str) -> list[dict]:
    return [a for t, a in html_tags(row) if t == "em" and "rating-reason" in a.get("class", "")]


def test_a_reason_all_systems_share_is_said_once_per_row_and_marked_in_each_cell():
    html = rating_tables_section(_with_reasons())
    row = next(r for r in _rows(html) if "WRS company" in r and "<td>P1</td>" in r)
    assert _plain(row).count(REASON_TIED_IDEAL) == 1
    flags = _reason_flags(row)
    assert len(flags) == 1
    assert json.loads(flags[0]["data-where"]) == {
        "metric": "wrs_company",
        "perturbation_id": "P1",
        "run_id": "r1",
        "system_id": ["bad", "good"],
    }
    good, bad = _cells(row)[2:4]
    assert ROW_REASON_MARK in good and ROW_REASON_MARK in bad
    assert f"{ROW_REASON_MARK} every system: {REASON_TIED_IDEAL}" in _plain(_cells(row)[-1])


def test_a_reason_of_one_system_stays_in_its_cell():
    html = rating_tables_section(_with_reasons())
    row = next(r for r in _rows(html) if "WRS industry" in r and "<td>P2</td>" in r)
    good, bad = _cells(row)[2:4]
    assert LONE in _plain(bad) and LONE not in _plain(good) + _plain(_cells(row)[-1])
    assert ROW_REASON_MARK not in row
    assert json.loads(_reason_flags(row)[0]["data-where"])["system_id"] == "bad"
    # rows without a reason carry no mark at all
    others = [r for r in _rows(html) if "<td>P0</td>" in r]
    assert others and not any(ROW_REASON_MARK in r or "rating-reason" in r for r in others)


def test_the_alternative_outcome_tables_say_a_shared_reason_once_too():
    html = rating_tables_section(_with_reasons(outcome_rows=True))
    _, alternative = html.split('data-outcome="relative_max_abs_residual"')
    row = next(r for r in _rows(alternative) if "WRS company" in r and "<td>P1</td>" in r)
    assert _plain(row).count(REASON_TIED_IDEAL) == 1
    (flag,) = _reason_flags(row)
    where = json.loads(flag["data-where"])
    assert where["outcome"] == "relative_max_abs_residual"
    assert where["system_id"] == ["bad", "good"]
    assert row.count(ROW_REASON_MARK) == 3  # two cells and the row's note


def test_a_lone_system_keeps_its_reason_in_its_cell():
    data = two_systems()
    ratings = data.ratings[
        ~((data.ratings["metric"] == "wrs_company") & (data.ratings["system_id"] == "bad"))
    ].copy()
    ratings["rating_reason"] = pd.Series(
        [LONE if m == "wrs_company" else None for m in ratings["metric"]], index=ratings.index
    )
    data.ratings = ratings.reset_index(drop=True)
    html = rating_tables_section(data)
    row = next(r for r in _rows(html) if "WRS company" in r and "<td>P1</td>" in r)
    assert ROW_REASON_MARK not in row and LONE in _plain(_cells(row)[2])
