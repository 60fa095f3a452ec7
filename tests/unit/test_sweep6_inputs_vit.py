"""The sentiment systems behind P6 (tsrate.inputs.sentiment) against values worked out
independently of the code: the trend rule from an ordinary least-squares fit (numpy's
polyfit on a series filled with np.interp), its strict threshold on windows whose score is
exactly representable, the synthetic walks rebuilt from their documented recipe and seed,
the CNN's 4 x 4 ink pooling written as loops, the classifier's training replayed step by
step from its documented recipe (seeded init, Adam, one seeded shuffle per epoch, fixed
batches; the first walks train, the rest validate), the cache, the fallbacks of
``default_sentiment_system`` (dbt_project.yml's vars) and ``record_run_sentiments`` on an
in-memory warehouse.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_inputs_vit.json): each test pins exact values, so a changed
coefficient, bound, default, seed, batch or comparison in the file changes a checked number.
Every network here is tiny (a few dozen walks of 16 values), so the file runs in seconds.
"""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import duckdb
import numpy as np
import pytest

from tsrate.inputs import sentiment as st
from tsrate.inputs.images import line_plot_images

torch = pytest.importorskip("torch")


def project_defaults() -> dict:
    """dbt_project.yml's vars for the line-plot classifier (the documented defaults)."""
    from tsrate.config import project_vars

    variables = project_vars()
    return {
        "context_length": variables["context_length"],
        "threshold": variables["sentiment_trend_threshold"],
        "seed": variables["sentiment_seed"],
        "walks": variables["sentiment_training_walks"],
        "epochs": variables["sentiment_epochs"],
    }


def filled_by_interp(row: np.ndarray) -> np.ndarray:
    """Linear interpolation over NaN, nearest observed value at the edges, all-NaN → 0."""
    observed = np.isfinite(row)
    if not observed.any():
        return np.zeros_like(row)
    positions = np.arange(row.size)
    return np.interp(positions, positions[observed], row[observed])


def ols_trend_score(row: np.ndarray) -> float:
    """The documented rule: least-squares slope × (n − 1) / (max − min) (0 when flat)."""
    x = filled_by_interp(row)
    span = x.max() - x.min()
    if span == 0:
        return 0.0
    slope = np.polyfit(np.arange(x.size, dtype=float), x, 1)[0]
    return slope * (x.size - 1) / span


# -- the trend rule ------------------------------------------------------------------------------


def test_trend_scores_equal_the_least_squares_rise_over_the_range():
    rng = np.random.default_rng(3)
    contexts = 50 + rng.standard_normal((6, 17)).cumsum(axis=1)
    contexts[1, [0, 5, 6, 16]] = np.nan  # gaps at both edges and inside
    contexts[2] = 7.0  # flat
    contexts[3] = np.nan  # nothing observed
    expected = [ols_trend_score(row) for row in contexts]
    np.testing.assert_allclose(st.trend_scores(contexts), expected, rtol=1e-9, atol=1e-12)
    assert expected[2] == 0 and expected[3] == 0


def test_a_rise_just_above_the_flatness_tolerance_is_a_trend():
    """A straight rise has score 1 whatever its size; only a range of at most 1e-12 counts
    as flat (score 0). 1.5e-12 is a rise; exactly 1e-12 and 0.5e-12 are flat."""
    line = np.array([0.0, 0.5, 1.0])
    rows = [line * 1.5e-12, line * 1e-12, line * 0.5e-12, -line * 1.5e-12]
    assert np.ptp(rows[1]) == 1e-12
    scores = st.trend_scores(np.stack(rows))
    np.testing.assert_allclose(scores, [1.0, 0.0, 0.0, -1.0], atol=1e-9)
    assert scores[1] == 0.0 and scores[2] == 0.0  # exactly flat, not a tiny fraction


