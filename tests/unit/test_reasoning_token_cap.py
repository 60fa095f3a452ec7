"""A local model's choice replies in the reasoning suite are capped at CHOICE_NEW_TOKENS
("Answer with the letter of one option only"); forecasts keep the model's setting; the cap
is part of the answerer's fingerprint. An endpoint model is not capped."""

from __future__ import annotations

import pytest

from tests.support.tiny_models import GARBAGE, save_bigram_model
from tsrate.suites.reasoning.answerers import (
    CHOICE_NEW_TOKENS,
    LanguageModelAnswerer,
    takes_token_cap,
)
from tsrate.suites.reasoning.scenarios import GeneratorConfig, generate_items
from tsrate.systems.language import open_language_model

pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_choice_replies_are_capped_and_forecasts_are_not(tmp_path, monkeypatch):
    save_bigram_model(tmp_path / "garbage", GARBAGE)  # writes 'x' for ever: never stops early
    monkeypatch.setenv("TSRATE_TINY_GARBAGE_MODEL_PATH", str(tmp_path / "garbage"))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "40")
    answerer = LanguageModelAnswerer(open_language_model("hf_local:tiny_garbage"))
    items = generate_items(GeneratorConfig(seed=11, scenarios=4, forecasts=1, length=40))
    requests = answerer.requests(items)
    forecast = next(r for r in requests if r.item.task == "forecast")
    choice = next(r for r in requests if r.item.task == "etiological")
    responses = answerer.answer([forecast, choice])  # mixed: each keeps its own cap
    # one character per token
    assert [len(r.raw_text) for r in responses] == [40, CHOICE_NEW_TOKENS]
    assert not any(r.parse_ok for r in responses)  # 'xxx': unparseable, kept
    assert f"choice_new_tokens={CHOICE_NEW_TOKENS}" in answerer.fingerprint()


def test_an_endpoint_model_is_not_capped(monkeypatch):
    monkeypatch.setenv("TSRATE_SOME_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TSRATE_SOME_LLM_MODEL", "m")
    model = open_language_model("endpoint:some_llm")
    assert not takes_token_cap(model)
    assert "choice_new_tokens" not in LanguageModelAnswerer(model).fingerprint()


def test_a_run_can_ask_some_tasks_only():
    import pytest

    from tsrate import TsrateError
    from tsrate.suites.reasoning.suite import RunConfig, load_items

    generator = GeneratorConfig(seed=11, scenarios=4, forecasts=1, length=40)
    every = load_items(RunConfig(generator=generator))
    some = load_items(RunConfig(generator=generator, tasks=("etiological", "qa_single")))
    assert {i.task for i in some} == {"etiological", "qa_single"}
    assert [i.item_id for i in some] == [
        i.item_id for i in every if i.task in ("etiological", "qa_single")
    ]
    with pytest.raises(TsrateError, match=r"unknown tasks \['etiology'\]"):
        load_items(RunConfig(generator=generator, tasks=("etiology",)))


def test_the_packaged_gemma_answers_choice_items_over_their_letters(tmp_path, monkeypatch):
    """hf_local:gemma3_270m (its cached checkpoint a tiny random Gemma made here): every
    choice reply is one option letter the strict parser reads, the one the model ranks
    highest among the letters (checked against masked full forward passes); forecasts stay
    free text; the rule is in the fingerprint."""
    import pytest

    pytest.importorskip("torch")
    from tests.support.reference_decoding import trie_greedy
    from tests.support.tiny_models import CountingConverter
    from tsrate.suites.reasoning.answerers import choice_answers
    from tsrate.suites.reasoning.items import LETTERS
    from tsrate.systems import gemma
    from tsrate.systems.hf_local import prompt_text

    if gemma.missing_packages():
        pytest.skip(f"needs {gemma.missing_packages()}")
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "6")
    monkeypatch.setenv("TSRATE_HF_DEVICE", "cpu")
    gemma.ensure_checkpoint(gemma.packaged_sha256(), CountingConverter())
    answerer = LanguageModelAnswerer(open_language_model("hf_local:gemma3_270m"))
    items = generate_items(GeneratorConfig(seed=11, scenarios=4, forecasts=1, length=40))
    requests = answerer.requests(items)
    forecast = next(r for r in requests if r.item.task == "forecast")
    choices = [r for r in requests if r.item.task != "forecast"][:4]
    responses = answerer.answer([forecast, *choices])
    model = answerer.model
    tokenizer = model._tokenizer
    for request, response in zip(choices, responses[1:], strict=True):
        assert response.parse_ok and response.raw_text.strip().upper() in LETTERS
        assert response.choice == LETTERS.index(response.raw_text.strip().upper())
        letters = choice_answers(request.item)
        assert set(letters) >= set(LETTERS[: len(request.item.options)])
        text = prompt_text(tokenizer, request.messages)
        assert response.raw_text == trie_greedy(
            model._model, tokenizer, text, letters, model.eos_ids()
        )
    assert responses[0].raw_text == model.complete_all([forecast.messages])[0]
    assert ";closed=greedy-over-admissible-answers" in answerer.fingerprint()
