"""ViT-num-spec training (tsrate.systems.vit_training) against values worked out independently
of the code: the windows and targets rebuilt by plain loops over the closes, the training
loop replayed step by step in numpy (MSE on standardised changes, the seeded batch order,
gradient clipping at norm 1, AdamW with torch's documented defaults, the validation loss on
the latest windows, early stopping with patience, the best epoch kept) on a one-parameter
network patched in for the ViT, the settings' documented defaults and bounds (compared with
``dbt_project.yml``'s vars), the training period's inclusive ends and its overlap with the
study, the price fingerprint's 10 decimals, the remembered key's file name and content
check, and the sample header reader.

Written for the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep8_vit.json): each test pins exact values, so a changed default, bound,
edge, coefficient or comparison in the training code changes a checked number. Networks are
tiny and images are blanks (the patched network ignores them), so this runs in about a second.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

torch = pytest.importorskip("torch")
from tsrate import TsrateError  # noqa: E402
from tsrate.systems import vit_training as vt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def settings(**changes) -> vt.TrainingSettings:
    base = dict(
        system_id="vit_num_spec_covid",
        train_start=dt.date(2020, 1, 1),
        train_end=dt.date(2020, 12, 31),
        tickers=("AAA",),
        context_length=3,
        horizon=2,
        size="tiny",
    )
    return vt.TrainingSettings(**{**base, **changes})


def frame(closes: dict[str, np.ndarray], start: str = "2020-01-01") -> pd.DataFrame:
    parts = []
    for ticker, values in closes.items():
        days = pd.bdate_range(start, periods=len(values))
        parts.append(pd.DataFrame({"ticker": ticker, "price_date": days, "close": values}))
    return pd.concat(parts, ignore_index=True)


# -------------------------------------------------------------------------- settings


def test_defaults_are_the_documented_ones_and_the_projects_vars():
    """The module doc: patience 2, the latest 20 % for validation, AdamW; the dataclass and
    settings_from_vars' fallbacks equal dbt_project.yml's vars (seed 42, stride 1, 3000
    windows, 8 epochs, size small)."""
    project = yaml.safe_load((ROOT / "dbt_project.yml").read_text())["vars"]
    s = vt.TrainingSettings(
        system_id="x",
        train_start=dt.date(2020, 1, 1),
        train_end=dt.date(2020, 2, 1),
        tickers=("A",),
        context_length=3,
        horizon=2,
    )
    assert s.size == project["vit_size"] == "small"
    assert s.seed == project["vit_seed"] == 42
    assert s.stride == project["vit_training_stride"] == 1
    assert s.max_windows == project["vit_max_training_windows"] == 3000
    assert s.max_epochs == project["vit_max_epochs"] == 8
    assert s.patience == 2 and s.validation_fraction == 0.2
    assert s.batch_size == 64 and s.learning_rate == 1e-3
    assert s.version == 2
    # settings_from_vars without the vars falls back to the same values
    fallback = vt.settings_from_vars(
        "vit_num_spec_covid", ("AAPL",), 3, 2, {"vit_training_tickers": ["KO"]}
    )
    assert (fallback.size, fallback.seed, fallback.stride) == ("small", 42, 1)
    assert (fallback.max_windows, fallback.max_epochs) == (3000, 8)


def test_settings_bounds_at_their_edges():
    with pytest.raises(TsrateError, match="not before its end"):
        settings(train_end=dt.date(2020, 1, 1))  # start == end
    settings(train_end=dt.date(2020, 1, 2))  # one day is a period
    for fraction in (0.0, 1.0):
        with pytest.raises(TsrateError, match="validation_fraction"):
            settings(validation_fraction=fraction)
    settings(validation_fraction=0.5)
    for bad in (dict(stride=0), dict(max_windows=1), dict(max_epochs=0)):
        with pytest.raises(TsrateError, match="stride"):
            settings(**bad)
    settings(stride=1, max_windows=2, max_epochs=1)  # the smallest accepted


def test_study_overlap_is_an_error_at_both_touching_days():
    """The training period is inclusive at both ends, the study too: a training period ending
    on the study's first day, or starting on its last, overlaps it; one day apart does not."""
    common = dict(system_id="vit_num_spec_covid", tickers=("AAPL",), context_length=3, horizon=2)
    study = (dt.date(2021, 1, 4), dt.date(2021, 6, 30))

    def attempt(start: str, end: str):
        return vt.settings_from_vars(
            **common,
            variables={
                "vit_covid_start": start,
                "vit_covid_end": end,
                "vit_training_tickers": ["KO"],
            },
            study_period=study,
        )

    with pytest.raises(TsrateError, match="overlaps the study"):
        attempt("2020-01-02", "2021-01-04")
    with pytest.raises(TsrateError, match="overlaps the study"):
        attempt("2021-06-30", "2021-12-31")
    attempt("2020-01-02", "2021-01-03")  # ends the day before
    attempt("2021-07-01", "2021-12-31")  # starts the day after
    # a training period before the study, and no study period at all: never an error
    assert attempt("2020-01-02", "2020-06-30").train_end == dt.date(2020, 6, 30)


