"""fracast's prefix-cached encoder (tsrate.systems.fracast_prefix) on tiny encoders built here.

The real packaged model takes seconds a test; these build fracast's own ``FracastCore`` with
a small config (window 72, width 8, five dilated stages: taps 2 … 32) and random weights
(FiLM scale conditioning switched on), and check the prefix path against the independent
computation it claims to reproduce: fracast's own full-length forward of the same core.
The inputs reach what the real studies rarely do: rows of different prefix lengths, a
prefix shorter than a stage's taps (and one of one position), a context with no prefix,
periods between a third and a half of a window that is not a power of two, NaN or inf
where the mask says observed, more rows than detected periods, and the cache's capacity
and order of eviction. Each failure of the product code here would change a forecast or the
cache's counters.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_foundation_models.json).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("fracast")

from fracast._core.model import FracastCore  # noqa: E402
from fracast._core.periodic.encoder import _fill_nan_row  # noqa: E402
from fracast._core.periodic.official_periodogram import significant_periods  # noqa: E402

from tsrate.systems.fracast_prefix import (  # noqa: E402
    MAX_CACHED_PREFIXES,
    PrefixCachedCore,
    UnsupportedModel,
    check_supported,
)

#: float32 arithmetic on differently shaped tensors: the stated agreement is rounding only
ATOL = 2e-5


def tiny_config(W: int = 72, **model) -> dict:  # noqa: N803 - fracast's name
    base = {
        "d_model": 8,
        "W": W,
        "level_widths": [W],
        "n_stages": 5,
        "dilation_base": 2,
        "kernel_size": 3,
        "ffn_mult": 1.5,
        "causal": True,
        "separable_conv": True,
        "share_stages": True,
        "scale_cond": "film",
        "scale_cond_dim": 8,
        "recency_encoding": True,
        "periodic_phase": True,
        "periodic_topk": 2,
        "periodic_harmonics": 1,
        "periodic_alpha": 0.05,
        "periodic_min_period": 2,
    }
    base.update(model)
    return {"model": base, "pyramid": {"ratios": []}}


def tiny_core(W: int = 72, seed: int = 0, **model) -> FracastCore:  # noqa: N803
    """fracast's encoder with random weights (its FiLM layer starts at zero: randomised too)."""
    core = FracastCore(tiny_config(W, **model))
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in core.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if "norm" in name:
                parameter.copy_(1.0 + 0.2 * noise)
            else:
                parameter.copy_(0.4 * noise)
    return core.eval()


def encode_inputs(rows: list[np.ndarray], W: int = 72):  # noqa: N803
    """As FracastModel._predict_rows: each row right-aligned in W, NaN and padding masked."""
    values = np.zeros((len(rows), 1, W), dtype=np.float32)
    mask = np.zeros((len(rows), 1, W), dtype=bool)
    for i, row in enumerate(rows):
        row = np.asarray(row, dtype=np.float32)
        finite = np.isfinite(row)
        values[i, 0, W - row.size :] = np.where(finite, row, 0.0)
        mask[i, 0, W - row.size :] = finite
    mask_t = torch.from_numpy(mask)
    return torch.from_numpy(values), mask_t, mask_t.to(torch.float32)


def sine(n: int, period: float, seed: int, phase: float = 0.3) -> np.ndarray:
    t = np.arange(n, dtype=float)
    noise = np.random.default_rng(seed).normal(0.0, 0.05, n)
    return np.sin(2 * np.pi * t / period + phase) + noise


def detected_periods(values, mask) -> set[tuple[int, ...]]:
    """fracast's detector on what its encoder sees (values, mask), as PeriodicPhaseEncoder
    calls it: one tuple of periods per distinct row."""
    W = values.shape[2]  # noqa: N806
    periods, _, _ = significant_periods(
        _fill_nan_row(values[:, 0].float(), mask[:, 0].bool()),
        min_period=2,
        max_period=max(2, W // 2),
        top_k=2,
        significance_alpha=0.05,
    )
    return {tuple(row) for row in periods.tolist()}


def assert_matches(core, prefix, values, mask, cov):
    with torch.no_grad():
        expected = core(values, mask, cov)
        ours = prefix(values, mask, cov)
    assert ours.shape == expected.shape
    torch.testing.assert_close(ours, expected, rtol=0, atol=ATOL)
    return ours


@pytest.fixture(scope="module")
def core() -> FracastCore:
    return tiny_core()


# -- against fracast's own full-length forward -------------------------------------------------


def test_rows_with_periods_from_a_half_to_a_fifteenth_of_the_window(core):
    """Three 64-value rows (prefix 8) with cycles of 64, 32 and 5 steps. fracast's detector
    (max period W // 2 = 36 on a 128-point FFT) finds 32 and 5 and rejects 64 (its bin lies
    below the range); a bound of W or W // 3 = 24 would find 64 or lose 32. Three rows, two
    period slots each (batch size != K)."""
    rows = [sine(64, 64.0, 1), sine(64, 32.0, 2), sine(64, 5.0, 3)]
    values, mask, cov = encode_inputs(rows)
    found = detected_periods(values, mask)
    assert {row[0] for row in found} == {0, 32, 5}
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, cov)
    assert (prefix.computed, prefix.reused) == (3, 0)


