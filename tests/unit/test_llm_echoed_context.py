"""A language model's reply that echoes the context before its forecast.

Models often restate the last few prices of the prompt and then continue. The parser took
the longest run of numbers and its first d values, so such a reply's "forecast" was the
context's own last values, rated as if the model had predicted them. Now a leading echo
(the context's last values exactly as the prompt printed them, at least two, not all one
value) is skipped, and an echo followed by fewer than d numbers fails the window visibly
("echoed context"). The expected forecasts below are written out by hand from the replies.

The endpoint path runs against the local chat server (tests/support/chat_server.py), the
local-model path against a real bigram checkpoint (tests/support/tiny_models.py) that
writes ``12,34;56 12,34;56 …``, and Gemma's path reads real cached replies.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.chat_server import ChatServer, settings
from tsrate.systems.base import ForecastBatch
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.llm import LlmSystem
from tsrate.systems.llm_replies import (
    FORECAST_PARSER,
    ReplyParseError,
    echo_length,
    parse_forecast,
    parse_replies,
)

CONTEXT = np.array([99.0, 99.5, 100.1, 100.2, 100.3])


def test_a_reply_that_restates_the_last_prices_is_read_after_them():
    reply = "100.10, 100.20, 100.30, 101.00, 102.00, 103.00, 104.00"
    np.testing.assert_array_equal(parse_forecast(reply, 4, CONTEXT), [101, 102, 103, 104])
    # without the context nothing tells the echo apart: the old reading, context values first
    np.testing.assert_array_equal(parse_forecast(reply, 4), [100.1, 100.2, 100.3, 101])


def test_the_whole_context_echoed_then_the_forecast():
    reply = "99.00, 99.50, 100.10, 100.20, 100.30, 100.40, 100.50, 100.60"
    np.testing.assert_array_equal(parse_forecast(reply, 3, CONTEXT), [100.4, 100.5, 100.6])


def test_the_echo_is_matched_at_the_printed_precision():
    context = np.array([5.0, 100.104, 100.196])  # printed 100.10, 100.20
    reply = "100.1, 100.2, 7, 8"
    assert echo_length(["100.1", "100.2", "7", "8"], context, 2) == 2
    np.testing.assert_array_equal(parse_forecast(reply, 2, context, 2), [7, 8])
    # at one decimal the prompt printed 100.1, 100.2 as well
    np.testing.assert_array_equal(parse_forecast(reply, 2, context, 1), [7, 8])
    # a value that differs at the printed precision is no echo
    np.testing.assert_array_equal(parse_forecast("100.1, 100.3, 7, 8", 2, context), [100.1, 100.3])


def test_an_echoed_numbered_list():
    reply = "1. 100.20\n2. 100.30\n3. 100.25\n4. 100.35"
    np.testing.assert_array_equal(parse_forecast(reply, 2, CONTEXT), [100.25, 100.35])


def test_a_sentence_quoting_the_context_does_not_win_over_the_answer():
    reply = "The last prices were 99.5, 100.1, 100.2, 100.3. My forecast: 100.4, 100.45, 100.5"
    np.testing.assert_array_equal(parse_forecast(reply, 3, CONTEXT), [100.4, 100.45, 100.5])


def test_one_value_equal_to_the_last_price_is_a_forecast_not_an_echo():
    reply = "100.30, 100.40, 100.50, 100.60, 100.70"
    np.testing.assert_array_equal(parse_forecast(reply, 4, CONTEXT), [100.3, 100.4, 100.5, 100.6])
    assert echo_length(reply.split(", "), CONTEXT, 2) == 0


def test_a_flat_run_equal_to_a_flat_context_end_is_a_forecast():
    flat = np.array([98.0, 100.0, 100.0])
    reply = "100.00, 100.00, 100.50, 101.00"
    np.testing.assert_array_equal(parse_forecast(reply, 3, flat), [100, 100, 100.5])
    # an echo that is not one value is skipped even when it ends on repeated values
    reply = "98.00, 100.00, 100.00, 100.50, 101.00"
    np.testing.assert_array_equal(parse_forecast(reply, 2, flat), [100.5, 101])


def test_the_longest_echo_is_skipped():
    periodic = np.array([1.0, 2.0, 1.0, 2.0])
    reply = "1, 2, 1, 2, 5, 6"  # echoes of 2 and of 4 values: all four are context
    assert echo_length(reply.split(", "), periodic, 2) == 4
    np.testing.assert_array_equal(parse_forecast(reply, 2, periodic), [5, 6])


@pytest.mark.parametrize(
    ("reply", "numbers"),
    [
        ("100.20, 100.30, 101.00", 1),  # echo, then too few
        ("100.10, 100.20, 100.30", 0),  # nothing but the context's last values
    ],
)
def test_an_echo_without_a_whole_forecast_after_it_fails_visibly(reply, numbers):
    with pytest.raises(ReplyParseError) as caught:
        parse_forecast(reply, 3, CONTEXT)
    message = str(caught.value)
    assert message.startswith("echoed context: the reply repeats the context's last")
    assert f"then has {numbers} value(s), expected 3" in message and "\n" not in message


def test_a_missing_last_value_is_never_echoed():
    context = np.array([100.1, 100.2, np.nan])
    np.testing.assert_array_equal(parse_forecast("100.1, 100.2, 3, 4", 2, context), [100.1, 100.2])


def test_parse_replies_reads_each_window_against_its_own_context():
    contexts = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = parse_replies(["2, 3, 7, 8", "2, 3, 7, 8"], 2, contexts)
    np.testing.assert_array_equal(out, [[7, 8], [2, 3]])  # row 1's context ends 5, 6
    partial = parse_replies(["2, 3, 7", "5, 6"], 2, contexts, 0)
    assert isinstance(partial, PartialForecasts)
    assert [f.row for f in partial.failures] == [0, 1]
    assert partial.failures[0].reason.startswith("unparseable reply: echoed context")
    assert partial.failures[1].reason.startswith("unparseable reply: echoed context")


def test_the_parser_version_changed_so_stored_forecasts_are_recomputed():
    assert FORECAST_PARSER == "reply_parser=4"
    assert LlmSystem.partition_tag == f";{FORECAST_PARSER}"


# -- through the systems ------------------------------------------------------------------------


def _batch(contexts: np.ndarray, horizon: int = 4) -> ForecastBatch:
    n = len(contexts)
    dates = np.arange(np.datetime64("2022-06-01"), np.datetime64("2022-06-01") + n)
    return ForecastBatch("AAPL", "P0", dates, contexts, horizon, np.zeros((n, horizon)), (0.0, 1.0))


def test_an_endpoint_model_that_echoes_is_rated_on_what_follows(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))
    batch = _batch(np.array([[100.0, 101.0, 102.0, 103.0], [50.0, 49.5, 49.0, 48.75]]))

    def echoing(payload):
        # the values line of the prompt: restate its last three, then forecast
        printed = payload["messages"][1]["content"].split("\n")[1].split(", ")
        return 200, ", ".join(printed[-3:]) + ", 7.00, 8.00, 9.00, 10.00"

    with ChatServer(echoing) as server:
        system = LlmSystem("phi3_numeric", settings(server.base_url))
        out = system.predict(batch)
    assert len(server.payloads) == 2
    np.testing.assert_array_equal(out, [[7, 8, 9, 10], [7, 8, 9, 10]])


def test_a_local_model_that_echoes_is_rated_on_what_follows(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import save_bigram_model
    from tsrate.systems.hf_local import HfLocalSystem, HfSettings

    cycle = {":": "1", "1": "2", "2": ",", ",": "3", "3": "4", "4": ";", ";": "5", "5": "6"}
    folder = save_bigram_model(tmp_path / "echo", {**cycle, "6": " ", " ": "1"})
    system = HfLocalSystem("local_lm", HfSettings(str(folder), max_new_tokens=30, device="cpu"))
    # it writes 12,34;56 12,34;56 ...: row 0's context ends 12, 34 (an echo of two values),
    # row 1's ends 34, 12 (no echo), row 2's ends 56, 12 (no echo: a different order)
    contexts = np.array(
        [[10.0, 11.0, 12.0, 34.0], [10.0, 11.0, 34.0, 12.0], [1.0, 2.0, 56.0, 12.0]]
    )
    out = system.predict(_batch(contexts))
    np.testing.assert_array_equal(out, [[56, 12, 34, 56], [12, 34, 56, 12], [12, 34, 56, 12]])


def test_gemma_reads_its_cached_echoing_replies_after_the_echo(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from tsrate.systems import gemma
    from tsrate.systems.hf_local import HfSettings
    from tsrate.systems.llm import ResponseCache
    from tsrate.systems.numeric_decoding import numeric_token_cap

    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))

    def never(folder):  # noqa: ANN001, ARG001 - every reply comes from the cache
        raise AssertionError("the model was loaded")

    system = gemma.GemmaSystem(
        settings=HfSettings("", device="cpu"), convert=never, gguf_sha256="ef" * 32
    )
    batch = _batch(np.array([[100.0, 101.0, 102.0, 103.0]]), horizon=2)
    cap = numeric_token_cap(batch.contexts, 2, 2)
    (messages,) = system.prompts(batch)
    key = ResponseCache.key(
        {"system": system.fingerprint(), "messages": messages, "horizon": 2, "cap": cap}
    )
    ResponseCache(tmp_path / "llm-cache").put(key, "102.00, 103.00, 104.50, 105.25", "gemma")
    np.testing.assert_array_equal(system.predict(batch), [[104.5, 105.25]])
