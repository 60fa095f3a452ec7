"""The report's separation flags, as pure functions over small hand-made frames: scores
that do not separate systems, systems within their spread, null ratings and their reasons,
the scale-free outcome's own table, and the indexed cell lookups the tables rest on (the page shell: tests/unit/test_report_page.py; the report built from a real snapshot:
tests/integration/test_report_marts.py and its neighbours).
"""

from __future__ import annotations

import json
import re

import pandas as pd

from tests.support.report_builders import (
    html_tags,
)
from tests.support.report_frames import ROBUSTNESS, two_systems
from tsrate.robustness.report.render import (
    ReportData,
)

# ----------------------------------------------------------------------------- separation


WRS_FLAT = "does not separate systems on this study: every system at the maximum WRS"
TIED = "all systems tied and the metric has no ideal value: the score does not separate them"


def _flagged_data() -> ReportData:
    """two_systems() with the flags of the marts: WRS company under P0 does not separate systems
    (at the paper's outcome only), the APE company scores under P1 are not separable, and
    MASE under P2 has a null rating with its reason; plus the scale-free outcome's ratings."""
    from tsrate.robustness.report.render import PAPER_OUTCOME

    data = two_systems()
    ratings = data.ratings.copy()
    ratings["rating"] = ratings["rating"].astype("Int64")
    ratings["rating_reason"] = None
    ratings["separable"] = pd.array([pd.NA] * len(ratings), dtype="boolean")
    ratings["separation_reason"] = None
    ape = (ratings["metric"] == "ape_company") & (ratings["perturbation_id"] == "P1")
    ratings.loc[ape, "separable"] = False
    for system, other in (("good", "bad"), ("bad", "good")):
        ratings.loc[ape & (ratings["system_id"] == system), "separation_reason"] = (
            f"not separable from {other}: the scores differ by 2, less than their spread 3"
        )
    mase = (ratings["metric"] == "mase") & (ratings["perturbation_id"] == "P2")
    ratings.loc[mase, "rating"] = pd.NA
    ratings.loc[mase, "rating_reason"] = TIED
    robust = ratings[ratings["metric"].isin(ROBUSTNESS)]
    cells = robust[["metric", "perturbation_id"]].drop_duplicates()
    separation = pd.concat(
        [cells.assign(outcome=PAPER_OUTCOME), cells.assign(outcome="relative_max_abs_residual")]
    )
    separation["separates_systems"] = True
    separation["separation_reason"] = None
    for metric, outcome in (
        ("wrs_company", PAPER_OUTCOME),
        ("wrs_industry", "relative_max_abs_residual"),
    ):
        at = (
            (separation["metric"] == metric)
            & (separation["perturbation_id"] == "P0")
            & (separation["outcome"] == outcome)
        )
        separation.loc[at, ["separates_systems", "separation_reason"]] = [False, WRS_FLAT]
    relative = robust.assign(
        outcome="relative_max_abs_residual", raw_score=robust["raw_score"] / 100
    )
    data.ratings = ratings
    data.separation = separation.reset_index(drop=True)
    data.outcome_ratings = relative.reset_index(drop=True)
    return data


def _rows(html: str) -> list[str]:
    return re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)


def test_scores_that_do_not_separate_systems_are_flagged_at_their_outcome():
    from tsrate.robustness.report.render import PAPER_OUTCOME, rating_tables_section

    html = rating_tables_section(_flagged_data())
    flags = [a for t, a in html_tags(html) if t == "em" and "no-separation" in a.get("class", "")]
    wheres = [json.loads(a["data-where"]) for a in flags]
    # one in the paper's table (WRS company), one in the scale-free one (WRS industry)
    assert [(w["metric"], w["perturbation_id"], w["outcome"]) for w in wheres] == [
        ("wrs_company", "P0", PAPER_OUTCOME),
        ("wrs_industry", "P0", "relative_max_abs_residual"),
    ]
    assert all(a["data-mart"] == "marts.robustness_scores" for a in flags)
    assert all(a["data-column"] == "separates_systems" and a["data-value"] == "0.0" for a in flags)
    assert all(a["data-text-column"] == "separation_reason" for a in flags)
    flagged_rows = [r for r in _rows(html) if WRS_FLAT in r]
    assert len(flagged_rows) == 2
    assert "WRS company" in flagged_rows[0] and "<td>P0</td>" in flagged_rows[0]
    assert "WRS industry" in flagged_rows[1] and "<td>P0</td>" in flagged_rows[1]
    plain = re.sub(r"<[^>]+>", "", html)
    assert f"⊘ {WRS_FLAT}" in plain
    assert "do not separate systems on this study (⊘): 1;" in plain


