"""The packaged Gemma answers the understanding suite's closed questions (yes/no, labels,
letters) over their admissible answers only, on a tiny Gemma made in the tests: every
such reply parses with the suite's unchanged strict parser, the numeric tasks stay free
text, and the rule is in the answerer's fingerprint."""

from __future__ import annotations

import pytest

from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.suite import (
    LanguageModelAnswerer,
    closed_answers,
    generate_all,
    plan_prompts,
    resolve_config,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.unit.test_gemma import CountingConverter  # noqa: E402


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


def test_closed_replies_always_parse_and_numeric_ones_stay_free(prompts, answerer):
    short = sorted(prompts, key=lambda p: len(p.text))
    chosen = []
    for task in ("detection", "classification", "retrieval", "matching_cross", "arithmetic_max"):
        for prompting in ("zero_shot", "cot"):
            chosen += [p for p in short if p.task == task and p.prompting == prompting][:1]
    assert len(chosen) >= 8
    replies = answerer.answer_all(chosen)
    model = answerer.model
    free = [p for p in chosen if closed_answers(p) is None]
    for p, reply in zip(chosen, replies, strict=True):
        parsed = parse_reply(p.task, reply, p.options, p.prompting)
        if closed_answers(p) is not None:
            assert parsed.ok, (p.task, p.prompting, reply)
            if p.prompting == "cot":
                assert "\nAnswer:" in reply or reply.startswith("Answer:")
    # the numeric tasks: the model's free greedy reply, capped as before
    for prompting in ("zero_shot", "cot"):
        rows = [p for p in free if p.prompting == prompting]
        cap = 32 if prompting == "zero_shot" else None
        expected = model.complete_all([p.chat() for p in rows], max_new_tokens=cap)
        got = [replies[chosen.index(p)] for p in rows]
        assert got == expected
    assert ";closed=greedy-over-admissible-answers" in answerer.fingerprint()
