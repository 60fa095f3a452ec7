"""Suite metrics no other test read, each against an independent computation.

int_rsn_responses_scored's ``is_correct`` (a choice reply is right when the option it names
is the item's answer; an unparseable or missing reply is wrong; forecasts have none) and the
accuracies and Wilson bounds built on it: a real offline reasoning run, to which scripted
systems are added in the raw tables, each reply written as a model would spell it and parsed
by the suite's own parser (``tsrate.suites.reasoning.tasks.parse_choice``), as the flow
stores replies. What each reply is worth is known here by construction (the letter written
is the answer's, the next one's, or none) and, for the random answerer's stored replies,
read from the letter of the raw text (A = option 0). Then the reasoning marts are rebuilt
and read.

interp_sensitivity's ``relative_error_per_variance`` (and the columns it is made of) has a
hand-computed dbt unit case in models/interpretability/marts/interp_sensitivity.yml, run by
tests/integration/test_planted_suite_sql.py.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd
import pytest

from tests.support.reasoning_scripted import add_scripted_replies
from tests.support.warehouses import read
from tsrate.platform import dbt_runner as dbt
from tsrate.suites import SUITES
from tsrate.suites.reasoning.tasks import ReplyParseError, parse_choice

pytestmark = pytest.mark.slow

TINY = {"seed": 11, "scenarios": 8, "forecasts": 4, "length": 60}
RUN_ENV = SUITES["reasoning"].run_env
REBUILD = ["build", "--select", "+rsn_accuracy", "+rsn_task_accuracy"]
#: how a scripted system spells the letter it means (cycled over its prompts): the parser
#: reads each of these as that letter, whatever the case and the spaces around it
SPELLINGS = ("{L}", " {l} ", "({L})", "{l}.", "The answer is {l}.", "Answer: {L}", "{L}. as stated")
#: scripted systems -> the option their reply names, from the answer and the number of
#: options (None: a reply naming no option; "silent": no reply stored at all)
SCRIPTED = {
    "oracle": lambda answer, n: answer,
    "next_letter": lambda answer, n: (answer + 1) % n,
    "prev_letter": lambda answer, n: (answer - 1) % n,
    "garbled": lambda answer, n: None,
    "silent": lambda answer, n: "silent",
}


def spelled(option: int, k: int) -> str:
    letter = string.ascii_uppercase[option]
    return SPELLINGS[k % len(SPELLINGS)].format(L=letter, l=letter.lower())


def add_scripted_systems(warehouse) -> pd.DataFrame:
    """Copy each choice prompt of the random answerer to every :data:`SCRIPTED` system, in
    the same suite run, with the reply it scripts parsed by the suite's parser; return the
    expected rows (prompt_hash, system_id, task, answered, parse_ok, is_correct)."""
    expected = []

    def reply(k: int, prompt) -> dict | None:  # noqa: ANN001 - the prompt's copy
        option = SCRIPTED[prompt.system_id](int(prompt.answer_index), int(prompt.n_options))
        expected.append(
            {
                "prompt_hash": prompt.prompt_hash,
                "system_id": prompt.system_id,
                "task": prompt.task,
                "answered": option != "silent",
                "parse_ok": option not in (None, "silent"),
                "is_correct": option == prompt.answer_index,
            }
        )
        if option == "silent":
            return None
        text = "I cannot tell from this." if option is None else spelled(option, k)
        try:
            choice, error = parse_choice(text, int(prompt.n_options)), None
        except ReplyParseError as exc:
            choice, error = None, str(exc)
        return {
            "raw_text": text,
            "parsed_choice": choice,
            "parse_ok": error is None,
            "parse_error": error,
        }

    add_scripted_replies(warehouse, SCRIPTED, reply, {"task": "i.task"})
    return pd.DataFrame(expected)


@pytest.fixture(scope="module")
def scored(tmp_path_factory, prefect_harness, dbt_target):
    """A built offline reasoning run with the scripted systems added and the marts rebuilt:
    (warehouse, the expected scripted rows)."""
    from flows.reasoning import reasoning_flow
    from tsrate.platform.warehouse import connect

    warehouse = tmp_path_factory.mktemp("reasoning_gaps") / "tsrate.duckdb"
    with connect(warehouse):
        pass
    reasoning_flow(generator=TINY, fracast=0, warehouse=str(warehouse), target_path=str(dbt_target))
    expected = add_scripted_systems(warehouse)
    dbt.run_dbt(REBUILD, None, warehouse, None, dbt_target, {RUN_ENV: "latest"})
    return warehouse, expected


def random_expected(warehouse) -> pd.DataFrame:
    """The random answerer's stored replies judged from their raw text alone: the reply is
    one option letter (A = option 0), right when it is the answer's."""
    raw = read(
        warehouse,
        "select r.prompt_hash, r.raw_text, i.answer_index, i.task "
        "from raw.rsn_responses r join raw.rsn_prompts p using (prompt_hash) "
        "join raw.rsn_items i using (item_id) where p.system_id = 'random' "
        "and i.task <> 'forecast'",
    )
    letters = raw["raw_text"].str.strip().str.upper()
    assert letters.str.fullmatch("[A-Z]").all(), raw["raw_text"].unique()
    option = letters.map(lambda letter: ord(letter) - ord("A"))
    return pd.DataFrame(
        {
            "prompt_hash": raw["prompt_hash"],
            "system_id": "random",
            "task": raw["task"],
            "answered": True,
            "parse_ok": True,
            "is_correct": option == raw["answer_index"],
        }
    )


