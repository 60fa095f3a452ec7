"""Shared fixtures: temporary real warehouses built with the real pipeline pieces."""

from __future__ import annotations

import os

import pytest

# Keep Prefect and dbt quiet and offline in tests.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


@pytest.fixture(scope="session")
def prefect_harness():
    """A temporary Prefect API (own database) for flow tests."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
