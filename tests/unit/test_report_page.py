"""The page shell, the human column names and the suite verdict (pure functions)."""

from __future__ import annotations

import pandas as pd

from tsrate.html.page import frame_table, human, page
from tsrate.suites.verdict import goodness, system_scores, verdict_html


def test_human_headers_read_as_words():
    assert human("share_at_rating") == "Share at rating"
    assert human("mae_ci_low") == "MAE CI low"
    assert human("system_id") == "System"
    assert human("accuracy_pct") == "Accuracy %"
    assert human("mse_gain") == "MSE gain" and human("wql") == "WQL"


def test_frame_table_shows_null_as_empty_and_escapes():
    html = frame_table(pd.DataFrame({"system_id": ["<a>", "b"], "raw_score": [0.123456, None]}))
    assert "<th>System</th><th>Raw score</th>" in html
    assert "&lt;a&gt;" in html and "<td>0.123</td>" in html and "<td></td>" in html
    assert "nan" not in html.lower().replace("nan(", "")


def test_page_inlines_the_chart_libraries_only_when_there_is_a_chart():
    plain = page("t", "T", ["<p>x</p>"])
    assert "vegaEmbed(" in plain  # the render script is tiny and always there
    assert len(plain) < 10_000  # but no 0.9 MB bundle for a page without charts
    from tsrate.html.charts import figure

    charted = page("t", "T", [figure("c", {"mark": "bar", "data": {"values": []}}, "")])
    assert len(charted) > 500_000 and "<script src" not in charted


def test_goodness_is_zero_at_the_worst_level_and_one_at_the_best():
    ratings = pd.DataFrame(
        {
            "system_id": ["a", "b", "a", "b"],
            "rating": [1, 3, 1, 3],
            "rating_levels": [3, 3, 3, 3],
            "higher_is_better": [False, False, True, True],
        }
    )
    # lower is better: rating 1 is the best level; higher is better: rating 3 is
    assert goodness(ratings).tolist() == [1.0, 0.0, 0.0, 1.0]
    scores = system_scores(ratings).set_index("system_id")
    assert scores.loc["a", "mean_goodness"] == scores.loc["b", "mean_goodness"] == 0.5


def test_suite_verdict_names_best_worst_gap_and_shaky_counts():
    ratings = pd.DataFrame(
        {
            "system_id": ["good", "bad", "good", "bad"],
            "rating": [1, 3, 1, 2],
            "rating_levels": [3, 3, 3, 3],
            "higher_is_better": [False, False, False, False],
            "share_at_rating": [0.9, 0.5, 0.55, 0.95],
        }
    )
    html = verdict_html(ratings, "the tasks", "x")
    assert "<b>good</b> does best" in html and "<b>bad</b> worst" in html
    # good: goodness 1, 1 -> 100 %; bad: 0, 0.5 -> 25 %; 75 points apart
    assert 'data-derived="gap" data-value="75.0"' in html
    assert 'data-derived="leader_shaky" data-value="1.0"' in html
    assert 'data-derived="shaky" data-value="2.0"' in html
    assert "No rated scores" in verdict_html(pd.DataFrame(), "the tasks", "x")


def test_suite_verdict_names_systems_that_tie_together():
    """Equal mean goodness is a tie: both leaders named, their shaky ratings counted
    together (a check that the verdict does not crown the first by name)."""
    ratings = pd.DataFrame(
        {
            "system_id": ["b_good", "a_good", "bad", "b_good", "a_good", "bad"],
            "rating": [1, 1, 3, 1, 1, 2],
            "rating_levels": [3] * 6,
            "higher_is_better": [False] * 6,
            "share_at_rating": [0.5, 0.9, 0.9, 0.9, 0.9, 0.9],
        }
    )
    html = verdict_html(ratings, "the tasks", "x")
    assert "<b>a_good</b> and <b>b_good</b> tie for best" in html and "does best" not in html
    assert "<b>bad</b> worst" in html
    assert 'data-derived="leader_shaky" data-value="1.0"' in html
    assert 'data-derived="leader_ratings" data-value="4.0"' in html
    assert "a_good 0 of 2, b_good 1 of 2;" in html


def test_suite_verdict_says_when_the_ratings_do_not_separate_the_systems():
    ratings = pd.DataFrame(
        {
            "system_id": ["a", "b"],
            "rating": [2, 2],
            "rating_levels": [3, 3],
            "higher_is_better": [False, False],
        }
    )
    html = verdict_html(ratings, "the tasks", "x")
    assert "have the same mean goodness" in html and "do not separate them" in html
    assert "does best" not in html and "tie for best" not in html