def test_trend_labels_need_a_score_strictly_beyond_the_threshold():
    """(0, 2, 1): centred times (−1, 0, 1), slope (0·−1 + …) = 1 / 2, rise 0.5 × 2 = 1 over
    range 2: score exactly 0.5; (1, 2, 0) scores exactly −0.5."""
    contexts = np.array([[0.0, 2.0, 1.0], [1.0, 2.0, 0.0]])
    assert st.trend_scores(contexts).tolist() == [0.5, -0.5]
    assert st.trend_labels(contexts, 0.5).tolist() == [0, 0]
    assert st.trend_labels(contexts, 0.49).tolist() == [1, -1]
    assert st.trend_labels(contexts).tolist() == [1, -1]  # the default threshold 0.4
    assert st.trend_labels(contexts * 0.7, 0.6).tolist() == [0, 0]  # scale-free


# -- small pieces --------------------------------------------------------------------------------


def test_settings_key_is_the_first_16_hex_digits_of_sha256_of_sorted_json_and_extra_bytes():
    settings = {"b": 2, "a": 1.5}
    text = json.dumps({"a": 1.5, "b": 2}, sort_keys=True)
    assert st.settings_key(settings) == hashlib.sha256(text.encode()).hexdigest()[:16]
    extra = hashlib.sha256(text.encode() + b"prices" + b"more").hexdigest()[:16]
    assert st.settings_key(settings, b"prices", b"more") == extra


def test_line_plot_settings_defaults_are_the_documented_ones():
    """The dataclass defaults are dbt_project.yml's vars (and the module docstring's 0.4);
    the rest of the recipe (300 validation walks, batches of 64, Adam at 3e-3) is pinned
    as the recipe the cached classifiers were trained with."""
    project = project_defaults()
    defaults = st.LinePlotSettings()
    assert defaults.context_length == project["context_length"]
    assert defaults.trend_threshold == project["threshold"] == 0.4
    assert defaults.seed == project["seed"]
    assert defaults.training_walks == project["walks"]
    assert defaults.epochs == project["epochs"]
    assert (defaults.validation_walks, defaults.batch_size) == (300, 64)
    assert defaults.learning_rate == 3e-3
    assert defaults.version == st.CLASSIFIER_VERSION
    assert st.FEATURE_SIZE == 32 and st.LABELS.tolist() == [-1, 0, 1]


def test_synthetic_walks_follow_their_recipe_and_give_every_label():
    """Volatility U(0.005, 0.03) per walk, drift = volatility × U(−0.15, 0.15), normal steps
    scaled by the volatility, 100 × exp of the cumulative sum (drawn in that order)."""
    rng = np.random.default_rng(11)
    volatility = rng.uniform(0.005, 0.03, size=(40, 1))
    drift = volatility * rng.uniform(-0.15, 0.15, size=(40, 1))
    steps = drift + volatility * rng.standard_normal((40, 16))
    expected = 100.0 * np.exp(np.cumsum(steps, axis=1))
    np.testing.assert_allclose(st.synthetic_walks(40, 16, 11), expected, rtol=1e-12)
    labels = st.trend_labels(st.synthetic_walks(600, 80, 42), 0.4)
    shares = [np.mean(labels == label) for label in (-1, 0, 1)]
    assert min(shares) > 0.15  # all three labels common


def test_line_plot_features_are_the_ink_density_pooled_four_by_four():
    contexts = st.synthetic_walks(2, 16, 5)
    plots = line_plot_images(contexts).astype(float)
    expected = np.zeros((2, 1, 32, 32))
    for w in range(2):
        ink = 1.0 - plots[w].mean(axis=2) / 255.0
        for i in range(32):
            for j in range(32):
                expected[w, 0, i, j] = ink[4 * i : 4 * i + 4, 4 * j : 4 * j + 4].mean()
    features = st.line_plot_features(contexts)
    assert features.dtype == np.float32
    np.testing.assert_allclose(features, expected, atol=1e-6)


