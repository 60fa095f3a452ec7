"""A local language model's long call says how far it has got: after each batch of a call
with several batches, ``k/n replies of this call``; the suites prefix the answerer's id
(`tsrate.suites.lifecycle.watch_model`). A call of one batch, and a model nobody watches,
stay silent."""

from __future__ import annotations

import re

import pytest

from tests.support.tiny_models import GARBAGE, save_bigram_model
from tsrate.suites.lifecycle import watch_model
from tsrate.suites.reasoning.answerers import LanguageModelAnswerer as ReasoningAnswerer
from tsrate.suites.understanding.analyst import RandomAnswerer
from tsrate.suites.understanding.suite import LanguageModelAnswerer as UnderstandingAnswerer
from tsrate.systems.language import open_language_model

pytest.importorskip("torch")
pytest.importorskip("transformers")

CHAT = [{"role": "user", "content": "Say something."}]


def garbage(tmp_path, monkeypatch, batch_size: int):
    save_bigram_model(tmp_path / "garbage", GARBAGE)  # writes 'x' for ever
    monkeypatch.setenv("TSRATE_TINY_GARBAGE_MODEL_PATH", str(tmp_path / "garbage"))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "3")
    monkeypatch.setenv("TSRATE_HF_BATCH_SIZE", str(batch_size))


def test_a_call_of_several_batches_reports_after_each(tmp_path, monkeypatch):
    garbage(tmp_path, monkeypatch, batch_size=2)
    model = open_language_model("hf_local:tiny_garbage")
    said: list[str] = []
    model.progress = said.append
    replies = model.complete_all([CHAT] * 5)
    assert replies == ["xxx"] * 5
    assert [re.sub(r"\(\d+s\)", "(s)", line) for line in said] == [
        "2/5 replies of this call (s)",
        "4/5 replies of this call (s)",
        "5/5 replies of this call (s)",
    ]
    said.clear()
    model.complete_all([CHAT] * 2)  # one batch: nothing to report
    assert said == []
    model.progress = None
    model.complete_all([CHAT] * 5)  # nobody watching: silent, and no error


def test_the_suites_prefix_the_answerers_id(tmp_path, monkeypatch):
    garbage(tmp_path, monkeypatch, batch_size=1)
    said: list[str] = []
    understanding = UnderstandingAnswerer("hf_local:tiny_garbage")
    watch_model(understanding, said.append)
    understanding.model.complete_all([CHAT] * 2)
    assert [line.split(" (")[0] for line in said] == [
        "tiny_garbage: 1/2 replies of this call",
        "tiny_garbage: 2/2 replies of this call",
    ]
    said.clear()
    reasoning = ReasoningAnswerer(open_language_model("hf_local:tiny_garbage"))
    watch_model(reasoning, said.append)
    reasoning.model.complete_all([CHAT] * 3)
    assert len(said) == 3 and all(line.startswith("tiny_garbage: ") for line in said)
    reference = RandomAnswerer(0)
    watch_model(reference, said.append)  # no model: left as it is
    assert not hasattr(reference, "progress")
