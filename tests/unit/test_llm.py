"""LLM forecasters against a real HTTP server speaking the chat-completions protocol.

The server (stdlib ``http.server`` in a thread, tests/support/chat_server.py) answers
``POST /v1/chat/completions``. Its main responder is a tiny randomly initialised GPT-2 made
there: character-level, its digits chosen greedily by the model under a fixed ``ddd.dd, ``
template (so the reply is always a number list, of as many characters as ``max_tokens``
allows). Other responders return garbage, short answers, server errors and auth errors.
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from tests.support.chat_server import TEMPLATE, ChatServer, TinyDigitLM, settings
from tests.support.forecast_batch import D, make_batch
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems import llm
from tsrate.systems.base import ForecastOutputError, check_forecasts
from tsrate.systems.failures import PartialForecasts, WindowFailure, check_partial_forecasts
from tsrate.systems.llm import LlmEndpointError, LlmSystem
from tsrate.systems.llm_prompts import format_values, render_messages
from tsrate.systems.llm_replies import ReplyParseError, parse_forecast
from tsrate.systems.registry import load_systems_seed, resolve_systems

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Systems built from settings cache replies in the test's own folder."""
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))


@pytest.fixture(scope="module")
def tiny_lm():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return TinyDigitLM()


# -- encoding and parsing ----------------------------------------------------------------------


def test_prompt_encoding():
    assert format_values(np.array([101.234, np.nan, 99.5]), 2) == "101.23, NaN, 99.50"
    messages = render_messages(np.array([1.0, np.nan, 3.0]), horizon=5, decimals=1)
    user = messages[1]["content"]
    assert "1.0, NaN, 3.0" in user and "NaN marks a missing value" in user
    assert "exactly 5 numbers" in user and messages[0]["role"] == "system"


@pytest.mark.parametrize(
    "reply",
    [
        "101.5, 102, 103.25",
        "```\n101.5, 102, 103.25\n```",
        "Here are the next 3 values: [101.5, 102, 103.25]",
        "<think>the last value was 99, so 3 values</think>101.5; 102; 103.25",
        "1. 101.5\n2. 102\n3. 103.25",
        "Day 1: 101.5\nDay 2: 102\nDay 3: 103.25\n",
        "101.5\n102\n103.25",
        "101.5, 102, 103.25, 104, 105",  # longer: the first 3 are kept
    ],
)
def test_parse_tolerates_common_shapes(reply):
    np.testing.assert_array_equal(parse_forecast(reply, 3), [101.5, 102, 103.25])


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "empty reply"),
        (None, "empty reply"),
        ("I cannot predict stock prices.", "no numbers"),
        ("101.5, 102", "short answer: .* 2 value\\(s\\), expected 3"),
        ("101.5, NaN, 102, 103", "short answer"),
        ("1e999, 1, 2", "not finite"),
    ],
)
def test_parse_refuses_unusable_replies(reply, reason):
    with pytest.raises(ReplyParseError, match=reason):
        parse_forecast(reply, 3)


# -- against the local server --------------------------------------------------------------------


def test_tiny_model_server_end_to_end(tiny_lm, monkeypatch):
    with ChatServer(tiny_lm) as server:
        monkeypatch.setenv("TSRATE_PHI3_NUMERIC_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_PHI3_NUMERIC_MODEL", "tiny-digits")
        monkeypatch.setenv("TSRATE_LLM_MAX_TOKENS", str(len(TEMPLATE) * (D + 1)))
        study = Study.from_vars({"systems": ["phi3_numeric"]})
        system, accepted = resolve_systems(study, None)["phi3_numeric"]
        assert accepted == ("P0", "P1", "P2", "P3")
        assert "tiny-digits" in system.availability().reason
        batch = make_batch()
        out = check_forecasts("phi3_numeric", batch, system.predict(batch))
    assert len(server.payloads) == 3
    for payload in server.payloads:
        assert payload["model"] == "tiny-digits"
        assert payload["temperature"] == 0
        assert payload["max_tokens"] == len(TEMPLATE) * (D + 1)
    prompts = [p["messages"][1]["content"] for p in server.payloads]
    assert sum("NaN" in p.split("\n")[1] for p in prompts) == 1  # only window 1 misses a value
    # each row is the first D numbers the model wrote for that window's prompt (D+1 written)
    for row, context in enumerate(batch.contexts):
        reply = server.replies[render_messages(context, D, 2)[1]["content"]]
        numbers = [float(x) for x in reply.split(", ")]
        assert len(numbers) == D + 1
        np.testing.assert_array_equal(out[row], numbers[:D])


