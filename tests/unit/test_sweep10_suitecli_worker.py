"""The MOMENT worker's protocol (``tsrate.systems._moment_worker``) against the small errors
a mutation sweep plants in it (round 10; survivors: tests/planted/sweep10_suitecli.json).

The worker runs in an environment of its own with ``momentfm`` (not installed here); its
older tests run it as a process with the ``last-observed`` backend only
(tests/integration/test_moment_bridge.py), so nothing checked how it hands a window to
MOMENT. Here its functions run in-process on a stand-in ``momentfm`` module (a third-party
stub that records what the worker hands it), against the layout stated in the module's
docstring and momentfm's ``short_forecast`` convention, rebuilt by hand: the window's
latest steps right-aligned at the end of the model's input, at most ``seq_len`` less the
ceil(d / patch) patches the model reconstructs (its roll then wraps only padding into
them), missing values 0 and unobserved, padding unobserved; batches of the default 16 (at
least 1); ``device auto`` resolved to cuda when present; the argument checks, the probe, a
pickled input refused, the help's description and the exit status 0.
"""

from __future__ import annotations

import importlib.machinery
import json
import math
import sys
import types

import numpy as np
import pytest

from tsrate.systems import _moment_worker as worker


class FakePipeline:
    """Stands in for momentfm's ``MOMENTPipeline`` (a small input: 32 steps, patches of 8):
    records what it is handed; its forecast of a window is, per step j, the sum of the
    observed values + 100 x the number observed + j."""

    seq_len = 32
    patch_len = 8
    made: list[FakePipeline] = []

    def __init__(self, model: str, model_kwargs: dict) -> None:
        self.model, self.model_kwargs = model, model_kwargs
        self.initialised, self.device, self.evaluated = False, None, False
        self.calls: list[tuple[np.ndarray, np.ndarray, int, str, str]] = []

    @classmethod
    def from_pretrained(cls, model: str, model_kwargs: dict) -> FakePipeline:
        made = cls(model, model_kwargs)
        cls.made.append(made)
        return made

    def init(self) -> None:
        self.initialised = True

    def to(self, device: str) -> FakePipeline:
        self.device = device
        return self

    def eval(self) -> FakePipeline:
        self.evaluated = True
        return self

    def short_forecast(self, x_enc, input_mask, forecast_horizon):  # noqa: ANN001, ANN201
        import torch

        x, mask = x_enc.numpy().copy(), input_mask.numpy().copy()
        self.calls.append((x, mask, forecast_horizon, str(x_enc.device), str(input_mask.device)))
        base = (x[:, 0, :] * mask).sum(axis=1) + 100 * mask.sum(axis=1)
        forecast = base[:, None, None] + np.arange(forecast_horizon)[None, None, :]
        return types.SimpleNamespace(forecast=torch.from_numpy(forecast.astype(np.float64)))


@pytest.fixture
def momentfm(monkeypatch):
    """A ``momentfm`` module importable in this process (findable by importlib)."""
    module = types.ModuleType("momentfm")
    module.__spec__ = importlib.machinery.ModuleSpec("momentfm", None)
    module.MOMENTPipeline = FakePipeline
    FakePipeline.made = []
    monkeypatch.setitem(sys.modules, "momentfm", module)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the worker sets it; restored after the test
    return FakePipeline


def _expected_inputs(contexts: np.ndarray, horizon: int, seq_len: int = 32, patch: int = 8):
    """The documented layout by hand. momentfm's ``short_forecast`` rolls its input left by
    the ceil(d / patch) patches it reconstructs, so the worker right-aligns the window at the
    input's end and keeps at most ``seq_len - free`` of its latest steps: the roll then wraps
    only padding into the forecast patches. Missing values are 0 and unobserved, every
    padded step unobserved."""
    free = math.ceil(horizon / patch) * patch
    fit = min(contexts.shape[1], seq_len - free)
    values = np.zeros((len(contexts), 1, seq_len), dtype=np.float32)
    mask = np.zeros((len(contexts), seq_len), dtype=np.float32)
    for row, context in enumerate(contexts):
        tail = context[len(context) - fit :]
        for k, value in enumerate(tail):
            position = seq_len - fit + k
            if np.isfinite(value):
                values[row, 0, position] = value
                mask[row, position] = 1.0
    return values, mask