def test_classifier_network_layers():
    """Two 4 × 4 stride-2 convolutions (1 → 8 → 16 channels, 32 → 16 → 8 pixels), ReLU, and
    one linear layer from the 16 × 8 × 8 map to the three classes."""
    network = st._classifier_network()
    shapes = [tuple(p.shape) for p in network.parameters()]
    assert shapes == [(8, 1, 4, 4), (8,), (16, 8, 4, 4), (16,), (3, 1024), (3,)]
    convolutions = [m for m in network if isinstance(m, torch.nn.Conv2d)]
    assert [(c.stride, c.padding) for c in convolutions] == [((2, 2), (1, 1))] * 2
    torch.manual_seed(0)
    image = torch.randn(2, 1, 32, 32)
    with torch.no_grad():
        hidden = torch.relu(convolutions[0](image))
        hidden = torch.relu(convolutions[1](hidden))
        expected = network[-1](hidden.reshape(2, -1))
        np.testing.assert_allclose(network(image).numpy(), expected.numpy(), atol=1e-6)


# -- training, caching, predicting ---------------------------------------------------------------

TINY = st.LinePlotSettings(
    context_length=16,
    seed=7,
    training_walks=40,
    validation_walks=60,
    epochs=2,
    batch_size=16,
    learning_rate=0.01,
)


def replayed_training(settings: st.LinePlotSettings):
    """The documented recipe step by step: walks drawn with the settings' seed, the first
    ``training_walks`` train and the rest validate, targets trend label + 1; torch seeded
    with the seed before the network is built; Adam at the learning rate; each epoch one
    permutation from ``default_rng(seed)`` (one generator across epochs) cut into batches of
    ``batch_size`` (the last one shorter); cross-entropy; accuracy on the validation walks."""
    n_train = settings.training_walks
    walks = st.synthetic_walks(
        n_train + settings.validation_walks, settings.context_length, settings.seed
    )
    features = torch.from_numpy(st.line_plot_features(walks))
    targets = torch.from_numpy(st.trend_labels(walks, settings.trend_threshold) + 1)
    with torch.random.fork_rng():
        torch.manual_seed(settings.seed)
        network = st._classifier_network()
        optimiser = torch.optim.Adam(network.parameters(), lr=settings.learning_rate)
        shuffles = np.random.default_rng(settings.seed)
        for _ in range(settings.epochs):
            order = shuffles.permutation(n_train)
            size = settings.batch_size
            for rows in (order[i : i + size] for i in range(0, n_train, size)):
                optimiser.zero_grad()
                logits = network(features[torch.from_numpy(rows)])
                loss = torch.nn.functional.cross_entropy(logits, targets[torch.from_numpy(rows)])
                loss.backward()
                optimiser.step()
        with torch.no_grad():
            predicted = network(features[n_train:]).numpy().argmax(axis=1)
    accuracy = float(np.mean(predicted == targets[n_train:].numpy()))
    return network.state_dict(), accuracy


def test_training_replays_the_documented_recipe_exactly_on_one_thread(monkeypatch):
    seen = []
    fit = st._fit_classifier

    def spy(*args):
        seen.append(torch.get_num_threads())
        return fit(*args)

    monkeypatch.setattr(st, "_fit_classifier", spy)
    before = torch.get_num_threads()
    state, accuracy = st.train_line_plot_classifier(TINY)
    assert seen == [1] and torch.get_num_threads() == before
    torch.set_num_threads(1)  # the same summation order as the product's one thread
    try:
        expected_state, expected_accuracy = replayed_training(TINY)
    finally:
        torch.set_num_threads(before)
    assert accuracy == pytest.approx(expected_accuracy, abs=1e-6)  # float32 mean of 60
    assert list(state) == list(expected_state)
    for name, tensor in expected_state.items():
        np.testing.assert_array_equal(state[name].numpy(), tensor.numpy(), err_msg=name)


