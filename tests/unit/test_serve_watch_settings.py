"""The health watch's two settings come from the environment: a bad value is one line
naming the variable, a value below the floor is raised to it, none gives the default."""

from __future__ import annotations

import pytest

from tsrate import TsrateError
from tsrate.platform import serve


def test_check_interval_and_grace_read_the_environment(monkeypatch):
    monkeypatch.delenv("TSRATE_SERVER_CHECK_S", raising=False)
    assert serve.check_interval() == 10.0
    monkeypatch.setenv("TSRATE_SERVER_CHECK_S", "0.01")
    assert serve.check_interval() == 0.1  # the floor: a check every 10 ms would be a busy loop
    monkeypatch.setenv("TSRATE_SERVER_GONE_GRACE_S", "5")
    assert serve._seconds("TSRATE_SERVER_GONE_GRACE_S", serve.SERVER_GONE_GRACE_S, 0.0) == 5.0
    monkeypatch.delenv("TSRATE_SERVER_GONE_GRACE_S")
    assert serve._seconds("TSRATE_SERVER_GONE_GRACE_S", serve.SERVER_GONE_GRACE_S, 0.0) == 30.0


@pytest.mark.parametrize("variable", ["TSRATE_SERVER_CHECK_S", "TSRATE_SERVER_GONE_GRACE_S"])
def test_a_value_that_is_not_seconds_is_one_line_naming_the_variable(monkeypatch, variable):
    monkeypatch.setenv(variable, "soon")
    with pytest.raises(TsrateError, match=f"^{variable} must be a number of seconds, got 'soon'$"):
        with serve.server_watch("http://127.0.0.1:9/api", interval=None):
            pass