def test_rows_whose_prefixes_differ_in_length(core):
    """One row observed from position 8, one from 20 (leading NaN), one with a gap: the
    common prefix is the shortest, and the other rows' unobserved positions after it run
    through the stages as observed data does, as in fracast."""
    first = sine(64, 9.0, 4)
    later = sine(64, 12.0, 5)
    later[:12] = np.nan
    gap = sine(64, 7.0, 6)
    gap[30:33] = np.nan
    values, mask, cov = encode_inputs([first, later, gap])
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, cov)
    assert list(prefix._cache) and {key[0] for key in prefix._cache} == {8}


@pytest.mark.parametrize("length", [71, 69, 66, 60])
def test_a_prefix_shorter_than_the_taps(core, length):
    """Prefixes of 1, 3, 6 and 12 positions: shorter than the taps of the later stages
    (2, 4, 8, 16, 32), so the cached states are padded with zeros on the left as fracast's
    causal convolution pads; five rows (more rows than the first stage's taps)."""
    rows = [sine(length, p, 10 + i) for i, p in enumerate([5.0, 6.0, 9.0, 11.0, 17.0])]
    values, mask, cov = encode_inputs(rows)
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, cov)
    assert prefix.computed >= 1
    assert {key[0] for key in prefix._cache} == {72 - length}


def test_a_context_that_fills_the_window_runs_fracast_itself(core):
    """No prefix to reuse (start 0): fracast's own forward, nothing computed or cached."""
    values, mask, cov = encode_inputs([sine(72, 6.0, 20), sine(72, 10.0, 21)])
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, cov)
    assert (prefix.computed, prefix.reused, len(prefix._cache)) == (0, 0, 0)


def test_a_batch_with_nothing_observed_runs_fracast_itself(core):
    values = torch.zeros((2, 1, 72))
    mask = torch.zeros((2, 1, 72), dtype=torch.bool)
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, mask.float())
    assert (prefix.computed, prefix.reused) == (0, 0)


def test_non_finite_values_where_the_mask_says_observed(core):
    """fracast maps NaN and ±inf to 0 before it masks (the drop-in takes any caller's
    values and mask, not only forecast_batch's): the prefix path must too."""
    values, mask, cov = encode_inputs([sine(64, 8.0, 30), sine(64, 13.0, 31)])
    values[0, 0, 40] = float("nan")
    values[0, 0, 50] = float("inf")
    values[1, 0, 45] = float("-inf")
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, cov)
    assert prefix.computed >= 1


def test_coverage_alone_marks_a_position_as_data(core):
    """A position covered (cov 1) but not observed (mask 0) is not padding: fracast gives it
    a coverage flag, so the prefix ends there."""
    values, mask, cov = encode_inputs([sine(60, 8.0, 40), sine(60, 5.0, 41)])
    cov[:, 0, 5] = 1.0
    prefix = PrefixCachedCore(core)
    assert_matches(core, prefix, values, mask, cov)
    assert {key[0] for key in prefix._cache} == {5}


def test_a_window_that_is_not_a_power_of_two_and_not_even():
    """W = 75 (the FFT pads to 128, max period 37): the detector's range comes from W // 2."""
    core = tiny_core(W=75, seed=3)
    rows = [sine(70, 64.0, 50), sine(70, 34.0, 51), sine(70, 4.0, 52)]
    values, mask, cov = encode_inputs(rows, W=75)
    assert_matches(core, PrefixCachedCore(core), values, mask, cov)


@pytest.mark.parametrize("W, alpha", [(5, 0.05), (9, 0.05), (5, 1.0)])  # noqa: N803
def test_windows_too_short_for_the_default_period_bounds(W, alpha):  # noqa: N803
    """At W = 5 the detector's max period is max(2, 5 // 2) = 2: no bin in range, no period
    at all (with alpha = 1, no significance filter, a bound of 3 would find period 3 in the
    row 0, 0, 1, 0 after its mean-filled padding); at W = 9 it is 4."""
    core = tiny_core(W=W, seed=4, n_stages=2, periodic_alpha=alpha)
    t = np.arange(W - 1, dtype=float)
    rows = [
        np.array([0.0, 3.0, 0.0, 3.0, 1.0, 2.0, 0.0, 3.0])[: W - 1],
        np.cos(t * 2.1),
        np.array([0.0, 0.0, 1.0, 0.0]),
    ]
    values, mask, cov = encode_inputs(rows, W=W)
    assert_matches(core, PrefixCachedCore(core), values, mask, cov)


def test_fracast_raises_its_own_errors_on_the_wrong_shapes(core):
    prefix = PrefixCachedCore(core)
    values, mask, cov = encode_inputs([sine(60, 8.0, 60)])
    with pytest.raises(ValueError, match="does not match model.W"):
        prefix(values[:, :, :70], mask[:, :, :70], cov[:, :, :70])
    with pytest.raises(ValueError, match="single level"):
        prefix(values[:, 0], mask[:, 0], cov[:, 0])
    two = torch.cat([values, values], dim=1)
    with pytest.raises(ValueError, match="single level"):
        prefix(two, torch.cat([mask, mask], dim=1), torch.cat([cov, cov], dim=1))
    assert prefix.computed == 0


