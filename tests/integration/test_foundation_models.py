"""Chronos and an LLM endpoint rated in a real warehouse: the tiny Chronos checkpoint and the
local chat-completions server (tiny GPT-2) the unit tests use too (tests/support/), through
`run_forecasts` and dbt."""

from __future__ import annotations

import pytest

from tests.integration.builds import forecast_and_build
from tests.support.chat_server import TEMPLATE, ChatServer, TinyDigitLM
from tests.support.tiny_models import make_checkpoint
from tests.support.warehouses import ingest, read, small_study

pytest.importorskip("chronos", reason="chronos-forecasting is not installed (extra `chronos`)")
pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
pytest.importorskip("transformers")

HORIZON = 5


@pytest.mark.slow
def test_chronos_and_llm_are_rated_beside_a_baseline(tmp_path, monkeypatch, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    monkeypatch.setenv("TSRATE_CHRONOS_MODEL", str(make_checkpoint(tmp_path / "chronos")))
    monkeypatch.setenv("TSRATE_LLM_MAX_TOKENS", str(len(TEMPLATE) * (HORIZON + 1)))
    study = small_study(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-10-03",
        study_end="2022-12-28",
        context_length=20,
        horizon=HORIZON,
        stride=10,
        systems=["naive", "chronos", "phi3_numeric"],
    )
    with ChatServer(TinyDigitLM()) as server:
        monkeypatch.setenv("TSRATE_PHI3_NUMERIC_BASE_URL", server.base_url)
        run_id = forecast_and_build(warehouse, study, dbt_target)
    counts = read(
        warehouse,
        "select system_id, perturbation_id, count(*) as n from marts.window_errors "
        "group by all order by all",
    )
    windows = read(warehouse, "select count(*) as n from raw.windows where run_id = ?", [run_id])[
        "n"
    ][0]
    assert set(counts["system_id"]) == {"naive", "chronos", "phi3_numeric"}
    assert (counts["n"] == windows).all() and len(counts) == 3 * 4
    assert len(server.payloads) == windows * 4  # one prompt per window and perturbation
