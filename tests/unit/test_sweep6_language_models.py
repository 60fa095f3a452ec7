"""The LLM endpoint system's plumbing (tsrate.systems.llm: settings, the response cache, the
HTTP retry and backoff rule, the error messages, the sample prompt) against what its module
doc and dbt_project.yml document, worked out here by hand.

Written for round 6 of the mutation sweep (tests/planted/mutate.py; the survivors are
tests/planted/sweep6_language_models.json). Round 5 pinned the prompt, parsing and
sampling; these pin the rest: each documented default (with no project to read vars from),
each minimum, the precedence environment > dbt var > profile, the cache key's canonical JSON
and file layout, the retried status codes (408, 409, 429, 5xx and nothing else) and the
waits between attempts (backoff_s x 2^k), the 200-character head of a server's message.

The HTTP calls go to a fake client (``system._client``) raising the openai client's own
exception types, so no waiting and no server; one test uses the local server of
tests/support/chat_server.py to check that the openai client itself never retries.

Also the failed windows (tsrate.systems.failures: the 4000-character raw-text cut, rows
outside the batch at both ends, one bad row among good ones) and the suites' model specs
(tsrate.systems.language: a blank system id, which class each backend opens).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sys
import time
import types

import numpy as np
import pytest

from tests.support.chat_server import ChatServer
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.images import IMAGE_SIZE
from tsrate.systems import _settings, llm, llm_prompts
from tsrate.systems.llm import LlmEndpointError, LlmSettings, LlmSystem, ResponseCache

openai = pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
httpx = pytest.importorskip("httpx")

SHARED = ("TEMPERATURE", "MAX_TOKENS", "TIMEOUT_S", "RETRIES", "BACKOFF_S", "CONCURRENCY")
SHARED += ("DECIMALS", "CACHE_DIR", "IMAGE_SIZE")
CHAT = [{"role": "user", "content": "go"}]


def base(**overrides) -> LlmSettings:
    values = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": ""}
    return LlmSettings(**{**values, **overrides})


@pytest.fixture
def no_project(monkeypatch):
    """No dbt project to read vars from (an installed package run elsewhere), no TSRATE_LLM_*."""

    def missing():
        raise TsrateError("no dbt_project.yml here")

    monkeypatch.setattr(_settings, "project_vars", missing)
    monkeypatch.setattr(llm, "project_vars", missing)
    for key in SHARED:
        monkeypatch.delenv(f"TSRATE_LLM_{key}", raising=False)
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")


def with_vars(monkeypatch, values: dict) -> None:
    monkeypatch.setattr(_settings, "project_vars", lambda: dict(values))
    monkeypatch.setattr(llm, "project_vars", lambda: dict(values))


# -- settings -----------------------------------------------------------------------------------


def test_settings_defaults_are_the_documented_ones():
    """Module doc: temperature 0, max_tokens 512, timeout_s 60, retries 3, backoff_s 1.0,
    concurrency 4, decimals 2; no cache, no image, the images' default size."""
    s = LlmSettings(base_url="u", model="m", api_key_env="")
    assert (s.temperature, s.max_tokens, s.timeout_s, s.retries) == (0.0, 512, 60.0, 3)
    assert (s.backoff_s, s.concurrency, s.decimals) == (1.0, 4, 2)
    assert s.cache_dir == "" and s.with_image is False and s.image_size == IMAGE_SIZE


def test_load_settings_without_a_project_falls_back_to_the_documented_defaults(no_project):
    s = llm.load_settings("phi3_numeric")
    assert (s.temperature, s.max_tokens, s.timeout_s, s.retries) == (0.0, 512, 60.0, 3)
    assert (s.backoff_s, s.concurrency, s.decimals) == (1.0, 4, 2)
    assert s.cache_dir == "" and s.with_image is False and s.image_size == IMAGE_SIZE
    assert (s.base_url, s.model, s.api_key_env) == ("", "microsoft/Phi-3-vision-128k-instruct", "")
    assert llm.load_settings("phi3_numeric", with_image=True).with_image is True
    # a system without a profile: nothing configured
    other = llm.load_settings("my-llm.v2")
    assert (other.base_url, other.model, other.api_key_env) == ("", "", "")


