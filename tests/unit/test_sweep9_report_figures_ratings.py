"""The report's rating tables (tsrate.robustness.report.ratings: Tables 5-6 with their
bootstrap shares, flags and partial orders, the other outcomes' compact tables, the
study's rated-together note and the flag counts) against hand-made rows: each printed
level, share, interval, flag, arrow and count is worked out from the rows fed in.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_figures.json): a default flag text, a share printed as a
fraction, a confidence read from nowhere, a block of one system, the open/closed rule of
the tables, a flag raised on a true or unknown separability and a miscounted summary each
change a checked string.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tests.support.report_frames import RUN, two_systems
from tsrate.robustness.report import ratings as rt

#: the paper's outcome (marts.robustness_scores.outcome of the R^max rows)
PAPER = "max_abs_residual"


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _separation(rows) -> pd.DataFrame:
    return pd.DataFrame(
        rows,
        columns=["metric", "perturbation_id", "outcome", "separates_systems", "separation_reason"],
    )


def test_the_paper_outcome_constant_is_the_one_the_tests_assume():
    assert rt.PAPER_OUTCOME == PAPER


def test_a_separation_flag_only_for_a_false_flag_with_its_text_or_the_default():
    data = two_systems()
    data.separation = _separation(
        [
            ("wrs_company", "P0", PAPER, False, None),
            ("wrs_industry", "P0", PAPER, None, "unknown"),
            ("ape_industry", "P1", PAPER, True, "separates"),
            ("ape_company", "P1", PAPER, False, "  all at the maximum  "),
        ]
    )
    flag = rt.separation_flag(data, "wrs_company", "P0")
    assert _plain(flag) == "⊘ does not separate systems on this study"
    assert 'data-value="0.0"' in flag and 'data-agg="max"' in flag
    assert _plain(rt.separation_flag(data, "ape_company", "P1")) == "⊘ all at the maximum"
    assert rt.separation_flag(data, "wrs_industry", "P0") == ""  # unknown: no flag
    assert rt.separation_flag(data, "ape_industry", "P1") == ""
    assert rt.separation_flag(data, "pie_company", "P1") == ""  # no row at all
    assert rt.separation_flag(data, "wrs_company", "P0", outcome="other") == ""


def _row(**values):
    base = dict(system_id="s", metric="smape", perturbation_id="P1", rating=2.0,
                rating_levels=3, higher_is_better=False, raw_score=1.5)  # fmt: skip
    return SimpleNamespace(**{**base, **values})


@pytest.mark.parametrize("separable", [True, None, pd.NA, np.nan])
def test_only_a_false_separable_is_marked(separable):
    assert rt.rating_notes(_row(separable=separable, separation_reason="x"), {}) == ""


def test_a_not_separable_mark_without_a_reason_says_so():
    notes = rt.rating_notes(_row(separable=False, separation_reason=None), {"system_id": "s"})
    assert _plain(notes) == "≈ not separable"
    assert 'data-column="separable"' in notes and 'data-value="0.0"' in notes
    blank = rt.rating_notes(_row(rating_reason="   "), {})
    assert blank == ""
    reason = rt.rating_notes(_row(rating_reason="tied"), {})
    assert _plain(reason) == "tied" and reason.startswith("<br>")


def _stability(share: float, rating: int = 2, confidence: float = 0.9) -> pd.DataFrame:
    return pd.DataFrame(
        [dict(metric="smape", perturbation_id="P1", system_id="s", rating=rating,
              ci_low=1.25, ci_high=2.5, share=share, confidence=confidence)]
    )  # fmt: skip


def test_a_rating_cell_prints_its_share_in_whole_percent_rounded_down():
    data = two_systems()
    data.stability = _stability(0.599)
    cell = rt.rating_cell(data, _row(), {"run_id": RUN})
    # 0.599 -> 59 % (under 60 %: shaky); the interval [1.25 - 2.50]
    assert _plain(cell) == "2 1.50 [ 1.25 – 2.50 ] 59 % ⚠"
    assert 'class="share shaky"' in cell and 'data-format="percent"' in cell
    data.stability = _stability(0.6)
    assert _plain(rt.rating_cell(data, _row(), {"run_id": RUN})).endswith("60 %")


def test_a_rating_cell_without_its_stability_row_shows_a_dash():
    data = two_systems()
    data.stability = _stability(0.7).assign(system_id="other")
    cell = rt.rating_cell(data, _row(separable=False, separation_reason="close"), {})
    assert _plain(cell) == "2 1.50 – ≈ close"
    assert 'title="no rating_stability row"' in cell


def test_the_tables_state_the_confidence_of_the_stability_mart():
    data = two_systems()
    data.stability = _stability(0.5, confidence=0.9).assign(system_id="good")
    html = rt.rating_tables_section(data)
    assert "its 90% bootstrap interval" in html
    # one stability row (good, SMAPE, P1), share 0.5: shaky
    assert "1 of 1</b> rating is shaky" in html
    assert "its 95% bootstrap interval" in rt.rating_tables_section(two_systems())


def test_a_block_of_one_system_still_gets_its_arrow():
    """Sign accuracy (higher is better) under P2 rated for good only: ↑, and SMAPE ↓."""
    data = two_systems()
    ratings = data.ratings
    data.ratings = ratings[
        ~((ratings["metric"] == "sign_accuracy") & (ratings["system_id"] == "bad"))
    ].reset_index(drop=True)
    html = rt.rating_tables_section(data)
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    sign = [r for r in rows if "Sign accuracy" in r]
    assert len(sign) == 3 and all("Sign accuracy % ↑" in r for r in sign)
    assert all(_plain(r).endswith("good") for r in sign)  # the partial order: good alone
    assert any("SMAPE ↓" in r for r in rows)


def _systems_data(n: int):
    names = [f"s{i}" for i in range(n)]
    ratings = pd.DataFrame(
        [
            dict(run_id=RUN, metric="smape", perturbation_id="P1", system_id=s, raw_score=float(i),
                 rank=i + 1, rating=i + 1, rating_levels=n, higher_is_better=False)
            for i, s in enumerate(names)
        ]
    )  # fmt: skip
    systems = pd.DataFrame({"system_id": names})
    return two_systems(ratings=ratings, systems=systems)


def test_the_main_tables_are_open_whatever_the_number_of_systems():
    for n in (1, 4, 5, 12):
        html = rt.rating_tables_section(_systems_data(n))
        assert "<details open>" in html and "<details>" not in html, n
    assert "s0 &lt; s1 &lt; s2 &lt; s3 &lt; s4" in rt.rating_tables_section(_systems_data(5))


def test_the_rated_together_note_edges():
    columns = {"study_id": [], "system_id": [], "n_systems": []}
    assert rt.rated_together_note(pd.DataFrame(columns)) == ""
    same = pd.DataFrame({"study_id": "st", "system_id": ["a", "b"], "n_systems": [2, 2]})
    note = rt.rated_together_note(same)
    assert "2 systems rated together" in note and "rate fewer" not in note
    bare = rt.rated_together_note(same.drop(columns="n_systems"))
    assert "(a, b)" in bare and "rate fewer" not in bare


def test_the_flag_counts_read_only_the_paper_outcome_rated_cells_and_false_flags():
    data = two_systems()
    ratings = data.ratings.copy()
    smape = ratings["metric"] == "smape"
    ratings["separable"] = pd.array([pd.NA] * len(ratings), dtype="boolean")
    ratings.loc[smape & (ratings["perturbation_id"] == "P1"), "separable"] = False  # 2 rows
    ratings.loc[smape & (ratings["perturbation_id"] == "P2"), "separable"] = True
    ratings["rating_reason"] = None
    ratings.loc[smape & (ratings["perturbation_id"] == "P0"), "rating_reason"] = ["x", " "]
    data.ratings = ratings
    data.separation = _separation(
        [
            ("wrs_company", "P0", PAPER, False, None),  # counted
            ("wrs_company", "P1", PAPER, True, None),
            ("wrs_industry", "P0", "other", False, None),  # other outcomes
            ("ape_industry", "P1", "other", False, None),
            ("pie_company", "P1", PAPER, False, None),  # not rated
        ]
    )
    plain = _plain(rt.separation_summary(data))
    assert "(⊘): 1 ;" in plain and "(≈): 2 ;" in plain and "rating reason: 1 ." in plain


def _outcomes() -> pd.DataFrame:
    """Two other outcomes: 'wql' (WRS company P1 for good and 'zeta', a system the paper's
    tables do not rate) and 'coverage_error_80' (only SMAPE, not a robustness metric)."""
    return pd.DataFrame(
        [
            dict(outcome="wql", metric="wrs_company", perturbation_id="P1", system_id=s,
                 raw_score=v, rank=r, rating=r, rating_levels=2, higher_is_better=False)
            for s, v, r in (("zeta", 0.5, 1), ("good", 0.7, 2))
        ]
        + [
            dict(outcome="coverage_error_80", metric="smape", perturbation_id="P1",
                 system_id="good", raw_score=1.0, rank=1, rating=1, rating_levels=2,
                 higher_is_better=False)
        ]
    )  # fmt: skip


def test_other_outcomes_list_extra_systems_last_and_skip_an_outcome_without_robustness_rows():
    data = two_systems()
    data.outcome_ratings = _outcomes()
    html = rt.outcome_ratings_block(data)
    assert re.findall(r'data-outcome="([^"]*)"', html) == ["wql"]
    header = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    assert re.findall(r"<code>(.*?)</code>", header) == ["good", "bad", "zeta"]
    (row,) = re.findall(r"<tbody><tr>(.*?)</tr>", html, re.S)
    cells = [_plain(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
    assert cells == ["WRS company ↓", "P1", "2 0.7", "–", "1 0.5", "zeta &lt; good"]
    where = json.loads(re.search(r'data-where="([^"]*)"', row).group(1).replace("&quot;", '"'))
    assert where["outcome"] == "wql" and where["system_id"] == "good"
