"""The understanding report reads a snapshot published before the ``prompting`` column.

Such a snapshot's marts have no ``prompting`` (every answer was zero-shot then), no
``n_unanswered`` (its ``n_unparsed`` counted every unusable answer) and no interval of the
rated scores (``ci_low`` / ``ci_high``). The report's queries named ``prompting`` and its
reads swallowed the errors, so position bias, length curves, confusion matrices, ratings,
rated scores, unusable answers and the verdict all read "none" although the data was there.

The marts below carry the columns they had at the commit that added ``prompting`` (the YAML
of its parent), with hand-made values: alpha and und_random, detection of trend in csv.
"""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import pytest

from tsrate.suites.understanding.report import write_report

RUN = "u-old"


def _scores() -> pd.DataFrame:
    def row(system, n_unparsed, accuracy, f1):
        return dict(
            suite_run_id=RUN, system_id=system, task="detection", feature="trend", format="csv",
            n_prompts=40, n_unparsed=n_unparsed, coverage=1 - n_unparsed / 40,
            accuracy=accuracy, accuracy_ci_low=accuracy - 0.1, accuracy_ci_high=accuracy + 0.1,
            f1=f1, f1_ci_low=f1 - 0.1, f1_ci_high=f1 + 0.1, mape=None, mape_ci_low=None,
            mape_ci_high=None, mape_parsed=None, date_accuracy=None, accuracy_two_step=None,
        )  # fmt: skip

    return pd.DataFrame([row("alpha", 4, 0.9, 0.85), row("und_random", 0, 0.5, 0.45)])


def _mart(columns: str, rows: list[tuple], **same) -> pd.DataFrame:
    """An old mart with ``columns`` (space-separated) in that order: suite_run_id is RUN, each
    column named in ``same`` holds that value in every row, and the others take each row's
    values in order."""
    names = columns.split()
    varying = [c for c in names if c != "suite_run_id" and c not in same]
    frame = pd.DataFrame([dict(zip(varying, row, strict=True)) for row in rows], columns=varying)
    return frame.assign(suite_run_id=RUN, **same)[names]


def _marts() -> dict[str, pd.DataFrame]:
    ratings = pd.DataFrame(
        [
            dict(suite_run_id=RUN, metric="detection_f1", feature="trend", system_id=s,
                 raw_score=v, rating=r, rating_levels=3, higher_is_better=True, rank=k,
                 rating_reason=None, n_systems=2)
            for s, v, r, k in (("alpha", 0.85, 3, 1), ("und_random", 0.45, 1, 2))
        ]
    )  # fmt: skip
    stability = ratings[["suite_run_id", "metric", "feature", "system_id", "raw_score"]].assign(
        rating=ratings["rating"], rating_levels=3, rating_reason=None,
        share_at_rating=[0.97, 0.91], n_resamples=200, n_prompts=40,
    )  # fmt: skip
    return {
        "und_scores": _scores(),
        "und_format_table": _mart(
            "suite_run_id system_id format task metric score n_features n_prompts n_unparsed",
            [("alpha", 0.85, 4), ("und_random", 0.45, 0)],
            format="csv",
            task="detection",
            metric="f1",
            n_features=1,
            n_prompts=40,
        ),  # fmt: skip
        "und_position_bias": _mart(
            "suite_run_id system_id dataset task quadrant n_prompts n_correct accuracy_pct "
            "accuracy_ci_low_pct accuracy_ci_high_pct accuracy_elsewhere_pct p_value p_holm "
            "min_prompts_to_judge judgeable position_bias",
            [(q, c, 100 * c / 30) for q, c in ((1, 12), (2, 18))],
            system_id="alpha",
            dataset="outlier",
            task="retrieval",
            n_prompts=30,
            accuracy_ci_low_pct=10.0,
            accuracy_ci_high_pct=90.0,
            accuracy_elsewhere_pct=50.0,
            p_value=0.5,
            p_holm=0.75,
            min_prompts_to_judge=12,
            judgeable=True,
            position_bias=False,
        ),  # fmt: skip
        "und_ratings": ratings,
        "und_rating_stability": stability,
        "und_confusion_matrix": _mart(
            "suite_run_id system_id task feature truth predicted n_prompts",
            [("yes", "yes", 17), ("yes", "no", 3), ("no", "no", 20)],
            system_id="alpha",
            task="detection",
            feature="trend",
        ),  # fmt: skip
        "und_length_curves": pd.DataFrame(
            [
                dict(
                    suite_run_id=RUN,
                    system_id="alpha",
                    task="retrieval",
                    dataset="trend",
                    format="csv",
                    length_bin_start=30,
                    length_bin_end=59,
                    n_prompts=20,
                    n_unparsed=1,
                    accuracy=0.75,
                    mape=5.0,
                )
            ]
        ),  # fmt: skip
    }


