"""``tsrate suite understanding run --sample N``: a stratified sample of questions, every
feature and task present, each question in every prompting style, the same for every
system (so a slow language model and the references answer the same questions)."""

from __future__ import annotations

import argparse
from collections import Counter

import pytest

from tsrate import TsrateError
from tsrate.suites.understanding import cli
from tsrate.suites.understanding.suite import (
    generate_all,
    plan_prompts,
    question_key,
    resolve_config,
    sample_prompts,
)


@pytest.fixture(scope="module")
def prompts():
    config = resolve_config(
        "small",
        {
            "train": 2,
            "validation": 1,
            "test": 2,
            "position_per_cell": 1,
            "promptings": ["zero_shot", "cot"],
        },
    )
    return plan_prompts(config, generate_all(config))


def _questions(chosen):
    return {question_key(p) for p in chosen}


def test_a_sample_holds_every_feature_and_task_in_both_promptings(prompts):
    chosen = sample_prompts(prompts, 20, seed=1)
    assert len(_questions(chosen)) == 20
    assert {p.feature for p in chosen} == {p.feature for p in prompts}
    assert {p.task for p in chosen} == {p.task for p in prompts}
    # every chosen question is asked zero-shot and with chain of thought, nothing else
    by_question = Counter(question_key(p) for p in chosen)
    assert set(by_question.values()) == {2}
    assert Counter(p.prompting for p in chosen) == {"zero_shot": 20, "cot": 20}
    # a subset of the plan, in the plan's order
    keys = [p.prompt_key for p in prompts]
    positions = [keys.index(p.prompt_key) for p in chosen]
    assert positions == sorted(positions)


def test_the_draw_is_seeded(prompts):
    first = [p.prompt_key for p in sample_prompts(prompts, 20, seed=1)]
    assert first == [p.prompt_key for p in sample_prompts(prompts, 20, seed=1)]
    assert first != [p.prompt_key for p in sample_prompts(prompts, 20, seed=2)]


def test_after_the_cover_every_cell_gets_a_question_in_turn(prompts):
    cells = {(p.feature, p.task) for p in prompts}
    # the cover takes at most one question per feature (tasks come with them)
    features = {p.feature for p in prompts}
    chosen = sample_prompts(prompts, len(features) + len(cells), seed=3)
    counts = Counter((p.feature, p.task) for p in chosen if p.prompting == "zero_shot")
    assert set(counts) == cells
    # stratified, not proportional: no cell holds more than two of its questions
    assert max(counts.values()) <= 2


def test_a_sample_too_small_for_every_feature_is_refused(prompts):
    features = len({p.feature for p in prompts})
    with pytest.raises(
        TsrateError, match=r"cannot hold every feature and task: give --sample (\d+)"
    ):
        sample_prompts(prompts, features - 1, seed=0)


def test_a_sample_as_large_as_the_plan_is_the_plan(prompts):
    questions = len(_questions(prompts))
    assert sample_prompts(prompts, questions, seed=0) == list(prompts)


def test_the_option_and_its_default():
    parser = argparse.ArgumentParser()
    cli.add_run_arguments(parser)
    assert cli.overrides_from_args(parser.parse_args(["--sample"]))["sample"] == cli.DEFAULT_SAMPLE
    assert cli.overrides_from_args(parser.parse_args(["--sample", "40"]))["sample"] == 40
    assert "sample" not in cli.overrides_from_args(parser.parse_args([]))
    with pytest.raises(SystemExit):
        parser.parse_args(["--sample", "0"])
    with pytest.raises(TsrateError, match="sample must be 0"):
        resolve_config("small", {"sample": -1})


def test_a_local_models_zero_shot_replies_are_capped_and_chain_of_thought_is_not(
    tmp_path, monkeypatch, prompts
):
    """A local model pays for every token on a CPU: zero-shot answers (the answer alone) get
    at most ZERO_SHOT_NEW_TOKENS, chain of thought the model's setting; the cap is part of
    the fingerprint, so stored answers of another cap are not reused."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import GARBAGE, save_bigram_model
    from tsrate.suites.understanding.suite import ZERO_SHOT_NEW_TOKENS, LanguageModelAnswerer

    save_bigram_model(tmp_path / "garbage", GARBAGE)  # writes 'x' for ever: never stops early
    monkeypatch.setenv("TSRATE_TINY_GARBAGE_MODEL_PATH", str(tmp_path / "garbage"))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "50")
    answerer = LanguageModelAnswerer("hf_local:tiny_garbage")
    question = question_key(prompts[0])
    pair = [p for p in prompts if question_key(p) == question]
    cot_first = sorted(pair, key=lambda p: p.prompting)  # cot, then zero_shot
    replies = answerer.answer_all(cot_first)
    # one character per token: 50 for chain of thought, the cap for zero-shot, in order
    assert [len(r) for r in replies] == [50, ZERO_SHOT_NEW_TOKENS]
    assert set("".join(replies)) == {"x"}
    assert f"zero_shot_new_tokens={ZERO_SHOT_NEW_TOKENS}" in answerer.fingerprint()


def test_the_default_sample_is_the_fewest_that_hold_the_default_configuration():
    config = resolve_config("small", {"promptings": ["zero_shot", "cot"]})
    plan = plan_prompts(config, generate_all(config))
    chosen = sample_prompts(plan, cli.DEFAULT_SAMPLE, config.data_seed)
    assert {p.feature for p in chosen} == {p.feature for p in plan}
    assert {p.task for p in chosen} == {p.task for p in plan}
    with pytest.raises(TsrateError, match=f"give --sample {cli.DEFAULT_SAMPLE} or more"):
        sample_prompts(plan, cli.DEFAULT_SAMPLE - 1, config.data_seed)
