"""Local Hugging Face language models (tsrate.systems.hf_local): image URLs, vision chats
and prompts, and the loaders' arguments (``local_files_only``, dtype, the processor's parts,
left padding, only real images passed), against values worked out by hand, each test well
under a second.

Written for round 8 of the mutation sweep (tests/planted/mutate.py; the survivors are
tests/planted/sweep8_language_models.json). The older tests (test_hf_local.py) load tiny
checkpoints from disk and take tens of seconds here; these build their models in memory
(tests/support/memory_models.py) or use stand-ins for the transformers loaders and
processors, so the sweep can run them for every planted error.
"""

from __future__ import annotations

import base64
import io
import json
import types

import pytest

from tests.support.hf_local_systems import (
    settings,
)
from tests.support.tiny_models import character_tokenizer
from tsrate import TsrateError
from tsrate.systems import hf_local
from tsrate.systems.hf_local import HfLocalSystem

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


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
