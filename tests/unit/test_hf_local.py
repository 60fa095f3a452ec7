"""Local Hugging Face causal LMs: a tiny GPT-2 and a character tokenizer (with a chat
template) saved to disk here, loaded by the real code with ``local_files_only`` and run
with greedy ``generate``.

The model is a bigram machine built by hand: each character's embedding points at the
character that must follow it, attention and MLP outputs are zeroed, and the untied output
layer is the identity, so greedy decoding after the chat template's ``assistant:`` writes
``10.5, 10.5, …``. A second checkpoint writes ``xxxx…`` (no numbers): every window fails.
"""

from __future__ import annotations

import string

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.systems import hf_local
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.hf_local import HfLocalSystem, HfSettings

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.unit.test_llm import D, make_batch  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
NUMBERS = {":": "1", "1": "0", "0": ".", ".": "5", "5": ",", ",": " ", " ": "1"}
GARBAGE = {":": "x", "x": "x"}


def save_bigram_model(folder, successor: dict[str, str]):
    import torch
    from tokenizers import Tokenizer, decoders, models
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    chars = list(string.printable)
    vocab = {c: i for i, c in enumerate(chars)}
    vocab["<eos>"] = len(vocab)
    vocab["<unk>"] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<eos>", pad_token="<eos>", unk_token="<unk>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    size = len(vocab)
    config = GPT2Config(
        vocab_size=size,
        n_positions=4096,
        n_embd=size,
        n_layer=1,
        n_head=2,
        tie_word_embeddings=False,
        bos_token_id=vocab["<eos>"],
        eos_token_id=vocab["<eos>"],
    )
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        model.transformer.wpe.weight.zero_()
        model.transformer.wte.weight.zero_()
        for current, following in successor.items():
            model.transformer.wte.weight[vocab[current], vocab[following]] = 10.0
        for layer in model.transformer.h:
            for projection in (layer.attn.c_proj, layer.mlp.c_proj):
                projection.weight.zero_()
                projection.bias.zero_()
        model.lm_head.weight.copy_(torch.eye(size))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def numbers_model(tmp_path_factory):
    return save_bigram_model(tmp_path_factory.mktemp("hf-numbers"), NUMBERS)


def test_local_model_forecasts_greedily_with_the_shared_prompt(numbers_model, monkeypatch):
    monkeypatch.setenv("TSRATE_MY_LOCAL_LM_MODEL_PATH", str(numbers_model))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", str(6 * (D + 1)))
    monkeypatch.setenv("TSRATE_HF_BATCH_SIZE", "2")  # 3 windows: batches of 2 and 1
    system = hf_local.create(None, None, "my_local_lm")
    assert system.availability().available, system.availability().reason
    assert "greedy" in system.fingerprint() and "checkpoint=missing" not in system.fingerprint()
    batch = make_batch()
    out = system.predict(batch)
    np.testing.assert_array_equal(out, np.full((3, D), 10.5))
    # the model read the chat template around the shared prompt (llm.render_messages)
    text = hf_local.prompt_text(system._tokenizer, system.prompts(batch)[1])
    assert text.startswith("system: You are a time-series forecasting assistant")
    assert "NaN" in text and text.endswith("assistant:")
    # greedy: the same answer again
    np.testing.assert_array_equal(system.predict(batch), out)


def test_unusable_generations_are_failures_with_raw_text(tmp_path, monkeypatch):
    folder = save_bigram_model(tmp_path / "garbage", GARBAGE)
    system = HfLocalSystem("my_local_lm", HfSettings(str(folder), max_new_tokens=8))
    out = system.predict(make_batch(2))
    assert isinstance(out, PartialForecasts)
    assert [f.row for f in out.failures] == [0, 1]
    assert all(f.raw_text == "x" * 8 for f in out.failures)
    assert all(f.reason == "unparseable reply: no numbers in the reply" for f in out.failures)


def test_missing_or_broken_checkpoints_are_reported(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_MY_LOCAL_LM_MODEL_PATH", raising=False)
    reason = hf_local.create(None, None, "my_local_lm").availability().reason
    assert "set TSRATE_MY_LOCAL_LM_MODEL_PATH" in reason
    empty = HfLocalSystem("my_local_lm", HfSettings(str(tmp_path)))
    assert "has no config.json" in empty.availability().reason
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(TsrateError, match="cannot load"):
        empty.predict(make_batch(1))
    image = hf_local.create(None, None, "phi3_numeric_image")
    assert not image.availability().available
    assert "tsrate.systems.llm" in image.availability().reason