def test_the_default_tickers_when_every_sample_ticker_is_a_study_one(monkeypatch):
    monkeypatch.setattr(vt, "sample_tickers", lambda: ["AAA", "BBB"])
    assert vt.training_tickers(["aaa"], "") == ("BBB",)
    with pytest.raises(TsrateError, match="none left to train on"):
        vt.training_tickers(["AAA", "BBB"], [])


# -------------------------------------------------------------------------- prices


def test_training_prices_keep_both_ends_of_the_period(monkeypatch):
    days = pd.bdate_range("2020-01-01", periods=10)
    sample = pd.DataFrame(
        {"ticker": "AAA", "price_date": days[::-1], "close": np.arange(10.0)[::-1]}
    )
    monkeypatch.setattr("tsrate.robustness.sources.load_skfolio_sp500", lambda tickers: sample)
    s = settings(train_start=days[2].date(), train_end=days[6].date())
    kept = vt.training_prices(s)
    assert list(pd.to_datetime(kept["price_date"])) == list(days[2:7])  # 2 … 6, in date order
    assert kept["close"].tolist() == [2.0, 3.0, 4.0, 5.0, 6.0]
    assert list(kept.columns) == ["ticker", "price_date", "close"]  # a fresh index, no column
    assert kept.index.tolist() == [0, 1, 2, 3, 4]


def test_the_fingerprint_keeps_ten_decimals():
    base = frame({"AAA": np.array([1.0, 2.0])})
    same = base.assign(close=[1.0 + 4e-11, 2.0])  # rounds to 1.0000000000
    other = base.assign(close=[1.0 + 6e-11, 2.0])  # rounds to 1.0000000001
    assert vt.prices_fingerprint(same) == vt.prices_fingerprint(base)
    assert vt.prices_fingerprint(other) != vt.prices_fingerprint(base)
    expected_tail = np.array([1.0, 2.0]).tobytes()
    assert vt.prices_fingerprint(base).endswith(expected_tail)


def test_the_remembered_key_file_is_a_32_hex_name_holding_16_hex_digits(tmp_path, monkeypatch):
    sample = tmp_path / "sample.csv.gz"
    sample.write_bytes(b"x")
    monkeypatch.setattr("tsrate.robustness.sample.skfolio_sample_path", lambda: sample)
    calls = []

    def compute() -> str:
        calls.append(1)
        return f"{len(calls):016x}"

    s = settings()
    assert vt.remembered_key(s, tmp_path, compute) == f"{1:016x}"
    (path,) = (tmp_path / "vit_num_spec" / "keys").iterdir()
    assert len(path.name) == 32 and all(c in "0123456789abcdef" for c in path.name)
    assert path.read_text().strip() == f"{1:016x}"
    # a stored value of the wrong length, or with one non-hex digit, is computed again
    for stored in ("a" * 15, "a" * 17, "g" + "a" * 15):
        path.write_text(stored)
        before = len(calls)
        assert vt.remembered_key(s, tmp_path, compute) == f"{before + 1:016x}"
    path.write_text("0123456789abcdef")  # a good one is trusted
    assert vt.remembered_key(s, tmp_path, compute) == "0123456789abcdef"