def test_trained_classifier_is_cached_loaded_and_predicts_softmax_of_its_logits(tmp_path):
    messages = []
    system = st.LinePlotSentiment(TINY, cache_dir=tmp_path)
    assert system.fingerprint() == f"lineplot_cnn:{TINY.key}"
    path = system.checkpoint_path
    assert path == tmp_path / "sentiment" / f"lineplot_cnn-{TINY.key}.pt"
    system.prepare(messages.append)
    assert len(messages) == 1 and path.name in messages[0]
    meta = json.loads(path.with_suffix(".pt.json").read_text())
    assert meta["validation_accuracy"] == system.validation_accuracy
    assert meta["settings"]["training_walks"] == 40
    network = system._network
    system.prepare(messages.append)  # prepared: nothing happens
    assert system._network is network and len(messages) == 1

    loaded = st.LinePlotSentiment(TINY, cache_dir=tmp_path)
    loaded.prepare(messages.append)  # from the cache: no training message
    assert len(messages) == 1 and loaded.validation_accuracy == system.validation_accuracy
    assert not loaded._network.training  # evaluation mode

    contexts = st.synthetic_walks(9, 16, 99)
    with torch.no_grad():
        logits = network(torch.from_numpy(st.line_plot_features(contexts))).numpy()
    logits = logits.astype(float)
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected = exp / exp.sum(axis=1, keepdims=True)
    output = loaded.predict(contexts)
    np.testing.assert_allclose(output.probabilities, expected, atol=1e-6)
    assert output.probabilities.dtype == float
    assert output.labels.tolist() == (expected.argmax(axis=1) - 1).tolist()


def test_save_checkpoint_writes_the_state_and_its_metadata(tmp_path):
    path = tmp_path / "deep" / "er" / "model.pt"  # folders made as needed
    st.save_checkpoint(path, {"w": torch.ones(2)}, {"accuracy": 0.5})
    assert torch.load(path, weights_only=True)["w"].tolist() == [1.0, 1.0]
    assert json.loads(path.with_name("model.pt.json").read_text()) == {"accuracy": 0.5}
    st.save_checkpoint(path.with_name("other.pt"), {"w": torch.zeros(1)}, {})  # folder exists
    names = ["model.pt", "model.pt.json", "other.pt", "other.pt.json"]
    assert sorted(p.name for p in path.parent.iterdir()) == names


def test_models_live_beside_the_warehouse_unless_a_model_folder_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_MODEL_DIR", raising=False)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w" / "tsrate.duckdb"))
    assert st.model_cache_dir() == tmp_path / "w" / "models"
    monkeypatch.setenv("TSRATE_MODEL_DIR", str(tmp_path / "elsewhere"))
    assert st.model_cache_dir() == tmp_path / "elsewhere"


# -- choosing the system and recording its output ------------------------------------------------


def test_a_clip_folder_named_by_the_var_or_the_environment_chooses_clip(tmp_path, monkeypatch):
    """A folder without config.json is refused by the CLIP system, so reaching it shows
    that CLIP was chosen (the environment wins over the var)."""
    from tsrate import TsrateError

    missing = str(tmp_path / "no-clip")
    monkeypatch.delenv("TSRATE_CLIP_PATH", raising=False)
    with pytest.raises(TsrateError, match="no config.json"):
        st.default_sentiment_system(24, {"sentiment_clip_path": missing})
    monkeypatch.setenv("TSRATE_CLIP_PATH", missing)
    with pytest.raises(TsrateError, match="no-clip holds no config.json"):
        st.default_sentiment_system(24, {"sentiment_clip_path": ""})
    with pytest.raises(TsrateError, match="no-clip holds no config.json"):
        st.default_sentiment_system(24, {"sentiment_clip_path": str(tmp_path / "other")})