def test_systems_within_their_spread_are_marked_not_separable():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(_flagged_data())
    paper, scale_free = html.split('data-outcome="relative_max_abs_residual"')
    marks = [a for t, a in html_tags(paper) if t == "em" and "not-separable" in a.get("class", "")]
    assert [json.loads(a["data-where"])["system_id"] for a in marks] == ["good", "bad"]
    assert {json.loads(a["data-where"])["metric"] for a in marks} == {"ape_company"}
    assert not {"outcome"} & {k for a in marks for k in json.loads(a["data-where"])}
    # the scale-free rows carry their own flags, keyed by their outcome
    other = [
        a for t, a in html_tags(scale_free) if t == "em" and "not-separable" in a.get("class", "")
    ]
    assert [json.loads(a["data-where"])["outcome"] for a in other] == [
        "relative_max_abs_residual"
    ] * 2
    assert all(a["data-column"] == "separable" and a["data-value"] == "0.0" for a in marks)
    row = next(r for r in _rows(html) if "APE company" in r and "<td>P1</td>" in r)
    assert "not separable from bad: the scores differ by 2" in row
    assert "not separable from good" in row
    other = next(r for r in _rows(html) if "APE company" in r and "<td>P2</td>" in r)
    assert "not-separable" not in other
    plain = re.sub(r"<[^>]+>", "", html)
    assert (
        "by the spread over treatment draws or the bootstrap interval of the difference (≈): 2;"
        in plain
    )


def test_a_row_whose_score_separates_no_system_says_so_once_not_in_every_cell():
    from tsrate.robustness.report.render import rating_tables_section

    data = _flagged_data()
    ratings = data.ratings
    flat = (ratings["metric"] == "wrs_company") & (ratings["perturbation_id"] == "P0")
    ratings.loc[flat, "separable"] = False  # tied: the bootstrap cannot tell them apart
    ratings.loc[flat, "separation_reason"] = "not separable from bad: tied in every resample"
    html = rating_tables_section(data)
    row = next(r for r in _rows(html) if "WRS company" in r and "<td>P0</td>" in r)
    assert WRS_FLAT in row and "not-separable" not in row and "≈" not in row
    spread = next(r for r in _rows(html) if "APE company" in r and "<td>P1</td>" in r)
    assert spread.count("not-separable") == 2  # a row that separates systems keeps its ≈
    plain = re.sub(r"<[^>]+>", "", html)
    assert "the difference (≈): 4;" in plain  # the mart's count, shown or not
    assert "not repeated in a row marked ⊘" in plain


def test_a_null_rating_shows_its_reason():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(_flagged_data())
    row = next(r for r in _rows(html) if "MASE" in r and "<td>P2</td>" in r)
    assert row.count('<span class="rating none"><span class="num missing">–</span>') == 2
    reasons = [a for t, a in html_tags(row) if t == "em" and "rating-reason" in a.get("class", "")]
    # both systems share the reason: said once for the row, naming both, each cell marked
    assert len(reasons) == 1
    assert all(a["data-text-column"] == "rating_reason" for a in reasons)
    assert json.loads(reasons[0]["data-where"])["system_id"] == ["bad", "good"]
    assert re.sub(r"<[^>]+>", "", row).count(TIED) == 1 and row.count("row-reason") == 2
    assert "rating-reason" not in "".join(r for r in _rows(html) if "MASE" not in r)
    assert "ratings with a rating reason: 2." in re.sub(r"<[^>]+>", "", html)