def _fake_skfolio(monkeypatch, folder: Path, header: str | None, loader_columns=("ZZZ",)):
    if header is not None:
        data = folder / "datasets" / "data"
        data.mkdir(parents=True)
        with gzip.open(data / "sp500_dataset.csv.gz", "wt") as handle:
            handle.write(header + "\n2020-01-02,1,2\n")
    spec = types.SimpleNamespace(submodule_search_locations=[str(folder)])
    monkeypatch.setattr("importlib.util.find_spec", lambda name: spec)
    loader = types.ModuleType("skfolio.datasets")
    loader.load_sp500_dataset = lambda: pd.DataFrame(columns=list(loader_columns))
    monkeypatch.setitem(__import__("sys").modules, "skfolio.datasets", loader)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Date,BBB,AAA", ["AAA", "BBB"]),  # read from the header, sorted
        ("Date,AAA", ["AAA"]),  # one ticker is enough
        ("Date", ["ZZZ"]),  # no ticker in the header: skfolio's loader
        ("When,AAA", ["ZZZ"]),  # not the sample's header: skfolio's loader
    ],
)
def test_sample_tickers_come_from_the_csv_header(tmp_path, monkeypatch, header, expected):
    _fake_skfolio(monkeypatch, tmp_path, header)
    assert vt.sample_tickers() == expected


# -------------------------------------------------------------------------- windows


def windows_by_loops(closes: dict[str, np.ndarray], n: int, d: int, stride: int):
    """Every window by hand: ends at positions n-1, n-1+stride, … while d values follow."""
    rows = []
    for ticker, values in closes.items():
        days = pd.bdate_range("2020-01-01", periods=len(values))
        end = n - 1
        while end + d <= len(values) - 1:
            rows.append(
                (days[end], ticker, values[end - n + 1 : end + 1], values[end + 1 : end + d + 1])
            )
            end += stride
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def test_windows_of_two_tickers_with_a_stride_in_date_then_ticker_order():
    rng = np.random.default_rng(5)
    closes = {
        "BBB": 50 + rng.standard_normal(16).cumsum(),
        "AAA": 10 + rng.standard_normal(12).cumsum(),
    }
    s = settings(tickers=("BBB", "AAA"), context_length=3, horizon=2, stride=2)
    got = vt.training_windows(frame(closes), s)
    expected = windows_by_loops(closes, 3, 2, 2)
    # AAA: ends 2, 4, 6, 8 (8 + 2 = 10 ≤ 11); BBB: ends 2, 4, …, 12 (12 + 2 = 14 ≤ 15)
    assert len(expected) == 10 and len(got.contexts) == 10
    for k, (day, ticker, context, future) in enumerate(expected):
        assert got.end_dates[k] == np.datetime64(day.date(), "D")
        assert got.tickers[k] == ticker
        np.testing.assert_array_equal(got.contexts[k], context)
        np.testing.assert_array_equal(got.futures[k], future)


def test_the_shortest_series_gives_one_window_and_ten_windows_are_enough():
    """A ticker with exactly n + d closes has one window; one fewer has none. Ten windows in
    all is the minimum: nine are an error."""
    closes = {"AAA": np.arange(1.0, 15.0)}  # 14 closes, n 3, d 2: ends 2 … 11, 10 windows
    closes["BBB"] = np.arange(100.0, 105.0)  # exactly n + d = 5 closes: one window
    closes["CCC"] = np.arange(200.0, 204.0)  # 4 closes: none
    s = settings(tickers=("AAA", "BBB", "CCC"))
    got = vt.training_windows(frame(closes), s)
    assert len(got.contexts) == 11 and list(got.tickers).count("BBB") == 1
    k = list(got.tickers).index("BBB")
    np.testing.assert_array_equal(got.contexts[k], [100, 101, 102])
    np.testing.assert_array_equal(got.futures[k], [103, 104])
    ten = vt.training_windows(frame({"AAA": np.arange(1.0, 15.0)}), settings())
    assert len(ten.contexts) == 10
    with pytest.raises(TsrateError, match="9 window"):
        vt.training_windows(frame({"AAA": np.arange(1.0, 14.0)}), settings())


