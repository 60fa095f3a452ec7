"""The packaged Gemma's forecast replies prefill the prompt once, on tiny real models.

:meth:`tsrate.systems.gemma.GemmaSystem.constrained_replies` decodes a reply in two greedy
phases (the model's own lead-in over the full head, then the numbers over the numeric
head); the second phase starts from the keys and values the first one left. Checked
against the path it replaced, kept here as the reference: two calls of the system's
``generate``, the second over each prompt followed by its lead-in (so the prompt is
prefilled again). The models are tiny random Gemma 3s (a sliding window shorter than the
prompts, so sliding-window layers are re-laid too): the character tokenizer of
tests/support/tiny_models.py, and a variant whose tokenizer merges ``:`` with the next
character, so a prompt ending in ``:`` followed by its lead-in tokenizes otherwise than the
prompt's own tokens and only the common prefix is reused. A forward hook counts what the
model is fed and which head wrote the logits.
"""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bench_gemma_prefill import before
from tests.support.tiny_models import CHAT_TEMPLATE, save_tiny_gemma, tiny_gemma_config
from tsrate.systems import gemma, numeric_decoding
from tsrate.systems.hf_local import HfSettings, continuation_cache, prompt_text
from tsrate.systems.llm_prompts import render_messages

pytest.importorskip("torch")
pytest.importorskip("transformers")

HORIZON = 4


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    return tmp_path / "cache"


def save_merging_gemma(folder: Path, seed: int) -> Path:
    """A tiny random Gemma 3 (as tests/support/tiny_models.save_tiny_gemma) whose tokenizer
    has a token for ``:`` followed by any printable character: ``assistant:`` then a lead-in
    ``x…`` tokenizes as ``assistant``, ``:x``, …, not as the prompt's tokens then ``x``."""
    import torch
    from tokenizers import Tokenizer, decoders, models
    from transformers import Gemma3ForCausalLM, PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(string.printable)}
    for token in ("<eos>", "<unk>"):
        vocab[token] = len(vocab)
    merges = []
    for c in string.printable:
        vocab[":" + c] = len(vocab)
        merges.append((":", c))
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>"))
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<eos>", pad_token="<eos>", unk_token="<unk>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = tiny_gemma_config(vocab)
    torch.manual_seed(seed)
    Gemma3ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


#: model variant → converter (each keyed by its own "GGUF sha256"); the seeds are ones whose
#: greedy openings of :func:`prompts` mix replies without a lead-in and lead-ins of several
#: lengths (the tests check it)
MODELS = {
    "characters": lambda folder: save_tiny_gemma(folder, seed=20),
    "merges": lambda folder: save_merging_gemma(folder, seed=9),
}


def tiny_system(model: str, batch_size: int) -> gemma.GemmaSystem:
    settings = HfSettings("", max_new_tokens=256, batch_size=batch_size, device="cpu")
    sha = f"{sorted(MODELS).index(model):02d}" * 32
    system = gemma.GemmaSystem(settings=settings, convert=MODELS[model], gguf_sha256=sha)
    system.load()
    return system


def prompts(system: gemma.GemmaSystem, count: int = 8) -> list[str]:
    """Real forecast prompts of ``count`` windows of 8, 9, … values (different lengths),
    asking for horizons 1, 2, … at 0-3 decimals (so the model's openings differ)."""
    rng = np.random.default_rng(3)
    texts = []
    for k in range(count):
        context = 100 + np.cumsum(rng.normal(size=8 + k))
        messages = render_messages(context, 1 + k, k % 4)
        texts.append(prompt_text(system._tokenizer, messages))
    return texts


def two_prefills(system: gemma.GemmaSystem, texts: list[str], cap: int) -> list[str]:
    """The reference: the path before the cache was reused (each phase a call of
    ``generate``; the second re-tokenizes and prefills each prompt with its lead-in), as the
    benchmark times it."""
    return before(system, texts, HORIZON, cap)


def lead_ins(system: gemma.GemmaSystem, texts: list[str]) -> list[str]:
    tokenizer = system._tokenizer
    openings = system.generate(
        texts,
        max_new_tokens=numeric_decoding.LEAD_IN_TOKENS,
        stopping=numeric_decoding.lead_in_stopping(tokenizer),
    )
    return [numeric_decoding.lead_in(opening)[0] for opening in openings]


