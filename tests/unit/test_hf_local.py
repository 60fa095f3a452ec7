"""Local Hugging Face causal LMs: a tiny GPT-2 and a character tokenizer (with a chat
template) saved to disk here, loaded by the real code with ``local_files_only`` and run
with greedy ``generate``.

The model is a bigram machine built by hand (tests/support/tiny_models.py): each character's
embedding points at the character that must follow it, attention and MLP outputs are zeroed,
and the untied output layer is the identity, so greedy decoding after the chat template's
``assistant:`` writes ``10.5, 10.5, …``. A second checkpoint writes ``xxxx…`` (no numbers):
every window fails.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.support.forecast_batch import D, make_batch
from tests.support.tiny_models import (
    CHAT_TEMPLATE,
    GARBAGE,
    NUMBERS,
    character_tokenizer,
    save_bigram_model,
)
from tsrate import TsrateError
from tsrate.systems import hf_local
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.hf_local import HfLocalSystem, HfSettings

pytest.importorskip("torch")
pytest.importorskip("transformers")


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
    # the model read the chat template around the shared prompt (llm_prompts.render_messages)
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


# -- vision-language checkpoints (numeric+image) ---------------------------------------------

VISION_CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for p in m['content'] %}{% if p['type'] == 'image' %}<image>"
    "{% else %}{{ p['text'] }}{% endif %}{% endfor %}{% endif %}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
PLOT_SIDE = (
    128  # tsrate.inputs.images.IMAGE_SIZE: the processor keeps the plot's pixels as they are
)
PATCH = 32  # 4 × 4 patches: 16 image tokens


def save_tiny_llava(folder, successor: dict[str, str]):
    """A randomly initialised Llava (one-layer CLIP vision tower, one-layer Llama) with a
    character tokenizer holding ``<image>`` and a PIL CLIP image processor, saved with
    ``save_pretrained``. Its language model is the bigram machine of :func:`save_bigram_model`
    (attention and MLP outputs zeroed), so greedy decoding follows ``successor``; the image
    still goes through the vision tower and projector into the image tokens' embeddings."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    # hidden size = vocabulary size, divisible by the heads
    vocab, tokenizer = character_tokenizer(
        ["<image>"], multiple_of=8, extra_special_tokens={"image_token": "<image>"}
    )
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": PLOT_SIDE}, crop_size={"height": PLOT_SIDE, "width": PLOT_SIDE}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP's class token, dropped by "default"
        chat_template=VISION_CHAT_TEMPLATE,
    )
    size = len(vocab)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=PLOT_SIDE,
            patch_size=PATCH,
        ),
        text_config=LlamaConfig(
            vocab_size=size,
            hidden_size=size,
            intermediate_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=4096,
            tie_word_embeddings=False,
            bos_token_id=vocab["<eos>"],
            eos_token_id=vocab["<eos>"],
            pad_token_id=vocab["<eos>"],
        ),
        image_token_index=vocab["<image>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config)
    language_model = model.model.language_model
    with torch.no_grad():
        language_model.embed_tokens.weight.zero_()
        for current, following in successor.items():
            language_model.embed_tokens.weight[vocab[current], vocab[following]] = 10.0
        for layer in language_model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.lm_head.weight.copy_(torch.eye(size))
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def numbers_vlm(tmp_path_factory):
    pytest.importorskip("PIL")
    return save_tiny_llava(tmp_path_factory.mktemp("vlm-numbers"), NUMBERS)


def record_vision_inputs(system: HfLocalSystem) -> list:
    """Every ``pixel_values`` tensor the loaded model's vision tower receives."""
    seen = []

    def hook(module, args, kwargs):  # noqa: ANN001, ARG001
        seen.append((args[0] if args else kwargs["pixel_values"]).detach().clone())

    system.load()
    system._model.model.vision_tower.register_forward_pre_hook(hook, with_kwargs=True)
    return seen


def test_local_vision_language_model_reads_the_line_plot(numbers_vlm, monkeypatch):
    from tsrate.systems.llm_prompts import USER_PROMPT_IMAGE, window_images

    monkeypatch.setenv("TSRATE_PHI3_NUMERIC_IMAGE_MODEL_PATH", str(numbers_vlm))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", str(6 * (D + 1)))
    monkeypatch.setenv("TSRATE_HF_BATCH_SIZE", "2")
    system = hf_local.create(None, None, "phi3_numeric_image")  # a numeric+image seed row
    assert system.with_image and system.vision
    assert system.availability().available, system.availability().reason
    assert "vision-language" in system.availability().reason
    assert "image=line_plot128" in system.fingerprint()
    seen = record_vision_inputs(system)
    assert type(system._processor).__name__ == "LlavaProcessor"
    assert type(system._model).__name__ == "LlavaForConditionalGeneration"

    batch = make_batch()
    out = system.predict(batch)
    np.testing.assert_array_equal(out, np.full((3, D), 10.5))

    # the prompt: the numeric+image template with the processor's image placeholder
    messages, images = hf_local.vision_chat(system.prompts(batch)[0])
    text = hf_local.vision_prompt_text(system._processor, messages)
    first_line = USER_PROMPT_IMAGE.splitlines()[0].format(n=batch.contexts.shape[1], decimals=2)
    assert first_line in text and "The attached image is a line plot" in text
    assert text.count("<image>") == 1 and text.endswith("assistant:")
    encoded = system.encode([text], [images])
    assert int((encoded["input_ids"] == system._processor.image_token_id).sum()) == 16

    # the vision tower received exactly the endpoint's line plots (PNG round trip is lossless)
    plots = window_images(np.asarray(batch.contexts, float), batch.perturbation_id, 128)
    expected = system._processor.image_processor(images=list(plots), return_tensors="pt")
    received = np.concatenate([t.numpy() for t in seen])
    assert [len(t) for t in seen] == [2, 1]  # one call per generate batch, one image per window
    np.testing.assert_allclose(received, expected["pixel_values"].numpy(), atol=1e-6)
    assert not np.allclose(received[0], received[2])  # each window its own plot

    # an image perturbation reaches the model: P5 (saturation x10) changes the pixels
    seen.clear()
    saturated = dataclasses.replace(batch, perturbation_id="P5")
    np.testing.assert_array_equal(system.predict(saturated), out)
    assert not np.allclose(np.concatenate([t.numpy() for t in seen]), received)


def test_unusable_vision_generations_are_failures_with_raw_text(tmp_path):
    pytest.importorskip("PIL")
    folder = save_tiny_llava(tmp_path / "garbage-vlm", GARBAGE)
    system = HfLocalSystem("my_vlm", HfSettings(str(folder), max_new_tokens=8), with_image=True)
    out = system.predict(make_batch(2))
    assert isinstance(out, PartialForecasts)
    assert [f.row for f in out.failures] == [0, 1]
    assert all(f.raw_text == "x" * 8 for f in out.failures)
    assert all(f.reason == "unparseable reply: no numbers in the reply" for f in out.failures)


def test_vision_checkpoints_answer_text_only_chats_and_refuse_remote_images(numbers_vlm):
    # hf_local:<ID> of tsrate.systems.language: a checkpoint with a vision_config is loaded
    # as a vision-language model even without the numeric+image mode
    system = HfLocalSystem("my_vlm", HfSettings(str(numbers_vlm), max_new_tokens=4))
    assert system.vision and not system.with_image
    chat = [{"role": "user", "content": "Is there a trend?"}]
    assert system.complete_all([chat]) == ["10.5"]
    remote = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}],
        }
    ]
    with pytest.raises(TsrateError, match="base64 data URLs"):
        system.complete_all([remote])