def test_thinning_keeps_evenly_spaced_windows_in_date_order():
    """20 windows (closes 0 … 23, n 3, d 2 → ends 2 … 21) thinned to 4: positions
    round(0, 19/3, 38/3, 19) = 0, 6, 13, 19 → ends 2, 8, 15, 21."""
    got = vt.training_windows(frame({"AAA": np.arange(24.0)}), settings(max_windows=4))
    np.testing.assert_array_equal(got.contexts[:, -1], [2.0, 8.0, 15.0, 21.0])
    all_of_them = vt.training_windows(frame({"AAA": np.arange(24.0)}), settings(max_windows=20))
    assert len(all_of_them.contexts) == 20  # exactly max_windows: nothing dropped


def test_targets_are_changes_from_the_last_value_over_the_population_sd():
    contexts = np.array([[2.0, 4.0, 6.0, 8.0], [1.0, np.nan, 3.0, np.nan], [5.0, 5.0, 5.0, 5.0]])
    futures = np.array([[10.0, 7.0], [4.0, 1.0], [6.0, 4.0]])
    targets, last, std = vt.standardised_targets(contexts, futures)
    # row 0: sd of 2, 4, 6, 8 is √5; row 1: filled 1, 2, 3, 3 (mean 2.25, sd √0.6875);
    # row 2: constant, sd taken as 1
    np.testing.assert_allclose(std, [np.sqrt(5.0), np.sqrt(0.6875), 1.0])
    np.testing.assert_array_equal(last, [8.0, 3.0, 5.0])
    np.testing.assert_allclose(
        targets,
        [[2 / np.sqrt(5), -1 / np.sqrt(5)], [1 / np.sqrt(0.6875), -2 / np.sqrt(0.6875)], [1, -1]],
    )


# -------------------------------------------------------------------------- the training loop


class BiasOnly(torch.nn.Module):
    """A network whose output is one learned vector for every image (starts at ``start``)."""

    def __init__(self, horizon: int, start: float = 0.0):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.full((horizon,), float(start)))

    def forward(self, images):  # noqa: ANN001, ANN201
        return self.bias.expand(len(images), -1)


@pytest.fixture
def bias_network(monkeypatch):
    """Patch the ViT for a BiasOnly network and the images for blanks; returns a setter for
    the starting value."""
    state = {"start": 0.0}
    monkeypatch.setattr(
        vt, "build_network", lambda size, horizon: BiasOnly(horizon, state["start"])
    )
    monkeypatch.setattr(
        vt, "vit_num_spec_images", lambda contexts: np.zeros((len(contexts), 2, 2, 3), np.uint8)
    )
    monkeypatch.setattr(vt, "_git_revision", lambda: "rev")  # no git process in a unit test
    return state


def purged_split(prices: pd.DataFrame, s: vt.TrainingSettings) -> tuple[list[int], int]:
    """The documented split by loops over the windows in date then ticker order: the latest
    round(count · fraction) (at least 1) validate; an earlier window trains only if the close
    d trading days after its origin (its last target, read from its ticker's own rows) is on
    or before the first validation origin."""
    rows = windows_by_loops(
        {t: g["close"].to_numpy() for t, g in prices.groupby("ticker")},
        s.context_length,
        s.horizon,
        s.stride,
    )
    if len(rows) > s.max_windows:  # thinning, as test_thinning_keeps_evenly_spaced_... pins
        rows = [rows[int(i)] for i in np.round(np.linspace(0, len(rows) - 1, s.max_windows))]
    days = {t: list(pd.to_datetime(g["price_date"])) for t, g in prices.groupby("ticker")}
    n_valid = max(1, int(round(len(rows) * s.validation_fraction)))
    first_origin = rows[len(rows) - n_valid][0]
    kept = []
    for k, (day, ticker, _, _) in enumerate(rows[: len(rows) - n_valid]):
        position = days[ticker].index(day)
        if days[ticker][position + s.horizon] <= first_origin:
            kept.append(k)
    return kept, n_valid


