"""Local Hugging Face language models (tsrate.systems.hf_local) against values worked out by
hand or by an independent computation, each test well under a second.

Written for round 8 of the mutation sweep (tests/planted/mutate.py; the survivors are
tests/planted/sweep8_language_models.json). The older tests (test_hf_local.py) load tiny
checkpoints from disk and take tens of seconds here; these build their models in memory
(tests/support/memory_models.py) or use stand-ins for the transformers loaders and
processors, so the sweep can run them for every planted error.

What they pin: the documented settings (defaults 256 / 8 / auto / 2 / 128, the minimums 0
and 16, environment over dbt var, a dbt var that is not a mapping); the checkpoint digest
(sha256 of config.json then each weight file's name and size, 12 hex digits); the plain and
templated prompt texts; when a tokenizer's BOS is added (an empty list, a mixed list); the
length groups at their exact bounds (10 % + 16 tokens, the batch size, a group's first
prompt); the reused keys and values of :func:`continuation_cache` against a fresh forward
pass over the second inputs (how much is reused, worked out by hand; pad positions zero;
nothing when nothing is common; one short of the width when the second inputs are the
prompts themselves); image URLs, vision chats and prompts; the availability lines; the
loaders' arguments (``local_files_only``, dtype, the processor's parts); greedy ``generate``
against a step-by-step argmax loop; its token limits, batching and progress count; seeded
sampling (varied samples, the same again, special tokens dropped, no top-k cut on a random
model, one list of sample indices a chat); the registry entry (numeric+image rows, the
study's context length, 80 without a study).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import inspect
import io
import json
import sys
import types

import numpy as np
import pytest

from tests.support.forecast_batch import make_batch
from tests.support.memory_models import bigram_model, tiny_gemma
from tests.support.tiny_models import CHAT_TEMPLATE, character_tokenizer
from tsrate import TsrateError
from tsrate.inputs.images import IMAGE_SIZE
from tsrate.systems import _settings, hf_local
from tsrate.systems.hf_local import HfLocalSystem, HfSettings

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def settings(**kw) -> HfSettings:
    values = {"model_path": "", "max_new_tokens": 256, "batch_size": 8, "device": "cpu"}
    return HfSettings(**{**values, **kw})


def loaded(model, tokenizer, **kw) -> HfLocalSystem:  # noqa: ANN001
    """A system whose model and tokenizer are already there (``load`` returns at once)."""
    system = HfLocalSystem("my_lm", settings(**kw))
    system._model, system._tokenizer = model, tokenizer
    return system


@pytest.fixture
def no_vars(monkeypatch):
    """No dbt project vars and no TSRATE_HF_* / TSRATE_LLM_* settings in the environment."""
    for name in ("MAX_NEW_TOKENS", "BATCH_SIZE", "DEVICE"):
        monkeypatch.delenv(f"TSRATE_HF_{name}", raising=False)
    for name in ("DECIMALS", "IMAGE_SIZE"):
        monkeypatch.delenv(f"TSRATE_LLM_{name}", raising=False)
    monkeypatch.delenv("TSRATE_MY_LM_MODEL_PATH", raising=False)
    found = {}
    monkeypatch.setattr(hf_local, "project_vars", lambda: found)
    monkeypatch.setattr(_settings, "project_vars", lambda: found)
    return found


# -- settings --------------------------------------------------------------------------------------


def test_documented_defaults(no_vars):
    given = HfSettings("folder")
    assert (given.max_new_tokens, given.batch_size, given.device, given.decimals) == (
        256,
        8,
        "auto",
        2,
    )
    assert given.image_size == IMAGE_SIZE == 128
    read = hf_local.load_settings("my_lm")
    assert read == HfSettings("", 256, 8, "auto", 2, 128)


def test_minimums_and_precedence(no_vars, monkeypatch):
    monkeypatch.setenv("TSRATE_LLM_DECIMALS", "0")  # no decimals is allowed
    monkeypatch.setenv("TSRATE_LLM_IMAGE_SIZE", "16")  # the smallest plot
    read = hf_local.load_settings("my_lm")
    assert read.decimals == 0 and read.image_size == 16
    monkeypatch.setenv("TSRATE_LLM_IMAGE_SIZE", "15")
    with pytest.raises(TsrateError, match="at least 16"):
        hf_local.load_settings("my_lm")
    monkeypatch.setenv("TSRATE_LLM_IMAGE_SIZE", "16")
    monkeypatch.setenv("TSRATE_LLM_DECIMALS", "-1")
    with pytest.raises(TsrateError, match="at least 0"):
        hf_local.load_settings("my_lm")


def test_model_path_from_the_environment_else_the_dbt_var(no_vars, monkeypatch):
    assert hf_local.env_prefix("my-lm.v2") == "TSRATE_MY_LM_V2_"
    no_vars["hf_local_systems"] = {"my_lm": {"model_path": "/from/var"}, "other": {}}
    assert hf_local.load_settings("my_lm").model_path == "/from/var"
    assert hf_local.load_settings("other").model_path == ""
    assert hf_local.load_settings("unlisted").model_path == ""
    monkeypatch.setenv("TSRATE_MY_LM_MODEL_PATH", "/from/env")
    assert hf_local.load_settings("my_lm").model_path == "/from/env"
    no_vars["hf_local_systems"] = {"bad": "not a mapping"}
    with pytest.raises(TsrateError, match="must be a mapping"):
        hf_local.load_settings("bad")
    no_vars.clear()  # no hf_local_systems var at all
    assert hf_local.load_settings("other").model_path == ""


def test_checkpoint_digest_is_the_config_then_the_weights_names_and_sizes(tmp_path):
    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "b.safetensors").write_bytes(b"xx")
    (tmp_path / "a.safetensors").write_bytes(b"xyz")
    (tmp_path / "a.bin").write_bytes(b"1")
    (tmp_path / "notes.txt").write_bytes(b"ignored")
    expected = hashlib.sha256(b'{"a": 1}')
    expected.update(b"a.safetensors:3|b.safetensors:2|a.bin:1|")
    assert hf_local.checkpoint_digest(tmp_path) == expected.hexdigest()[:12]
    system = HfLocalSystem("my_lm", settings(model_path=str(tmp_path)))
    assert system.checkpoint_id() == expected.hexdigest()[:12]
    assert HfLocalSystem("my_lm", settings(model_path=str(tmp_path / "x"))).checkpoint_id() == (
        "missing"
    )


# -- prompt texts and special tokens ----------------------------------------------------------------

CHAT = [{"role": "system", "content": "sys"}, {"role": "user", "content": "1, 2"}]


def test_prompt_text_plain_and_templated():
    _, tokenizer = character_tokenizer()
    assert hf_local.prompt_text(tokenizer, CHAT) == "sys\n\n1, 2\n"
    tokenizer.chat_template = CHAT_TEMPLATE
    assert hf_local.prompt_text(tokenizer, CHAT) == "system: sys\nuser: 1, 2\nassistant:"


def test_bos_is_added_unless_every_text_starts_with_it():
    no_bos = types.SimpleNamespace(bos_token=None)
    bos = types.SimpleNamespace(bos_token="<b>")
    assert hf_local.adds_special_tokens(no_bos, ["<b>x"]) is True
    assert hf_local.adds_special_tokens(bos, ["<b>x", "<b>y"]) is False
    assert hf_local.adds_special_tokens(bos, ["<b>x", "y"]) is True
    assert hf_local.adds_special_tokens(bos, ["x"]) is True
    assert hf_local.adds_special_tokens(bos, []) is True


# -- length groups -----------------------------------------------------------------------------------


def test_length_groups_at_their_bounds():
    assert hf_local.PAD_SHARE == 0.10 and hf_local.PAD_TOKENS == 16
    groups = hf_local.length_groups
    # 100 * 1.1 + 16 = 126: 126 joins the batch of 100, 127 does not
    assert groups([100, 126], 8) == [[0, 1]]
    assert groups([127, 100], 8) == [[1], [0]]
    # the bound is the batch's first (shortest) prompt's: 100, 120, 126 together, 127 not
    assert groups([126, 120, 100, 127], 8) == [[2, 1, 0], [3]]
    # at most batch_size a batch (exactly 3 fit), and a full batch starts the next one
    assert groups([5] * 7, 3) == [[0, 1, 2], [3, 4, 5], [6]]
    # several batches: the newest batch's first prompt bounds the next ones
    lengths = [10, 20, 26, 27, 60, 62, 100, 105, 200]
    assert groups(lengths, 2) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    assert groups(lengths, 8) == [[0, 1, 2, 3], [4, 5], [6, 7], [8]]  # 27 <= 10 * 1.1 + 16
    assert groups([], 4) == []


def brute_force_groups(lengths: list[int], batch_size: int) -> list[list[int]]:
    """The documented rule, worked as a scan over the sorted prompts."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    out: list[list[int]] = []
    first = None
    for i in order:
        fits = out and len(out[-1]) < batch_size and lengths[i] <= first * 1.1 + 16
        if fits:
            out[-1].append(i)
        else:
            out.append([i])
            first = lengths[i]
    return out


