"""Answer-blind rules on the understanding suite's own closed questions (the prompts
``plan_prompts`` builds with the default seeds): a rule that reads only the options or the
question must not beat chance.

Every expectation is computed here, independently of the suite: rule accuracies against
a one-sided binomial bound."""

from __future__ import annotations

import collections
import dataclasses
import functools

import numpy as np
import pytest
from scipy.stats import binomtest, chisquare

from tsrate.suites.understanding import suite

CLOSED = ("detection", "classification", "matching_intra", "matching_cross", "search")
#: a rule "beats chance" when a one-sided binomial test rejects chance at this level
BOUND = 1e-3


@functools.cache
def closed_prompts() -> dict[str, list]:
    """The suite's own closed questions, default seeds, csv: 40 series per feature dataset,
    10 per position cell (a few hundred questions per task)."""
    config = dataclasses.replace(
        suite.SMALL, test=40, formats=("csv",), position_per_cell=10, tasks=CLOSED
    )
    by_task = collections.defaultdict(list)
    for prompt in suite.plan_prompts(config, suite.generate_all(config)):
        by_task[prompt.task].append(prompt)
    return dict(by_task)


def option_texts(prompt) -> list[str]:
    """The options as the prompt prints them (matching: the descriptions after the letter;
    classification: "label: definition"; yes/no questions: the two words)."""
    if prompt.task.startswith("matching"):
        block = prompt.text.split("best?\n", 1)[1].split("\nAnswer with", 1)[0]
        return [line[3:] for line in block.split("\n")]
    if prompt.task == "classification":
        block = prompt.text.split("definitions:\n", 1)[1].split("\nAnswer with", 1)[0]
        return [line[2:] for line in block.split("\n")]
    return list(prompt.options)


def beats_chance(hits: list[bool], chance: float) -> bool:
    return binomtest(int(sum(hits)), len(hits), chance, alternative="greater").pvalue < BOUND


def option_rules(prompts) -> dict[str, list[bool]]:
    """Rules that read only the options: a position, a text length, the most frequent key
    position (learnt on one half of the questions, applied to the other)."""
    keys = [p.options.index(p.expected["answer"]) for p in prompts]
    lengths = [[len(t) for t in option_texts(p)] for p in prompts]
    half = len(prompts) // 2
    learnt = collections.Counter(keys[:half]).most_common(1)[0][0]
    relearnt = collections.Counter(keys[half:]).most_common(1)[0][0]
    return {
        "first": [k == 0 for k in keys],
        "last": [k == len(p.options) - 1 for k, p in zip(keys, prompts, strict=True)],
        "middle": [k == len(p.options) // 2 for k, p in zip(keys, prompts, strict=True)],
        "longest": [k == int(np.argmax(n)) for k, n in zip(keys, lengths, strict=True)],
        "shortest": [k == int(np.argmin(n)) for k, n in zip(keys, lengths, strict=True)],
        "most frequent position": [k == relearnt for k in keys[:half]]
        + [k == learnt for k in keys[half:]],
    }


@pytest.mark.parametrize("task", ["classification", "matching_intra", "matching_cross", "search"])
def test_no_option_only_rule_beats_chance(task):
    prompts = closed_prompts()[task]
    assert len(prompts) >= 200
    chance = float(np.mean([1 / len(p.options) for p in prompts]))
    for name, hits in option_rules(prompts).items():
        assert not beats_chance(hits, chance), (task, name, np.mean(hits), chance)
    if task.startswith("matching"):  # the key's letter is uniform over A-D
        letters = collections.Counter(p.expected["answer"] for p in prompts)
        assert chisquare([letters[x] for x in "ABCD"]).pvalue >= BOUND, letters


def test_cross_matching_options_share_subject_and_carry_no_numbers():
    """Without the series nothing marks the key: every option speaks of one series in the
    same words ("This time series ..."), and none holds a digit (qualitative only)."""
    for prompt in closed_prompts()["matching_cross"]:
        texts = option_texts(prompt)
        assert all(t.startswith("This time series ") for t in texts), texts
        assert not any(ch.isdigit() for t in texts for ch in t), texts
        assert len(set(texts)) == 4, texts


def test_search_value_and_question_do_not_give_the_answer():
    """The searched value's printed form (last digit, length) tells nothing: half the
    questions are about a printed value, and a rule on the value's text is at chance."""
    prompts = closed_prompts()["search"]
    truths = [p.expected["answer"] for p in prompts]
    assert collections.Counter(truths)["yes"] * 2 == len(prompts)
    values = [p.text.split("Does the value ")[1].split(" appear")[0] for p in prompts]
    for name, says in {
        "even last digit": [int(v[-1]) % 2 == 0 for v in values],
        "last digit 0 or 5": [v[-1] in "05" for v in values],
        "six characters or more": [len(v) >= 6 for v in values],
    }.items():
        for yes_when in (True, False):
            hits = [(s == yes_when) == (t == "yes") for s, t in zip(says, truths, strict=True)]
            assert not beats_chance(hits, 0.5), (name, yes_when, np.mean(hits))
