"""The packaged Gemma answers the understanding suite's questions in each task's form only,
on a tiny Gemma made in the tests: a closed question (yes/no, labels, letters) over its
admissible answers, so every such reply parses with the suite's unchanged strict parser; a
numeric one over its regular form ("12.34", "12.34 on 2020-01-31"), so a reply parses
unless the model ran to the cap; the rule is in the answerer's fingerprint."""

from __future__ import annotations

import pytest

from tests.support.tiny_models import CountingConverter
from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.suite import (
    NUMERIC_FORMS,
    ZERO_SHOT_NEW_TOKENS,
    LanguageModelAnswerer,
    answer_form,
    closed_answers,
    generate_all,
    plan_prompts,
    resolve_config,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def prompts():
    config = resolve_config(
        "small",
        {"train": 1, "validation": 1, "test": 1, "position_per_cell": 1,
         "promptings": ["zero_shot", "cot"], "formats": ["csv"], "position_formats": ["csv"]},
    )  # fmt: skip
    return plan_prompts(config, generate_all(config))


def test_closed_answers_are_every_spelling_the_parser_reads_as_an_option(prompts):
    tasks = set()
    for p in prompts:
        answers = closed_answers(p)
        if p.task in ("retrieval", "arithmetic_min", "arithmetic_max"):
            assert answers is None
            continue
        tasks.add(p.task)
        truth = {"detection": {"yes", "no"}, "search": {"yes", "no"},
                 "classification": set(p.options)}.get(p.task, {"A", "B", "C", "D"})  # fmt: skip
        read = {parse_answer(p.task, a, p.options).answer for a in answers}
        assert read == truth, p.task  # every admissible answer, nothing else
        for a in answers:
            assert parse_answer(p.task, a, p.options).ok
    assert {"detection", "search", "classification", "matching_cross"} <= tasks
    # the parser still refuses what it refused: a reply that restates the question
    assert not parse_answer("detection", "Question: is there a trend?").ok


@pytest.fixture
def answerer(tmp_path, monkeypatch):
    """hf_local:gemma3_270m as the suites open it, its cached checkpoint a tiny Gemma."""
    from tsrate.systems import gemma

    if gemma.missing_packages():
        pytest.skip(f"needs {gemma.missing_packages()}")
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "8")
    monkeypatch.setenv("TSRATE_HF_DEVICE", "cpu")
    gemma.ensure_checkpoint(gemma.packaged_sha256(), CountingConverter())
    return LanguageModelAnswerer("hf_local:gemma3_270m")


def test_closed_replies_always_parse_and_numeric_ones_keep_their_form(prompts, answerer):
    import regex

    short = sorted(prompts, key=lambda p: len(p.text))
    chosen = []
    for task in ("detection", "classification", "retrieval", "matching_cross", "arithmetic_max"):
        for prompting in ("zero_shot", "cot"):
            chosen += [p for p in short if p.task == task and p.prompting == prompting][:1]
    assert len(chosen) >= 8
    replies = answerer.answer_all(chosen)
    tokenizer = answerer.model._tokenizer
    numeric = 0
    for p, reply in zip(chosen, replies, strict=True):
        parsed = parse_reply(p.task, reply, p.options, p.prompting)
        answer = reply
        if p.prompting == "cot":
            assert "\nAnswer:" in reply or reply.startswith("Answer:")
            answer = reply[reply.rindex("Answer:") + len("Answer:") :]
        if closed_answers(p) is not None:
            assert parsed.ok, (p.task, p.prompting, reply)
            assert answer in answer_form(p)
            continue
        numeric += 1
        form = NUMERIC_FORMS[p.task]
        assert regex.fullmatch(form, answer, partial=True), (p.task, answer)
        n_tokens = len(tokenizer(answer, add_special_tokens=False)["input_ids"])
        whole = bool(regex.fullmatch(form, answer))
        assert whole or n_tokens == ZERO_SHOT_NEW_TOKENS, (p.task, answer)
        if whole and p.task == "retrieval":
            assert parsed.ok
    assert numeric >= 3
    assert ";closed=greedy-over-admissible-answers;numbers=pattern" in answerer.fingerprint()