def test_garbage_replies_come_back_as_failures_with_the_raw_text():
    reply = "I am sorry, but as an AI language model I cannot forecast stock prices."
    with ChatServer(lambda payload: (200, reply)) as server:
        system = LlmSystem("phi3_numeric", settings(server.base_url))
        batch = make_batch()
        out = system.predict(batch)
    assert isinstance(out, PartialForecasts)
    assert [f.row for f in out.failures] == [0, 1, 2]
    for failure in out.failures:
        assert failure.reason == "unparseable reply: no numbers in the reply"
        assert failure.raw_text == reply
    checked = check_partial_forecasts("phi3_numeric", batch, out)
    assert np.isnan(checked.values).all()  # nothing zero-filled


def test_short_reply_fails_only_its_window():
    def short_when_missing(payload):
        prompt = payload["messages"][-1]["content"]
        return 200, "101.5, 102.25" if "NaN" in prompt.split("\n")[1] else "1, 2, 3, 4"

    with ChatServer(short_when_missing) as server:
        system = LlmSystem("gemini_numeric", settings(server.base_url))
        batch = make_batch()
        out = check_partial_forecasts("gemini_numeric", batch, system.predict(batch))
    (failure,) = out.failures
    assert failure.row == 1 and failure.raw_text == "101.5, 102.25"
    assert "short answer" in failure.reason and "expected 4" in failure.reason
    np.testing.assert_array_equal(out.values[[0, 2]], [[1, 2, 3, 4]] * 2)
    assert np.isnan(out.values[1]).all()


def test_a_partial_result_with_a_bad_good_row_is_refused():
    batch = make_batch()
    values = np.ones((3, D))
    values[0, 2] = np.inf
    bad = PartialForecasts(values, (WindowFailure(1, "short", "1"),))
    with pytest.raises(ForecastOutputError, match="non-finite.*2022-06-01"):
        check_partial_forecasts("phi3_numeric", batch, bad)
    twice = PartialForecasts(values, (WindowFailure(1, "a", ""), WindowFailure(1, "b", "")))
    with pytest.raises(ForecastOutputError, match="failed twice"):
        check_partial_forecasts("phi3_numeric", batch, twice)


def test_response_cache_answers_repeated_prompts_without_the_endpoint(tmp_path):
    with ChatServer(lambda payload: (200, "1, 2, 3, 4, 5")) as server:
        cached = settings(server.base_url, cache_dir=str(tmp_path / "cache"))
        first = LlmSystem("phi3_numeric", cached).predict(make_batch())
        assert len(server.payloads) == 3
        again = LlmSystem("phi3_numeric", cached)
        np.testing.assert_array_equal(again.predict(make_batch()), first)
        assert len(server.payloads) == 3 and again.cache_hits == 3 and again.attempts == 0
        # another model (or endpoint, temperature, prompt) is another key
        other = LlmSystem("phi3_numeric", settings(**{**cached.__dict__, "model": "other"}))
        other.predict(make_batch(1))
        assert len(server.payloads) == 4
        # without a cache every call reaches the server
        LlmSystem("phi3_numeric", settings(server.base_url)).predict(make_batch(1))
        assert len(server.payloads) == 5
    files = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 4 and not list((tmp_path / "cache").rglob("*.partial"))
    assert json.loads(files[0].read_text())["reply"] == "1, 2, 3, 4, 5"


def test_cache_dir_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    assert llm.load_settings("phi3_numeric").cache_dir == ""
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path))
    assert llm.load_settings("phi3_numeric").cache_dir == str(tmp_path)
    monkeypatch.delenv("TSRATE_LLM_CACHE_DIR")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w" / "tsrate.duckdb"))
    assert llm.load_settings("phi3_numeric").cache_dir == str(tmp_path / "w" / "cache" / "llm")


