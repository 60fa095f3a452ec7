"""A language model registered under its own id (`tsrate register-llm`) forecasts on a Dask
cluster: a real local cluster (one worker process, two threads) started before the runs, as
a cluster of `--dask tcp://...` is, so its worker does not share the run's environment, and
the local OpenAI-compatible server of tests/support/chat_server.py (the context's last
value + 1 %).

Rules tested: every window of the registered id is asked of its registered endpoint and
model from the cluster's worker, its partition files land and its forecasts are the
server's replies; the registration is read in the flow's process only (the worker is given
it with each task); re-registering another model makes the next run on the same cluster,
whose worker keeps the systems it built, ask that one. The worker side without a cluster:
tests/unit/test_registered_llm_workers.py.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from tests.support.chat_server import ChatServer
from tests.support.warehouses import ingest, read
from tsrate.systems import registered
from tsrate.systems.registered import Registration

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
pytestmark = pytest.mark.slow

OVERRIDES = {
    "study_tickers": "AAPL",
    "study_start": "2022-09-01",
    "study_end": "2022-11-30",
    "context_length": 30,
    "horizon": 5,
    "stride": 5,
    "systems": "my_llm",  # alone: the worker keeps its system between the runs
    "perturbations": "P0,P1",
}


def responder(payload: dict) -> tuple[int, str]:
    """The context's last value + 1 %, as many times as the prompt asks."""
    prompt = payload["messages"][-1]["content"]
    values = re.findall(r"\d+\.\d+", prompt)
    horizon = int(re.search(r"Forecast the next (\d+)", prompt).group(1))
    return 200, ", ".join([f"{float(values[-1]) * 1.01:.2f}"] * horizon)


def test_a_registered_llm_forecasts_on_a_local_dask_cluster(tmp_path, monkeypatch, prefect_harness):
    pytest.importorskip("prefect_dask")
    from distributed import LocalCluster

    from flows.forecast import forecast_flow
    from tsrate.platform.warehouse import connect
    from tsrate.robustness.forecast.distributed import dask_task_runner, partition_folder

    monkeypatch.delenv(registered.ENV, raising=False)
    for key in ("BASE_URL", "MODEL", "API_KEY_ENV"):
        monkeypatch.delenv(f"TSRATE_MY_LLM_{key}", raising=False)
    # the cluster's workers take this process's environment: replies cached in tmp_path
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "cache"))
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    ingest(warehouse, ["AAPL"])

    def run_on_dask(model: str) -> object:
        with connect(warehouse) as con:
            registered.register(
                con, Registration("my_llm", "My LLM", server.base_url, model, "", "numeric")
            )
        assert registered.ENV not in os.environ  # the workers get it from no environment
        runner = dask_task_runner(cluster.scheduler_address)  # tcp://127.0.0.1:PORT
        return forecast_flow.with_options(task_runner=runner)(
            overrides=OVERRIDES, warehouse=str(warehouse)
        )

    with (
        ChatServer(responder) as server,
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None
        ) as cluster,
    ):
        summary = run_on_dask("tiny-a")
        assert (summary.computed, summary.reused) == (2, 0), summary.describe_problems()
        windows = read(warehouse, "select count(*) n from raw.windows")["n"][0]
        assert windows > 0
        assert len(server.payloads) == 2 * windows  # every window once per perturbation
        assert {p["model"] for p in server.payloads} == {"tiny-a"}
        asked = len(server.payloads)

        again = run_on_dask("tiny-b")  # re-registered: asked anew of the new model
        assert (again.computed, again.reused) == (2, 0)  # none reused: another model
        assert [p["model"] for p in server.payloads[asked:]] == ["tiny-b"] * asked

    partitions = read(
        warehouse,
        "select input_key from raw.forecast_partitions where system_id = 'my_llm'",
    )["input_key"]
    assert len(partitions) == 2 * 2  # P0, P1 per registration
    folder = partition_folder(warehouse)
    assert all((folder / f"{key}.parquet").exists() for key in partitions)
    got = read(  # P0: the context's last value is the window's own close
        warehouse,
        "select f.run_id, f.forecast, i.input_value from raw.forecasts f "
        "join raw.perturbed_inputs i on i.run_id = f.run_id and i.ticker = f.ticker "
        "and i.perturbation_id = f.perturbation_id and i.price_date = f.window_end_date "
        "where f.system_id = 'my_llm' and f.perturbation_id = 'P0'",
    )
    assert len(got) == 2 * windows * 5  # both runs, every window, every step
    expected = np.round(got["input_value"].to_numpy(), 2) * 1.01
    np.testing.assert_allclose(got["forecast"].to_numpy(), expected, atol=0.006)
