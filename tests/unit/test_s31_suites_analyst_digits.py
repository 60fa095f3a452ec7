"""The understanding suite's offline answerers (the statistical analyst, the random
answerer) answer numeric questions with the value as the prompt printed it, at the prompt's
decimals: with ``:g`` (6 significant digits) a series above 1,000 printed at 3 decimals was
answered rounded and judged wrong although the analyst read it exactly.

The questions themselves are judged on what the model was shown (the expected value and
dates come from the printed values, ties at the printed precision all accepted): checked
here on a tie that exists only at the printed precision."""

from __future__ import annotations

import datetime as dt

from tests.support.understanding_samples import trend_sample
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst
from tsrate.suites.understanding.scoring import parse_answer, score_answer
from tsrate.suites.understanding.tasks import build_prompts

#: 20 days 1000.1234, 1001.1234, ... (printed 1000.123, 1001.123, ...: 7 digits each), day 6
#: (2020-01-06) raised to 1305.6789
VALUES = [1000.1234 + k for k in range(20)]
VALUES[5] = 1305.6789


def _prompts(values, decimals):
    sample = trend_sample(values, seed=1, sub_feature="linear_up", description="")
    pool = {"trend": [sample]}
    tasks = ("retrieval", "arithmetic_min", "arithmetic_max")
    return {p.task: p for p in build_prompts(sample, ("csv",), decimals, pool, tasks=tasks)}


def test_the_analyst_answers_the_printed_extremes_at_three_decimals():
    prompts = _prompts(VALUES, 3)
    analyst = StatisticalAnalyst()
    # by hand: the maximum 1305.6789 prints as 1305.679 on day 6, the minimum 1000.1234 as
    # 1000.123 on day 1 (":g" gave 1305.68 and 1000.12)
    assert analyst.answer(prompts["arithmetic_max"]) == "1305.679 on 2020-01-06"
    assert analyst.answer(prompts["arithmetic_min"]) == "1000.123 on 2020-01-01"
    for task in ("arithmetic_max", "arithmetic_min", "retrieval"):
        prompt = prompts[task]
        parsed = parse_answer(task, analyst.answer(prompt), prompt.options)
        assert score_answer(task, prompt.expected, parsed, 3)["correct"], task


def test_the_analyst_answers_retrieval_with_the_printed_value():
    prompt = _prompts(VALUES, 3)["retrieval"]
    asked = prompt.expected["date"]
    day = (dt.date.fromisoformat(asked) - dt.date(2020, 1, 1)).days
    printed = f"{VALUES[day]:.3f}"
    assert len(printed.replace(".", "")) == 7 and not printed.endswith("0")  # 7 digits shown
    assert StatisticalAnalyst().answer(prompt) == printed


def test_the_random_answerer_answers_a_value_it_was_shown():
    prompts = _prompts(VALUES, 3)
    shown = {f"{v:.3f}" for v in VALUES}
    reply = RandomAnswerer(seed=4).answer(prompts["retrieval"])
    assert reply in shown
    value, _, day = RandomAnswerer(seed=4).answer(prompts["arithmetic_max"]).partition(" on ")
    assert value in shown and dt.date.fromisoformat(day)


def test_a_tie_at_the_printed_precision_accepts_every_tied_date():
    # 5.004 and 5.0049 both print as 5.00 at 2 decimals: the unrounded maximum is day 3,
    # but a model shown "5.00" twice may name day 2 or day 3
    values = [1.0, 5.004, 5.0049, 2.0, 3.0, 4.0, 1.5, 2.5]
    prompt = _prompts(values, 2)["arithmetic_max"]
    assert prompt.expected["value"] == 5.0
    assert prompt.expected["dates"] == ["2020-01-02", "2020-01-03"]
    for reply in ("5.00 on 2020-01-02", "5.00 on 2020-01-03"):
        parsed = parse_answer("arithmetic_max", reply)
        score = score_answer("arithmetic_max", prompt.expected, parsed, 2)
        assert score["correct"] and score["date_correct"], reply
    # the analyst reads the printed values: it names the first tied day
    assert StatisticalAnalyst().answer(prompt) == "5.00 on 2020-01-02"
