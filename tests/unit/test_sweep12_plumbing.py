"""Two plumbing files no earlier round swept (round 12 of the mutation sweep; survivors in
tests/planted/sweep12_plumbing.json).

``tsrate.robustness.sample.skfolio_sample_path``: the tests that read the bundled sample
run where skfolio is installed, so its ``None`` answers (no skfolio; a module without
package folders; a package without the file) went untested. ``importlib.util.find_spec``
is stood in for (a standard-library lookup, not our code).

``tsrate.robustness.forecast.worker_preload``: the fork server's start-up module. Its
preload loop is run here in this process on a fresh copy of the module (its exit hook
unregistered at once): each named module's ``worker_imports()`` is called once, a module
without one or one that fails to import is passed over; and the server leaves with
status 0 (``os._exit`` stood in for)."""

from __future__ import annotations

import atexit
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

from tsrate.robustness import sample

PRELOAD_FILE = (
    Path(__file__).resolve().parents[2] / "src/tsrate/robustness/forecast/worker_preload.py"
)


def _spec(locations):
    return SimpleNamespace(submodule_search_locations=locations)


def test_no_skfolio_no_sample(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert sample.skfolio_sample_path() is None


def test_a_module_without_package_folders_has_no_sample(monkeypatch):
    for locations in (None, []):
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, v=locations: _spec(v))
        assert sample.skfolio_sample_path() is None


def test_the_first_folder_holding_the_file_is_the_sample(tmp_path, monkeypatch):
    folders = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    for folder in folders[1:]:
        (folder / "datasets" / "data").mkdir(parents=True)
        (folder / "datasets" / "data" / "sp500_dataset.csv.gz").write_bytes(b"x")
    asked = []
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name: asked.append(name) or _spec(list(map(str, folders))),
    )
    assert sample.skfolio_sample_path() == folders[1] / "datasets" / "data" / "sp500_dataset.csv.gz"
    assert asked == ["skfolio"]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: _spec([str(folders[0])]))
    assert sample.skfolio_sample_path() is None


def _run_preload(monkeypatch, modules: str):
    """Execute a fresh copy of worker_preload with TSRATE_WORKER_PRELOAD = ``modules``."""
    monkeypatch.setenv("TSRATE_WORKER_PRELOAD", modules)
    spec = importlib.util.spec_from_file_location("worker_preload_copy", PRELOAD_FILE)
    module = importlib.util.module_from_spec(spec)
    registered = []
    monkeypatch.setattr(atexit, "register", lambda f: registered.append(f) or f)
    spec.loader.exec_module(module)
    assert registered == [module._leave_at_once]  # registered, never left to run here
    return module


def test_preload_calls_each_named_modules_worker_imports(tmp_path, monkeypatch):
    calls = []
    (tmp_path / "sweep12_preload_a.py").write_text(
        "import builtins\ndef worker_imports():\n    builtins._sweep12_calls.append('a')\n"
    )
    (tmp_path / "sweep12_preload_b.py").write_text("VALUE = 1\n")  # no worker_imports
    (tmp_path / "sweep12_preload_c.py").write_text("raise ImportError('missing library')\n")
    (tmp_path / "sweep12_preload_d.py").write_text(
        "import builtins\ndef worker_imports():\n    builtins._sweep12_calls.append('d')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("builtins._sweep12_calls", calls, raising=False)
    names = ["sweep12_preload_a", "sweep12_preload_b", "sweep12_preload_c", "sweep12_preload_d"]
    try:
        _run_preload(monkeypatch, ",".join(["", *names, ""]))
    finally:
        for name in names:
            sys.modules.pop(name, None)
    assert calls == ["a", "d"]


def test_the_server_leaves_with_status_zero(monkeypatch):
    module = _run_preload(monkeypatch, "")
    exits = []
    monkeypatch.setattr(module.os, "_exit", exits.append)
    module._leave_at_once()
    assert exits == [0]
