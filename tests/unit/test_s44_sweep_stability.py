"""rating_stability of a run with too few window dates: the bootstrap is withheld, and no
resample is drawn at all (not one resample of the original dates computed and then thrown
away). The resamples are read off the real calls (a profile hook records the rows of the
date multiplicities the resampling functions are given, and of the resampled scores the
robustness summaries are given; nothing is replaced), so the check does not depend on
timing.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

import tsrate.methods.ratings as ratings
import tsrate.methods.stability as resampling
from tests.unit.test_s40_outcome_stability import RESAMPLES, stability, study

WATCHED = {
    resampling.wrs_resampled.__code__: ("wrs", "multiplicities"),
    resampling.effects_resampled.__code__: ("effects", "multiplicities"),
    # the robustness metrics' summaries (the accuracy ones are block_bootstrap_ratings')
    ratings.bootstrap_summary.__code__: ("summaries", "boot"),
}


def resamples_drawn(settings_change: dict) -> tuple[dict[str, set[int]], object]:
    """(pass -> the resample counts its calls were given, the mart) of rating_stability on
    the outcome study with ``settings_change``."""
    errors, scores, effects, sets, distributions, settings = study()
    seen: dict[str, set[int]] = {}
    lock = threading.Lock()

    def hook(frame, event, _arg):
        if event != "call" or frame.f_code not in WATCHED:
            return
        name, argument = WATCHED[frame.f_code]
        if name == "summaries" and frame.f_back.f_code.co_name != "_summaries":
            return
        with lock:
            seen.setdefault(name, set()).add(int(np.shape(frame.f_locals[argument])[0]))

    threading.setprofile(hook)  # the pool's threads, started inside rating_stability
    sys.setprofile(hook)
    try:
        out = stability(errors, scores, effects, sets, distributions, settings | settings_change)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return seen, out


def test_a_withheld_run_draws_no_resample():
    """24 window dates, blocks of 24 (the bootstrap needs 48): the WRS and effect passes
    run for the published keys on 0 resamples, and their summaries get 0 resampled scores;
    the mart is the point scores with the reason."""
    seen, out = resamples_drawn({"bootstrap_block_length": 24})
    assert seen == {"wrs": {0}, "effects": {0}, "summaries": {0}}
    assert {m[:3] for m in out["metric"]} >= {"wrs", "ape", "pie"}
    reason = "24 window dates: too few for blocks of 24 (the bootstrap needs at least 48)"
    assert out["separation_reason"].eq(reason).all()
    assert out["n_resamples"].eq(0).all() and out["n_valid"].eq(0).all()
    assert out[["ci_low", "ci_high", "share"]].isna().all().all()
    assert out["separable"].isna().all()
    assert np.isfinite(out["raw_score"]).all() and out["rating"].notna().any()


def test_the_same_hook_sees_every_resample_of_a_resampled_run():
    """The control: blocks of 4 over 24 dates are resampled, every pass on all of them."""
    seen, out = resamples_drawn({"bootstrap_block_length": 4})
    assert seen == {"wrs": {RESAMPLES}, "effects": {RESAMPLES}, "summaries": {RESAMPLES}}
    assert out["n_resamples"].eq(RESAMPLES).all()
