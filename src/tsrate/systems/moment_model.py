"""MOMENT (the paper's S_m, MOMENT-large) through a separate Python environment.

``momentfm`` pins transformers 4.33 and numpy 1.25, so it cannot be installed beside
tsrate. This system is a bridge: it writes each batch's contexts to ``contexts.npy`` in a
temporary folder, runs ``_moment_worker.py`` (shipped beside this module) with the
interpreter named by ``TSRATE_MOMENT_PYTHON`` (or the dbt var ``moment_python``), and reads
``forecasts.npy`` back. See the worker's docstring for the protocol and for how MOMENT
forecasts zero-shot (its pretrained reconstruction head; NaN inputs marked unobserved).

Everything the worker returns is validated here (exit status, file present, a float array
of shape windows × d, finite); a failure is a :class:`MomentBridgeError` naming the
interpreter, the ticker and perturbation, and the worker's stderr.

Settings (environment, else dbt var, else default): ``TSRATE_MOMENT_PYTHON`` /
``moment_python`` (no default: unavailable until set), ``TSRATE_MOMENT_MODEL`` /
``moment_model`` (``AutonLab/MOMENT-1-large``; an id in *that* environment's Hugging Face
cache, or a local directory), ``TSRATE_MOMENT_BATCH_SIZE`` / ``moment_batch_size`` (16),
``TSRATE_MOMENT_TIMEOUT_S`` / ``moment_timeout_s`` (3600 per partition),
``TSRATE_MOMENT_DEVICE`` (``auto``: cuda when that environment's torch sees a GPU).
MOMENT is deterministic (no sampling), so the batch size is not in the fingerprint.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tsrate import TsrateError
from tsrate.systems._settings import float_setting, int_setting, setting
from tsrate.systems.base import Availability, ForecastBatch

WORKER = Path(__file__).with_name("_moment_worker.py")
DEFAULT_MODEL = "AutonLab/MOMENT-1-large"
SETUP_HINT = (
    "create a separate environment for momentfm (it pins transformers 4.33 and numpy 1.25): "
    "`python3.11 -m venv ~/moment-env && ~/moment-env/bin/pip install torch==2.13.0 momentfm`, "
    'fetch the weights there on a connected machine (`~/moment-env/bin/python -c "from '
    "momentfm import MOMENTPipeline; MOMENTPipeline.from_pretrained('AutonLab/MOMENT-1-large')\"`, "
    "then copy ~/.cache/huggingface), and set TSRATE_MOMENT_PYTHON=~/moment-env/bin/python "
    "(or the dbt var moment_python)"
)
STDERR_TAIL = 1500


class MomentBridgeError(TsrateError):
    """The MOMENT worker failed or returned something unusable."""


def read_forecasts(path: Path, n_windows: int, horizon: int) -> np.ndarray:
    """The worker's output file as a (windows × horizon) float array; errors say what is wrong."""
    if not path.is_file():
        raise MomentBridgeError(f"the worker wrote no output file {path.name}")
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise MomentBridgeError(f"{path.name} is not a readable .npy array ({exc})") from exc
    if not np.issubdtype(array.dtype, np.floating):
        raise MomentBridgeError(f"{path.name} holds {array.dtype} values, expected floats")
    if array.shape != (n_windows, horizon):
        raise MomentBridgeError(
            f"{path.name} has shape {array.shape}, expected ({n_windows}, {horizon})"
        )
    bad = ~np.isfinite(array)
    if bad.any():
        raise MomentBridgeError(
            f"{path.name} holds {int(bad.sum())} non-finite value(s), first in window "
            f"{int(np.argwhere(bad)[0][0])}"
        )
    return array.astype(float)


