"""tsrate imports fracast without torch._dynamo (tsrate.systems.fracast_model.import_fracast):
the forecasts are the same bits as with fracast's torch.compiler.disable mark in place. Each
case runs in a fresh process (a process that imported dynamo keeps it)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

_IMPORT_PROBE = """
import json, sys
import numpy as np
from tsrate.systems.fracast_model import FracastSystem
if sys.argv[1] == "dynamo":
    import torch._dynamo  # noqa: F401 - as a process that compiled something would have
system = FracastSystem(device="cpu", encoder=sys.argv[2])
system.warm_up()
steps = np.arange(300, dtype=float)
contexts = np.stack([100 + 0.1 * steps + 3 * np.sin(steps / 5 + k) for k in range(3)])
contexts[1, -7] = np.nan
out = system.forecast_quantiles(contexts, 12)
print(json.dumps({"dynamo": "torch._dynamo" in sys.modules, "out": out.tolist()}))
"""


@pytest.mark.parametrize("encoder", ["prefix", "full"])
def test_fracast_imported_without_dynamo_forecasts_the_same_bits(encoder):
    """tsrate imports fracast without torch._dynamo (2 s of a worker's start): its one
    ``torch.compiler.disable`` mark is kept as a no-op then. The forecasts are the same bits
    as with the decorator in place (a process where dynamo was imported first)."""
    pytest.importorskip("fracast")
    import json
    import subprocess

    runs = {}
    for mode in ("lean", "dynamo"):
        done = subprocess.run(
            [sys.executable, "-c", _IMPORT_PROBE, mode, encoder],
            capture_output=True,
            text=True,
            check=True,
        )
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs["lean"]["dynamo"] is False
    assert runs["dynamo"]["dynamo"] is True
    lean, marked = np.array(runs["lean"]["out"]), np.array(runs["dynamo"]["out"])
    assert np.isfinite(lean).all()
    np.testing.assert_array_equal(lean, marked)
