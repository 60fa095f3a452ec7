"""The understanding suite's language-model answerer (tsrate.suites.understanding.suite.
LanguageModelAnswerer) on tiny local models made in the tests: a local (``hf_local``) model's
zero-shot replies are capped at ZERO_SHOT_NEW_TOKENS (32) and its chain-of-thought replies
keep the model's setting, in the prompts' order; the fingerprint is the model's own plus
exactly the cap, and for the packaged Gemma (which decodes in an answer's form) the closed
decoding rule too.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json).
"""

from __future__ import annotations

import pytest

from tests.support.tiny_models import GARBAGE, CountingConverter, save_bigram_model
from tsrate.suites.understanding.suite import (
    LanguageModelAnswerer,
    generate_all,
    plan_prompts,
    resolve_config,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")


def _prompts():
    config = resolve_config(
        "small",
        {"train": 1, "validation": 1, "test": 1, "position_per_cell": 1, "formats": ["csv"],
         "datasets": ["outlier"], "promptings": ["zero_shot", "cot"]},
    )  # fmt: skip
    return plan_prompts(config, generate_all(config))


def test_a_local_models_zero_shot_replies_are_capped_at_32_tokens(tmp_path, monkeypatch) -> None:
    save_bigram_model(tmp_path / "garbage", GARBAGE)  # 'x' for ever: one token a character
    monkeypatch.setenv("TSRATE_TINY_GARBAGE_MODEL_PATH", str(tmp_path / "garbage"))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "34")
    monkeypatch.setenv("TSRATE_HF_DEVICE", "cpu")
    answerer = LanguageModelAnswerer("hf_local:tiny_garbage")
    assert answerer.capped and not answerer.closed
    assert answerer.fingerprint() == answerer.model.fingerprint() + ";zero_shot_new_tokens=32"
    prompts = _prompts()
    zero = [p for p in prompts if p.prompting == "zero_shot"][:2]
    cot = [p for p in prompts if p.prompting == "cot"][:1]
    chosen = [zero[0], cot[0], zero[1]]  # mixed: replies come back in the prompts' order
    replies = answerer.answer_all(chosen)
    assert [len(r) for r in replies] == [32, 34, 32]
    assert set("".join(replies)) == {"x"}


def test_the_packaged_gemma_names_its_cap_and_closed_decoding(tmp_path, monkeypatch) -> None:
    from tsrate.systems import gemma

    if gemma.missing_packages():
        pytest.skip(f"needs {gemma.missing_packages()}")
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_HF_DEVICE", "cpu")
    gemma.ensure_checkpoint(gemma.packaged_sha256(), CountingConverter())
    answerer = LanguageModelAnswerer("hf_local:gemma3_270m")
    assert answerer.capped and answerer.closed
    assert answerer.fingerprint() == (
        answerer.model.fingerprint()
        + ";zero_shot_new_tokens=32"
        + f";closed={gemma.CHOICE_DECODING}"
    )


def test_the_packaged_gemma_reasons_only_for_chain_of_thought(tmp_path, monkeypatch) -> None:
    """A closed question asked zero-shot and with chain of thought in one call: the zero-shot
    reply is one admissible answer alone, the chain-of-thought reply ends in an
    ``Answer:`` line with one."""
    from tsrate.suites.understanding.suite import answer_form
    from tsrate.systems import gemma

    if gemma.missing_packages():
        pytest.skip(f"needs {gemma.missing_packages()}")
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_HF_DEVICE", "cpu")
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "6")
    gemma.ensure_checkpoint(gemma.packaged_sha256(), CountingConverter())
    answerer = LanguageModelAnswerer("hf_local:gemma3_270m")
    prompts = [p for p in _prompts() if p.task == "search"]
    zero = next(p for p in prompts if p.prompting == "zero_shot")
    cot = next(p for p in prompts if p.prompting == "cot")
    replies = answerer.answer_all([cot, zero])
    assert replies[1] in answer_form(zero)
    assert "Answer:" in replies[0] and "Answer:" not in replies[1]
    assert replies[0][replies[0].rindex("Answer:") + len("Answer:") :] in answer_form(cot)
