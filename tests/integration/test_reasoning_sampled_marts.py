"""The reasoning suite's 20-sample LLMTime mode end to end: a local OpenAI-compatible
server answers each forecast chat with N different completions (the ``n`` parameter);
the flow stores one response per sample, a rerun asks nothing, and the real dbt build
scores the median forecast and the CRPS, checked here from the raw tables."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.support.rating_properties import assert_ratings_never_mislead
from tests.support.warehouses import read

pytestmark = pytest.mark.slow

TINY = {"seed": 11, "scenarios": 4, "forecasts": 3, "length": 60}
N = 3
LEVELS = (100.0, None, 300.0)  # sample 1 is unparseable: the median of samples 0 and 2


def test_sampled_forecasts_give_median_and_crps_in_the_marts(
    tmp_path, monkeypatch, prefect_harness, dbt_target
):
    pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
    from flows.reasoning import reasoning_flow
    from tests.support.chat_server import ChatServer

    def responder(payload):
        prompt = payload["messages"][-1]["content"]
        if "Continue the series" not in prompt:
            return 200, "Answer: A"
        horizon = int(re.search(r"write the next (\d+) values", prompt).group(1))
        replies = [
            "I would rather not say." if level is None else ", ".join([f"{level:.1f}"] * horizon)
            for level in LEVELS
        ]
        return 200, replies[: payload.get("n", 1)]

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")  # resuming must not rely on the cache
    with ChatServer(responder) as server:
        monkeypatch.setenv("TSRATE_SAMPLER_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_SAMPLER_MODEL", "three-ways")
        warehouse = tmp_path / "tsrate.duckdb"
        options = dict(
            generator=TINY,
            llms=["endpoint:sampler"],
            forecast_encoding="plain",
            forecast_samples=N,
            warehouse=str(warehouse),
        )
        reasoning_flow(**options, fracast=0, target_path=str(dbt_target))
        forecasts = [p for p in server.payloads if "Continue the series" in str(p["messages"])]
        assert len(forecasts) == 3 * 6  # one request per chat (6 conditions): n = 3
        assert {p["n"] for p in forecasts} == {N} and {p["temperature"] for p in forecasts} == {0.7}
        asked = len(server.payloads)
        reasoning_flow(**options, fracast=0, build=False)
        assert len(server.payloads) == asked  # every sample stored: nothing asked twice

    stored = read(
        warehouse,
        "select p.sample_index, r.parse_ok from raw.rsn_prompts p "
        "join raw.rsn_responses r using (prompt_hash) "
        "where p.system_id = 'sampler' and p.sample_index is not null",
    )
    assert len(stored) == 3 * 6 * N
    assert stored.groupby("sample_index")["parse_ok"].all().tolist() == [True, False, True]
    unparseable = read(
        warehouse,
        "select sample_index from marts.rsn_unparseable_responses where system_id = 'sampler'",
    )
    assert unparseable["sample_index"].tolist() == [1] * 18

    # the median and CRPS, computed here from the raw items
    items = read(
        warehouse, "select item_id, series, future from raw.rsn_items where task = 'forecast'"
    )
    mae, crps = [], []
    for row in items.itertuples():
        history, future = np.asarray(row.series), np.asarray(row.future)
        scale = history.std()
        median = np.full(future.shape, 200.0)  # median of 100 and 300
        mae.append(np.mean(np.abs(median - future)) / scale)
        pairs = [abs(a - b) for a in (100.0, 300.0) for b in (100.0, 300.0)]
        per_step = [
            np.mean([abs(100.0 - y), abs(300.0 - y)]) - 0.5 * np.mean(pairs) for y in future
        ]
        crps.append(np.mean(per_step) / scale)
    errors = read(
        warehouse, "select * from marts.rsn_forecast_errors where system_id = 'sampler'"
    ).set_index("condition")
    assert len(errors) == 6  # the Figure A.5 context combinations
    for condition in errors.index:
        row = errors.loc[condition]
        assert row["n_items"] == 3 and row["n_scored"] == 3 and row["n_unparseable"] == 0
        assert row["n_samples"] == 3 * N and row["n_usable_samples"] == 3 * 2
        assert row["mae"] == pytest.approx(np.mean(mae))
        assert row["crps"] == pytest.approx(np.mean(crps))
        assert row["crps_ci_low"] <= row["crps"] <= row["crps_ci_high"]
    references = read(
        warehouse, "select * from marts.rsn_forecast_errors where system_id <> 'sampler'"
    )
    assert (references["n_samples"] == references["n_items"]).all()
    assert np.allclose(references["crps"], references["mae"])  # point masses
    ratings = read(warehouse, "select * from marts.rsn_ratings")
    assert "crps" in set(ratings["metric"])
    assert_ratings_never_mislead(ratings, ["suite_run_id", "metric", "task"])
    report = (tmp_path / "reports" / "reasoning.html").read_text()
    assert "CRPS" in report
