"""The MOMENT bridge's process handling (tsrate.systems.moment_model) against the small errors
a mutation sweep plants in it (round 9; survivors: tests/planted/sweep9_systems.json).

``test_moment_bridge.py`` runs the worker with this interpreter and checks a round trip and
one failure. What it cannot see is *which* arguments reach the worker, and the probe's and
the error messages' details. Here the "interpreter" handed to the bridge is a small
executable script written in the test: it records the arguments it was started with and a
copy of the contexts file, then either runs the real worker with this interpreter or plays
a worker that misbehaves in one stated way (prints a banner before its probe's JSON, lacks
torch or momentfm, writes a long stderr, never finishes). The expectations are the
protocol's own documented values (tsrate.systems._moment_worker's arguments, the defaults
in moment_model's docstring), never the bridge's output read back.

Processes are started (the stub interpreters), so this lives in tests/integration/; a few
seconds in all.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tsrate.systems import moment_model
from tsrate.systems.base import ForecastBatch
from tsrate.systems.moment_model import MomentBridgeError, MomentSystem

pytestmark = pytest.mark.slow

D = 3


def make_batch() -> ForecastBatch:
    contexts = np.array([[1.5, 2.5, 3.5, 4.5], [7.0, np.nan, 9.0, np.nan]])
    return ForecastBatch(
        "AAPL",
        "P3",
        np.array(["2022-01-03", "2022-01-04"], dtype="datetime64[D]"),
        contexts,
        D,
        np.zeros((2, D)),
        (0.0, 1.0),
    )


def stub(folder: Path, body: str, name: str = "stub-python") -> Path:
    """An executable "interpreter": records its arguments (one JSON line in args.jsonl) and
    a copy of the ``--input`` file, then runs ``body`` (Python, with ``argv`` in scope)."""
    path = folder / name
    log = folder / "args.jsonl"
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, os, shutil, sys\n"
        "argv = sys.argv[1:]\n"
        f"with open({str(log)!r}, 'a') as handle:\n"
        "    handle.write(json.dumps(argv) + '\\n')\n"
        "if '--input' in argv:\n"
        f"    shutil.copy(argv[argv.index('--input') + 1], {str(folder / 'seen.npy')!r})\n" + body
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


#: run the real worker with this interpreter
REAL_WORKER = f"os.execv({sys.executable!r}, [{sys.executable!r}, *argv])\n"


def recorded(folder: Path) -> list[list[str]]:
    return [json.loads(line) for line in (folder / "args.jsonl").read_text().splitlines()]


def test_the_worker_gets_every_setting_and_the_contexts_as_float64(tmp_path):
    python = stub(tmp_path, REAL_WORKER)
    system = MomentSystem(
        str(python), model="some/model", batch_size=3, device="cpu", backend="last-observed"
    )
    batch = make_batch()
    out = system.predict(batch)
    np.testing.assert_array_equal(out, [[4.5] * D, [9.0] * D])  # the last observed values
    (argv,) = recorded(tmp_path)
    assert argv[0] == str(Path(moment_model.__file__).with_name("_moment_worker.py"))
    options = dict(zip(argv[1::2], argv[2::2], strict=True))
    assert options.keys() == {
        "--input",
        "--output",
        "--horizon",
        "--backend",
        "--model",
        "--batch-size",
        "--device",
    }
    assert Path(options["--input"]).name == "contexts.npy"
    assert Path(options["--output"]).name == "forecasts.npy"
    assert Path(options["--input"]).parent == Path(options["--output"]).parent
    assert (options["--horizon"], options["--backend"], options["--model"]) == (
        "3",
        "last-observed",
        "some/model",
    )
    assert (options["--batch-size"], options["--device"]) == ("3", "cpu")
    seen = np.load(tmp_path / "seen.npy")
    assert seen.dtype == np.float64
    np.testing.assert_array_equal(seen, batch.contexts)
    assert not Path(options["--input"]).parent.exists()  # the temporary folder is removed


def test_the_documented_defaults_reach_the_worker(tmp_path):
    python = stub(tmp_path, REAL_WORKER)
    system = MomentSystem(str(python), backend="last-observed")
    system.predict(make_batch())
    (argv,) = recorded(tmp_path)
    options = dict(zip(argv[1::2], argv[2::2], strict=True))
    assert (options["--model"], options["--batch-size"], options["--device"]) == (
        "AutonLab/MOMENT-1-large",
        "16",
        "auto",
    )


class RecordingRun:
    """``subprocess.run`` itself, with each call's keyword arguments kept."""

    def __init__(self):
        self.calls = []
        self.real = subprocess.run

    def __call__(self, command, **kwargs):
        self.calls.append(kwargs)
        return self.real(command, **kwargs)


def test_the_probe_waits_60_s_and_a_forecast_the_configured_timeout(tmp_path, monkeypatch):
    run = RecordingRun()
    monkeypatch.setattr(subprocess, "run", run)
    python = stub(tmp_path, REAL_WORKER)
    system = MomentSystem(str(python), timeout_s=123.0, backend="last-observed")
    assert system.availability().available
    system.predict(make_batch())
    assert [call["timeout"] for call in run.calls] == [60, 123.0]
    assert MomentSystem(str(python)).timeout_s == 3600.0  # the documented default


