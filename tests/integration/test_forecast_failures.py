"""Failed windows and unavailable systems in a real run: a local chat-completions server that
answers some prompts with garbage or short lists, a real DuckDB warehouse, and (slow) dbt.

Rules tested: an unusable reply is stored in raw.forecast_failures with its raw text and
reason (its window absent from raw.forecasts, never zero-filled) and counted in the run
summary; an unavailable system is skipped with its reason in raw.run_skipped_systems and the
summary; a run with no available system fails before writing anything; downstream, a window
that any system failed is left out of window_errors for every system and perturbation, and
marts.forecast_failures_summary counts it.
"""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from tests.support.chat_server import ChatServer
from tests.support.warehouses import ingest, read, small_study
from tsrate import TsrateError
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts, run_problems

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")

HORIZON = 5
GARBAGE = "As an AI language model I cannot predict stock prices."
SHORT = "101.5, 102.25"


def prompt_kind(payload: dict) -> str:
    """Deterministic by prompt: about one prompt in 20 garbage, one in 20 short."""
    digest = hashlib.sha256(payload["messages"][-1]["content"].encode()).digest()[0] % 20
    return {0: "garbage", 1: "short"}.get(digest, "good")


def responder(payload: dict) -> tuple[int, str]:
    kind = prompt_kind(payload)
    if kind == "garbage":
        return 200, GARBAGE
    if kind == "short":
        return 200, SHORT
    return 200, ", ".join(f"{100 + step}.00" for step in range(HORIZON))


def study(systems: list[str]):
    return small_study(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-10-03",
        study_end="2022-12-28",
        context_length=20,
        horizon=HORIZON,
        stride=1,
        systems=systems,
    )