def _fake_forecast(values: np.ndarray, mask: np.ndarray, horizon: int) -> np.ndarray:
    base = (values[:, 0, :] * mask).sum(axis=1) + 100 * mask.sum(axis=1)
    return base[:, None] + np.arange(horizon)[None, :]


def _contexts(rows: int, steps: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    contexts = rng.normal(10, 2, size=(rows, steps)).round(3)
    contexts[0, -1] = np.nan  # P3: the last value missing
    contexts[-1, 3] = np.nan
    return contexts


@pytest.mark.parametrize(
    ("steps", "horizon"),
    [(30, 5), (30, 8), (30, 9), (10, 5), (24, 1)],
)
def test_the_window_is_left_padded_and_the_forecast_patches_kept_free(momentfm, steps, horizon):
    contexts = _contexts(3, steps)
    out = worker.moment_forecast(contexts, horizon, "some/model", 2, "cpu")
    values, mask = _expected_inputs(contexts, horizon)
    (pipeline,) = momentfm.made
    assert pipeline.model == "some/model" and pipeline.model_kwargs == {
        "task_name": "reconstruction"
    }
    assert pipeline.initialised and pipeline.evaluated and pipeline.device == "cpu"
    assert [len(call[0]) for call in pipeline.calls] == [2, 1]  # batches of 2
    got_values = np.concatenate([call[0] for call in pipeline.calls])
    got_mask = np.concatenate([call[1] for call in pipeline.calls])
    np.testing.assert_array_equal(got_values, values)
    np.testing.assert_array_equal(got_mask, mask)
    free = math.ceil(horizon / 8) * 8
    assert got_mask.sum(axis=1).tolist() == [
        np.isfinite(c[len(c) - min(steps, 32 - free) :]).sum() for c in contexts
    ]
    # what the roll wraps into the forecast patches is padding: nothing, unobserved
    assert not got_values[:, :, :free].any() and not got_mask[:, :free].any()
    assert {call[2] for call in pipeline.calls} == {horizon}
    assert out.dtype == np.float64 and out.shape == (3, horizon)
    np.testing.assert_allclose(out, _fake_forecast(values, mask, horizon), rtol=1e-6)


def test_a_window_longer_than_the_input_keeps_its_latest_steps(momentfm):
    """30 steps, horizon 5: one patch (8 steps) is reconstructed, so the latest 24 steps
    fit, at the input's end after 8 steps of padding."""
    contexts = np.arange(60, dtype=float).reshape(2, 30)
    worker.moment_forecast(contexts, 5, "m", 16, "cpu")
    (call,) = momentfm.made[0].calls
    np.testing.assert_array_equal(call[0][0, 0, 8:], np.arange(6, 30, dtype=np.float32))
    np.testing.assert_array_equal(call[0][1, 0, 8:], np.arange(36, 60, dtype=np.float32))
    assert call[1][:, 8:].all() and not call[1][:, :8].any()


@pytest.mark.parametrize("horizon", [25, 32])
def test_a_horizon_whose_patches_fill_the_input_is_refused(momentfm, horizon):
    with pytest.raises(SystemExit, match=f"horizon {horizon} does not fit MOMENT's 32-step"):
        worker.moment_forecast(_contexts(2, 10), horizon, "m", 16, "cpu")


def test_device_auto_is_cuda_when_present_else_cpu(momentfm):
    import torch

    worker.moment_forecast(_contexts(1, 10), 3, "m", 16, "auto")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert momentfm.made[0].device == expected
    assert momentfm.made[0].calls[0][3].split(":")[0] == expected


def test_without_momentfm_the_worker_says_which_interpreter_lacks_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "momentfm", None)  # importlib finds no such module
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SystemExit, match="momentfm is not installed in "):
        worker.moment_forecast(_contexts(1, 10), 3, "m", 16, "cpu")


def _files(tmp_path, contexts: np.ndarray) -> tuple[str, str]:
    source = tmp_path / "contexts.npy"
    np.save(source, contexts)
    return str(source), str(tmp_path / "forecasts.npy")