def test_a_worker_past_its_timeout_is_named_with_the_setting(tmp_path):
    python = stub(tmp_path, "import time\ntime.sleep(30)\n")
    system = MomentSystem(str(python), timeout_s=1.4)
    with pytest.raises(MomentBridgeError) as caught:
        system.predict(make_batch())
    message = str(caught.value)
    assert message.startswith("system 'moment', ticker AAPL, perturbation P3: ")
    assert "ran past 1s (TSRATE_MOMENT_TIMEOUT_S)" in message


def test_the_probe_reads_its_last_line(tmp_path):
    """An environment whose interpreter prints a line of its own first (a sitecustomize
    banner): the probe's JSON is the last line."""
    body = (
        "if argv[1:] == ['--probe']:\n"
        "    print('welcome to the moment environment')\n"
        "    print(json.dumps({'python': '3.11.1', 'numpy': '1.25.2', "
        "'momentfm': True, 'torch': True}))\n"
    )
    system = MomentSystem(str(stub(tmp_path, body)))
    assert system.probe()["numpy"] == "1.25.2"
    availability = system.availability()
    assert availability.available
    assert availability.reason == (
        f"AutonLab/MOMENT-1-large via {system.python} (python 3.11.1, numpy 1.25.2); "
        "weights are read offline from that environment"
    )


@pytest.mark.parametrize(
    ("momentfm", "torch", "lacks"),
    [(True, False, "torch"), (False, True, "momentfm"), (False, False, "torch, momentfm")],
)
def test_an_environment_without_torch_or_momentfm_is_unavailable(tmp_path, momentfm, torch, lacks):
    body = (
        "print(json.dumps({'python': '3.11', 'numpy': '1.25', "
        f"'momentfm': {momentfm}, 'torch': {torch}}}))\n"
    )
    python = stub(tmp_path, body)
    availability = MomentSystem(str(python)).availability()
    assert not availability.available
    assert availability.reason.startswith(f"{python} lacks {lacks}; create a separate")
    # the protocol check needs neither
    assert MomentSystem(str(python), backend="last-observed").availability().available


def test_a_probe_without_json_says_what_it_printed(tmp_path):
    python = stub(tmp_path, "print('x' * 2000 + 'END')\n")
    system = MomentSystem(str(python))
    with pytest.raises(MomentBridgeError) as caught:
        system.probe()
    tail = ("x" * 2000 + "END\n")[-1500:]
    assert str(caught.value) == f"{python} --probe printed no JSON: {tail!r}"
    availability = system.availability()  # a probe that fails: unavailable, with the reason
    assert not availability.available
    assert availability.reason == f"{caught.value}; {moment_model.SETUP_HINT}"
    # an empty output too (no line at all)
    empty = MomentSystem(str(stub(tmp_path, "pass\n", name="silent")))
    with pytest.raises(MomentBridgeError, match="printed no JSON: ''"):
        empty.probe()


def test_a_failing_worker_quotes_the_last_1500_characters_of_its_stderr(tmp_path):
    body = "sys.stderr.write('a' * 600 + 'é' * 1200 + 'Z\\n')\nsys.exit(3)\n"
    python = stub(tmp_path, body)
    with pytest.raises(MomentBridgeError) as caught:
        MomentSystem(str(python)).predict(make_batch())
    stderr = ("a" * 600 + "é" * 1200 + "Z")[-1500:]
    assert str(caught.value) == (
        "system 'moment', ticker AAPL, perturbation P3: "
        f"the MOMENT worker ({python}) exited with status 3: {stderr}"
    )


def test_an_interpreter_found_on_the_path_is_probed(tmp_path, monkeypatch):
    """``TSRATE_MOMENT_PYTHON=python3.11``-style names: not a file here, but on PATH."""
    folder = tmp_path / "bin"
    folder.mkdir()
    stub(folder, REAL_WORKER, name="moment-env-python")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(tmp_path)
    availability = MomentSystem("moment-env-python", backend="last-observed").availability()
    assert availability.available, availability.reason


@pytest.mark.parametrize("kind", ["not executable", "a folder"])
def test_an_interpreter_that_cannot_be_run_is_unavailable_with_one_line(tmp_path, kind):
    """TSRATE_MOMENT_PYTHON naming a file without its execute bit, or a folder: the
    system is unavailable and says why (the listing and a run go on), no traceback."""
    if kind == "a folder":
        python = tmp_path / "env"
        python.mkdir()
    else:
        python = tmp_path / "python"
        python.write_text(f"#!{sys.executable}\n")
        python.chmod(0o644)
    availability = MomentSystem(str(python)).availability()
    assert not availability.available
    assert availability.reason.startswith(f"cannot run {python}: [Errno 13] Permission denied")
    assert availability.reason.endswith(moment_model.SETUP_HINT)
    with pytest.raises(MomentBridgeError, match=f"cannot run {python}"):
        MomentSystem(str(python)).predict(make_batch())
