"""int_ratings_bootstrapped picks the distributions it resamples (var
bootstrap_effect_distributions, the k worst per confounder) from the published effects: the
mean rows of int_perturbation_effects_estimated (draw null), not the per-draw rows the same
model holds beside them (perturbation_effect_draws). The real model, on real DuckDB
relations of a small effect study (tests/support/effect_study.py) and its real draws."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd

from tests.support.effect_study import SEED, effect_inputs
from tsrate.methods.causal.effects import effect_means, effect_scores, study_effects, with_draws

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = {
    "rating_levels": "3",
    "bootstrap_resamples": "20",
    "bootstrap_block_length": "3",
    "bootstrap_seed": "4",
    "bootstrap_confidence": "0.9",
    "robustness_outcome": "max_abs_residual",
    "matching_estimand": "ATE",
    "distribution_aggregation": "max",
    "bootstrap_effect_distributions": "1",  # the worst one per confounder: the choice counts
    "causal_seed": str(SEED),
    "treatment_draws": "3",
    "effect_strata": "confounder",
}


class _Dbt:
    """``config.get`` and ``ref`` (DuckDB tables of the frames given), as dbt hands them."""

    def __init__(self, parents: dict[str, pd.DataFrame]) -> None:
        self.con = duckdb.connect()
        for name, frame in parents.items():
            self.con.register(f"{name}_frame", frame)
            self.con.execute(f"create table {name} as select * from {name}_frame")
        self.config = SimpleNamespace(get=SETTINGS.get)

    def ref(self, name: str) -> duckdb.DuckDBPyRelation:
        return self.con.table(name)


def _model():
    path = ROOT / "python_models" / "intermediate" / "int_ratings_bootstrapped.py"
    spec = importlib.util.spec_from_file_location("int_ratings_bootstrapped", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model


def _parents(estimated: pd.DataFrame, inputs) -> dict[str, pd.DataFrame]:
    errors, sets, distributions, _ = inputs
    rng = np.random.default_rng(3)
    errors = errors.assign(
        smape=rng.random(len(errors)), mase=rng.random(len(errors)), sign_accuracy=0.5
    )
    scores = effect_scores(effect_means(estimated), "max")
    scores = scores.assign(is_default_outcome=True, max_score=np.nan)
    levels = pd.DataFrame({"confidence": [0.95, 0.75, 0.6], "weight": [1.0, 0.8, 0.6]})
    return {
        "window_errors": errors,
        "robustness_scores": scores,
        "int_perturbation_effects_estimated": estimated,
        "confidence_levels": levels,
        "int_perturbation_sets_derived": sets,
        "int_confounder_distributions": distributions,
    }


def test_the_worst_distributions_come_from_the_means_not_the_draws():
    inputs = effect_inputs()
    errors, sets, distributions, _ = inputs
    draw_rows: list[pd.DataFrame] = []
    effects = study_effects(
        errors, sets, distributions, SEED, draws=3, estimand="ATE", draw_rows=draw_rows
    )
    estimated = with_draws(effects, draw_rows)
    draws = estimated.loc[estimated["draw"].notna()]
    # a draw far from its mean: the first distribution's draw 0 of every system and
    # treatment made the largest |APE_m| and PIE % of its confounder
    first = draws["distribution_id"] == sorted(draws["distribution_id"])[0]
    extreme = draws.loc[first & (draws["draw"] == 0)].assign(ape_matched=1e6, pie_percent=1e8)
    planted = pd.concat(
        [estimated.loc[estimated["draw"].isna()], extreme], ignore_index=True
    ).astype({"draw": "Int64"})
    means_only = estimated.loc[estimated["draw"].isna()].reset_index(drop=True)
    model = _model()
    alone = model(_Dbt(_parents(means_only, inputs)), None)
    with_real_draws = model(_Dbt(_parents(estimated, inputs)), None)
    with_planted = model(_Dbt(_parents(planted, inputs)), None)
    robustness = alone["metric"].str.startswith(("ape_", "pie_"))
    assert robustness.any()
    pd.testing.assert_frame_equal(with_planted, alone)
    pd.testing.assert_frame_equal(with_real_draws, alone)
