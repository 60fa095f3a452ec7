"""Windows and numeric perturbations P0-P3."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.inputs.perturbations import perturb_series
from tsrate.inputs.windows import contexts, futures, window_end_positions


def test_window_count_matches_study_year():
    # 252 trading days, n=80, d=20, stride 1 -> 153 windows
    ends = window_end_positions(252, 80, 20, 1)
    assert len(ends) == 153 and ends[0] == 79 and ends[-1] == 231


def test_stride_and_too_short():
    assert list(window_end_positions(10, 3, 2, 2)) == [2, 4, 6]
    with pytest.raises(TsrateError, match="too short for one window"):
        window_end_positions(99, 80, 20)


def test_contexts_and_futures_slice_the_series():
    values = np.arange(10.0)
    ends = window_end_positions(10, 3, 2)
    assert contexts(values, ends, 3)[0].tolist() == [0, 1, 2]
    assert futures(values, ends, 2)[-1].tolist() == [8, 9]


@pytest.mark.parametrize("perturbation", ["P1", "P2", "P3"])
@pytest.mark.parametrize("phase", [0, 7, 79])
def test_each_context_holds_exactly_one_perturbed_value(perturbation, phase):
    clean = np.linspace(100, 200, 252)
    values, mask = perturb_series(clean, perturbation, every=80, phase=phase)
    ends = window_end_positions(252, 80, 20)
    per_window = contexts(mask.astype(float), ends, 80).sum(axis=1)
    assert (per_window == 1).all()
    assert np.flatnonzero(mask)[0] == phase
    changed = values[mask]
    expected = {
        "P1": np.zeros_like(changed),
        "P2": clean[mask] / 2,
        "P3": np.full_like(changed, np.nan),
    }
    np.testing.assert_array_equal(changed, expected[perturbation])
    np.testing.assert_array_equal(values[~mask], clean[~mask])


def test_p0_is_clean_and_input_untouched():
    clean = np.arange(1.0, 11.0)
    values, mask = perturb_series(clean, "P0", every=3)
    assert not mask.any() and np.array_equal(values, clean)
    perturb_series(clean, "P1", every=3)
    assert clean[0] == 1.0  # the caller's array is never modified


def test_unknown_perturbation():
    with pytest.raises(TsrateError, match="P4"):
        perturb_series(np.ones(5), "P4", every=2)