@pytest.mark.parametrize(
    ("key", "lowest", "below"),
    [("RETRIES", "0", "-1"), ("DECIMALS", "0", "-1"), ("IMAGE_SIZE", "16", "15")],
)
def test_whole_number_settings_accept_their_minimum_and_refuse_one_less(
    no_project, monkeypatch, key, lowest, below
):
    field = key.lower()
    monkeypatch.setenv(f"TSRATE_LLM_{key}", lowest)
    assert getattr(llm.load_settings("phi3_numeric"), field) == int(lowest)
    monkeypatch.setenv(f"TSRATE_LLM_{key}", below)
    with pytest.raises(TsrateError, match=f"TSRATE_LLM_{key} / var llm_{field} must be at least"):
        llm.load_settings("phi3_numeric")


def test_timeout_accepts_a_millisecond_and_refuses_less(no_project, monkeypatch):
    monkeypatch.setenv("TSRATE_LLM_TIMEOUT_S", "0.001")
    assert llm.load_settings("phi3_numeric").timeout_s == 0.001
    monkeypatch.setenv("TSRATE_LLM_TIMEOUT_S", "0.0009")
    with pytest.raises(TsrateError, match="TSRATE_LLM_TIMEOUT_S / var llm_timeout_s"):
        llm.load_settings("phi3_numeric")


def test_environment_wins_over_the_dbt_var_which_wins_over_the_profile(monkeypatch):
    with_vars(
        monkeypatch,
        {
            "llm_systems": {
                "gemini_numeric": {"base_url": "http://var/v1", "model": "", "api_key_env": "K"},
                "my.llm": {"base_url": "http://mine/v1", "model": "mine"},
            }
        },
    )
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    for name in ("BASE_URL", "MODEL", "API_KEY_ENV"):
        monkeypatch.delenv(f"TSRATE_GEMINI_NUMERIC_{name}", raising=False)
        monkeypatch.delenv(f"TSRATE_MY_LLM_{name}", raising=False)
    s = llm.load_settings("gemini_numeric")
    # the var's url and key name; its empty model falls back to the profile's
    assert (s.base_url, s.model, s.api_key_env) == ("http://var/v1", "gemini-1.5-flash", "K")
    monkeypatch.setenv("TSRATE_GEMINI_NUMERIC_MODEL", "from-env")
    monkeypatch.setenv("TSRATE_GEMINI_NUMERIC_BASE_URL", "")  # empty: not set
    s = llm.load_settings("gemini_numeric")
    assert (s.base_url, s.model) == ("http://var/v1", "from-env")
    # the environment name of a system id: TSRATE_ + id with non-alphanumerics as _ + _
    assert llm.env_prefix("my.llm") == "TSRATE_MY_LLM_"
    monkeypatch.setenv("TSRATE_MY_LLM_MODEL", "env-model")
    mine = llm.load_settings("my.llm")
    assert (mine.base_url, mine.model, mine.api_key_env) == ("http://mine/v1", "env-model", "")


def test_a_system_entry_that_is_not_a_mapping_is_an_error(monkeypatch):
    with_vars(monkeypatch, {"llm_systems": {"x": "http://oops/v1"}})
    with pytest.raises(TsrateError, match="llm_systems.x must be a mapping"):
        llm.load_settings("x")
    with_vars(monkeypatch, {"llm_systems": None})
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    assert llm.load_settings("x").base_url == ""


def test_cache_dir_off_in_any_case_and_relative_to_the_project(monkeypatch, tmp_path):
    (tmp_path / "dbt_project.yml").write_text("vars: {}\n")
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "OFF")
    assert llm.cache_dir_setting() == ""
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "replies/llm")
    assert llm.cache_dir_setting() == str(tmp_path.resolve() / "replies" / "llm")


# -- the response cache ---------------------------------------------------------------------------