def test_main_batches_16_windows_by_default_and_exits_0(momentfm, tmp_path):
    contexts = _contexts(17, 12)
    source, output = _files(tmp_path, contexts)
    assert worker.main(["--input", source, "--output", output, "--horizon", "4"]) == 0
    (pipeline,) = momentfm.made
    assert pipeline.model == "AutonLab/MOMENT-1-large"
    assert [len(call[0]) for call in pipeline.calls] == [16, 1]
    values, mask = _expected_inputs(contexts, 4)
    forecasts = np.load(output)
    assert forecasts.dtype == np.float64
    np.testing.assert_allclose(forecasts, _fake_forecast(values, mask, 4), rtol=1e-6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contexts.npy", "forecasts.npy"]


def test_a_batch_size_below_one_is_one(momentfm, tmp_path):
    source, output = _files(tmp_path, _contexts(3, 12))
    argv = ["--input", source, "--output", output, "--horizon", "2", "--batch-size", "0"]
    assert worker.main(argv) == 0
    assert [len(call[0]) for call in momentfm.made[0].calls] == [1, 1, 1]


def test_main_with_last_observed_repeats_each_windows_last_observed_value(tmp_path):
    contexts = np.array([[1.0, 2.0, np.nan], [np.nan, np.nan, np.nan], [4.0, 5.0, 6.0]])
    source, output = _files(tmp_path, contexts)
    argv = ["--input", source, "--output", output, "--horizon", "2", "--backend", "last-observed"]
    assert worker.main(argv) == 0
    np.testing.assert_array_equal(np.load(output), [[2.0, 2.0], [np.nan, np.nan], [6.0, 6.0]])


@pytest.mark.parametrize(
    "drop",
    ["--input", "--output", "--horizon"],
)
def test_input_output_and_horizon_are_all_required(tmp_path, capsys, drop):
    source, output = _files(tmp_path, np.ones((1, 3)))
    given = {"--input": source, "--output": output, "--horizon": "2"}
    argv = [part for name, value in given.items() if name != drop for part in (name, value)]
    with pytest.raises(SystemExit) as stopped:
        worker.main([*argv, "--backend", "last-observed"])
    assert stopped.value.code == 2
    assert "--input, --output and a positive --horizon are required" in capsys.readouterr().err


@pytest.mark.parametrize(("horizon", "refused"), [("0", True), ("-1", True), ("1", False)])
def test_the_horizon_must_be_positive(tmp_path, horizon, refused):
    source, output = _files(tmp_path, np.array([[3.0, 7.0]]))
    argv = ["--input", source, "--output", output, "--horizon", horizon]
    argv += ["--backend", "last-observed"]
    if refused:
        with pytest.raises(SystemExit):
            worker.main(argv)
        return
    assert worker.main(argv) == 0
    np.testing.assert_array_equal(np.load(output), [[7.0]])


def test_an_input_that_is_not_two_dimensional_is_refused(tmp_path):
    source, output = _files(tmp_path, np.ones(4))
    argv = ["--input", source, "--output", output, "--horizon", "2", "--backend", "last-observed"]
    with pytest.raises(SystemExit, match=r"expected a 2-d array, got shape \(4,\)"):
        worker.main(argv)


def test_a_pickled_input_is_refused(tmp_path):
    source = tmp_path / "contexts.npy"
    np.save(source, np.array([[1.0, None]], dtype=object), allow_pickle=True)
    argv = ["--input", str(source), "--output", str(tmp_path / "f.npy"), "--horizon", "1"]
    with pytest.raises(ValueError, match="allow_pickle"):
        worker.main([*argv, "--backend", "last-observed"])


def test_the_probe_prints_one_json_line_and_exits_0(capsys):
    assert worker.main(["--probe"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["torch"] is True  # installed beside tsrate's tests
    assert line["momentfm"] is False
    assert line["numpy"] == np.__version__


def test_the_help_describes_the_worker(capsys):
    with pytest.raises(SystemExit) as stopped:
        worker.main(["--help"])
    assert stopped.value.code == 0
    assert "MOMENT worker: runs in a *separate* Python environment" in capsys.readouterr().out
