"""A stand-in for the interpreter that `tsrate serve` starts Prefect's server with: it records
how it was started and answers as the server would (a child process: integration tests
only). No test here."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

from tsrate.platform import prefect_server

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


def put_stand_in(tmp_path: Path, monkeypatch, mode: str = "serve") -> SimpleNamespace:  # noqa: ANN001
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


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