def _snapshot(path, marts: dict[str, pd.DataFrame]) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema marts")
        for name, frame in marts.items():
            con.register("frame", frame)
            con.execute(f"create table marts.{name} as select * from frame")
            con.unregister("frame")
    finally:
        con.close()


def _report(tmp_path, marts) -> str:
    warehouse = tmp_path / "published.duckdb"
    _snapshot(warehouse, marts)
    return write_report(warehouse, tmp_path / "understanding.html").read_text(encoding="utf-8")


@pytest.fixture
def old_report(tmp_path) -> str:
    return _report(tmp_path, _marts())


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("<h2>", 1)[0]


def test_no_section_of_an_old_snapshot_reads_none(old_report):
    assert "<p>none</p>" not in old_report
    assert "Not shown" not in old_report


def test_every_section_shows_the_old_snapshots_data(old_report):
    text = old_report
    # unusable answers: the old n_unparsed is the total, with no split it cannot know
    assert "<li>alpha: 4 of 40 answers unusable</li>" in text
    bias = _section(text, "<h2>Position bias")
    assert bias.count("<td>alpha</td><td>outlier</td><td>retrieval</td>") == 2
    assert "<td>40.0 [10.0, 90.0]</td><td>0.75</td><td>no evidence</td>" in bias
    curves = _section(text, "<h2>Accuracy by series length")
    assert "<td>retrieval</td><td>alpha</td><td>30-59</td><td>0.75</td>" in curves
    confusion = _section(text, "<h2>Confusion matrices")
    assert "<h4>alpha · detection · trend</h4>" in confusion
    assert "<tr><th>yes</th><td>3</td><td>17</td></tr>" in confusion  # truth yes: no, yes
    ratings = _section(text, "<h2>Ratings")
    assert "detection_f1" in ratings and "0.97" in ratings
    assert re.search(r"<td>detection_f1</td><td>trend</td><td>alpha</td><td>0.85</td>", ratings)
    chance = _section(text, "<h2>Against chance")
    assert "<td>alpha</td><td>detection</td><td>40</td><td>0.90" in chance


def test_the_old_snapshot_rated_scores_say_their_interval_is_missing(old_report):
    ratings = _section(old_report, "<h2>Ratings")
    assert "(not in this snapshot)" in ratings and "(undefined)" not in ratings
    assert "rebuild it with <code>tsrate suite understanding build</code>" in ratings


def test_the_verdict_reads_the_old_ratings(old_report):
    verdict = old_report.split('<section id="verdict">', 1)[1].split("</section>", 1)[0]
    text = re.sub(r"<[^>]+>", "", verdict)
    assert "alpha" in text and "und_random" in text


def test_a_section_the_snapshot_cannot_serve_names_the_mart_and_the_rebuild(tmp_path):
    """A mart missing from a snapshot that holds scores, and a mart lacking a column its
    section reads: each section says so in one line, never "none"."""
    marts = _marts()
    del marts["und_length_curves"]
    marts["und_position_bias"] = marts["und_position_bias"].drop(columns="accuracy_pct")
    text = _report(tmp_path, marts)
    curves = _section(text, "<h2>Accuracy by series length")
    assert "marts.und_length_curves is not in this snapshot" in curves
    bias = _section(text, "<h2>Position bias")
    assert "marts.und_position_bias in this snapshot cannot be read" in bias
    assert "accuracy_pct" in bias
    for part in (curves, bias):
        assert "<code>tsrate suite understanding build</code>" in part
        assert "<p>none</p>" not in part


def test_a_snapshot_without_the_suite_says_none_without_a_rebuild_note(tmp_path):
    text = _report(tmp_path, {})
    assert "Not shown" not in text and "<p>none</p>" in text