@pytest.fixture()
def llm_env(tmp_path, monkeypatch):
    for name in ("GEMINI_API_KEY", "TSRATE_GEMINI_NUMERIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "llm-cache"))
    monkeypatch.setenv("TSRATE_LLM_BACKOFF_S", "0.01")
    with ChatServer(responder) as server:
        monkeypatch.setenv("TSRATE_PHI3_NUMERIC_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_PHI3_NUMERIC_MODEL", "test-model")
        yield server


def forecast(warehouse, systems):
    with connect(warehouse) as con:
        summary = run_forecasts(
            con, study(systems), load_companies(), workers=1, progress=lambda line: None
        )
        finish_run(con, summary.run_id, "forecasted")
    return summary


@pytest.fixture()
def failed_run(tmp_path, llm_env):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    summary = forecast(warehouse, ["naive", "phi3_numeric", "gemini_numeric"])
    return warehouse, summary, llm_env


def test_failed_replies_are_stored_with_raw_text_and_counted(failed_run):
    warehouse, summary, server = failed_run
    kinds = [prompt_kind(p) for p in server.payloads]
    assert "good" in kinds and {"garbage", "short"} <= set(kinds)  # the fixture fails some
    failures = read(warehouse, "select * from raw.forecast_failures order by all")
    assert len(failures) == kinds.count("garbage") + kinds.count("short")
    assert set(failures["system_id"]) == {"phi3_numeric"}
    assert set(failures["run_id"]) == {summary.run_id}
    garbage = failures[failures["raw_text"] == GARBAGE]
    short = failures[failures["raw_text"] == SHORT]
    assert len(garbage) == kinds.count("garbage") and len(short) == kinds.count("short")
    assert (garbage["reason"] == "unparseable reply: no numbers in the reply").all()
    assert short["reason"].str.contains(f"short answer.*expected {HORIZON}").all()
    assert summary.failed_windows == {"phi3_numeric": len(failures)}
    assert any(
        "phi3_numeric: " in line and "window(s) without a forecast" in line
        for line in summary.describe_problems()
    )

    # the failed windows are absent from raw.forecasts (no zero-filled rows), the rest intact
    stored = read(
        warehouse,
        "select ticker, window_end_date, perturbation_id, count(*) n from raw.forecasts "
        "where system_id = 'phi3_numeric' group by all",
    )
    windows = read(warehouse, "select count(*) n from raw.windows")["n"][0]
    assert len(stored) + len(failures) == windows * 4
    assert (stored["n"] == HORIZON).all()
    overlap = stored.merge(failures, on=["ticker", "window_end_date", "perturbation_id"])
    assert overlap.empty
    zero = "select count(*) n from raw.forecasts where system_id = 'phi3_numeric' and forecast = 0"
    assert read(warehouse, zero)["n"][0] == 0


def test_unavailable_system_is_skipped_with_its_reason(failed_run):
    warehouse, summary, _ = failed_run
    assert list(summary.skipped_systems) == ["gemini_numeric"]
    assert "GEMINI_API_KEY" in summary.skipped_systems["gemini_numeric"]
    assert any(line.startswith("skipped gemini_numeric: ") for line in summary.describe_problems())
    skipped = read(warehouse, "select * from raw.run_skipped_systems")
    assert skipped[["run_id", "system_id"]].values.tolist() == [[summary.run_id, "gemini_numeric"]]
    assert "set GEMINI_API_KEY" in skipped["reason"][0]
    systems = read(warehouse, "select distinct system_id from raw.forecasts order by 1")
    assert systems["system_id"].tolist() == ["naive", "phi3_numeric"]
    # what `tsrate run` prints after the pipeline, read back from the warehouse
    with connect(warehouse, read_only=True) as con:
        assert run_problems(con, summary.run_id) == summary.describe_problems()


def test_a_rerun_reuses_partitions_and_still_counts_their_failures(failed_run):
    warehouse, first, server = failed_run
    requests = len(server.payloads)
    second = forecast(warehouse, ["naive", "phi3_numeric", "gemini_numeric"])
    assert second.computed == 0 and second.reused == first.partitions
    assert second.failed_windows == first.failed_windows
    assert len(server.payloads) == requests


def test_a_run_with_no_available_system_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("TSRATE_PHI3_NUMERIC_BASE_URL", raising=False)
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL"])
    with connect(warehouse) as con:
        with pytest.raises(TsrateError) as caught:
            run_forecasts(con, study(["gemini_numeric", "phi3_numeric"]), load_companies())
        runs = con.execute("select count(*) from raw.runs").fetchone()[0]
    message = str(caught.value)
    assert message.startswith("none of the run's systems can run here")
    assert "gemini_numeric: " in message and "phi3_numeric: no endpoint configured" in message
    assert runs == 0
    # an unknown system is still an error, not a skip
    with connect(warehouse) as con, pytest.raises(TsrateError, match="unknown system 'nope'"):
        run_forecasts(con, study(["naive", "nope"]), load_companies())


@pytest.mark.slow
def test_failed_windows_leave_the_marts_for_every_system(failed_run, dbt_target):
    warehouse, summary, _ = failed_run
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select="+window_errors +forecast_failures_summary +perturbation_effects "
        "stg_run_skipped_systems systems perturbations",
    )
    failed = read(warehouse, "select distinct ticker, window_end_date from raw.forecast_failures")
    errors = read(warehouse, "select * from marts.window_errors")
    assert errors.merge(failed, on=["ticker", "window_end_date"]).empty  # for every system
    windows = read(warehouse, "select count(*) n from raw.windows")["n"][0]
    per_cell = errors.groupby(["system_id", "perturbation_id"]).size()
    assert (per_cell == windows - len(failed)).all() and len(per_cell) == 2 * 4

    summary_mart = read(warehouse, "select * from marts.forecast_failures_summary order by all")
    assert len(summary_mart) == 2 * 4
    assert (summary_mart["n_windows"] == windows).all()
    assert (summary_mart["n_windows_excluded"] == len(failed)).all()
    assert (summary_mart["n_windows_rated"] == windows - len(failed)).all()
    phi3 = summary_mart[summary_mart["system_id"] == "phi3_numeric"]
    assert phi3["n_failed_windows"].sum() == summary.failed_windows["phi3_numeric"]
    naive = summary_mart[summary_mart["system_id"] == "naive"]
    assert (naive["n_failed_windows"] == 0).all() and naive["most_common_reason"].isna().all()

    # the robustness marts still see a complete grid for each system
    effects = read(warehouse, "select distinct system_id from marts.perturbation_effects")
    assert set(effects["system_id"]) == {"naive", "phi3_numeric"}
    skipped = read(warehouse, "select system_id from staging.stg_run_skipped_systems")
    assert skipped["system_id"].tolist() == ["gemini_numeric"]


def test_replies_are_cached_beside_the_warehouse_and_reused_by_a_forced_run(
    tmp_path, llm_env, monkeypatch
):
    import os

    monkeypatch.delenv("TSRATE_LLM_CACHE_DIR")
    warehouse = tmp_path / "w" / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    small = dataclasses.replace(study(["phi3_numeric"]), perturbations=("P0",))
    with connect(warehouse) as con:
        first = run_forecasts(con, small, load_companies(), workers=1, progress=lambda x: None)
        requests = len(llm_env.payloads)
        forced = run_forecasts(
            con, small, load_companies(), workers=1, force=True, progress=lambda x: None
        )
    assert requests > 0 and len(llm_env.payloads) == requests  # the forced run asked nobody
    assert forced.computed == first.computed  # recomputed, but from the cache
    assert len(list((tmp_path / "w" / "cache" / "llm").rglob("*.json"))) == requests
    assert "TSRATE_LLM_CACHE_DIR" not in os.environ