def test_a_text_only_checkpoint_in_numeric_image_mode_is_a_clear_error(tmp_path):
    folder = save_bigram_model(tmp_path / "text-only", NUMBERS)
    system = HfLocalSystem("my_vlm", HfSettings(str(folder)), with_image=True)
    with pytest.raises(TsrateError, match="cannot load"):
        system.predict(make_batch(1))


def test_length_groups_batch_neighbouring_lengths_with_little_padding():
    from tsrate.systems.hf_local import PAD_SHARE, PAD_TOKENS, length_groups

    # hand-worked: sorted 10, 12, 30, 100, 105, 400 with batch 3: 12 <= 10 * 1.1 + 16 = 27;
    # 30 > 27 starts a batch; 100 > 30 * 1.1 + 16 = 49; 105 <= 126; 400 > 126
    lengths = [100, 10, 400, 30, 12, 105]
    assert length_groups(lengths, 3) == [[1, 4], [3], [0, 5], [2]]
    assert length_groups(lengths, 1) == [[1], [4], [3], [0], [5], [2]]
    # similar lengths (one window length's forecasts) fill whole batches, in their order
    assert length_groups([736] * 5 + [737], 4) == [[0, 1, 2, 3], [4, 5]]
    rng = np.random.default_rng(0)
    for _ in range(50):
        lengths = list(rng.integers(1, 4000, size=int(rng.integers(1, 40))))
        groups = length_groups(lengths, 8)
        assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
        for group in groups:
            assert 1 <= len(group) <= 8
            shortest = min(lengths[i] for i in group)
            assert max(lengths[i] for i in group) <= shortest * (1 + PAD_SHARE) + PAD_TOKENS