def replay(targets: np.ndarray, s: vt.TrainingSettings, start: float = 0.0, kept=None):
    """The documented loop in float64: the first windows train (``kept``: the purged
    split's training positions; all before the validation windows when None), the latest
    validate; each epoch
    a fresh permutation from default_rng(seed); per batch the MSE's gradient, clipped to norm
    1 (torch's coefficient 1 / (norm + 1e-6)), then AdamW (betas 0.9 / 0.999, eps 1e-8,
    weight decay 0.01, decoupled); stop after ``patience`` epochs without a strictly lower
    validation loss; keep the best."""
    count = len(targets)
    n_valid = max(1, int(round(count * s.validation_fraction)))
    kept = list(range(count - n_valid)) if kept is None else kept
    n_train = len(kept)
    train, valid = targets[kept], targets[count - n_valid :]
    p = np.full(targets.shape[1], start)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    step = 0
    rng = np.random.default_rng(s.seed)
    lr = s.learning_rate
    history, best, best_p, best_epoch, stale = [], np.inf, None, 0, 0
    for epoch in range(1, s.max_epochs + 1):
        order = rng.permutation(n_train)
        total = 0.0
        for begin in range(0, n_train, s.batch_size):
            rows = order[begin : begin + s.batch_size]
            y = train[rows]
            total += np.mean((p - y) ** 2) * len(rows)
            grad = 2 * (p - y).sum(axis=0) / y.size
            norm = np.sqrt((grad**2).sum())
            grad = grad * min(1.0, 1.0 / (norm + 1e-6))
            step += 1
            p = p * (1 - lr * 0.01)
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad**2
            m_hat, v_hat = m / (1 - 0.9**step), v / (1 - 0.999**step)
            p = p - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        valid_loss = np.mean((p - valid) ** 2)
        history.append((epoch, total / n_train, valid_loss))
        if valid_loss < best:
            best, best_p, best_epoch, stale = valid_loss, p.copy(), epoch, 0
        else:
            stale += 1
            if stale >= s.patience:
                break
    return dict(n_train=n_train, n_valid=n_valid, history=history, best=best, p=best_p,
                best_epoch=best_epoch)  # fmt: skip


def targets_by_hand(windows: vt.TrainingWindows) -> np.ndarray:
    out = []
    for context, future in zip(windows.contexts, windows.futures, strict=True):
        out.append((future - context[-1]) / np.sqrt(np.mean((context - context.mean()) ** 2)))
    return np.array(out)


def check_training(s: vt.TrainingSettings, prices: pd.DataFrame, start: float = 0.0):
    state, meta = vt.train(s, prices)
    kept, n_valid = purged_split(prices, s)
    expected = replay(targets_by_hand(vt.training_windows(prices, s)), s, start, kept)
    assert meta["training_windows"] == expected["n_train"] == len(kept)
    assert meta["validation_windows"] == expected["n_valid"] == n_valid
    count = len(vt.training_windows(prices, s).contexts)
    assert meta["purged_windows"] == count - n_valid - len(kept)
    assert [h["epoch"] for h in meta["history"]] == [h[0] for h in expected["history"]]
    np.testing.assert_allclose(
        [h["train_loss"] for h in meta["history"]], [h[1] for h in expected["history"]], rtol=2e-5
    )
    np.testing.assert_allclose(
        [h["valid_loss"] for h in meta["history"]], [h[2] for h in expected["history"]], rtol=2e-5
    )
    assert meta["best_epoch"] == expected["best_epoch"]
    if expected["p"] is not None:
        np.testing.assert_allclose(state["bias"].numpy(), expected["p"], rtol=2e-5, atol=1e-6)
        assert meta["validation_loss"] == pytest.approx(expected["best"], rel=2e-5)
    return state, meta, expected