class MomentSystem:
    system_id = "moment"

    def __init__(
        self,
        python: str,
        model: str = DEFAULT_MODEL,
        batch_size: int = 16,
        timeout_s: float = 3600.0,
        device: str = "auto",
        backend: str = "momentfm",
    ):
        self.python = python
        self.model = model
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.device = device
        self.backend = backend  # "last-observed" is the worker's protocol check (tests only)

    def fingerprint(self) -> str:
        return f"moment-bridge;backend={self.backend};model={self.model};point=reconstruction"

    def probe(self) -> dict:
        """What the configured interpreter has (see the worker's ``--probe``)."""
        result = self._run([str(WORKER), "--probe"], timeout=60)
        try:
            return json.loads(result.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError) as exc:
            raise MomentBridgeError(
                f"{self.python} --probe printed no JSON: {result.stdout[-STDERR_TAIL:]!r}"
            ) from exc

    def availability(self) -> Availability:
        if not self.python:
            return Availability(False, f"no MOMENT environment configured; {SETUP_HINT}")
        if not Path(self.python).expanduser().exists() and not shutil.which(self.python):
            return Availability(
                False, f"TSRATE_MOMENT_PYTHON={self.python} does not exist; {SETUP_HINT}"
            )
        try:
            found = self.probe()
        except MomentBridgeError as exc:
            return Availability(False, f"{exc}; {SETUP_HINT}")
        if self.backend == "momentfm" and not (found.get("momentfm") and found.get("torch")):
            missing = [name for name in ("torch", "momentfm") if not found.get(name)]
            return Availability(False, f"{self.python} lacks {', '.join(missing)}; {SETUP_HINT}")
        return Availability(
            True,
            f"{self.model} via {self.python} (python {found.get('python')}, numpy "
            f"{found.get('numpy')}); weights are read offline from that environment",
        )

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        where = f"system 'moment', ticker {batch.ticker}, perturbation {batch.perturbation_id}"
        with tempfile.TemporaryDirectory(prefix="tsrate-moment-") as folder:
            inputs = Path(folder) / "contexts.npy"
            output = Path(folder) / "forecasts.npy"
            np.save(inputs, np.asarray(batch.contexts, dtype=np.float64), allow_pickle=False)
            arguments = [
                str(WORKER),
                "--input",
                str(inputs),
                "--output",
                str(output),
                "--horizon",
                str(batch.horizon),
                "--backend",
                self.backend,
                "--model",
                self.model,
                "--batch-size",
                str(self.batch_size),
                "--device",
                self.device,
            ]
            try:
                self._run(arguments, timeout=self.timeout_s)
                return read_forecasts(output, batch.n_windows, batch.horizon)
            except MomentBridgeError as exc:
                raise MomentBridgeError(f"{where}: {exc}") from exc

    def _run(self, arguments: list[str], timeout: float) -> subprocess.CompletedProcess:
        command = [str(Path(self.python).expanduser()), *arguments]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except OSError as exc:  # missing, not executable, not a program (TSRATE_MOMENT_PYTHON)
            raise MomentBridgeError(f"cannot run {self.python}: {exc}") from exc
        except subprocess.TimeoutExpired as exc:
            raise MomentBridgeError(
                f"the MOMENT worker ran past {timeout:.0f}s (TSRATE_MOMENT_TIMEOUT_S)"
            ) from exc
        if result.returncode != 0:
            raise MomentBridgeError(
                f"the MOMENT worker ({self.python}) exited with status {result.returncode}: "
                f"{result.stderr.strip()[-STDERR_TAIL:]}"
            )
        return result


def create(study, companies) -> MomentSystem:  # noqa: ANN001 - registry signature
    return MomentSystem(
        python=str(setting("TSRATE_MOMENT_PYTHON", "moment_python", "")),
        model=str(setting("TSRATE_MOMENT_MODEL", "moment_model", DEFAULT_MODEL)),
        batch_size=int_setting("TSRATE_MOMENT_BATCH_SIZE", "moment_batch_size", 16),
        timeout_s=float_setting("TSRATE_MOMENT_TIMEOUT_S", "moment_timeout_s", 3600.0, 1.0),
        device=str(setting("TSRATE_MOMENT_DEVICE", "moment_device", "auto")),
    )
