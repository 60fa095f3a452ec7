"""Run in a forecast worker by tests/integration/test_forecast_workers.py: what it has."""

from __future__ import annotations

import os
import sys


def probe() -> dict:
    return {
        "statsmodels_loaded": "statsmodels.tsa.statespace.sarimax" in sys.modules,
        "setting": os.environ.get("TSRATE_PROBE"),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "parent": os.getppid(),
        # the process that forked this one: a fork server must have no other thread
        "parent_threads": len(os.listdir(f"/proc/{os.getppid()}/task"))
        if os.path.isdir("/proc")
        else None,
    }
