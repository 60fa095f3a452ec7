"""What a second Ctrl-C says while ``tsrate serve`` stops: the flow runs in flight are set
``Cancelled`` through the Prefect API within a bound, so an API that does not answer cannot
keep serve from stopping (the line then says what may still show ``Running``). The API here
is a socket that takes the connection and never answers. (The whole second Ctrl-C, with a
real serve and run: tests/integration/test_serve_sigterm.py.)"""

from __future__ import annotations

import socket
import time
import uuid

import pytest

from tsrate.platform.serve import forced_line, forced_message


@pytest.fixture
def silent_api():
    """A Prefect API URL whose server accepts connections and never answers."""
    from prefect.settings import (
        PREFECT_API_REQUEST_TIMEOUT,
        PREFECT_API_URL,
        PREFECT_CLIENT_MAX_RETRIES,
        temporary_settings,
    )

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/api"
    # a client that gave up by itself would not show the bound: it waits longer than that
    settings = {PREFECT_API_URL: url, PREFECT_API_REQUEST_TIMEOUT: 4, PREFECT_CLIENT_MAX_RETRIES: 0}
    with temporary_settings(settings):
        yield url
    listener.close()


def test_an_api_that_does_not_answer_does_not_hold_serve_past_the_bound(silent_api):
    runs = {uuid.uuid4(), uuid.uuid4()}
    started = time.monotonic()
    line = forced_line("SIGINT", runs, seconds=0.5)
    took = time.monotonic() - started
    assert took < 2.0, f"{took:.1f}s"
    assert line == (
        "tsrate: stopped at once by a second SIGINT; 2 flow run(s) may still show Running in "
        "Prefect (no answer within 0.5s): cancel them in its UI"
    )


def test_no_run_in_flight_asks_nothing_and_the_message_names_the_signal(silent_api):
    started = time.monotonic()
    assert forced_line("SIGTERM", set(), seconds=5) == (
        "tsrate: stopped at once by a second SIGTERM (no flow run in flight)"
    )
    assert time.monotonic() - started < 0.5  # the silent API was not asked
    assert forced_message("SIGTERM").startswith("tsrate serve stopped at once by a second SIGTERM")