# -- the cache ---------------------------------------------------------------------------------


def test_the_prefix_states_are_computed_once_per_periods_and_length(core):
    rows = [sine(64, 8.0, 70), sine(64, 8.0, 70), sine(64, 13.0, 71)]
    values, mask, cov = encode_inputs(rows)
    unique = len(detected_periods(values, mask))
    assert unique == 2
    prefix = PrefixCachedCore(core)
    assert (prefix.computed, prefix.reused) == (0, 0)
    first = assert_matches(core, prefix, values, mask, cov)
    assert (prefix.computed, prefix.reused) == (2, 0)
    second = assert_matches(core, prefix, values, mask, cov)
    assert (prefix.computed, prefix.reused) == (2, 2)
    torch.testing.assert_close(first, second, rtol=0, atol=0)
    # another prefix length: other keys
    values2, mask2, cov2 = encode_inputs([sine(50, 8.0, 70)])
    assert_matches(core, prefix, values2, mask2, cov2)
    assert prefix.computed == 3 and len(prefix._cache) == 3


def test_the_cache_evicts_the_least_recently_used_prefix(core):
    prefix = PrefixCachedCore(core, max_entries=2)
    batches = {n: encode_inputs([sine(n, 8.0, 80)]) for n in (60, 55, 50)}
    for n in (60, 55):
        assert_matches(core, prefix, *batches[n])
    assert_matches(core, prefix, *batches[60])  # 60 is now the most recent
    assert (prefix.computed, prefix.reused) == (2, 1)
    assert_matches(core, prefix, *batches[50])  # evicts 55, the least recent
    assert [key[0] for key in prefix._cache] == [72 - 60, 72 - 50]
    assert_matches(core, prefix, *batches[60])
    assert (prefix.computed, prefix.reused) == (3, 2)
    assert_matches(core, prefix, *batches[55])  # recomputed
    assert (prefix.computed, prefix.reused) == (4, 2)
    assert len(prefix._cache) == 2


def test_the_default_cache_keeps_256_prefixes(core):
    """The module keeps MAX_CACHED_PREFIXES = 256 prefix states (its documented budget):
    257 distinct period sets leave the 256 latest."""
    assert MAX_CACHED_PREFIXES == 256
    prefix = PrefixCachedCore(core)
    assert prefix.max_entries == 256
    periods = torch.tensor([[2 + i % 30, 2 + i // 30] for i in range(257)])
    assert len({tuple(row) for row in periods.tolist()}) == 257
    prefix._prefixes(8, periods, torch.device("cpu"), torch.float32)
    assert prefix.computed == 257 and len(prefix._cache) == 256
    assert (8, (2, 2)) not in prefix._cache and (8, (3, 2)) in prefix._cache


# -- the models it refuses ----------------------------------------------------------------------


def test_supported_tiny_core_passes(core):
    check_supported(core)


@pytest.mark.parametrize(
    "change, problem",
    [
        (dict(share_stages=False), "stages are not shared"),
        (dict(separable_conv=False), "not separable, causal"),
        (dict(causal=False), "not separable, causal"),
        (dict(recency_encoding=False), "recency or phase"),
        (dict(periodic_phase=False), "recency or phase"),
    ],
)
def test_models_with_another_structure_are_refused(change, problem):
    core = FracastCore(tiny_config(**change))
    with pytest.raises(UnsupportedModel, match=problem):
        PrefixCachedCore(core)


def test_dynamic_activation_quantization_and_levels_are_refused():
    core = tiny_core()
    core.block.int8_dynamic_act = True
    with pytest.raises(UnsupportedModel, match="not separable, causal"):
        check_supported(core)
    core = tiny_core()
    core.share_stages = False  # fracast's forward would then take blocks[i], not the block
    with pytest.raises(UnsupportedModel, match="stages are not shared"):
        check_supported(core)
    core = tiny_core()
    core.periodic.L = 2
    with pytest.raises(UnsupportedModel, match="more than one resolution level"):
        check_supported(core)
    core = tiny_core()
    core.level_widths = [72, 36]
    with pytest.raises(UnsupportedModel, match="more than one resolution level"):
        check_supported(core)
    with pytest.raises(UnsupportedModel, match="core is Linear"):
        check_supported(torch.nn.Linear(2, 2))


def test_a_detector_that_returns_another_number_of_periods_is_refused(core, monkeypatch):
    import tsrate.systems.fracast_prefix as module

    values, mask, cov = encode_inputs([sine(60, 8.0, 90), sine(60, 5.0, 91)])
    prefix = PrefixCachedCore(core)
    real = module.significant_periods

    def three(*args, **kwargs):
        periods, scores, n_valid = real(*args, **{**kwargs, "top_k": 3})
        return periods, scores, n_valid

    monkeypatch.setattr(module, "significant_periods", three)
    with pytest.raises(UnsupportedModel, match="K=3"):
        prefix(values, mask, cov)