def test_the_scale_free_outcome_has_its_own_labelled_table():
    from tsrate.robustness.report.render import PAPER_OUTCOME, rating_tables_section

    data = _flagged_data()
    html = rating_tables_section(data)
    paper, scale_free = html.split('data-outcome="relative_max_abs_residual"')
    assert "Robustness — the paper&#x27;s outcome: R^max" in paper
    assert "scale-free outcome: R^max divided by" in scale_free
    spans = [a for t, a in html_tags(scale_free) if t == "span" and a.get("data-mart")]
    raw = [a for a in spans if a["data-column"] == "raw_score"]
    assert len(raw) == len(data.outcome_ratings)
    expected = {
        (r.metric, r.perturbation_id, r.system_id): r.raw_score
        for r in data.outcome_ratings.itertuples()
    }
    for a in raw:
        where = json.loads(a["data-where"])
        assert where["outcome"] == "relative_max_abs_residual"
        key = (where["metric"], where["perturbation_id"], where["system_id"])
        assert float(a["data-value"]) == expected[key]
    assert not [a for a in spans if a["data-mart"] == "marts.rating_stability"]
    # the paper's table is unchanged: its raw scores carry no outcome (read at R^max)
    paper_raw = [
        json.loads(a["data-where"])
        for t, a in html_tags(paper)
        if t == "span" and a.get("data-column") == "raw_score"
    ]
    assert paper_raw and all("outcome" not in w for w in paper_raw)
    assert PAPER_OUTCOME not in {w.get("outcome") for w in paper_raw}


def test_a_report_without_flags_or_other_outcomes_has_none():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(two_systems())
    assert 'class="flag' not in html and "data-outcome" not in html
    plain = re.sub(r"<[^>]+>", "", html)
    assert "(⊘): 0; " in plain and "(≈): 0; " in plain and "rating reason: 0." in plain


# ----------------------------------------------------------------------------- lookups


def test_cell_lookups_find_the_rows_a_boolean_mask_finds():
    """The report's indexed lookup (one index per frame and key columns) returns the first
    row that ``frame[(frame[k] == v) & ...]`` returns, for hits, misses, nulls, duplicates,
    integer keys, and a frame changed after it was indexed (a new frame object)."""
    import random

    from tsrate.robustness.report.render import first_row, float_value

    rng = random.Random(7)
    systems = ["naive", "arima", None, "fracast"]
    frame = pd.DataFrame(
        {
            "system_id": [rng.choice(systems) for _ in range(200)],
            "metric": [rng.choice(["smape", "mase", "wrs_company"]) for _ in range(200)],
            "step": [rng.randint(1, 5) for _ in range(200)],
            "score": [rng.random() if rng.random() > 0.1 else None for _ in range(200)],
        }
    )
    for _ in range(300):
        where = {
            "system_id": rng.choice([*systems[:2], "fracast", "missing"]),
            "metric": rng.choice(["smape", "mase", "wrs_company"]),
            "step": rng.randint(0, 6),
        }
        mask = pd.Series(True, index=frame.index)
        for key, value in where.items():
            mask &= frame[key] == value
        expected = frame.index[mask.to_numpy()]
        got = first_row(frame, where)
        assert got == (int(expected[0]) if len(expected) else None), where
        value = float_value(frame, "score", **where)
        if got is None or pd.isna(frame["score"].iat[got]):
            assert value is None
        else:
            assert value == frame["score"].iat[got]
    changed = frame.iloc[::-1].reset_index(drop=True)
    where = {"system_id": "naive", "metric": "smape", "step": 3}
    mask = (
        (changed["system_id"] == "naive") & (changed["metric"] == "smape") & (changed["step"] == 3)
    )
    hits = changed.index[mask.to_numpy()]
    assert first_row(changed, where) == (int(hits[0]) if len(hits) else None)
    # float keys take the mask path: 1.0 finds the rows the mask finds
    assert first_row(frame, {"step": 1.0}) == int(frame.index[frame["step"] == 1][0])
