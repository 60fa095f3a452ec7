"""A system whose every reply is unusable, on the default ``--sample`` (16 questions, zero
shot and chain of thought, 1-3 questions per cell): scored as wrong everywhere, so it never
gets a better rating than a system that beats it on the raw score, ties say so, and the
report's verdict cannot put it above the chance reference.

(The packaged Gemma had every reply unusable in one run; its *mean rating* over every metric
was above und_random's: rating 1 is the lowest raw score whatever the direction, so an
average of ratings over accuracy metrics (higher is better) and MAPE metrics (lower is
better) mixes directions. The checks below are per (prompting, metric, feature) group and on
the direction-aware goodness the verdict uses, recomputed here from the raw scores.)"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.rating import suite_spec
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst
from tsrate.suites.understanding.marts import rating_table, score_table, task_scores
from tsrate.suites.understanding.scoring import parse_reply
from tsrate.suites.understanding.suite import (
    generate_all,
    plan_prompts,
    resolve_config,
    sample_prompts,
)
from tsrate.suites.verdict import goodness, system_scores

HIGHER_IS_BETTER = suite_spec("understanding")["higher_is_better"].to_dict()
LEVELS = 3


@pytest.fixture(scope="module")
def rated():
    config = resolve_config("small", {"promptings": ["zero_shot", "cot"]})
    prompts = plan_prompts(config, generate_all(config))
    chosen = sample_prompts(prompts, 16, config.data_seed)
    analyst, random = StatisticalAnalyst(), RandomAnswerer(0)
    replies = {
        "und_analyst": [analyst.answer(p) for p in chosen],
        "und_random": [random.answer(p) for p in chosen],
        # what an unusable language model writes: it restates the question
        "garbage": ["Question: what is the answer? The answer is the question." for _ in chosen],
    }
    rows = []
    for system, texts in replies.items():
        for p, text in zip(chosen, texts, strict=True):
            parsed = parse_reply(p.task, text, p.options, p.prompting)
            rows.append(
                {
                    "suite_run_id": "run",
                    "prompt_key": p.prompt_key,
                    "series_key": p.series_key,
                    "system_id": system,
                    "dataset": p.dataset,
                    "task": p.task,
                    "feature": p.feature,
                    "format": p.format,
                    "prompting": p.prompting,
                    "decimals": p.decimals,
                    "expected": json.dumps(p.expected),
                    "quadrant": p.quadrant,
                    "series_length": p.length,
                    "parse_ok": parsed.ok,
                    "parse_error": parsed.error,
                    "answer": parsed.answer,
                    "answer_value": parsed.value,
                    "answer_date": parsed.date,
                }
            )
    answers = pd.DataFrame(rows)
    options = pd.DataFrame(
        {"prompt_key": [p.prompt_key for p in chosen], "options": [list(p.options) for p in chosen]}
    )
    scores = task_scores(score_table(answers), options)
    return chosen, scores, rating_table(scores, LEVELS)


def _goodness_by_hand(rating: float, higher: bool) -> float:
    up = (rating - 1) / (LEVELS - 1)
    return up if higher else 1 - up


def test_every_unusable_reply_is_counted(rated):
    chosen, scores, _ = rated
    mine = scores[scores["system_id"] == "garbage"]
    assert set(mine["prompting"]) == {"zero_shot", "cot"}
    assert (mine["coverage"] == 0).all() and (mine["accuracy"] == 0).all()
    assert mine["n_unparsed"].sum() == len(chosen) == 32


def test_a_better_raw_score_never_gets_a_worse_rating(rated):
    _, _, ratings = rated
    seen = 0
    for key, block in ratings.groupby(["prompting", "metric", "feature"]):
        block = block.dropna(subset=["rating"])
        higher = HIGHER_IS_BETTER[key[1]]
        good = {
            r.system_id: (r.raw_score if higher else -r.raw_score,
                          _goodness_by_hand(float(r.rating), higher))
            for r in block.itertuples()
        }  # fmt: skip
        for a, (raw_a, good_a) in good.items():
            for b, (raw_b, good_b) in good.items():
                if raw_a > raw_b:
                    assert good_a >= good_b, (key, a, b)
                if raw_a == raw_b:
                    assert good_a == good_b, (key, a, b)
        if "garbage" in good:
            seen += 1
            worst = min(good_g for _, good_g in good.values())
            assert good["garbage"][1] == worst, key
    assert seen >= 8


def test_tied_or_lone_groups_say_so_and_the_unusable_system_is_never_best(rated):
    _, _, ratings = rated
    for key, block in ratings.groupby(["prompting", "metric", "feature"]):
        if block["raw_score"].nunique() == 1:
            assert block["rating_reason"].notna().all(), key  # the tie is named
            assert block["rating_reason"].str.contains("tied|only one").all(), key
        if "garbage" in set(block["system_id"]) and len(block) > 1:
            mine = block[block["system_id"] == "garbage"].iloc[0]
            others = block[block["system_id"] != "garbage"]
            higher = HIGHER_IS_BETTER[key[1]]
            if higher:
                assert (mine.raw_score <= others["raw_score"]).all(), key
            else:
                assert (mine.raw_score >= others["raw_score"]).all(), key


def test_the_verdict_puts_the_unusable_system_last(rated):
    _, _, ratings = rated
    frame = ratings.assign(goodness=goodness(ratings)).dropna(subset=["goodness"])
    by_hand = {
        s: np.mean([_goodness_by_hand(float(r), HIGHER_IS_BETTER[m])
                    for r, m in zip(block["rating"], block["metric"], strict=True)])
        for s, block in frame.groupby("system_id")
    }  # fmt: skip
    scores = system_scores(ratings).set_index("system_id")["mean_goodness"]
    for system, value in by_hand.items():
        assert scores[system] == pytest.approx(value)
    # the worst level wherever its group fills every level (fewer distinct scores leave the
    # worst end empty, in either direction), and never better than the middle
    full = frame.groupby(["prompting", "metric", "feature"])["raw_score"].transform("nunique")
    mine = frame[(frame["system_id"] == "garbage") & (full >= frame["rating_levels"])]
    assert len(mine) and (mine["goodness"] == 0).all()
    assert 0 <= scores["garbage"] <= 0.5
    assert scores["garbage"] < scores["und_random"] < scores["und_analyst"]
    assert system_scores(ratings)["system_id"].iloc[-1] == "garbage"