def test_cache_key_is_the_sha256_of_the_sorted_compact_utf8_json(tmp_path):
    request = {"model": "m", "messages": [{"role": "user", "content": "prix: 10 €"}], "t": 0}
    text = '{"messages":[{"content":"prix: 10 €","role":"user"}],"model":"m","t":0}'
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert ResponseCache.key(request) == key
    assert ResponseCache.key(dict(reversed(list(request.items())))) == key
    cache = ResponseCache(tmp_path)
    assert cache.path(key) == tmp_path / key[:2] / f"{key}.json"
    assert cache.get(key) is None
    before = time.time()
    cache.put(key, "1, 2", "m")
    entry = json.loads((tmp_path / key[:2] / f"{key}.json").read_text())
    assert entry["model"] == "m" and entry["reply"] == "1, 2"
    assert before <= entry["stored_at"] <= time.time()
    assert cache.get(key) == "1, 2"
    (tmp_path / key[:2] / f"{key}.json").write_text("{not json")
    assert cache.get(key) is None


# -- the system: counters, availability, the client -----------------------------------------------


def test_a_new_system_has_sent_nothing_and_read_nothing(monkeypatch):
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    system = LlmSystem("x", base())
    assert system.attempts == 0 and system.cache_hits == 0 and system.cache is None
    # P6's default sentiment system reads contexts of the study's default length (80 days)
    assert system.context_length == 80 == Study.from_vars({}).context_length
    assert llm.create(None, None, "phi3_numeric").context_length == 80
    short = llm.create(Study.from_vars({"context_length": 30}), None, "phi3_numeric")
    assert short.context_length == 30


