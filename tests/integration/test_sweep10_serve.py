"""``owned_prefect_server`` (tsrate.platform.prefect_server) against a stand-in Prefect: a
script put in place of the interpreter (``sys.executable``), started exactly as the real
server would be, that records its arguments, environment and parent-death signal and
answers ``/health`` on the port it was given (first ``503``s, then ``200``), or never
answers, or exits at once. The stand-in starts in a fraction of a second, where a real
Prefect server takes tens of seconds here; what it pins is tsrate's side: the command
line (host, the free port of the URL, ``--no-ui`` unless asked for the UI), the
environment (no inherited ``PREFECT_API_URL``, analytics off), the kernel's SIGKILL on
the parent's death, the wait for a 200 (polled every 0.2 s with a 2 s timeout), the
start timeout's 120 s default (on a fake clock, no waiting), the exit at start, the
``PREFECT_API_URL`` set inside the block only, and the server stopped and reaped after
it (terminated, waited on for 5 s).

Written for the mutation sweep of round 10 (tests/planted/sweep10_serve.json).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tsrate import TsrateError
from tsrate.platform import prefect_server
from tsrate.platform.prefect_server import _free_port, owned_prefect_server

pytestmark = pytest.mark.slow

#: the stand-in: ``MODE`` is "serve" (503 twice, then 200), "silent" or "exit"
STAND_IN = """#!{python}
import ctypes, json, os, sys, http.server
record = {{"argv": sys.argv[1:], "pid": os.getpid(),
          "api_url": os.environ.get("PREFECT_API_URL"),
          "analytics": os.environ.get("PREFECT_SERVER_ANALYTICS_ENABLED")}}
sig = ctypes.c_int(-1)
ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
record["pdeathsig"] = sig.value
with open({record!r}, "w") as out:
    json.dump(record, out)
print("stand-in started", flush=True)
mode = {mode!r}
if mode == "exit":
    sys.exit(3)
if mode == "silent":
    import time
    time.sleep(600)
port = int(sys.argv[sys.argv.index("--port") + 1])
answered = []

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status = 503 if len(answered) < 2 else 200
        answered.append(status)
        with open({answers!r}, "w") as out:
            json.dump(answered, out)
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


def _stand_in(tmp_path: Path, monkeypatch, mode: str = "serve") -> SimpleNamespace:  # noqa: ANN001
    """Put the stand-in in place of the interpreter; return where it records."""
    record, answers = tmp_path / "record.json", tmp_path / "answers.json"
    script = tmp_path / "python-stand-in"
    script.write_text(
        STAND_IN.format(python=sys.executable, record=str(record), answers=str(answers), mode=mode)
    )
    script.chmod(0o755)
    monkeypatch.setattr(prefect_server.sys, "executable", str(script))
    return SimpleNamespace(
        script=script,
        record=lambda: json.loads(record.read_text()),
        answers=lambda: json.loads(answers.read_text()),
    )


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _running(script: Path) -> list[int]:
    """The pids of processes (zombies included) running ``script``."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(script) in (entry / "cmdline").read_text():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def test_a_free_port_is_one_the_kernel_picked():
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    port = _free_port()
    assert isinstance(port, int) and low <= port <= high


def test_the_server_is_started_for_this_process_waited_for_and_stopped(tmp_path, monkeypatch):
    """Started as ``python -m prefect server start --host 127.0.0.1 --port P --no-ui``
    without the caller's PREFECT_API_URL, analytics off, killed by the kernel if this
    process dies; the block starts once the health check answers 200 (not before: two 503s
    first), polled every 0.2 s with a 2 s timeout; inside it PREFECT_API_URL (environment
    and Prefect's settings) is the server's; after it the variable is gone and the server
    terminated, waited on (5 s at most) and reaped."""
    import httpx
    from prefect.settings import PREFECT_API_URL

    stand_in = _stand_in(tmp_path, monkeypatch)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:1/api")  # the caller's: not passed
    polls, sleeps, waits = [], [], []
    real_get, real_wait = httpx.get, subprocess.Popen.wait

    def get(url: str, timeout: float):  # noqa: ANN202
        polls.append(timeout)
        return real_get(url, timeout=timeout)

    def wait(self, timeout=None):  # noqa: ANN001, ANN202
        waits.append(timeout)
        return real_wait(self, timeout=timeout)

    monkeypatch.setattr(httpx, "get", get)
    monkeypatch.setattr(subprocess.Popen, "wait", wait)
    real_sleep = __import__("time").sleep
    clock = SimpleNamespace(
        monotonic=lambda: 0.0, sleep=lambda s: (sleeps.append(s), real_sleep(s))
    )
    monkeypatch.setattr(prefect_server, "time", clock)
    with owned_prefect_server(timeout=60) as url:
        record = stand_in.record()
        port = url.removeprefix("http://127.0.0.1:").removesuffix("/api")
        assert url == f"http://127.0.0.1:{port}/api" and port.isdigit()
        assert record["argv"] == [
            "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", port, "--no-ui"
        ]  # fmt: skip
        assert record["api_url"] is None and record["analytics"] == "false"
        assert record["pdeathsig"] == 9  # SIGKILL
        assert stand_in.answers()[-1] == 200 and stand_in.answers().count(200) == 1
        assert os.environ["PREFECT_API_URL"] == url and str(PREFECT_API_URL.value()) == url
        assert _gone(record["pid"]) is False
    assert "PREFECT_API_URL" not in os.environ
    assert _gone(record["pid"]) is True  # terminated and reaped
    assert waits == [5]
    assert set(polls) == {2} and len(polls) >= 3
    assert sleeps and set(sleeps) == {0.2} and len(sleeps) == len(polls) - 1


def test_the_ui_is_started_when_asked_and_the_log_file_gets_the_output(tmp_path, monkeypatch):
    stand_in = _stand_in(tmp_path, monkeypatch)
    log = tmp_path / "server.log"
    with owned_prefect_server(ui=True, timeout=60, log_file=log):
        assert "--no-ui" not in stand_in.record()["argv"]
    assert log.read_text() == "stand-in started\n"


def test_a_server_that_exits_at_start_is_named_with_its_code(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, mode="exit")
    with pytest.raises(TsrateError) as caught:
        with owned_prefect_server(timeout=60):
            raise AssertionError("the block must not start")
    assert str(caught.value) == (
        "the Prefect server exited at start (code 3); start one yourself (`prefect server "
        "start`) and set PREFECT_API_URL"
    )


def test_a_server_that_never_answers_is_given_up_after_120_s_by_default(tmp_path, monkeypatch):
    """On a fake clock: the deadline is 120 s after the start, and only a time past it (not
    one equal to it) gives up, after a poll; then the server is stopped."""
    stand_in = _stand_in(tmp_path, monkeypatch, mode="silent")
    times = iter([0.0, 60.0, 120.0, 120.5, 1000.0, 1000.0])
    sleeps: list[float] = []
    monkeypatch.setattr(
        prefect_server, "time", SimpleNamespace(monotonic=lambda: next(times), sleep=sleeps.append)
    )
    with pytest.raises(TsrateError) as caught:
        with owned_prefect_server():
            raise AssertionError("the block must not start")
    assert str(caught.value) == (
        "the Prefect server did not answer within 120s; start one yourself (`prefect server "
        "start`) and set PREFECT_API_URL"
    )
    assert sleeps == [0.2, 0.2]  # polls at 60 and 120 went on, the one at 120.5 gave up
    assert _running(stand_in.script) == []  # stopped and reaped
