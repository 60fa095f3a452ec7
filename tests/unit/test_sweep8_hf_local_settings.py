"""Local Hugging Face language models (tsrate.systems.hf_local): settings, prompts, length
groups and the system's defaults, against values worked out by hand or by an independent
computation, each test well under a second.

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
prompt); the system's defaults, image fingerprint, availability lines and device.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import types

import numpy as np
import pytest

from tests.support.forecast_batch import make_batch
from tests.support.hf_local_systems import (
    project_var,
    settings,
)
from tests.support.tiny_models import CHAT_TEMPLATE, character_tokenizer
from tsrate import TsrateError
from tsrate.inputs.images import IMAGE_SIZE
from tsrate.systems import _settings, hf_local
from tsrate.systems.hf_local import HfLocalSystem, HfSettings

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


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


# -- the system: defaults, fingerprint, availability, device ------------------------------------------


class Sentiment:
    def __init__(self):
        self.calls = 0

    def fingerprint(self) -> str:
        return "stub"

    def predict(self, contexts):  # noqa: ANN001, ANN201
        self.calls += 1
        return types.SimpleNamespace(labels=np.ones(len(contexts), dtype=int))


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