def test_a_chat_template_that_writes_bos_gets_no_second_one():
    """The tokenizer adds its BOS to plain text; a chat template that writes
    ``{{ bos_token }}`` itself (Gemma's, Llama 3's) must not get a second one, or the model
    reads a prompt it was never trained on."""
    from tokenizers import processors

    vocab, tokenizer = character_tokenizer(extra_tokens=("<bos>",), bos_token="<bos>")
    bos = vocab["<bos>"]
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", bos)]
    )
    chat = [{"role": "user", "content": "12"}]

    def first_ids(texts: list[str]) -> list[int]:
        special = hf_local.adds_special_tokens(tokenizer, texts)
        return tokenizer(texts, add_special_tokens=special)["input_ids"][0]

    tokenizer.chat_template = CHAT_TEMPLATE  # no BOS in the template: the tokenizer adds it
    plain = first_ids([hf_local.prompt_text(tokenizer, chat)])
    assert plain[0] == bos and plain.count(bos) == 1
    tokenizer.chat_template = "{{ bos_token }}" + CHAT_TEMPLATE
    text = hf_local.prompt_text(tokenizer, chat)
    assert text.startswith("<bos>user: 12")
    templated = first_ids([text])
    assert templated.count(bos) == 1 and templated == plain  # the same tokens either way
    assert tokenizer(text)["input_ids"].count(bos) == 2  # what the default would have read


def test_the_system_encodes_a_templated_prompt_with_one_bos(tmp_path):
    """The same through a saved checkpoint: HfLocalSystem.encode, as generate calls it."""
    from tokenizers import processors
    from transformers import AutoTokenizer

    folder = save_bigram_model(tmp_path / "bos", NUMBERS)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.add_special_tokens({"bos_token": "<bos>"})
    bos = tokenizer.convert_tokens_to_ids("<bos>")
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", bos)]
    )
    tokenizer.chat_template = "{{ bos_token }}" + CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    system = HfLocalSystem("my_local_lm", HfSettings(str(folder), max_new_tokens=4))
    system.load()
    text = system.chat_text([{"role": "user", "content": "12"}])
    ids = system.encode([text])["input_ids"][0].tolist()
    assert text.startswith("<bos>") and ids.count(bos) == 1 and ids[0] == bos
    plain = system.encode(["user: 12\nassistant:"])["input_ids"][0].tolist()
    assert plain == ids  # a prompt without the template's BOS gets the tokenizer's
    assert ";bos=once" in system.fingerprint()  # forecasts stored with two are recomputed


def test_a_checkpoint_is_loaded_once_per_process_until_it_changes(tmp_path):
    """A second system of the same checkpoint reuses the loaded model (the next study, a
    suite after the core, the next test); a checkpoint rewritten in place is read again,
    and loading another one forgets the first (one model kept)."""
    folder = save_bigram_model(tmp_path / "shared", NUMBERS)
    first = HfLocalSystem("my_local_lm", HfSettings(str(folder), max_new_tokens=6 * (D + 1)))
    second = HfLocalSystem("other_lm", HfSettings(str(folder), max_new_tokens=6 * (D + 1)))
    np.testing.assert_array_equal(first.predict(make_batch(1)), np.full((1, D), 10.5))
    second.load()
    assert second._model is first._model and second._tokenizer is first._tokenizer
    np.testing.assert_array_equal(second.predict(make_batch(1)), np.full((1, D), 10.5))

    save_bigram_model(folder, GARBAGE)  # the same folder, another model
    rewritten = HfLocalSystem("my_local_lm", HfSettings(str(folder), max_new_tokens=8))
    out = rewritten.predict(make_batch(1))
    assert rewritten._model is not first._model
    assert isinstance(out, PartialForecasts) and out.failures[0].raw_text == "x" * 8

    other = save_bigram_model(tmp_path / "other", NUMBERS)
    HfLocalSystem("other_lm", HfSettings(str(other), max_new_tokens=4)).load()
    assert len(hf_local._LOADED) == 1