def test_is_correct_is_the_named_option_being_the_answer(scored):
    warehouse, scripted = scored
    expected = pd.concat([scripted, random_expected(warehouse)], ignore_index=True)
    got = read(
        warehouse,
        "select prompt_hash, system_id, task, is_answered, parse_ok, is_correct "
        "from intermediate.int_rsn_responses_scored",
    )
    # forecasts are not choices: no is_correct at all
    forecasts = got[got["task"] == "forecast"]
    assert len(forecasts) > 0 and forecasts["is_correct"].isna().all()
    choices = got[got["task"] != "forecast"].set_index("prompt_hash")
    assert sorted(choices.index) == sorted(expected["prompt_hash"])
    expected = expected.set_index("prompt_hash").loc[choices.index]
    assert choices["is_answered"].tolist() == expected["answered"].tolist()
    assert choices["parse_ok"].tolist() == expected["parse_ok"].tolist()
    # true or false for every choice prompt (a missing reply is false, not null)
    assert choices["is_correct"].notna().all()
    wrong = choices["is_correct"].astype(bool) != expected["is_correct"]
    assert not wrong.any(), choices[wrong].join(expected, rsuffix="_expected").head(10)
    # the scripted systems are right always, never, never, never, never
    share = expected.groupby("system_id")["is_correct"].mean()
    assert share["oracle"] == 1 and share.drop(["oracle", "random"]).eq(0).all()
    assert 0 < share["random"] < 1  # the random answerer's mix is the real check


def test_task_accuracy_and_wilson_bounds_from_the_expected_replies(scored):
    from statsmodels.stats.proportion import proportion_confint

    warehouse, scripted = scored
    expected = pd.concat([scripted, random_expected(warehouse)], ignore_index=True)
    conditions = read(
        warehouse, "select prompt_hash, condition from intermediate.int_rsn_responses_scored"
    )
    expected = expected.merge(conditions, on="prompt_hash")
    with_series = expected[expected["condition"] == "with_series"]
    counts = with_series.groupby(["task", "system_id"]).agg(
        n=("is_correct", "size"),
        k=("is_correct", "sum"),
        unanswered=("answered", lambda a: int((~a).sum())),
        unparseable=("parse_ok", lambda ok: int((~ok).sum())),
    )
    counts["unparseable"] -= counts["unanswered"]  # unparseable: answered, but no option
    mart = read(warehouse, "select * from marts.rsn_task_accuracy").set_index(["task", "system_id"])
    assert sorted(mart.index) == sorted(counts.index)
    mart = mart.loc[counts.index]
    assert mart["n_items"].tolist() == counts["n"].tolist()
    assert mart["n_unanswered"].tolist() == counts["unanswered"].tolist()
    assert mart["n_unparseable"].tolist() == counts["unparseable"].tolist()
    np.testing.assert_allclose(mart["accuracy"], counts["k"] / counts["n"], rtol=0, atol=1e-15)
    ends = np.array(
        [
            proportion_confint(k, n, method="wilson")
            for k, n in zip(counts["k"], counts["n"], strict=True)
        ]
    )
    np.testing.assert_allclose(
        mart[["accuracy_ci_low", "accuracy_ci_high"]].to_numpy(float), ends, rtol=0, atol=1e-12
    )
    # generated items are one per scenario and task: the series counted are the items
    # (design effect 1), so the series-counted interval above is the plain one
    assert mart["n_series"].tolist() == counts["n"].tolist()
    assert (mart["design_effect"] == 1.0).all()
    # all right: the upper end is 1 exactly; none right: the lower end is 0 exactly
    oracle = mart.xs("oracle", level="system_id")
    assert (oracle["accuracy_ci_high"] == 1).all() and (oracle["accuracy_ci_low"] < 1).all()
    never = mart.xs("next_letter", level="system_id")
    assert (never["accuracy_ci_low"] == 0).all() and (never["accuracy_ci_high"] > 0).all()


def test_category_accuracy_wilson_bounds_from_the_expected_replies(scored):
    from statsmodels.stats.proportion import proportion_confint

    warehouse, scripted = scored
    expected = pd.concat([scripted, random_expected(warehouse)], ignore_index=True)
    keys = read(
        warehouse,
        "select prompt_hash, condition, category from intermediate.int_rsn_responses_scored",
    )
    expected = expected.merge(keys, on="prompt_hash")
    with_series = expected[expected["condition"] == "with_series"]
    counts = with_series.groupby(["task", "category", "system_id"])["is_correct"].agg(
        ["size", "sum"]
    )
    mart = read(warehouse, "select * from marts.rsn_accuracy").set_index(
        ["task", "category", "system_id"]
    )
    assert sorted(mart.index) == sorted(counts.index)
    mart = mart.loc[counts.index]
    assert mart["n_items"].tolist() == counts["size"].tolist()
    np.testing.assert_allclose(mart["accuracy"], counts["sum"] / counts["size"], atol=1e-15)
    ends = np.array(
        [
            proportion_confint(k, n, method="wilson")
            for k, n in zip(counts["sum"], counts["size"], strict=True)
        ]
    )
    np.testing.assert_allclose(
        mart[["accuracy_ci_low", "accuracy_ci_high"]].to_numpy(float), ends, rtol=0, atol=1e-12
    )
