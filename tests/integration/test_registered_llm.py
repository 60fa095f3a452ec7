"""A language model registered under its own id (`tsrate register-llm`) is rated by `tsrate
run` as a user runs it: a local OpenAI-compatible server (tests/support/chat_server.py)
answers every prompt deterministically (the context's last value + 1 %, d times), the
commands run as child processes, and the real project's dbt builds the marts.

Rules tested: refusals (a seed id, a bad URL, a key given instead of its variable's name)
write nothing, not even the warehouse file; a registration lists in `tsrate systems`; a run
with `--systems naive,ID` sends every window to the registered endpoint and model (forecast
workers included), and the marts rate ID (marts.ratings) and name it (marts.system_catalog,
origin registered; the report); a typo in --systems gets a did-you-mean naming it; the next
run without it keeps it in the study's marts; re-registering another endpoint and model
makes the next run forecast it anew there (none of its partitions reused).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import duckdb
import pytest

from tests.support.chat_server import ChatServer
from tests.support.systems_listing import listing_entries
from tsrate.config import project_dir

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
pytestmark = pytest.mark.slow

CHECKOUT = f"{project_dir() / 'src'}{os.pathsep}{project_dir()}"  # this checkout's tsrate
STUDY = ["--tickers", "AAPL,JPM", "--start", "2022-09-01", "--end", "2022-12-28",
         "--context-length", "30", "--horizon", "5", "--stride", "5",
         "--perturbations", "P0,P1", "--workers", "2"]  # fmt: skip


def responder(payload: dict) -> tuple[int, str]:
    """The context's last value + 1 %, as many times as the prompt asks."""
    prompt = payload["messages"][-1]["content"]
    values = re.findall(r"\d+\.\d+", prompt)
    horizon = int(re.search(r"Forecast the next (\d+)", prompt).group(1))
    return 200, ", ".join([f"{float(values[-1]) * 1.01:.2f}"] * horizon)


def tsrate(tmp_path, warehouse, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TSRATE_WAREHOUSE=str(warehouse))
    env.update(TSRATE_LLM_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=CHECKOUT)
    env.pop("TSRATE_PUBLISHED", None)
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        cwd=project_dir(), env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def query(path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_registered_llm_is_run_rated_listed_and_re_registered(tmp_path):
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    published = warehouse.parent / "published" / "tsrate.duckdb"
    with ChatServer(responder) as server:
        url = server.base_url
        for argv, said in [
            (["naive", "--base-url", url, "--model", "m"], "'naive' is a system of seeds/systems.csv"),
            (["my_llm", "--base-url", url[:-3], "--model", "m"], "must be http(s)://HOST[:PORT]/.../v1"),
            (["my_llm", "--base-url", url, "--model", "m", "--api-key-env", "sk-secret-1"],
             "not the NAME of an environment variable"),
        ]:  # fmt: skip
            refused = tsrate(tmp_path, warehouse, "register-llm", *argv)
            assert refused.returncode == 2, refused.stderr
            assert said in refused.stderr and "nothing was stored" in refused.stderr
            assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
            assert "sk-secret-1" not in refused.stderr
        assert not warehouse.parent.exists()  # nothing written, not even the lock file

        done = tsrate(tmp_path, warehouse, "register-llm", "my_llm", "--base-url", url,
                      "--model", "tiny-a", "--display-name", "My LLM")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "registered language model 'my_llm' (My LLM): model tiny-a" in done.stdout
        listed = tsrate(tmp_path, warehouse, "systems")
        assert listed.returncode == 0, listed.stderr
        line = next(x for x in listing_entries(listed.stdout) if x.startswith("my_llm "))
        assert "available" in line and "unavailable" not in line and "My LLM" in line
        assert "model tiny-a at " + url in line

        typo = tsrate(tmp_path, warehouse, "run", *STUDY, "--systems", "naive,my_lml")
        assert typo.returncode == 2 and "did you mean 'my_llm'?" in typo.stderr, typo.stderr

        run = tsrate(tmp_path, warehouse, "run", *STUDY, "--systems", "naive,my_llm")
        assert run.returncode == 0, run.stderr[-3000:]
        asked = len(server.payloads)
        windows = query(warehouse, "select count(*) from raw.windows")[0][0]
        assert asked == 2 * windows  # every window once per perturbation (P0, P1)
        assert {p["model"] for p in server.payloads} == {"tiny-a"}
        rated = query(published, "select count(*) from marts.ratings where system_id = 'my_llm'")
        assert rated[0][0] > 0
        catalog = query(
            published,
            "select display_name, origin, implementation from marts.system_catalog "
            "where system_id = 'my_llm'",
        )
        assert catalog == [("My LLM", "registered", "tsrate.systems.llm:my_llm")]
        report = (published.parent / "report.html").read_text()
        assert "<td><code>my_llm</code></td><td>My LLM</td>" in report

        # the next run, without it: still rated in the study's marts, nothing asked
        later = tsrate(tmp_path, warehouse, "run", *STUDY, "--systems", "naive")
        assert later.returncode == 0, later.stderr[-3000:]
        assert len(server.payloads) == asked
        rated = query(published, "select count(*) from marts.ratings where system_id = 'my_llm'")
        assert rated[0][0] > 0

        # re-registered: the next run forecasts it anew at the new model, none reused
        again = tsrate(tmp_path, warehouse, "register-llm", "my_llm", "--base-url", url,
                       "--model", "tiny-b", "--display-name", "My LLM")  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert "re-registered 'my_llm'" in again.stdout and "was model tiny-a" in again.stdout
        anew = tsrate(tmp_path, warehouse, "run", *STUDY, "--systems", "naive,my_llm",
                      "--select", "+ratings")  # fmt: skip
        assert anew.returncode == 0, anew.stderr[-3000:]
        assert [p["model"] for p in server.payloads[asked:]] == ["tiny-b"] * asked
    partitions = query(
        warehouse,
        "select count(distinct partition_key) from raw.forecast_partitions "
        "where system_id = 'my_llm'",
    )
    assert partitions[0][0] == 2 * 2 * 2  # 2 tickers x 2 perturbations, per registration