def test_availability_names_what_is_missing(monkeypatch):
    monkeypatch.delenv("SWEEP6_KEY", raising=False)
    assert not LlmSystem("x", base(base_url="")).availability().available
    no_model = LlmSystem("x", base(model="")).availability()
    assert not no_model.available and no_model.reason == "no model name: set TSRATE_X_MODEL"
    keyed = LlmSystem("x", base(api_key_env="SWEEP6_KEY"))
    assert not keyed.availability().available and "set SWEEP6_KEY" in keyed.availability().reason
    monkeypatch.setenv("SWEEP6_KEY", "secret")
    assert keyed.availability().available
    ready = LlmSystem("x", base()).availability()
    assert ready.available and ready.reason.startswith("model m at http://127.0.0.1:9/v1")
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` raises ImportError
    without = LlmSystem("x", base()).availability()
    assert not without.available and "the openai client is not installed" in without.reason


def test_client_sends_the_named_key_or_a_placeholder_and_never_retries_itself(monkeypatch):
    monkeypatch.setenv("SWEEP6_KEY", "secret")
    assert LlmSystem("x", base(api_key_env="SWEEP6_KEY")).client.api_key == "secret"
    assert LlmSystem("x", base()).client.api_key == "no-key"
    with ChatServer(lambda payload: (503, "busy")) as server:
        system = LlmSystem("x", base(base_url=server.base_url, retries=0))
        with pytest.raises(LlmEndpointError, match="no answer after 1 attempt"):
            system.complete(CHAT)
    assert len(server.payloads) == 1  # our retries only: the openai client makes none


# -- requests: retries, backoff, messages ---------------------------------------------------------


def status_error(status: int, message: str = "server says no"):
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    kind = openai.RateLimitError if status == 429 else openai.APIStatusError
    return kind(message, response=httpx.Response(status, request=request), body=None)


def reply(*texts: str):
    choices = [types.SimpleNamespace(message=types.SimpleNamespace(content=t)) for t in texts]
    return types.SimpleNamespace(choices=choices)


class FakeClient:
    """``client.chat.completions.create(**kwargs)``: each call takes the next outcome (an
    exception is raised, anything else returned) and records its arguments."""

    def __init__(self, *outcomes):
        self.outcomes, self.calls = list(outcomes), []
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self.create))

    def create(self, **kwargs):
        self.calls.append(kwargs)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def system_with(client: FakeClient, monkeypatch, **overrides) -> tuple[LlmSystem, list]:
    waits: list[float] = []
    monkeypatch.setattr(llm, "time", types.SimpleNamespace(sleep=waits.append, time=time.time))
    system = LlmSystem("x", base(**overrides))
    system._client = client
    return system, waits


@pytest.mark.parametrize("status", [408, 409, 429, 500, 501, 503, 599])
def test_these_statuses_are_retried(status, monkeypatch):
    client = FakeClient(status_error(status), reply("1, 2"))
    system, waits = system_with(client, monkeypatch, retries=1, backoff_s=0.25)
    assert system.complete(CHAT) == "1, 2"
    assert len(client.calls) == 2 and system.attempts == 2 and waits == [0.25]


@pytest.mark.parametrize("status", [400, 401, 404, 407, 410, 422, 499])
def test_other_statuses_fail_at_once(status, monkeypatch):
    client = FakeClient(status_error(status), reply("1, 2"))
    system, waits = system_with(client, monkeypatch, retries=3)
    with pytest.raises(LlmEndpointError, match=f"HTTP {status}: "):
        system.complete(CHAT)
    assert len(client.calls) == 1 and waits == []


def test_waits_double_from_backoff_and_the_last_error_is_reported(monkeypatch):
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    errors = [openai.APIConnectionError(request=request)] + [status_error(503)] * 4
    client = FakeClient(*errors)
    system, waits = system_with(client, monkeypatch, retries=4, backoff_s=0.5)
    with pytest.raises(LlmEndpointError, match="no answer after 5 attempt\\(s\\): APIStatusError"):
        system.complete(CHAT)
    # backoff_s x 2^k before the k-th retry (k = 0, 1, ...), none before the first attempt
    assert waits == [0.5 * 2**k for k in range(4)] and system.attempts == 5
    assert waits == [0.5, 1.0, 2.0, 4.0]


def test_messages_keep_the_first_200_characters_of_the_error(monkeypatch):
    long = "x" * 1000
    client = FakeClient(status_error(401, long))
    system, _ = system_with(client, monkeypatch)
    with pytest.raises(LlmEndpointError) as refused:
        system.complete(CHAT)
    assert str(refused.value).split("HTTP 401: ", 1)[1] == long[:200]
    client = FakeClient(status_error(500, long))
    system, _ = system_with(client, monkeypatch, retries=0)
    with pytest.raises(LlmEndpointError) as exhausted:
        system.complete(CHAT)
    assert str(exhausted.value).split("APIStatusError: ", 1)[1] == long[:200]


def test_a_request_carries_the_settings_and_n_only_above_one(monkeypatch):
    client = FakeClient(reply("a"), reply("b", "c"), reply("d"), reply(None))
    system, _ = system_with(client, monkeypatch, temperature=0.0, max_tokens=7)
    assert system.complete(CHAT) == "a"
    assert client.calls[0] == {"model": "m", "messages": CHAT, "temperature": 0.0, "max_tokens": 7}
    assert system.sample(CHAT, [0, 1], 0.5) == ["b", "c"]
    assert client.calls[1]["n"] == 2 and client.calls[1]["temperature"] == 0.5
    assert system.sample(CHAT, [0], 0.5) == ["d"] and "n" not in client.calls[2]
    assert system.complete(CHAT) == ""  # a choice without content is an empty reply


def test_a_response_without_choices_is_an_error(monkeypatch):
    client = FakeClient(reply())
    system, waits = system_with(client, monkeypatch)
    with pytest.raises(LlmEndpointError, match="holds no choices"):
        system.complete(CHAT)
    assert len(client.calls) == 1 and waits == []


def test_cached_replies_are_counted_and_not_asked_again(monkeypatch, tmp_path):
    client = FakeClient(reply("1, 2"), reply("3, 4"))
    system, _ = system_with(client, monkeypatch, cache_dir=str(tmp_path))
    assert [system.complete(CHAT) for _ in range(3)] == ["1, 2"] * 3
    assert len(client.calls) == 1 and system.cache_hits == 2 and system.attempts == 1


# -- the sample prompt (`tsrate systems --show-prompt`) -------------------------------------------


def test_sample_batch_is_the_documented_wave():
    batch = llm_prompts.sample_batch(13, 3, "P2")
    expected = [round(100.0 + 0.05 * t + 2.0 * math.sin(t / 6.0), 2) for t in range(13)]
    assert batch.contexts.shape == (1, 13)
    np.testing.assert_array_equal(batch.contexts[0], expected)
    assert expected[0] == 100.0 and expected[6] == 101.98 and expected[12] == 102.42
    assert batch.horizon == 3 and batch.perturbation_id == "P2" and batch.ticker == "SAMPLE"
    assert batch.window_end_dates.tolist() == [np.datetime64("2022-12-01", "D").item()]
    np.testing.assert_array_equal(batch.clean_futures, np.zeros((1, 3)))
    assert batch.study_range == (0.0, 1.0)


def test_an_image_part_is_summarised_with_its_width_height_and_size():
    image = np.zeros((20, 30, 3), dtype=np.uint8)  # 20 rows, 30 columns
    url = llm_prompts.png_data_url(image)
    data = base64.b64decode(url.split(",", 1)[1])
    messages = llm_prompts.render_messages(np.array([1.0, 2.0]), 2, 1, url)
    text = llm_prompts.describe_messages(messages)
    assert (
        f"[image part: data:image/png, 30x20 line plot of the values above, {len(data)} bytes"
        in text
    )
    assert text.startswith("--- system ---\n") and "\n--- user ---\n" in text


# -- failed windows (tsrate.systems.failures) -----------------------------------------------------


def test_raw_text_is_kept_whole_up_to_4000_characters_and_cut_with_its_length_above():
    from tsrate.systems.failures import WindowFailure

    assert WindowFailure(0, "r", "a" * 4000).raw_text == "a" * 4000
    cut = WindowFailure(0, "r", "b" * 4001).raw_text
    assert cut == "b" * 4000 + "… [4001 characters]"


def test_failures_must_name_distinct_windows_inside_the_batch():
    from tests.support.forecast_batch import D, make_batch
    from tsrate.systems.base import ForecastOutputError
    from tsrate.systems.failures import PartialForecasts, WindowFailure, check_partial_forecasts

    batch = make_batch(3)

    def partial(*rows):
        values = np.ones((3, D))
        values[list(rows)] = np.nan
        return PartialForecasts(values, tuple(WindowFailure(r, "x", "") for r in rows))

    for rows in [(0,), (2,), (2, 0), (0, 1, 2)]:  # the first and last windows, in any order
        checked = check_partial_forecasts("s", batch, partial(*rows))
        assert [f.row for f in checked.failures] == sorted(rows)
        assert checked.failed_rows.tolist() == sorted(rows)
        assert np.isnan(checked.values[list(rows)]).all()
        good = sorted(set(range(3)) - set(rows))
        np.testing.assert_array_equal(checked.values[good], np.ones((len(good), D)))
    for rows in [(-1,), (3,), (0, 3), (-1, 1)]:  # one bad row among good ones is enough
        values = np.ones((3, D))
        with pytest.raises(ForecastOutputError, match="a failure names a window outside"):
            check_partial_forecasts(
                "s", batch, PartialForecasts(values, tuple(WindowFailure(r, "x", "") for r in rows))
            )
    with pytest.raises(ForecastOutputError, match=r"output shape \(3, 5\), expected \(3, 4\)"):
        check_partial_forecasts(
            "s", batch, PartialForecasts(np.ones((3, D + 1)), (WindowFailure(0, "x", ""),))
        )


# -- the suites' language models (tsrate.systems.language) ----------------------------------------


def test_a_spec_needs_a_non_blank_system_id_and_strips_it():
    from tsrate.systems.language import parse_spec

    assert parse_spec("hf_local: tiny ") == ("hf_local", "tiny")
    for spec in ("endpoint:", "endpoint:   ", ":x"):
        with pytest.raises(TsrateError):
            parse_spec(spec)


def test_each_backend_opens_its_own_kind_of_model(monkeypatch):
    from tsrate.systems.gemma import GemmaSystem
    from tsrate.systems.hf_local import HfLocalSystem
    from tsrate.systems.language import open_language_model

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    endpoint = open_language_model("endpoint:qa")
    assert type(endpoint) is LlmSystem and endpoint.system_id == "qa"
    local = open_language_model("hf_local:qa")
    assert type(local) is HfLocalSystem and local.system_id == "qa"
    gemma = open_language_model("hf_local:gemma3_270m")
    assert type(gemma) is GemmaSystem and gemma.system_id == "gemma3_270m"