def trending_prices(length: int = 40, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    steps = 0.6 + rng.standard_normal(length)  # a rise with noise: targets of mixed size
    return frame({"AAA": 100 + steps.cumsum()})


def test_training_replays_the_documented_loop(bias_network):
    """40 closes, n 3, d 2: 36 windows, 7 validate (round(36 · 0.2)), the window just before
    them is purged (its second target is the first validation window's first target day),
    28 train in batches of 5 (the last of 3); a large learning rate so the clip and the
    early stop both matter."""
    s = settings(batch_size=5, learning_rate=0.3, max_epochs=6, seed=11)
    _, meta, expected = check_training(s, trending_prices())
    assert (expected["n_train"], expected["n_valid"], meta["purged_windows"]) == (28, 7, 1)
    assert meta["first_window_end"] == "2020-01-03" and meta["tickers"] == ["AAA"]
    # the last window ends d = 2 trading days before the last close, the 38th of 40
    assert meta["last_window_end"] == str(pd.bdate_range("2020-01-01", periods=40)[37].date())


def test_the_training_time_is_the_seconds_it_took(bias_network):
    import time

    before = time.perf_counter()
    _, meta = vt.train(settings(max_epochs=1, learning_rate=0.01), trending_prices())
    took = time.perf_counter() - before
    assert 0 <= meta["seconds"] <= took
    assert meta["git_revision"] == "rev" and meta["device"] == "cpu"


def test_training_with_other_settings_replays_too(bias_network):
    """Another split (a quarter validates), one batch an epoch, a small rate: the loss falls
    every epoch and the last epoch is the best."""
    s = settings(batch_size=64, learning_rate=0.05, max_epochs=3, validation_fraction=0.25, seed=2)
    _, meta, expected = check_training(s, trending_prices(30, seed=8))
    assert len(meta["history"]) == 3


def test_a_flat_validation_loss_stops_after_patience_epochs_keeping_the_first(bias_network):
    """Learning rate 0: the validation loss is the same every epoch. A tie is not an
    improvement, so epoch 1 stays the best and training stops after 1 + patience epochs."""
    for patience in (1, 2, 3):
        s = settings(learning_rate=0.0, max_epochs=8, patience=patience)
        _, meta, _ = check_training(s, trending_prices())
        assert meta["best_epoch"] == 1 and len(meta["history"]) == 1 + patience


def test_max_epochs_bounds_the_loop(bias_network):
    s = settings(learning_rate=0.01, max_epochs=1)
    _, meta, _ = check_training(s, trending_prices())
    assert [h["epoch"] for h in meta["history"]] == [1]


def test_a_loss_that_never_improves_is_refused_after_patience(bias_network):
    """A network that outputs NaN: no epoch beats the starting infinity, training stops after
    ``patience`` epochs, and with no weights to keep it fails in one line rather than
    returning an empty state (which prepare() would have saved as the checkpoint)."""
    bias_network["start"] = float("nan")
    s = settings(learning_rate=0.1, max_epochs=8, patience=2)
    lines = []
    with pytest.raises(TsrateError, match=r"training diverged: .* any of its 2 epochs"):
        vt.train(s, trending_prices(), progress=lines.append)
    epochs = [line.split(":")[0] for line in lines if " epoch " in line]
    assert epochs == [f"{s.system_id} epoch 1/8", f"{s.system_id} epoch 2/8"]


def test_the_validation_split_at_its_edges(bias_network):
    """14 closes: 10 windows, d 2 (one window before the validation ones is purged). Fraction
    0.04 → round(0.4) = 0, at least one validates, 8 train; 0.7 → 7 validate, 2 train
    (enough); 0.85 → round(8.5) = 8 (to even), 1 left to train: an error."""
    prices = frame({"AAA": 100 + np.random.default_rng(1).standard_normal(14).cumsum()})
    _, meta, _ = check_training(settings(validation_fraction=0.04, max_epochs=1), prices)
    assert (meta["training_windows"], meta["validation_windows"]) == (8, 1)
    _, meta, _ = check_training(settings(validation_fraction=0.7, max_epochs=1), prices)
    assert (meta["training_windows"], meta["validation_windows"]) == (2, 7)
    with pytest.raises(TsrateError, match="only 10 training windows, 1 left .* 8 validate and 1"):
        vt.train(settings(validation_fraction=0.85, max_epochs=1), prices)


def test_more_than_256_validation_windows_are_scored_in_chunks_all_once(bias_network):
    """304 closes (n 3, d 2): 300 windows, 270 validate (round(300 · 0.9)), in chunks of 256 and
    14; 404 closes: 400 windows, 320 validate (256 and 64). Each window is scored once."""
    for length, fraction, valid in ((304, 0.9, 270), (404, 0.8, 320)):
        prices = frame({"AAA": 100 + np.random.default_rng(6).standard_normal(length).cumsum()})
        s = settings(validation_fraction=fraction, max_epochs=2, learning_rate=0.05)
        _, meta, _ = check_training(s, prices)
        assert meta["validation_windows"] == valid


def test_training_on_the_cpu_forks_no_cuda_generator(bias_network, monkeypatch):
    """The caller's random state is left as it was: torch's generators are forked, on the CPU
    without any CUDA device (None would fork every visible GPU's)."""
    seen = []
    real = torch.random.fork_rng

    def recording(devices=None, **kwargs):  # noqa: ANN001, ANN202
        seen.append(devices)
        return real(devices=devices, **kwargs)

    monkeypatch.setattr(torch.random, "fork_rng", recording)
    before = torch.get_rng_state()
    vt.train(settings(max_epochs=1, learning_rate=0.01), trending_prices())
    assert seen == [[]]
    assert torch.equal(torch.get_rng_state(), before)


def test_the_git_revision_is_the_commit_or_unknown(monkeypatch):
    subprocess = vt.subprocess  # patched, never run: a unit test starts no process
    runs = []

    def fake_run(args, **kwargs):  # noqa: ANN001, ANN202
        """As subprocess.run answers: stdout is None unless captured, bytes unless text."""
        runs.append((args, kwargs.get("timeout")))
        out = answer["stdout"] if kwargs.get("capture_output") else None
        if out is not None and not kwargs.get("text"):
            out = out.encode()
        return subprocess.CompletedProcess(args, 0, stdout=out, stderr="")

    answer = {"stdout": "0123abcd\n"}
    monkeypatch.setattr(subprocess, "run", fake_run)
    assert vt._git_revision() == "0123abcd"
    assert runs[0] == (["git", "rev-parse", "HEAD"], 5)
    answer["stdout"] = "  \n"  # not a checkout: nothing printed
    assert vt._git_revision() == "unknown"

    def failing(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise FileNotFoundError("git")

    monkeypatch.setattr(subprocess, "run", failing)
    assert vt._git_revision() == "unknown"


def test_progress_is_optional_and_told_each_epoch(bias_network):
    said = []
    vt.train(settings(max_epochs=2, learning_rate=0.01), trending_prices(), progress=said.append)
    assert len(said) == 2 and said[0].startswith("vit_num_spec_covid epoch 1/2")


# -------------------------------------------------------------------------- checkpoint rows


def test_the_checkpoint_rows_settings_are_sorted_json(tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(b"")
    meta = {"system_id": "s", "settings": {"b": 1, "a": dt.date(2020, 1, 2)}, "tickers": ["X", "Y"]}
    row = vt.checkpoint_row(path, meta, "k")
    assert row["settings_json"] == '{"a": "2020-01-02", "b": 1}'
    assert row["tickers"] == "X,Y" and row["checkpoint_key"] == "k"
    assert row["git_revision"] == "unknown"
    assert json.loads(row["settings_json"]) == {"a": "2020-01-02", "b": 1}