def test_default_system_falls_back_to_the_project_defaults(monkeypatch):
    monkeypatch.delenv("TSRATE_CLIP_PATH", raising=False)
    system = st.default_sentiment_system(24, {})
    assert isinstance(system, st.LinePlotSentiment)
    project = project_defaults()
    expected = st.LinePlotSettings(
        context_length=24,
        trend_threshold=project["threshold"],
        seed=project["seed"],
        training_walks=project["walks"],
        epochs=project["epochs"],
    )
    assert system.settings == expected
    chosen = st.default_sentiment_system(
        24,
        {
            "sentiment_trend_threshold": 0.3,
            "sentiment_seed": 5,
            "sentiment_training_walks": 10,
            "sentiment_epochs": 2,
        },
    )
    assert (chosen.settings.trend_threshold, chosen.settings.seed) == (0.3, 5)
    assert (chosen.settings.training_walks, chosen.settings.epochs) == (10, 2)


def test_sentiment_rows_use_the_default_threshold_when_none_is_given():
    """(0, 2, 1) scores exactly 0.5: rising under the default 0.4."""
    rows = st.sentiment_rows(
        StubSentiment(),
        "r",
        "T",
        np.array(["2024-01-02"], "datetime64[D]"),
        np.array([[0.0, 2, 1]]),
    )
    assert rows["trend_label"].tolist() == [1]


class StubSentiment:
    """Says 1 for every window with lopsided probabilities; records that it was prepared."""

    sentiment_system_id = "stub"

    def __init__(self):
        self.prepared = 0

    def fingerprint(self) -> str:
        return "stub"

    def prepare(self, progress=None) -> None:
        self.prepared += 1

    def predict(self, contexts: np.ndarray) -> st.SentimentOutput:
        probabilities = np.tile([0.1, 0.2, 0.7], (len(contexts), 1))
        return st.SentimentOutput(np.ones(len(contexts), dtype=int), probabilities)


def test_record_run_sentiments_stores_every_window_of_every_ticker_with_the_default_rule(
    monkeypatch,
):
    """Two tickers, windows of 3 values ending at positions 2 and 3. Closes (0, 2, 1, 1.2):
    the first window (0, 2, 1) scores exactly 0.5 (rising under the default 0.4, which the
    empty vars fall back to), the second (2, 1, 1.2) scores −0.8 / 1 = −0.8."""
    from tsrate.platform.raw_schema import create_raw_tables

    stub = StubSentiment()
    monkeypatch.setattr(st, "multimodal_vars", lambda: {})
    monkeypatch.setattr(st, "default_sentiment_system", lambda length, variables: stub)
    con = duckdb.connect()
    create_raw_tables(con)
    closes = np.array([0.0, 2.0, 1.0, 1.2])
    dates = np.array(["2024-01-03", "2024-01-04"], dtype="datetime64[D]")
    series = {
        ticker: SimpleNamespace(
            clean=closes * k, end_positions=np.array([2, 3]), window_end_dates=dates
        )
        for ticker, k in (("AAA", 1.0), ("BBB", 3.0))
    }
    without = SimpleNamespace(perturbations=("P0", "P5"), context_length=3)
    assert st.record_run_sentiments(con, without, series, "r1") == 0
    assert stub.prepared == 0
    with_p6 = SimpleNamespace(perturbations=("P0", "P6"), context_length=3)
    assert st.record_run_sentiments(con, with_p6, series, "r1") == 4
    assert stub.prepared == 1
    rows = con.execute(
        "select ticker, window_end_date::varchar, sentiment, stripe_intensity, trend_score,"
        " trend_label, probability_positive from raw.sentiments order by ticker, window_end_date"
    ).fetchall()
    assert [row[:4] for row in rows] == [
        ("AAA", "2024-01-03", 1, 255),
        ("AAA", "2024-01-04", 1, 255),
        ("BBB", "2024-01-03", 1, 255),
        ("BBB", "2024-01-04", 1, 255),
    ]
    np.testing.assert_allclose([row[4] for row in rows], [0.5, -0.8, 0.5, -0.8], atol=1e-12)
    assert [row[5] for row in rows] == [1, -1, 1, -1]
    assert [row[6] for row in rows] == [0.7] * 4