def test_length_groups_equal_the_documented_rule_on_random_lengths():
    rng = np.random.default_rng(8)
    for _ in range(200):
        lengths = [int(x) for x in rng.integers(1, 300, size=int(rng.integers(1, 30)))]
        size = int(rng.integers(1, 6))
        assert hf_local.length_groups(lengths, size) == brute_force_groups(lengths, size)


# -- the reused keys and values -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma_model():
    return tiny_gemma(seed=3)


def left_padded(rows: list[list[int]], pad: int):  # noqa: ANN201
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    return ids, mask


def prefill(model, ids, mask):  # noqa: ANN001, ANN201
    """A forward pass with a fresh cache made without the config, positions from the padding
    (as ``generate`` derives them)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    # transformers 5.25 renamed the argument (the old name warns); the extra allows >= 5
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    with torch.no_grad():
        model(input_ids=ids, attention_mask=mask, position_ids=positions, **{name: cache})
    return cache


def test_continuation_cache_reuses_the_common_prefix_laid_out_as_a_fresh_prefill(gemma_model):
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    prompts = [[11, 12, 13, 14, 15, 16], [21, 22, 23], [31, 32, 33, 34]]
    replies = [[41, 42, 43], [51, 52, pad], [61, 62, 63]]  # row 1 ended early (padded)
    first_ids, first_mask = left_padded(prompts, pad)
    first = torch.cat([first_ids, torch.tensor(replies)], dim=1)
    full_mask = torch.cat([first_mask, torch.ones(3, 3, dtype=torch.long)], dim=1)
    # the first call fed its prompts and every new token but the last (9 - 1 positions)
    cache = prefill(model, first[:, :-1], full_mask[:, :-1])
    assert cache.get_seq_length() == 8
    # second inputs: row 0 keeps its whole reply (8 fed + 1), row 1 its first reply token then
    # another, row 2 its prompt and a different token
    second = [prompts[0] + [41, 42, 43], prompts[1] + [51, 70, 71], prompts[2] + [72]]
    ids, mask = left_padded(second, pad)
    assert ids.shape[1] == 9
    reused = hf_local.continuation_cache(
        cache, first, first_mask, {"input_ids": ids, "attention_mask": mask}
    )
    # rows start at 0, 3, 4; common prefixes 8 (all the cache holds), 4, 4: min(8, 3 + 4, 4 + 4)
    assert reused.get_seq_length() == 7
    fresh = prefill(model, ids, mask)
    real = mask[:, :7].bool()
    for kept, computed in zip(reused.layers, fresh.layers, strict=True):
        for ours, theirs in ((kept.keys, computed.keys), (kept.values, computed.values)):
            torch.testing.assert_close(
                ours.transpose(1, 2)[real], theirs[:, :, :7].transpose(1, 2)[real]
            )
            assert (ours.transpose(1, 2)[~real] == 0).all()  # pad positions hold zeros


def test_continuation_cache_reuses_all_but_the_last_token_when_nothing_differs(gemma_model):
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    prompts = [[11, 12, 13, 14], [21, 22]]
    replies = [[41, 42], [51, 52]]
    first_ids, first_mask = left_padded(prompts, pad)
    first = torch.cat([first_ids, torch.tensor(replies)], dim=1)
    full_mask = torch.cat([first_mask, torch.ones(2, 2, dtype=torch.long)], dim=1)
    cache = prefill(model, first[:, :-1], full_mask[:, :-1])
    ids, mask = left_padded([p + r for p, r in zip(prompts, replies, strict=True)], pad)
    reused = hf_local.continuation_cache(
        cache, first, first_mask, {"input_ids": ids, "attention_mask": mask}
    )
    assert reused.get_seq_length() == 5  # width 6 less the one token generate feeds
    fresh = prefill(model, ids, mask)
    real = mask[:, :5].bool()
    for kept, computed in zip(reused.layers, fresh.layers, strict=True):
        torch.testing.assert_close(
            kept.keys.transpose(1, 2)[real], computed.keys[:, :, :5].transpose(1, 2)[real]
        )
        torch.testing.assert_close(
            kept.values.transpose(1, 2)[real], computed.values[:, :, :5].transpose(1, 2)[real]
        )


def test_continuation_cache_leaves_one_token_when_the_second_inputs_are_the_prompts(gemma_model):
    """Replies that open with a number have no lead-in: the second inputs are the first
    prompts themselves, all in the cache; ``generate`` must still be fed one token, so the
    reuse stops one short of the width (3 of the 4 positions)."""
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    prompts = [[11, 12, 13, 14], [21, 22]]
    first_ids, first_mask = left_padded(prompts, pad)
    first = torch.cat([first_ids, torch.tensor([[41, 42], [51, 52]])], dim=1)
    full_mask = torch.cat([first_mask, torch.ones(2, 2, dtype=torch.long)], dim=1)
    cache = prefill(model, first[:, :-1], full_mask[:, :-1])
    second = {"input_ids": first_ids, "attention_mask": first_mask}
    reused = hf_local.continuation_cache(cache, first, first_mask, second)
    assert reused.get_seq_length() == 3
    fresh = prefill(model, first_ids, first_mask)
    real = first_mask[:, :3].bool()
    for kept, computed in zip(reused.layers, fresh.layers, strict=True):
        torch.testing.assert_close(
            kept.keys.transpose(1, 2)[real], computed.keys[:, :, :3].transpose(1, 2)[real]
        )


def test_continuation_cache_reuses_nothing_or_one_position(gemma_model):
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    first_ids, first_mask = left_padded([[11, 12, 13]], pad)
    first = torch.cat([first_ids, torch.tensor([[41]])], dim=1)
    cache = prefill(model, first[:, :-1], torch.ones(1, 3, dtype=torch.long))

    def reuse(rows):  # noqa: ANN001, ANN202
        ids, mask = left_padded(rows, pad)
        return hf_local.continuation_cache(
            cache, first, first_mask, {"input_ids": ids, "attention_mask": mask}
        )

    assert reuse([[99, 12, 13, 41]]) is None  # the first token differs: nothing in common
    one = reuse([[11, 98, 13, 41]])
    assert one.get_seq_length() == 1
    fresh = prefill(model, torch.tensor([[11, 98, 13, 41]]), torch.ones(1, 4, dtype=torch.long))
    torch.testing.assert_close(one.layers[0].keys, fresh.layers[0].keys[:, :, :1])


# -- images and vision chats -------------------------------------------------------------------------


def png_url() -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (3, 2), 200).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_image_urls_must_be_base64_data_urls():
    pytest.importorskip("PIL")
    image = hf_local.decode_image_url(png_url())
    assert image.mode == "RGB" and image.size == (3, 2)
    data = png_url().partition(",")[2]
    for bad in (
        "https://x/y.png",
        "data:text/plain;base64," + data,
        "data:image/png," + data,
        "data:image/png;base64",
    ):
        with pytest.raises(TsrateError, match="base64 data URLs"):
            hf_local.decode_image_url(bad)


def test_vision_chat_parts_and_prompt_text():
    pytest.importorskip("PIL")
    messages = [
        {"role": "system", "content": "plain"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": png_url()}},
                {"type": "text", "text": "then"},
            ],
        },
    ]
    converted, images = hf_local.vision_chat(messages)
    assert converted == [
        {"role": "system", "content": [{"type": "text", "text": "plain"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image"},
                {"type": "text", "text": "then"},
            ],
        },
    ]
    assert len(images) == 1 and images[0].size == (3, 2)
    with pytest.raises(TsrateError, match="unsupported chat content part 'audio'"):
        hf_local.vision_chat([{"role": "user", "content": [{"type": "audio"}]}])
    plain = types.SimpleNamespace(chat_template=None, image_token="<img>")
    assert hf_local.vision_prompt_text(plain, converted) == "plain\n\nlook\n\n<img>\n\nthen\n"
    blind = types.SimpleNamespace(chat_template=None, image_token=None)
    assert hf_local.vision_prompt_text(blind, converted[:1]) == "plain\n"
    with pytest.raises(TsrateError, match="neither a chat template nor an image_token"):
        hf_local.vision_prompt_text(blind, converted)
    _, templated = character_tokenizer()
    templated.chat_template = (
        "{% for m in messages %}{{ m['role'] }}:{% for p in m['content'] %}"
        "{{ '<img>' if p['type'] == 'image' else p['text'] }}{% endfor %};{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    assert hf_local.vision_prompt_text(templated, converted) == (
        "system:plain;user:look<img>then;assistant:"
    )


def test_vision_config_decides_the_kind(tmp_path):
    assert hf_local.has_vision_config(tmp_path) is False  # no config.json
    (tmp_path / "config.json").write_text("{not json")
    assert hf_local.has_vision_config(tmp_path) is False
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {}}))
    assert hf_local.has_vision_config(tmp_path) is False
    assert HfLocalSystem("x", settings(model_path=str(tmp_path))).vision is False
    assert HfLocalSystem("x", settings(model_path=str(tmp_path)), with_image=True).vision is True
    (tmp_path / "config.json").write_text(json.dumps({"vision_config": {}}))
    assert hf_local.has_vision_config(tmp_path) is True
    assert HfLocalSystem("x", settings(model_path=str(tmp_path))).vision is True


# -- the system: defaults, fingerprint, availability, device ------------------------------------------


class Sentiment:
    def __init__(self):
        self.calls = 0

    def fingerprint(self) -> str:
        return "stub"

    def predict(self, contexts):  # noqa: ANN001, ANN201
        self.calls += 1
        return types.SimpleNamespace(labels=np.ones(len(contexts), dtype=int))


def project_var(name: str):  # noqa: ANN201
    import yaml

    return yaml.safe_load(open("dbt_project.yml"))["vars"][name]


def test_system_defaults_and_the_image_fingerprint(tmp_path):
    system = HfLocalSystem("x", settings())
    assert system.with_image is False
    assert system.context_length == project_var("context_length") == 80
    assert HfLocalSystem.group_by_length is True
    image = HfLocalSystem("x", settings(image_size=64), with_image=True, sentiment=Sentiment())
    placement = image.placement()  # device and dtype (tests/unit/test_local_model_placement.py)
    assert image.fingerprint().endswith(f";bos=once;{placement};image=line_plot64;sentiment=stub")


def test_prompts_send_the_plot_and_p6_reads_the_sentiment():
    pytest.importorskip("PIL")
    sentiment = Sentiment()
    system = HfLocalSystem("x", settings(image_size=32), with_image=True, sentiment=sentiment)
    batch = make_batch(2)
    plain = system.prompts(batch)
    assert sentiment.calls == 0
    assert plain[0][-1]["content"][-1]["type"] == "image_url"
    p6 = system.prompts(dataclasses.replace(batch, perturbation_id="P6"))
    assert sentiment.calls == 1 and len(p6) == 2
    text = HfLocalSystem("x", settings(), sentiment=sentiment).prompts(batch)
    assert all(isinstance(m["content"], str) for m in text[0])


def test_availability_lines(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_MY_LM_MODEL_PATH", raising=False)
    none = HfLocalSystem("my_lm", settings()).availability()
    assert none.available is False and none.reason.startswith(
        "no model directory: set TSRATE_MY_LM_MODEL_PATH"
    )
    assert "OpenAI-compatible" not in none.reason
    image = HfLocalSystem("my_lm", settings(), with_image=True).availability()
    assert image.available is False and "AutoModelForImageTextToText); or serve" in image.reason
    empty = HfLocalSystem("my_lm", settings(model_path=str(tmp_path))).availability()
    assert empty.available is False
    assert empty.reason == f"{tmp_path} has no config.json (TSRATE_MY_LM_MODEL_PATH)"
    (tmp_path / "config.json").write_text("{}")
    ready = HfLocalSystem("my_lm", settings(model_path=str(tmp_path))).availability()
    assert ready.available is True
    assert ready.reason == f"local checkpoint {tmp_path} on cpu (greedy)"
    monkeypatch.setitem(sys.modules, "PIL", None)  # an image system without Pillow
    blind = HfLocalSystem("my_lm", settings(model_path=str(tmp_path)), with_image=True)
    missing = blind.availability()
    assert missing.available is False and missing.reason.startswith("PIL is not installed; pip")


def test_device_setting_else_cuda_when_torch_sees_one():
    assert HfLocalSystem("x", settings(device="cuda:1")).device == "cuda:1"
    auto = HfLocalSystem("x", settings(device="auto")).device
    assert auto == ("cuda" if torch.cuda.is_available() else "cpu")


# -- loading ----------------------------------------------------------------------------------------------


class Loaded:
    def __init__(self, name: str, calls: list, **attributes):
        self.name, self.calls = name, calls
        self.__dict__.update(attributes)

    def to(self, device):  # noqa: ANN001, ANN201
        self.calls.append(("to", device))
        return self

    def eval(self):  # noqa: ANN201
        self.calls.append(("eval",))
        return self


def test_load_reads_local_files_only_and_sets_left_padding(tmp_path, monkeypatch):
    import transformers

    monkeypatch.setattr(hf_local, "_LOADED", {})
    calls: list = []
    tokenizer = types.SimpleNamespace(pad_token=None, eos_token="<eos>", padding_side="right")

    def loader(kind, result):  # noqa: ANN001, ANN202
        def from_pretrained(path, **kwargs):  # noqa: ANN001, ANN202
            calls.append((kind, str(path), kwargs))
            return result

        return from_pretrained

    model = Loaded("model", calls)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", loader("tok", tokenizer))
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", loader("lm", model))
    (tmp_path / "config.json").write_text("{}")
    system = HfLocalSystem("x", settings(model_path=str(tmp_path)))
    system.load()
    assert calls == [
        ("tok", str(tmp_path), {"local_files_only": True}),
        ("lm", str(tmp_path), {"local_files_only": True, "dtype": torch.float32}),
        ("to", "cpu"),
        ("eval",),
    ]
    assert system._model is model and system._processor is None
    assert tokenizer.padding_side == "left" and tokenizer.pad_token == "<eos>"
    system.load()  # loaded: not again
    assert len(calls) == 4

    # a vision-language checkpoint: the processor and its tokenizer, the image-text model
    calls.clear()
    vision_tokenizer = types.SimpleNamespace(pad_token="<p>", eos_token="<e>", padding_side="r")
    processor = types.SimpleNamespace(tokenizer=vision_tokenizer, image_processor=object())
    vlm = Loaded("vlm", calls)
    monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained", loader("proc", processor))
    monkeypatch.setattr(
        transformers.AutoModelForImageTextToText, "from_pretrained", loader("vlm", vlm)
    )
    image = HfLocalSystem("x", settings(model_path=str(tmp_path)), with_image=True)
    image.load()
    assert calls[:2] == [
        ("proc", str(tmp_path), {"local_files_only": True}),
        ("vlm", str(tmp_path), {"local_files_only": True, "dtype": torch.float32}),
    ]
    assert image._processor is processor and image._tokenizer is vision_tokenizer
    assert vision_tokenizer.pad_token == "<p>" and vision_tokenizer.padding_side == "left"
    for partial in (
        types.SimpleNamespace(tokenizer=None, image_processor=object()),
        types.SimpleNamespace(tokenizer=vision_tokenizer, image_processor=None),
    ):
        monkeypatch.setattr(hf_local, "_LOADED", {})
        monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained", loader("p", partial))
        with pytest.raises(TsrateError, match="not a vision-language checkpoint"):
            HfLocalSystem("x", settings(model_path=str(tmp_path)), with_image=True).load()


def test_encode_pads_and_passes_only_real_images(monkeypatch):
    from transformers import BatchFeature

    seen = []

    def processor(**kwargs):  # noqa: ANN003, ANN202
        seen.append(kwargs)
        return BatchFeature({"input_ids": torch.zeros(1, 2, dtype=torch.long)})

    processor.tokenizer = types.SimpleNamespace(bos_token=None)
    system = HfLocalSystem("x", settings())
    system._processor, system._model = processor, types.SimpleNamespace(dtype=torch.float32)
    system.encode(["a", "b"], [[], ["img"]])
    system.encode(["a"], [[]])
    system.encode(["a"], None)
    assert [s["images"] for s in seen] == [[[], ["img"]], None, None]
    assert all(s["padding"] is True and s["return_tensors"] == "pt" for s in seen)
    assert all(s["add_special_tokens"] is True for s in seen)


# -- greedy generation ------------------------------------------------------------------------------------

#: greedy after ":" writes "10.5, 10.5, …"; after "!" "No" and the end of sequence
SUCCESSOR = {":": "1", "1": "0", "0": ".", ".": "5", "5": ",", ",": " ", " ": "1"}
SUCCESSOR |= {"!": "N", "N": "o", "o": "<eos>"}


@pytest.fixture(scope="module")
def bigram():
    return bigram_model(SUCCESSOR)


def test_generate_follows_the_greedy_reply_and_drops_the_end_of_sequence(bigram):
    system = loaded(*bigram, max_new_tokens=9, batch_size=2)
    texts = ["stop!", "1, 2, 3, 4, go:", "q:"]
    assert system.generate(texts) == ["No", "10.5, 10.", "10.5, 10."]
    assert system.generate(texts, max_new_tokens=4) == ["No", "10.5", "10.5"]
    assert system.generate(texts, max_new_tokens=50) == ["No", "10.5, 10.", "10.5, 10."]


def test_generate_stops_where_the_stopping_rule_reads_the_reply_only(bigram):
    from tsrate.systems.numeric_decoding import stopping_for

    system = loaded(*bigram, max_new_tokens=40, batch_size=1)
    stop = stopping_for(system._tokenizer, 2)
    # the prompt holds four numbers: read with it, the rule would stop at once
    assert system.generate(["1, 2, 3, 4, go:"], stopping=stop) == ["10.5, 10.5,"]


def test_generate_with_choices_is_not_clipped_to_the_setting(bigram):
    from tsrate.systems.choice_decoding import ChoiceTrie

    system = loaded(*bigram, max_new_tokens=2)
    tokenizer = system._tokenizer
    trie = ChoiceTrie.of(tokenizer, ["10.5, 1", "2"], [tokenizer.eos_token_id])
    assert system.generate(["go:"], max_new_tokens=trie.max_tokens(), choices=[trie]) == ["10.5, 1"]
    # without choices the setting clips the same request
    assert system.generate(["go:"], max_new_tokens=trie.max_tokens()) == ["10"]


def greedy_loop(model, tokenizer, text: str, steps: int) -> str:
    """Independent greedy decoding: full forward passes without a cache, argmax."""
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    out = []
    with torch.no_grad():
        for _ in range(steps):
            token = int(torch.argmax(model(input_ids=ids).logits[0, -1]))
            if token == tokenizer.eos_token_id:
                break
            out.append(token)
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return tokenizer.decode(out, skip_special_tokens=True)


def test_generate_is_greedy_on_a_random_model(gemma_model):
    system = loaded(*gemma_model, max_new_tokens=12, batch_size=1)
    texts = ["Next values?", "12, 13, 14,"]
    assert system.generate(texts) == [greedy_loop(*gemma_model, text, 12) for text in texts]


def test_token_limits():
    system = HfLocalSystem("x", settings(max_new_tokens=10))
    assert system.token_limit(None) == 10
    assert system.token_limit(3) == 3
    assert system.token_limit(50) == 10
    assert system.token_limit(50, True) == 50
    assert system.token_limit(None, True) == 10
    assert system.token_limit(0, True) == 10


def test_batches_in_order_or_by_length(bigram):
    texts = ["x" * 40, "ab", "abc", "x" * 70, "y"]
    system = loaded(*bigram, batch_size=2)
    # shortest first: 1 and 2 (full), 3, then 40 > 3 * 1.1 + 16, 70 > 40 * 1.1 + 16
    assert system.batches(texts) == [[4, 1], [2], [0], [3]]
    assert system.batches(texts[:2]) == [[1], [0]]
    assert system.batches(texts[:1]) == [[0]]
    system.group_by_length = False
    assert system.batches(texts) == [[0, 1], [2, 3], [4]]
    system.group_by_length = True
    system._processor = object()  # a vision-language model: in order
    assert system.batches(texts) == [[0, 1], [2, 3], [4]]
    assert system.batches([]) == []


def test_progress_is_told_for_calls_of_several_batches(bigram):
    system = loaded(*bigram, max_new_tokens=3, batch_size=1)
    told = []
    system.progress = told.append
    system.generate(["a:", "bb:"])
    assert [t.split(" ")[0] for t in told] == ["1/2", "2/2"]
    told.clear()
    system.generate(["a:"])
    assert told == []
    system.progress = None
    system.generate(["a:", "bb:"])  # nobody to tell


# -- sampling ---------------------------------------------------------------------------------------------


def test_sampling_is_seeded_varied_and_drops_special_tokens(bigram):
    system = loaded(*bigram, max_new_tokens=3)
    system.chat_text = lambda messages: messages[0]["content"]  # the text as it is
    chats = [[{"role": "user", "content": "z"}], [{"role": "user", "content": "stop!"}]]
    first = system.sample_all(chats, [[0, 1, 2, 3], [0, 1]], 1.0)
    assert system.sample_all(chats, [[0, 1, 2, 3], [0, 1]], 1.0) == first  # seeded
    varied, stopped = first
    assert len(varied) == 4 and len(set(varied)) > 1  # "z" has no successor: every token 1:1
    assert all(len(system._tokenizer(s)["input_ids"]) <= 3 for s in varied)
    assert stopped == ["No", "No"]  # the end of sequence is dropped


# -- the registry entry ----------------------------------------------------------------------------------


def test_the_registry_entry_names_the_system_and_reads_the_seed_and_study():
    with pytest.raises(TsrateError, match="must name it"):
        hf_local.create(None, None, "")
    image = hf_local.create(None, None, "phi3_numeric_image")  # a numeric+image seed row
    assert image.with_image is True and image.system_id == "phi3_numeric_image"
    assert hf_local.create(None, None, "phi3_numeric").with_image is False  # a numeric row
    assert hf_local.create(None, None, "not_in_the_seed").with_image is False
    assert image.context_length == project_var("context_length")
    study = types.SimpleNamespace(context_length=50)
    assert hf_local.create(study, None, "phi3_numeric_image").context_length == 50


def test_sampling_draws_from_the_full_distribution_and_needs_one_index_list_a_chat(
    gemma_model,
):
    """No top-k cut: on a random model (logits spread, no ties) a top-k of 1 would write the
    greedy reply every time; the samples differ. A chat without its list of sample indices
    is an error, not a silently shorter result."""
    system = loaded(*gemma_model, max_new_tokens=4)
    system.chat_text = lambda messages: messages[0]["content"]
    chat = [{"role": "user", "content": "Next?"}]
    (samples,) = system.sample_all([chat], [[0, 1, 2, 3, 4, 5]], 1.0)
    assert len(set(samples)) > 1
    with pytest.raises(ValueError, match="zip"):
        system.sample_all([chat, chat], [[0, 1]], 1.0)
