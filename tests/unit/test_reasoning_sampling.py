"""Sampled LLMTime forecasts (``--forecast-samples N``): the CRPS estimator against
independent computations, the median rule with unusable samples, one prompt hash per
sample, and the endpoint's ``n`` parameter with a response cache entry per sample."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tests.support.reasoning_items import FORECAST, SERIES
from tsrate import TsrateError
from tsrate.suites.reasoning.answerers import LanguageModelAnswerer, prompt_hash
from tsrate.suites.reasoning.marts import forecast_errors
from tsrate.suites.reasoning.sampling import (
    REFERENCE_TEMPERATURES,
    crps_ensemble,
    median_forecast,
)


def crps_double_loop(samples: np.ndarray, y: float) -> float:
    """CRPS of the empirical distribution, one step, written out pair by pair."""
    m = len(samples)
    first = sum(abs(x - y) for x in samples) / m
    second = sum(abs(a - b) for a in samples for b in samples) / (m * m)
    return first - 0.5 * second


def crps_integral(samples: np.ndarray, y: float) -> float:
    """CRPS as its definition: the integral of (F(z) - 1{z >= y})^2 dz, F the samples'
    empirical CDF, integrated exactly piecewise between the sorted breakpoints."""
    points = np.sort(np.append(samples, y))
    total = 0.0
    for left, right in zip(points[:-1], points[1:], strict=True):
        mid = 0.5 * (left + right)
        cdf = np.mean(samples <= mid)
        total += (cdf - float(mid >= y)) ** 2 * (right - left)
    return total


def test_crps_matches_the_definition_and_a_pairwise_loop():
    rng = np.random.default_rng(3)
    samples = rng.normal(size=(7, 4)) * [1.0, 2.0, 0.5, 3.0]
    observed = np.array([0.3, -1.0, 2.0, 0.0])
    got = crps_ensemble(samples, observed)
    for step in range(4):
        assert got[step] == pytest.approx(crps_double_loop(samples[:, step], observed[step]))
        assert got[step] == pytest.approx(crps_integral(samples[:, step], observed[step]))
    # a point mass: the absolute error
    assert crps_ensemble([[2.0, 5.0]], [3.5, 5.0]).tolist() == [1.5, 0.0]
    # a spread of samples around the truth scores better than a point mass as far off
    assert crps_ensemble([[-1.0], [1.0]], [0.0])[0] == pytest.approx(0.5)


def test_median_rule_uses_usable_samples_only():
    assert median_forecast([[1.0, 10.0], [3.0, 0.0], [2.0, 5.0]]).tolist() == [2.0, 5.0]
    assert median_forecast([[1.0, 4.0], [3.0, 0.0]]).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError):
        median_forecast([])


def rows(samples, parse_ok, answered=None, item="i", system="s"):
    history, future = np.array(SERIES[:24]), np.array(SERIES[24:])
    n = len(samples)
    return pd.DataFrame(
        {
            "suite_run_id": "r",
            "prompt_hash": [f"{system}{item}{k}" for k in range(n)],
            "item_id": item,
            "system_id": system,
            "condition": "without_context",
            "category": "c",
            "task": "forecast",
            "sample_index": pd.array(list(range(n)), dtype="Int64"),
            "is_answered": answered if answered is not None else [True] * n,
            "parse_ok": parse_ok,
            "series": [history] * n,
            "future": [future] * n,
            "forecast": samples,
        }
    )


def test_sampled_forecast_is_the_median_of_its_usable_samples():
    future = np.array(SERIES[24:])
    history = np.array(SERIES[:24])
    a, b, c = future + 3.0, future - 1.0, future * 0.5
    frame = pd.concat(
        [
            rows([a, None, b, c], [True, False, True, True]),
            rows([None, None], [False, False], answered=[True, False], system="t"),
        ],
        ignore_index=True,
    )
    out = forecast_errors(frame).set_index("system_id")
    usable = np.array([a, b, c])
    point = np.median(usable, axis=0)
    scale = history.std()
    s = out.loc["s"]
    assert s["usable"] and s["n_samples"] == 4 and s["n_usable_samples"] == 3
    assert s["prompt_hash"] == "si0"  # the forecast is named by its first sample
    assert s["mae"] == pytest.approx(np.mean(np.abs(point - future)) / scale)
    step_crps = [crps_double_loop(usable[:, h], future[h]) for h in range(len(future))]
    assert s["crps"] == pytest.approx(np.mean(step_crps) / scale)
    span = history.max() - history.min()
    assert s["crps_minmax"] == pytest.approx(np.mean(step_crps) / span)
    # no usable sample: unusable, penalised like the MAE (worst usable, at least the baseline)
    t = out.loc["t"]
    assert not t["usable"] and t["is_answered"] and t["n_usable_samples"] == 0
    assert t["crps"] == pytest.approx(max(s["crps"], s["baseline_crps"]))
    assert s["baseline_crps"] == pytest.approx(s["baseline_mae"])


def test_one_greedy_reply_is_a_point_mass():
    future = np.array(SERIES[24:])
    frame = rows([future + 2.0], [True]).assign(sample_index=pd.array([None], dtype="Int64"))
    out = forecast_errors(frame)
    assert out["n_samples"][0] == 1
    assert out["crps"][0] == pytest.approx(out["mae"][0])
    assert out["crps_minmax"][0] == pytest.approx(out["mae_minmax"][0])


class FakeModel:
    """Only the identity a LanguageModelAnswerer reads when planning (no replies)."""

    system_id = "m"

    def fingerprint(self) -> str:
        return "fake"

    def sample_all(self, prompts, indices, temperature):
        raise AssertionError("planning never asks")


def test_each_sample_is_a_prompt_of_its_own_and_greedy_hashes_stay():
    one = LanguageModelAnswerer(FakeModel(), forecast_encoding="llmtime_gpt")
    greedy = one.requests([FORECAST])
    assert [r.sample_index for r in greedy] == [None] * 6  # six conditions
    request = greedy[0]
    # the greedy hash is the one it always was (hash without a sample)
    assert request.prompt_hash == prompt_hash(
        "m", one.fingerprint(), FORECAST, request.condition, request.messages
    )
    three = LanguageModelAnswerer(FakeModel(), forecast_samples=3, forecast_encoding="llmtime_gpt")
    five = LanguageModelAnswerer(FakeModel(), forecast_samples=5, forecast_encoding="llmtime_gpt")
    sampled = three.requests([FORECAST])
    assert [r.sample_index for r in sampled] == [0, 1, 2] * 6
    assert {r.temperature for r in sampled} == {REFERENCE_TEMPERATURES["llmtime_gpt"]} == {0.7}
    assert len({r.prompt_hash for r in sampled}) == 18
    assert request.prompt_hash not in {r.prompt_hash for r in sampled}
    # sample k has the same hash whatever N: a run with more samples asks only the new ones
    more = {r.prompt_hash for r in five.requests([FORECAST])}
    assert {r.prompt_hash for r in sampled} < more and len(more) == 30
    hotter = LanguageModelAnswerer(
        FakeModel(), forecast_samples=3, forecast_temperature=1.0, forecast_encoding="llmtime_gpt"
    )
    assert not {r.prompt_hash for r in hotter.requests([FORECAST])} & more
    assert LanguageModelAnswerer(FakeModel(), forecast_encoding="llmtime_llama", forecast_samples=2)
    with pytest.raises(TsrateError, match="temperature > 0"):
        LanguageModelAnswerer(FakeModel(), forecast_samples=3, forecast_temperature=0.0)
    with pytest.raises(TsrateError, match=">= 1"):
        LanguageModelAnswerer(FakeModel(), forecast_samples=0)


def test_answers_of_sampled_requests_keep_their_sample(monkeypatch):
    class Replies(FakeModel):
        def __init__(self):
            self.calls = []

        def complete_all(self, prompts):
            return ["A"] * len(prompts)

        def sample_all(self, prompts, indices, temperature):
            self.calls.append((len(prompts), [list(i) for i in indices], temperature))
            return [[f"{100 + i} ," * 6 for i in wanted] for wanted in indices]

    model = Replies()
    answerer = LanguageModelAnswerer(model, forecast_samples=3, forecast_encoding="llmtime_gpt")
    requests = answerer.requests([FORECAST])
    responses = answerer.answer(requests)
    assert model.calls == [(6, [[0, 1, 2]] * 6, 0.7)]  # one call per chat, all samples
    by_sample = {
        (r.condition, r.sample_index): resp for r, resp in zip(requests, responses, strict=True)
    }
    assert by_sample[("with_context", 2)].raw_text == "102 ," * 6
    assert all(resp.parse_ok for resp in responses)
    first = by_sample[("with_context", 0)].forecast
    assert by_sample[("with_context", 1)].forecast != first


def test_a_warehouse_made_before_sampling_gets_the_columns(tmp_path):
    import duckdb

    from tsrate.platform.warehouse import connect
    from tsrate.suites.lifecycle import start_suite_run
    from tsrate.suites.reasoning import storage

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema raw")
    con.execute(  # raw.rsn_prompts as the suite made it before sampled forecasts
        "create table raw.rsn_prompts (prompt_hash varchar primary key, system_id varchar "
        "not null, system_kind varchar not null, fingerprint varchar not null, item_id "
        "varchar not null, condition varchar not null, encoding varchar, messages json, "
        "created_at timestamp not null)"
    )
    con.execute(
        "insert into raw.rsn_prompts values ('old', 'm', 'language_model', 'f', 'i', "
        "'without_context', 'llmtime_gpt', null, now())"
    )
    con.close()
    answerer = LanguageModelAnswerer(FakeModel(), forecast_samples=2)
    requests = answerer.requests([FORECAST])
    with connect(path) as con:
        start_suite_run(con, "reasoning", "run", {}, {})  # the writing edge upgrades the schema
        storage.store_prompts(
            con, "run", requests, {"m": "language_model"}, {"m": answerer.fingerprint()}
        )
        rows = con.execute(
            "select prompt_hash, sample_index, temperature from raw.rsn_prompts order by all"
        ).fetchall()
    assert ("old", None, None) in rows  # greedy, as it was
    assert sorted(r[1] for r in rows if r[0] != "old") == [0] * 6 + [1] * 6
    assert {r[2] for r in rows if r[0] != "old"} == {1.0}  # llmtime_gpt4's, the default


pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")

from tests.support.chat_server import ChatServer  # noqa: E402
from tsrate.systems.llm import LlmSettings, LlmSystem  # noqa: E402


def settings(server, tmp_path) -> LlmSettings:
    return LlmSettings(
        base_url=server.base_url,
        model="sampler",
        api_key_env="",
        concurrency=2,
        retries=0,
        cache_dir=str(tmp_path / "cache"),
    )


def test_endpoint_samples_with_n_and_caches_each_sample(tmp_path):
    def several(payload):
        n = payload.get("n", 1)
        return 200, [f"reply {k} of {n} at {payload['temperature']}" for k in range(n)]

    chat = [{"role": "user", "content": "go"}]
    with ChatServer(several) as server:
        system = LlmSystem("sampler", settings(server, tmp_path))
        assert system.sample(chat, [0, 1, 2], 0.7) == [f"reply {k} of 3 at 0.7" for k in range(3)]
        assert len(server.payloads) == 1 and server.payloads[0]["n"] == 3
        assert server.payloads[0]["temperature"] == 0.7
        # cached per sample: asking 0..4 sends one request for the two missing samples
        again = system.sample(chat, [0, 1, 2, 3, 4], 0.7)
        assert again[:3] == [f"reply {k} of 3 at 0.7" for k in range(3)]
        assert again[3:] == ["reply 0 of 2 at 0.7", "reply 1 of 2 at 0.7"]
        assert len(server.payloads) == 2 and server.payloads[1]["n"] == 2
        assert system.sample_all([chat, chat], [[4], [0]], 0.7) == [[again[4]], [again[0]]]
        assert len(server.payloads) == 2  # from the cache
        # another temperature is another sample
        system.sample(chat, [0], 1.0)
        assert len(server.payloads) == 3 and "n" not in server.payloads[2]


def test_endpoint_that_ignores_n_is_asked_once_per_sample(tmp_path):
    count = {"k": 0}

    def one_choice(payload):
        count["k"] += 1
        return 200, f"reply {count['k']}"

    with ChatServer(one_choice) as server:
        system = LlmSystem("sampler", dataclasses.replace(settings(server, tmp_path), cache_dir=""))
        replies = system.sample([{"role": "user", "content": "go"}], [0, 1, 2], 0.7)
        assert sorted(replies) == ["reply 1", "reply 2", "reply 3"]
        assert [p.get("n") for p in server.payloads] == [3, 2, None]


def test_local_model_samples_are_stored_seeded_and_resumed(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import NUMBERS, save_bigram_model
    from tsrate.platform.warehouse import connect
    from tsrate.suites.reasoning.scenarios import GeneratorConfig
    from tsrate.suites.reasoning.suite import RunConfig, build_answerers, run_suite

    folder = save_bigram_model(tmp_path / "bigram", NUMBERS)
    monkeypatch.setenv("TSRATE_TINY_SAMPLER_MODEL_PATH", str(folder))
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "24")
    monkeypatch.setenv("TSRATE_HF_DEVICE", "cpu")
    config = RunConfig(
        generator=GeneratorConfig(seed=5, scenarios=4, forecasts=2, length=40),
        llms=("hf_local:tiny_sampler",),
        references=False,
        forecast_samples=3,
        forecast_temperature=4.0,  # a flat distribution: the samples differ
    )
    query = (
        "select p.item_id, p.condition, p.sample_index, p.temperature, r.raw_text, r.parse_ok "
        "from raw.rsn_prompts p join raw.rsn_responses r using (prompt_hash) "
        "where p.sample_index is not null order by all"
    )

    def sampled(warehouse):
        with connect(warehouse) as con:
            return con.execute(query).df()

    first = tmp_path / "a.duckdb"
    _, asked, _ = run_suite(first, config, progress=lambda _: None)
    stored = sampled(first)
    assert len(stored) == 2 * 6 * 3  # forecasts x conditions (Figure A.5) x samples
    assert sorted(set(stored["sample_index"])) == [0, 1, 2]
    assert (stored["temperature"] == 4.0).all()
    per_chat = stored.groupby(["item_id", "condition"])["raw_text"].nunique()
    assert (per_chat > 1).all()  # sampled, not one greedy reply three times
    # resumed: nothing is asked again
    _, again, reused = run_suite(first, config, progress=lambda _: None)
    assert again == 0 and reused == asked
    # seeded: a fresh warehouse draws the same replies
    second = tmp_path / "b.duckdb"
    run_suite(second, config, answerers=build_answerers(config), progress=lambda _: None)
    pd.testing.assert_frame_equal(sampled(second), stored)


def test_a_chats_samples_stay_in_one_chunk():
    from tsrate.suites.reasoning.suite import chunks

    other = dataclasses.replace(FORECAST, context="Nothing happens.")
    requests = LanguageModelAnswerer(FakeModel(), forecast_samples=3).requests([FORECAST, other])
    got = chunks(requests, 3)  # 12 chats of 3 samples: 3 chats a chunk
    assert [len(c) for c in got] == [9, 9, 9, 9]
    assert [r for c in got for r in c] == requests
    where = {}
    for number, chunk in enumerate(got):
        for r in chunk:
            where.setdefault((r.item.item_id, r.condition), set()).add(number)
    assert len(where) == 12 and all(len(chunks_of_chat) == 1 for chunks_of_chat in where.values())
    greedy = LanguageModelAnswerer(FakeModel()).requests([FORECAST, other])
    assert [len(c) for c in chunks(greedy, 3)] == [3, 3, 3, 3]