@pytest.mark.parametrize("batch_size", [1, 3, 8])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_one_prefill_gives_the_replies_of_two(cache, model, batch_size):
    system = tiny_system(model, batch_size)
    texts = prompts(system)
    tokenizer = system._tokenizer
    lengths = [len(tokenizer(t)["input_ids"]) for t in texts]
    assert min(lengths) > 64  # past the sliding window
    if batch_size > 1:  # prompts of different lengths decoded together (left-padded)
        assert any(len({lengths[i] for i in rows}) > 1 for rows in system.batches(texts))
    cap = 40
    assert system.constrained_replies(texts, HORIZON, cap) == two_prefills(system, texts, cap)
    leads = lead_ins(system, texts)
    tokens = [len(tokenizer(lead, add_special_tokens=False)["input_ids"]) for lead in leads]
    # some replies open with a number (no lead-in), others with lead-ins of different lengths
    assert "" in leads and len(set(tokens)) >= (2 if model == "characters" else 3)
    if model == "merges":  # some prompts followed by their lead-in split otherwise
        split = [
            tokenizer(text + lead)["input_ids"][: len(tokenizer(text)["input_ids"])]
            != tokenizer(text)["input_ids"]
            for text, lead in zip(texts, leads, strict=True)
        ]
        assert any(split) and not all(split)


def test_the_numbers_continue_from_the_cache_over_the_numeric_head_only(cache):
    """Each batch's prompt is fed to the model once: one wide forward pass per batch (the
    first phase's prefill, full head), then passes narrower than the batch's shortest prompt
    (the first phase's steps over the full head, then the second phase over the numeric
    head). Fails if the second phase prefilled the prompt again, or if the numeric head
    wrote the lead-in's logits or not the numbers'."""
    system = tiny_system("characters", batch_size=3)
    texts = prompts(system, 6)
    model, tokenizer = system._model, system._tokenizer
    numeric = system.numeric_ids()
    others = sorted(set(range(model.config.vocab_size)) - set(numeric))
    calls: list[tuple[int, bool]] = []

    def record(module, args, kwargs, output) -> None:  # noqa: ANN001, ARG001
        logits = output.logits[..., others]
        masked = bool((logits == np.finfo(np.float32).min).all())
        calls.append((kwargs["input_ids"].shape[1], masked))

    handle = model.register_forward_hook(record, with_kwargs=True)
    try:
        replies = system.constrained_replies(texts, HORIZON, 40)
    finally:
        handle.remove()
    batches = system.batches(texts)
    shortest = [min(len(tokenizer(texts[i])["input_ids"]) for i in rows) for rows in batches]
    starts = [k for k, (width, _) in enumerate(calls) if width >= min(shortest)]
    assert len(starts) == len(batches)  # one prefill of the prompts per batch
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(calls)
        heads = [masked for _, masked in calls[start:end]]
        assert True in heads, "the numbers were decoded over the full head"
        lead_steps = heads.index(True)  # full head first, then the numeric head to the end
        assert lead_steps >= 1 and not any(heads[:lead_steps]) and all(heads[lead_steps:])
        assert all(width < shortest[number] for width, _ in calls[start + 1 : end])
    assert replies == two_prefills(system, texts, 40)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_reused_keys_and_values_are_those_a_prefill_of_the_second_inputs_computes(cache, model):
    """Row by row, every position the second phase takes from the first one's cache holds
    the keys and values a forward pass over the second phase's own inputs (each prompt and
    its lead-in, as the second phase lays them out) computes; where a prompt followed by its
    lead-in splits otherwise (``merges``), less is reused."""
    import torch
    from transformers import DynamicCache

    system = tiny_system(model, batch_size=8)
    texts = prompts(system)
    model_, tokenizer = system._model, system._tokenizer
    sizes = []
    for rows in system.batches(texts):
        chunk = [texts[i] for i in rows]
        encoded = system.encode(chunk)
        first = DynamicCache()
        opened = system.generate_ids(
            encoded,
            numeric_decoding.LEAD_IN_TOKENS,
            numeric_decoding.lead_in_stopping(tokenizer),
            cache=first,
        )
        openings = tokenizer.batch_decode(
            opened[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True
        )
        leads = [numeric_decoding.lead_in(opening)[0] for opening in openings]
        continued = system.encode([text + lead for text, lead in zip(chunk, leads, strict=True)])
        reused = continuation_cache(first, opened, encoded["attention_mask"], continued)
        mask = continued["attention_mask"]
        fresh = DynamicCache()
        with torch.no_grad():  # positions as generate derives them from the padding
            positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
            model_(**continued, position_ids=positions, cache=fresh, use_cache=True)
        n = reused.get_seq_length()
        real = mask[:, :n].bool()
        for kept, computed in zip(reused.layers, fresh.layers, strict=True):
            for ours, theirs in ((kept.keys, computed.keys), (kept.values, computed.values)):
                torch.testing.assert_close(
                    ours.transpose(1, 2)[real], theirs[:, :, :n].transpose(1, 2)[real]
                )
        sizes.append((n, continued["input_ids"].shape[1]))
    assert all(n > 0.8 * width for n, width in sizes)  # the prompts are reused
    # characters: a prompt and its lead-in are the very tokens the first phase fed the model,
    # all reused but the last (generate feeds one); merges: a split prompt is reused less
    full = [n == width - 1 for n, width in sizes]
    assert all(full) if model == "characters" else not all(full)
