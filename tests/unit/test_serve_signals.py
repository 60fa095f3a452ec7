"""`tsrate serve` exits 130 on SIGINT and 143 on SIGTERM although prefect.serve swallows the
KeyboardInterrupt a signal raises (it logs "shutting down" and returns normally)."""

from __future__ import annotations

import logging
import os
import signal
from types import SimpleNamespace

import pytest

from tsrate import cli
from tsrate.platform import serve as serve_module


def _swallowing_serve(signum):
    """Stands in for prefect.serve: gets ``signum`` while serving, swallows the interrupt."""

    def fake(*deployments):
        assert deployments
        if signum == signal.SIGTERM:  # like prefect's Runner.start: its own SIGTERM handler
            from prefect.runner import Runner

            runner = SimpleNamespace(started=True, stopping=False, _loop=None)
            runner._logger = logging.getLogger("fake-runner")
            signal.signal(signal.SIGTERM, lambda *a: Runner.handle_sigterm(runner, *a))
        try:
            os.kill(os.getpid(), signum)
            signal.pause() if hasattr(signal, "pause") else None
        except KeyboardInterrupt:
            return None  # what prefect.serve does
        except SystemExit:
            raise  # what the Runner's SIGTERM handler raises before its loop runs
        raise AssertionError("the signal did not interrupt serving")

    return fake


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_exit_status_follows_the_signal(monkeypatch, capsys, signum, status):
    import prefect

    monkeypatch.setattr(prefect, "serve", _swallowing_serve(signum))
    monkeypatch.setattr("tsrate.platform.locking.ensure_writer_limit", lambda **_: None)
    # _serve's health watch first checks after TSRATE_SERVER_CHECK_S (10 s): the signal comes first
    monkeypatch.setattr(
        serve_module,
        "serve",
        lambda config: serve_module._serve(config, "http://127.0.0.1:9/api", owned=False),
    )
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert cli.main(["serve"]) == 128 + int(signum) == status
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert signal.Signals(signum).name in capsys.readouterr().err
