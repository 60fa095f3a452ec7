"""The worker side of a registered language model (tsrate.systems.registered) on a Dask
cluster, in this process: a worker shares nothing of the run's environment, so the
registrations travel with each partition task (tsrate.robustness.forecast.distributed's
``forecast_partition_file``) and the system is built with them exported; a worker keeps the
systems it built between runs, so a changed registration builds anew. The local OpenAI-
compatible server of tests/support/chat_server.py answers in a thread (the context's last
value + 1 %). A real cluster: tests/integration/test_registered_llm_dask.py.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from tests.support.chat_server import ChatServer
from tsrate import TsrateError
from tsrate.config import Study, load_companies
from tsrate.robustness.forecast import distributed
from tsrate.robustness.forecast.execute import forecast_partition
from tsrate.robustness.forecast.plan import Partition
from tsrate.systems import registered
from tsrate.systems.base import ForecastBatch
from tsrate.systems.registered import Registration

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")

STUDY = Study.from_mapping(
    dict(
        study_tickers=["AAPL"],
        study_start="2022-01-03",
        study_end="2022-03-01",
        context_length=4,
        horizon=2,
        systems=["my_llm"],
        perturbations=["P0"],
    )
)
BATCH = ForecastBatch(
    ticker="AAPL",
    perturbation_id="P0",
    window_end_dates=np.array(["2022-01-06", "2022-01-07"], dtype="datetime64[D]"),
    contexts=np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 6.0]]),
    horizon=2,
    clean_futures=np.ones((2, 2)),
    study_range=(1.0, 6.0),
)


def responder(payload: dict) -> tuple[int, str]:
    """The context's last value + 1 %, as many times as the prompt asks."""
    prompt = payload["messages"][-1]["content"]
    values = re.findall(r"\d+\.\d+", prompt)
    horizon = int(re.search(r"Forecast the next (\d+)", prompt).group(1))
    return 200, ", ".join([f"{float(values[-1]) * 1.01:.2f}"] * horizon)


@pytest.fixture
def worker_environment(monkeypatch, tmp_path):
    """A worker's environment: no registrations, no per-system settings, its own cache."""
    monkeypatch.delenv(registered.ENV, raising=False)
    for key in ("BASE_URL", "MODEL", "API_KEY_ENV"):
        monkeypatch.delenv(f"TSRATE_MY_LLM_{key}", raising=False)
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")


def test_a_task_carries_the_registrations_its_worker_builds_with(tmp_path, worker_environment):
    partition = Partition("my_llm", "AAPL", "P0", "key-a")
    args = (STUDY.to_json(), load_companies(), partition, BATCH, str(tmp_path))
    with ChatServer(responder) as server:
        mine = Registration("my_llm", "My LLM", server.base_url, "tiny-a", "", "numeric")
        path = distributed.forecast_partition_file(*args, registered=(mine,))
        assert registered.ENV not in os.environ  # exported for the build only
        forecasts, _ = distributed.read_partition_file(path, partition, BATCH)
        np.testing.assert_allclose(forecasts, [[4.04, 4.04], [6.06, 6.06]])
        assert [p["model"] for p in server.payloads] == ["tiny-a", "tiny-a"]

        # the same worker, the id registered again at another model: built anew
        other = Registration("my_llm", "My LLM", server.base_url, "tiny-b", "", "numeric")
        distributed.forecast_partition_file(*args, reuse_file=False, registered=(other,))
        assert [p["model"] for p in server.payloads[2:]] == ["tiny-b", "tiny-b"]

        # a task without them: the worker does not know the id (it never reads a warehouse)
        with pytest.raises(TsrateError, match="unknown system 'my_llm'"):
            distributed.forecast_partition_file(*args, reuse_file=False)
        assert len(server.payloads) == 4


def test_a_pool_worker_builds_with_the_registrations_of_its_environment(worker_environment):
    """The local path: the run exports them and its workers (or this process) take them."""
    with ChatServer(responder) as server:
        mine = Registration("my_llm", "My LLM", server.base_url, "tiny-c", "", "numeric")
        with registered.exported([mine]):  # as the run exports them for its pool's workers
            forecasts, *_ = forecast_partition(STUDY.to_json(), load_companies(), "my_llm", BATCH)
        np.testing.assert_allclose(forecasts, [[4.04, 4.04], [6.06, 6.06]])
        assert [p["model"] for p in server.payloads] == ["tiny-c", "tiny-c"]
        # the next run in this process (one worker: no pool), the id registered again
        other = Registration("my_llm", "My LLM", server.base_url, "tiny-d", "", "numeric")
        with registered.exported([other]):
            forecast_partition(STUDY.to_json(), load_companies(), "my_llm", BATCH)
        assert [p["model"] for p in server.payloads[2:]] == ["tiny-d", "tiny-d"]
