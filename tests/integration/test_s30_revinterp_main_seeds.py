"""The main study's marts describe the main study's seeds only.

A sensitivity study's default point is the main-study variant itself (same variant key),
trained by the sensitivity models on the sensitivity seeds. With ``--seeds 2`` (the small
configuration's sensitivity seed is 1), dataset 7's IMV-LSTM therefore also holds a seed-1
run that only the sensitivity study planned. Before the fix the main-study marts averaged
it in: IMV-LSTM on dataset 7 was scored over seeds {1, 2} beside DA-RNN over {2}, its
correctness, heatmap, stability and ratings mixed a seed the user did not ask for, and its
seed bootstrap resampled two seeds. A real (tiny) suite run and dbt build; the expected
values are recomputed here from the raw tables (scipy's Mann-Whitney U for the AUROC).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tests.integration.builds import INTERP_SELECT, INTERP_TINY_SENSITIVITY
from tests.support.warehouses import read
from tsrate.platform import dbt_runner as dbt
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow


def _raw_run(warehouse, model_id: str, seed: int, variant_id: str = "d7"):
    frame = read(
        warehouse,
        "select r.run_key, r.test_mse from raw.interp_runs r "
        "join raw.interp_variants v using (variant_key) "
        "where v.variant_id = ? and r.model_id = ? and r.seed = ?",
        [variant_id, model_id, seed],
    )
    assert len(frame) == 1
    return frame["run_key"][0], float(frame["test_mse"][0])


def test_main_study_marts_leave_out_seeds_only_the_sensitivity_study_planned(tmp_path, dbt_target):
    from tsrate.suites.interpretability.suite import (
        plan_units,
        plan_variants,
        resolve_config,
        run_units,
    )

    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config("small", seeds=[2], overrides=INTERP_TINY_SENSITIVITY)
    variants = plan_variants(config, [7])
    units = plan_units(config, variants, ["imv_tensor", "darnn"])
    # main: d7 x 2 models x seed 2; sensitivity (imv_tensor, seed 1): d7 (f = 0.3 and
    # sigma = 0.1, the default point) and d7 at f = 0.6
    assert sorted((u.variant.variant_id, u.model_id, u.seed) for u in units) == [
        ("d7", "darnn", 2),
        ("d7", "imv_tensor", 1),
        ("d7", "imv_tensor", 2),
        ("d7_f0.6", "imv_tensor", 1),
    ]
    suite_run_id, trained, _ = run_units(warehouse, config, variants, units, lambda _: None)
    assert trained == 4
    run = {SUITES["interpretability"].run_env: suite_run_id}
    dbt.run_dbt(INTERP_SELECT, None, warehouse, lambda _: None, dbt_target, env_vars=run)

    main_key, main_mse = _raw_run(warehouse, "imv_tensor", 2)
    _, sensitivity_mse = _raw_run(warehouse, "imv_tensor", 1)
    assert main_mse != sensitivity_mse

    # Table 2's row: seed 2 alone, as for DA-RNN
    scores = read(
        warehouse,
        "select model_id, n_runs, test_mse_mean, test_mse_std from "
        "marts.interp_prediction_scores where variant_id = 'd7' order by model_id",
    ).set_index("model_id")
    assert scores["n_runs"].to_dict() == {"darnn": 1, "imv_tensor": 1}
    assert scores.loc["imv_tensor", "test_mse_mean"] == pytest.approx(main_mse, rel=1e-12)
    assert np.isnan(scores.loc["imv_tensor", "test_mse_std"])

    # correctness: the AUROC of seed 2's beta against the true edges, by Mann-Whitney U
    beta = read(
        warehouse,
        "select target_index, source_index, value from raw.interp_attention "
        "where run_key = ? and attention = 'beta'",
        [main_key],
    )
    truth = read(
        warehouse,
        "select t.target_index, t.source_index, sum(t.weight) as weight "
        "from raw.interp_truth t join raw.interp_variants v using (variant_key) "
        "where v.variant_id = 'd7' group by all",
    )
    cells = beta.merge(truth, on=["target_index", "source_index"], how="left")
    edge = cells["weight"].fillna(0) > 0
    positives, negatives = cells["value"][edge], cells["value"][~edge]
    expected_auroc = stats.mannwhitneyu(positives, negatives).statistic / (
        len(positives) * len(negatives)
    )
    auroc = read(
        warehouse,
        "select n_runs, mean_value from marts.interp_correctness "
        "where variant_id = 'd7' and model_id = 'imv_tensor' and measure = 'beta_auroc'",
    )
    assert auroc["n_runs"].tolist() == [1]
    assert auroc["mean_value"][0] == pytest.approx(expected_auroc, abs=1e-12)

    # the heatmap's cells: seed 2's beta, from one run
    summary = read(
        warehouse,
        "select target_index, source_index, mean_value, n_runs "
        "from marts.interp_attention_summary "
        "where variant_id = 'd7' and model_id = 'imv_tensor' and attention = 'beta'",
    ).merge(beta, on=["target_index", "source_index"])
    assert len(summary) == 25 and (summary["n_runs"] == 1).all()
    assert np.allclose(summary["mean_value"], summary["value"], rtol=0, atol=1e-12)

    stability = read(
        warehouse,
        "select n_runs, mean_std from marts.interp_stability "
        "where variant_id = 'd7' and model_id = 'imv_tensor' and attention = 'beta'",
    )
    assert stability["n_runs"].tolist() == [1] and stability["mean_std"].isna().all()

    # one main seed: nothing to resample
    seeds = read(
        warehouse,
        "select distinct n_seeds from marts.interp_rating_stability where variant_id = 'd7'",
    )
    assert seeds["n_seeds"].tolist() == [1]

    # the sensitivity study keeps its own seed at the default point
    sensitivity = read(
        warehouse,
        "select parameter_value, n_runs, test_mse_mean from marts.interp_sensitivity "
        "where study = 'sensitivity_f' and variant_id = 'd7'",
    )
    assert sensitivity["parameter_value"].tolist() == [0.3]
    assert sensitivity["n_runs"].tolist() == [1]
    assert sensitivity["test_mse_mean"][0] == pytest.approx(sensitivity_mse, rel=1e-12)