def test_server_errors_are_retried_with_backoff():
    calls = []

    def flaky(payload):
        calls.append(time.perf_counter())
        return (503, "overloaded") if len(calls) <= 2 else (200, "1, 2, 3, 4")

    with ChatServer(flaky) as server:
        system = LlmSystem("phi3_numeric", settings(server.base_url, backoff_s=0.05))
        out = system.predict(make_batch(1))
    np.testing.assert_array_equal(out, [[1, 2, 3, 4]])
    assert system.attempts == 3
    assert calls[2] - calls[1] >= 0.09  # the second wait is backoff × 2

    with ChatServer(lambda payload: (503, "overloaded")) as server:
        system = LlmSystem("phi3_numeric", settings(server.base_url, retries=1))
        with pytest.raises(LlmEndpointError, match="no answer after 2 attempt\\(s\\)") as busy:
            system.predict(make_batch(1))
    assert len(server.payloads) == 2
    assert "busy or failing" in busy.value.hint and "TSRATE_LLM_RETRIES" in busy.value.hint


def test_client_errors_fail_at_once():
    with ChatServer(lambda payload: (401, "invalid api key")) as server:
        system = LlmSystem("phi3_numeric", settings(server.base_url))
        with pytest.raises(LlmEndpointError, match="HTTP 401.*invalid api key"):
            system.predict(make_batch(1))
    assert system.attempts == 1


def test_unreachable_endpoint_is_a_clear_error():
    with ChatServer(lambda payload: (200, "")) as server:
        url = server.base_url
    system = LlmSystem("phi3_numeric", settings(url, retries=1))
    with pytest.raises(
        LlmEndpointError, match=f"{url}.*no answer after 2 attempt.*Connection"
    ) as down:
        system.predict(make_batch(1))
    assert down.value.hint.startswith(f"is a server answering at {url}? start it")


def test_windows_are_sent_concurrently():
    """The server answers only once 3 requests wait together: sequential calls would time out."""
    barrier = threading.Barrier(3, timeout=10)

    def gated(payload):
        barrier.wait()
        return 200, "1, 2, 3, 4"

    with ChatServer(gated) as server:
        system = LlmSystem("phi3_numeric", settings(server.base_url, concurrency=3, retries=0))
        out = system.predict(make_batch(3))
    assert server.max_in_flight == 3 and system.attempts == 3
    np.testing.assert_array_equal(out, [[1, 2, 3, 4]] * 3)


# -- configuration -------------------------------------------------------------------------------


def test_unconfigured_systems_say_which_variables_to_set(monkeypatch):
    for name in (
        "TSRATE_PHI3_NUMERIC_BASE_URL",
        "GEMINI_API_KEY",
        "TSRATE_GEMINI_NUMERIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    seed = load_systems_seed().set_index("system_id")
    assert seed.loc["phi3_numeric", "implementation"] == "tsrate.systems.llm:phi3_numeric"
    assert seed.loc["gemini_numeric", "implementation"] == "tsrate.systems.llm:gemini_numeric"
    phi3 = llm.create(None, None, "phi3_numeric").availability()
    assert not phi3.available
    for variable in (
        "TSRATE_PHI3_NUMERIC_BASE_URL",
        "TSRATE_PHI3_NUMERIC_MODEL",
        "TSRATE_PHI3_NUMERIC_API_KEY_ENV",
    ):
        assert variable in phi3.reason
    gemini = llm.create(None, None, "gemini_numeric").availability()
    assert not gemini.available and "set GEMINI_API_KEY" in gemini.reason
    with pytest.raises(TsrateError, match="'phi3_numeric' is unavailable: no endpoint configured"):
        resolve_systems(Study.from_vars({"systems": ["phi3_numeric"]}), None)

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    system = llm.create(None, None, "gemini_numeric")
    assert system.availability().available
    assert system.settings.model == "gemini-1.5-flash"
    assert "test-key" not in system.fingerprint()


def test_bad_shared_setting_is_an_error(monkeypatch):
    monkeypatch.setenv("TSRATE_LLM_CONCURRENCY", "0")
    with pytest.raises(
        TsrateError, match="TSRATE_LLM_CONCURRENCY / var llm_concurrency must be at least 1"
    ):
        llm.create(None, None, "phi3_numeric")
