"""An abstention ("None of these") is its own count in the understanding marts and report.

n_unparsed used to count a reply that declined every option together with replies the
parser could not read, so an analyst could not tell a system that refused to choose from
one whose reply was garbage. Now und_scores.n_abstained counts the abstentions, n_unparsed
only the unreadable replies and n_unanswered the prompts without a stored reply; the scores
(accuracy, F1, coverage) are those of before: an abstention stays unusable and wrong.

Hand-worked classification cell (system s, zero-shot, labels upward / downward / flat):
p1 truth upward, reply "upward" (right); p2 truth downward, "None of these" (abstains);
p3 truth flat, "purple" (names no option); p4 truth upward, no reply stored; p5 truth
downward, "downward" (right). n_prompts 5, n_unparsed 1, n_abstained 1, n_unanswered 1,
coverage 2/5, accuracy 2/5, macro F1 (2/3 + 2/3 + 0) / 3 = 4/9 (sklearn below).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from tsrate.suites.understanding import report as rep
from tsrate.suites.understanding.marts import score_table, task_scores
from tsrate.suites.understanding.scoring import parse_answer, parse_reply

ROOT = Path(__file__).resolve().parents[2]
LABELS = ("upward", "downward", "flat")
CELL = [  # prompt, truth, reply (None: no reply stored)
    ("p1", "upward", "upward"),
    ("p2", "downward", "None of these"),
    ("p3", "flat", "purple"),
    ("p4", "upward", None),
    ("p5", "downward", "downward"),
]


def _answers() -> pd.DataFrame:
    rows = []
    for key, truth, reply in CELL:
        parsed = parse_answer("classification", reply, LABELS) if reply is not None else None
        rows.append(
            {
                "suite_run_id": "run",
                "prompt_key": key,
                "series_key": f"series-{key}",
                "prompting": "zero_shot",
                "system_id": "s",
                "dataset": "trend",
                "task": "classification",
                "feature": "trend",
                "format": "csv",
                "decimals": 2,
                "expected": json.dumps({"answer": truth}),
                "quadrant": None,
                "series_length": 40,
                "answered": reply is not None,
                "parse_ok": bool(parsed and parsed.ok),
                "parse_error": parsed.error if parsed else "no reply stored for this prompt",
                # the parser's own flag (int_und_answers_selected reads it from the reason)
                "abstained": bool(parsed and parsed.abstained),
                "answer": parsed.answer if parsed else None,
                "answer_value": None,
                "answer_date": None,
            }  # fmt: skip
        )
    return pd.DataFrame(rows)


OPTIONS = pd.DataFrame({"prompt_key": [k for k, _, _ in CELL], "options": [list(LABELS)] * 5})


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    return task_scores(score_table(_answers()), OPTIONS)


def test_an_abstention_is_counted_apart_from_unparseable_and_unanswered(scores):
    cell = scores.iloc[0]
    assert len(scores) == 1
    counts = ("n_prompts", "n_unparsed", "n_abstained", "n_unanswered")
    assert tuple(int(cell[c]) for c in counts) == (5, 1, 1, 1)
    assert cell["coverage"] == pytest.approx(2 / 5)
    assert cell["accuracy"] == pytest.approx(2 / 5)
    truth = [t for _, t, _ in CELL]
    predicted = ["upward", "<abstained>", "<unparseable>", "<unanswered>", "downward"]
    expected_f1 = f1_score(truth, predicted, labels=list(LABELS), average="macro")
    assert expected_f1 == pytest.approx(4 / 9)
    assert cell["f1"] == pytest.approx(expected_f1)


def test_the_scores_are_those_of_before_the_count(scores):
    # the same answers without the flag (how every abstention was counted before): every
    # score is unchanged, and the old n_unparsed is the new n_unparsed + n_abstained
    before = task_scores(score_table(_answers().drop(columns="abstained")), OPTIONS).iloc[0]
    now = scores.iloc[0]
    for column in ("coverage", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "f1",
                   "f1_ci_low", "f1_ci_high", "accuracy_two_step"):  # fmt: skip
        assert now[column] == pytest.approx(before[column]), column
    assert int(before["n_unparsed"]) == int(now["n_unparsed"]) + int(now["n_abstained"]) == 2
    assert int(before["n_abstained"]) == 0


def test_the_sql_flag_reads_the_parsers_abstentions_and_nothing_else():
    """int_und_answers_selected marks a reply abstained by its stored reason: run its
    predicate in DuckDB over the reasons the parser gives (zero-shot and chain-of-thought)
    and compare with the parser's own flag."""
    sql = (ROOT / "models/understanding/intermediate/int_und_answers_selected.sql").read_text()
    pattern = re.search(r"responses\.parse_error like ('[^']*')", sql).group(1)
    replies = ["None of these", "none of the above.", "Answer: None of the options", "none",
               "purple", "upward, downward", "", "The trend is unclear.\nAnswer: none of them",
               "It could be anything.\nAnswer: purple", "No answer line at all"]  # fmt: skip
    parsed = [parse_answer("classification", r, (*LABELS, "none")) for r in replies[:7]]
    parsed += [parse_reply("classification", r, LABELS, "cot") for r in replies[7:]]
    assert [p.abstained for p in parsed] == [True, True, True, False, False, False, False,
                                              True, False, False]  # fmt: skip
    with duckdb.connect() as con:
        flags = [
            con.execute(f"select not ? and ? like {pattern}", [p.ok, p.error]).fetchone()[0]
            for p in parsed
        ]
    assert [bool(f) for f in flags] == [p.abstained for p in parsed]


def _report(tmp_path, scores: pd.DataFrame) -> str:
    warehouse = tmp_path / "tsrate.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
        con.register("s", scores)
        con.execute("create table marts.und_scores as select * from s")
    return rep.write_report(warehouse, tmp_path / "report.html").read_text(encoding="utf-8")


def test_the_report_names_the_abstentions(tmp_path, scores):
    text = _report(tmp_path, scores)
    assert "<li>s: 3 of 5 answers unusable (1 unparseable, 1 abstained, 1 unanswered)</li>" in text
    assert "n_abstained (a reply that declined every option" in text


def test_an_older_snapshot_without_the_count_reads_its_unparsed_as_before(tmp_path, scores):
    # published before n_abstained existed: n_unparsed held the abstentions too
    old = scores.assign(n_unparsed=scores["n_unparsed"] + scores["n_abstained"])
    text = _report(tmp_path, old.drop(columns="n_abstained"))
    assert "<li>s: 3 of 5 answers unusable (2 unparseable, 1 unanswered)</li>" in text


def test_the_prompting_comparison_counts_the_abstentions_unusable(scores):
    # the same cell asked with a chain of thought: both columns count 3 unusable of 5
    both = pd.concat([scores, scores.assign(prompting="cot")], ignore_index=True)
    row = re.search(
        r"<tr><td>s</td><td>classification</td>.*?</tr>", rep.prompting_table_html(both)
    )
    assert row.group(0).endswith("<td>3 / 5</td><td>3 / 5</td></tr>")
