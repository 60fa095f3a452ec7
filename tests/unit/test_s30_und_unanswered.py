"""und_scores keeps an unanswered prompt apart from an unparseable reply.

``n_unparsed`` is documented as the stored replies the strict parser could not read; it used
to count every unusable answer, so a run that ended early (prompts with no stored reply)
showed its unanswered prompts as unparseable ones. Now ``n_unanswered`` counts those, and
the report's unusable counts are the sum of the two, each named.

Hand-worked cell (system s, detection, trend, csv, zero-shot; truth yes on every prompt):
p1 answered ``yes`` (right), p2 answered but unparseable, p3 no reply stored. n_prompts 3,
n_unparsed 1, n_unanswered 1, coverage 1/3, accuracy 1/3. A chain-of-thought cell of the
same system: p4 answered right, p5 unanswered -> n_unparsed 0, n_unanswered 1.
"""

from __future__ import annotations

import json
import re

import duckdb
import pandas as pd
import pytest

from tsrate.suites.understanding import report as rep
from tsrate.suites.understanding.marts import score_table, task_scores


def _answer(key, prompting, answered, parse_ok, answer):
    return {
        "suite_run_id": "run",
        "prompt_key": key,
        "series_key": f"series-{key}",
        "prompting": prompting,
        "system_id": "s",
        "dataset": "trend",
        "task": "detection",
        "feature": "trend",
        "format": "csv",
        "decimals": 2,
        "expected": json.dumps({"answer": "yes"}),
        "quadrant": None,
        "series_length": 40,
        "answered": answered,
        "parse_ok": parse_ok,
        "parse_error": None
        if parse_ok
        else ("no reply stored for this prompt" if not answered else "no yes/no"),
        "answer": answer,
        "answer_value": None,
        "answer_date": None,
    }


ANSWERS = pd.DataFrame(
    [
        _answer("p1", "zero_shot", True, True, "yes"),
        _answer("p2", "zero_shot", True, False, None),
        _answer("p3", "zero_shot", False, False, None),
        _answer("p4", "cot", True, True, "yes"),
        _answer("p5", "cot", False, False, None),
    ]
)
OPTIONS = pd.DataFrame(
    {"prompt_key": [f"p{i}" for i in range(1, 6)], "options": [["yes", "no"]] * 5}
)


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    return task_scores(score_table(ANSWERS), OPTIONS)


def test_unanswered_prompts_are_not_counted_as_unparseable(scores):
    cell = scores.set_index("prompting").loc["zero_shot"]
    assert (cell["n_prompts"], cell["n_unparsed"], cell["n_unanswered"]) == (3, 1, 1)
    assert cell["coverage"] == pytest.approx(1 / 3)
    assert cell["accuracy"] == pytest.approx(1 / 3)
    cot = scores.set_index("prompting").loc["cot"]
    assert (cot["n_prompts"], cot["n_unparsed"], cot["n_unanswered"]) == (2, 0, 1)
    assert cot["coverage"] == pytest.approx(0.5)


def test_scored_answers_carry_whether_a_reply_was_stored():
    scored = score_table(ANSWERS).set_index("prompt_key")
    assert scored["answered"].to_dict() == {
        "p1": True, "p2": True, "p3": False, "p4": True, "p5": False,
    }  # fmt: skip


def test_a_frame_without_the_answered_column_counts_every_failure_as_unparseable():
    """Callers that pass no ``answered`` (every row held a reply) keep their counts."""
    scores = task_scores(score_table(ANSWERS.drop(columns="answered")), OPTIONS)
    cell = scores.set_index("prompting").loc["zero_shot"]
    assert (cell["n_unparsed"], cell["n_unanswered"]) == (2, 0)


def _report(tmp_path, scores: pd.DataFrame) -> str:
    warehouse = tmp_path / "tsrate.duckdb"
    con = duckdb.connect(str(warehouse))
    try:
        con.execute("create schema marts")
        con.register("s", scores)
        con.execute("create table marts.und_scores as select * from s")
    finally:
        con.close()
    return rep.write_report(warehouse, tmp_path / "report.html").read_text(encoding="utf-8")


def test_the_report_names_unparseable_and_unanswered_apart(tmp_path, scores):
    """Every answer counts: zero-shot s has 2 unusable answers of 3 (1 unparseable, 1
    unanswered), chain-of-thought s 1 of 2 (0 unparseable, 1 unanswered); the zero-shot
    against chain-of-thought table counts 2 / 3 and 1 / 2 unusable."""
    text = _report(tmp_path, scores)
    assert "<li>s: 2 of 3 answers unusable (1 unparseable, 0 abstained, 1 unanswered)</li>" in text
    assert (
        "<li>s · cot: 1 of 2 answers unusable (0 unparseable, 0 abstained, 1 unanswered)</li>"
        in text
    )
    row = re.search(r"<tr><td>s</td><td>detection</td><td>f1</td>.*?</tr>", text).group(0)
    assert row.endswith("<td>2 / 3</td><td>1 / 2</td></tr>")
