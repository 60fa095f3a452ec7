"""The suites' language-model interface: both back ends answer arbitrary chats in order."""

from __future__ import annotations

import pytest

from tests.support.chat_server import ChatServer
from tsrate import TsrateError
from tsrate.systems.language import open_language_model, parse_spec

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")


def test_specs_are_checked():
    assert parse_spec("endpoint:my_llm") == ("endpoint", "my_llm")
    with pytest.raises(TsrateError, match="BACKEND:SYSTEM_ID"):
        parse_spec("my_llm")
    with pytest.raises(TsrateError, match="unknown backend 'ollama'"):
        parse_spec("ollama:my_llm")


def test_endpoint_answers_every_chat_in_order(monkeypatch, tmp_path):
    def echo_last_word(payload):
        return 200, payload["messages"][-1]["content"].split()[-1].upper()

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "cache"))
    with ChatServer(echo_last_word) as server:
        monkeypatch.setenv("TSRATE_QA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_QA_LLM_MODEL", "echo")
        model = open_language_model("endpoint:qa_llm")
        assert model.availability().available
        chats = [[{"role": "user", "content": f"answer {word}"}] for word in "abcdefg"]
        assert model.complete_all(chats) == list("ABCDEFG")
        assert len(server.payloads) == 7
        assert model.complete_all(chats[:2]) == ["A", "B"]  # from the response cache
        assert len(server.payloads) == 7


def test_unconfigured_endpoint_says_how_to_configure(monkeypatch):
    monkeypatch.delenv("TSRATE_QA_LLM_BASE_URL", raising=False)
    reason = open_language_model("endpoint:qa_llm").availability().reason
    assert "TSRATE_QA_LLM_BASE_URL" in reason


def test_local_model_answers_every_chat(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import GARBAGE, save_bigram_model

    folder = save_bigram_model(tmp_path / "garbage", GARBAGE)
    monkeypatch.setenv("TSRATE_TINY_QA_MODEL_PATH", str(folder))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "3")
    model = open_language_model("hf_local:tiny_qa")
    assert model.availability().available, model.availability().reason
    chats = [[{"role": "user", "content": q}] for q in ("trend?", "spike?", "which caption?")]
    assert model.complete_all(chats) == ["xxx"] * 3
