"""The interpretability suite end to end: Prefect flow -> raw tables -> dbt marts, resumable."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from tests.integration.builds import INTERP_TINY_SENSITIVITY
from tests.integration.suite_publish import assert_suite_published
from tests.support.doc_queries import assert_documented_queries_return_rows
from tests.support.rating_properties import assert_ratings_never_mislead
from tests.support.report_trace import printed_numbers, trace_problems
from tests.support.warehouses import read
from tsrate.html.charts import chart_rows
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow

SELECT = ["build", "--select", "tag:interpretability", "--indirect-selection", "cautious"]
#: the env var naming the suite run the marts describe (not --vars: keeps dbt's parse)
RUN_ENV = SUITES["interpretability"].run_env


def test_suite_flow_fills_the_marts_and_resumes(tmp_path, prefect_harness, dbt_target):
    from flows.interpretability import interpretability_flow

    warehouse = tmp_path / "tsrate.duckdb"
    target = dbt_target
    # 1. the suite's dbt models build on a warehouse where the suite never ran (no raw.interp_*)
    with connect(warehouse):
        pass
    dbt.run_dbt(SELECT, None, warehouse, lambda _: None, target, {RUN_ENV: "latest"})
    assert read(warehouse, "select count(*) n from marts.interp_ratings")["n"][0] == 0

    # 2. a tiny real run: datasets 2 and 4, IMV-LSTM (Tensor) and TCDF, 2 seeds
    suite_run_id = interpretability_flow(
        datasets=[2, 4],
        models=["imv_tensor", "tcdf"],
        warehouse=str(warehouse),
        target_path=str(target),
        overrides=INTERP_TINY_SENSITIVITY,
        workers=2,  # two spawned training processes; this process alone writes
    )
    status = read(
        warehouse, "select status from raw.suite_runs where suite_run_id = ?", [suite_run_id]
    )
    assert status["status"].tolist() == ["succeeded"]
    assert_suite_published(warehouse, "interpretability", suite_run_id, tmp_path)
    # the SQL its docs page hands an analyst runs as written on this build, with rows
    assert_documented_queries_return_rows(warehouse, "interpretability")
    runs = read(warehouse, "select model_id, seed, variant_key from raw.interp_runs")
    # main: 2 datasets x 2 models x 2 seeds; sensitivity (the reference code's datasets)
    # adds, for imv_tensor seed 1, dataset 2 with the reference lag sets at f = 0.3 (also
    # the sigma = 0.1 point) and f = 0.6, and dataset 2 with random lag sets for N = 5
    assert len(runs) == 11

    scores = read(warehouse, "select * from marts.interp_prediction_scores where in_main_study")
    assert set(zip(scores["variant_id"], scores["model_id"], strict=True)) == {
        (v, m) for v in ("d2", "d4") for m in ("imv_tensor", "tcdf")
    }
    assert (scores["n_runs"] == 2).all() and (scores["test_mse_mean"] > 0).all()
    # the mart's mean equals the mean over seeds of the per-series test MSEs stored raw
    raw_mse = read(
        warehouse,
        "select r.model_id, avg(s.mse) as mse from raw.interp_scores s "
        "join raw.interp_runs r using (run_key) join raw.interp_variants v using (variant_key) "
        "where s.split = 'test' and v.variant_id = 'd4' group by r.model_id",
    ).set_index("model_id")["mse"]
    d4 = scores[scores["variant_id"] == "d4"].set_index("model_id")["test_mse_mean"]
    np.testing.assert_allclose(d4.sort_index(), raw_mse.sort_index())

    # interpretability correctness of IMV-LSTM on dataset 4, with its stability over seeds
    correctness = read(
        warehouse,
        "select * from marts.interp_correctness where variant_id = 'd4' and model_id = 'imv_tensor'",
    ).set_index("measure")
    assert {"beta_spearman", "beta_topk", "beta_auroc", "alpha_lag_topk"} <= set(correctness.index)
    assert correctness.loc["beta_auroc", "n_runs"] == 2
    assert 0 <= correctness.loc["beta_auroc", "mean_value"] <= 1
    assert correctness.loc["beta_auroc", "std_value"] >= 0
    # every correctness measure carries its chance level and margin; entropy has none
    for measure in ("beta_spearman", "beta_auroc"):
        row = correctness.loc[measure]
        assert row["mean_margin"] == pytest.approx(row["mean_value"] - row["mean_chance"])
    assert correctness.loc["beta_auroc", "mean_chance"] == pytest.approx(0.5, abs=0.15)
    assert 0 <= correctness.loc["beta_entropy", "mean_value"] <= 1
    assert np.isnan(correctness.loc["beta_entropy", "mean_chance"])
    heatmap = read(
        warehouse,
        "select target_index, source_index, mean_value, true_weight from marts.interp_attention_summary "
        "where variant_id = 'd4' and model_id = 'imv_tensor' and attention = 'beta'",
    )
    assert len(heatmap) == 4
    np.testing.assert_allclose(heatmap.groupby("target_index")["mean_value"].sum(), 1.0, rtol=1e-6)
    truth = heatmap.set_index(["target_index", "source_index"])["true_weight"]
    assert truth[(0, 1)] == 1.0 and truth[(0, 0)] == 0.0
    picks = read(
        warehouse,
        "select mean_value from marts.interp_attention_summary "
        "where variant_id = 'd2' and model_id = 'tcdf' and attention = 'tcdf_picks'",
    )["mean_value"]
    assert len(picks) == 25 and picks.isin([0.0, 0.5, 1.0]).all()  # share of 2 seeds

    sensitivity = read(
        warehouse, "select * from marts.interp_sensitivity where study = 'sensitivity_f'"
    )
    assert set(sensitivity["parameter_value"]) == {0.3, 0.6}
    assert set(sensitivity["model_id"]) == {"imv_tensor"} and (sensitivity["n_runs"] == 1).all()
    assert sensitivity["relative_error"].max() == 1.0

    entropy = read(
        warehouse,
        "select mean_value from marts.interp_correctness where measure = 'beta_entropy'",
    )["mean_value"]
    assert len(entropy) and entropy.between(0, 1).all()

    ratings = read(warehouse, "select * from marts.interp_ratings")
    assert {
        "test_mse",
        "test_mse_cv",
        "beta_spearman_margin",
        "beta_auroc_margin",
        "beta_std",
    } == set(ratings["metric"])
    assert set(ratings["variant_id"]) == {"d2", "d4"}
    rated = ratings["rating"].notna()
    assert ratings.loc[rated, "rating"].between(1, 3).all()
    assert ratings.loc[~rated, "rating_reason"].str.len().gt(0).all()
    assert_ratings_never_mislead(ratings, group_by=["suite_run_id", "metric", "variant_id"])
    # the rule against uniform attention: the margins and beta_std are left unrated exactly
    # where the model's mean beta_entropy over seeds is >= 0.99
    entropy = read(
        warehouse,
        "select variant_id, model_id, mean_value as beta_entropy from marts.interp_correctness "
        "where measure = 'beta_entropy' and in_main_study",
    )
    attention = ratings[
        ratings["metric"].isin(["beta_spearman_margin", "beta_auroc_margin", "beta_std"])
    ]
    attention = attention.merge(entropy, on=["variant_id", "model_id"], how="left")
    flat = attention["beta_entropy"] >= 0.99
    uniform_reason = attention["rating_reason"].fillna("").str.startswith("near-uniform attention")
    assert (flat == uniform_reason).all()
    assert attention.loc[flat, "rating"].isna().all() and attention.loc[flat, "rank"].isna().all()
    # the rated ones per group count only the models compared
    compared = ratings[ratings["rank"].notna()].groupby(["metric", "variant_id"]).size()
    n_models = ratings.groupby(["metric", "variant_id"])["n_models"].first()
    assert (n_models.reindex(compared.index) == compared).all()
    # every rating shows how firm it is: the exact bootstrap over the 2 training seeds
    # (the 3 distinct draws {1, 1}, {1, 2}, {2, 2}, weighted 1/4, 1/2, 1/4)
    stability = read(warehouse, "select * from marts.interp_rating_stability")
    keys = ["suite_run_id", "metric", "variant_id", "model_id"]
    both = ratings.merge(stability, on=keys, suffixes=("", "_s"), validate="one_to_one")
    assert len(both) == len(ratings) == len(stability)
    assert (both["rating"].fillna(-1) == both["rating_s"].fillna(-1)).all()
    assert (stability["n_seeds"] == 2).all() and (stability["n_resamples"] == 3).all()
    shares = stability["share_at_rating"].dropna()
    # a ratio of sums of those weights (a draw leaving the model unrated does not count)
    possible = np.array([0, 1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4, 1])
    assert all(np.isclose(possible, share, rtol=0, atol=1e-12).any() for share in shares)
    assert (stability.loc[shares.index, "share_mc_se"] == 0).all()  # no Monte Carlo
    has_rating = stability["rating"].notna()
    assert stability.loc[~has_rating, "share_at_rating"].isna().all()
    assert stability.loc[has_rating, "share_at_rating"].dropna().between(0, 1).all()
    assert stability.loc[has_rating, "share_at_rating"].notna().any()
    assert_ratings_never_mislead(stability, group_by=["suite_run_id", "metric", "variant_id"])
    # interp_rating_stability publishes shares only (no interval: seeds, not items, are
    # resampled), so there is no interval to hold the published score
    assert "ci_low" not in stability.columns
    duckdb.connect(str(warehouse)).close()  # nobody holds the file any more
    report = (tmp_path / "reports" / "interpretability.html").read_text()
    assert report.index("<h2>d4</h2>") < report.index("<h2>d2</h2>")  # dataset 4 first
    assert "imv_tensor: mean beta" in report and "tcdf: share of runs picked" in report
    assert "share_at_rating" in report
    # Table 2 and Figures 14-17 from the marts, every number equal to its mart row
    scores = read(warehouse, "select * from marts.interp_prediction_scores where in_main_study")
    sens = read(warehouse, "select * from marts.interp_sensitivity")
    marts = {"interp_prediction_scores": scores, "interp_sensitivity": sens}
    assert trace_problems(report, marts) == []
    assert "in the shape of the paper's Table 2" in report
    printed = [n for n in printed_numbers(report) if n["mart"].endswith("prediction_scores")]
    assert len(printed) == scores[["test_mse_mean", "test_mse_std"]].notna().sum().sum()
    plotted = [r for r in chart_rows(report) if r["mart"] == "marts.interp_sensitivity"]
    # every sensitivity row is a point: sigma's figure plots relative_error_per_sigma
    drawn = np.where(
        sens["study"] == "sensitivity_sigma",
        sens["relative_error_per_sigma"],
        sens["relative_error"],
    )
    assert len(plotted) == np.isfinite(drawn.astype(float)).sum() > 0
    assert "Figure 14: dataset 2" in report

    # 3. a rerun trains nothing: every unit is reused, and a new suite run records that
    again = interpretability_flow(
        datasets=[2, 4],
        models=["imv_tensor", "tcdf"],
        warehouse=str(warehouse),
        overrides=INTERP_TINY_SENSITIVITY,
        build=False,
    )
    assert again != suite_run_id
    units = read(
        warehouse, "select reused from raw.interp_suite_run_units where suite_run_id = ?", [again]
    )
    assert len(units) == 11 and units["reused"].all()
    assert read(warehouse, "select count(*) n from raw.interp_runs")["n"][0] == 11


def test_small_configuration_beats_chance_on_datasets_2_and_4(
    tmp_path, prefect_harness, dbt_target
):
    """The small configuration as shipped (only the models and datasets narrowed): a model's
    edge AUROC beats its chance level (source-permuted ground truth) on datasets 2 and 4 in
    every seed, and that margin is what gets rated."""
    from flows.interpretability import interpretability_flow

    warehouse = tmp_path / "tsrate.duckdb"
    interpretability_flow(
        datasets=[2, 4],
        models=["imv_tensor"],
        sensitivity=False,
        warehouse=str(warehouse),
        target_path=str(dbt_target),
        workers=2,
    )
    margins = read(
        warehouse,
        "select variant_id, model_id, mean_value, mean_chance, mean_margin, std_margin, "
        "n_defined from marts.interp_correctness where measure = 'beta_auroc'",
    ).set_index("variant_id")
    for variant in ("d2", "d4"):
        row = margins.loc[variant]
        assert row["n_defined"] == 2
        assert row["mean_chance"] == pytest.approx(0.5, abs=0.05)
        assert row["mean_margin"] > 0.2, margins
    ratings = read(
        warehouse, "select * from marts.interp_ratings where metric = 'beta_auroc_margin'"
    )
    assert set(ratings["variant_id"]) == {"d2", "d4"}
    # one model per variant: a lone margin has no ideal to be rated against, and says so
    assert_ratings_never_mislead(ratings, group_by=["suite_run_id", "metric", "variant_id"])
    assert ratings["rating_reason"].notna().all()


def test_unknown_dataset_or_model_is_named(tmp_path, prefect_harness):
    from flows.interpretability import interpretability_flow

    with pytest.raises(Exception, match=r"unknown dataset\(s\) \[12\]"):
        interpretability_flow(datasets=[12], warehouse=str(tmp_path / "w.duckdb"), build=False)
    with pytest.raises(Exception, match=r"unknown model\(s\) \['lstm'\]"):
        interpretability_flow(models=["lstm"], warehouse=str(tmp_path / "w.duckdb"), build=False)


KILLED_RUN = """
import dataclasses, os, signal, sys
from pathlib import Path
import pandas as pd
from tsrate.suites.interpretability import storage
from tsrate.suites.interpretability.suite import SMALL, plan_units, plan_variants, run_units
from tsrate.suites.interpretability.training import TrainSettings

config = dataclasses.replace(
    SMALL, length=200, burn_in=10, settings=TrainSettings(test_length=30, hidden=2, epochs=1)
)
variants = plan_variants(config, [4], sensitivity=False)
units = plan_units(config, variants, ["tcdf"])
kill = sys.argv[2] == "kill"
stores = {"n": 0}
real_store_run = storage.store_run


def store_run_then_die(con, *args, **kwargs):
    # the second unit dies inside its transaction: the run row is written, not committed
    stores["n"] += 1
    if kill and stores["n"] == 2:
        con = DiesOnAttention(con)
    return real_store_run(con, *args, **kwargs)


class DiesOnAttention:
    # the real connection, except that registering the attention rows kills the process

    def __init__(self, con):
        self.con = con

    def __getattr__(self, name):
        return getattr(self.con, name)

    def register(self, name, frame):
        if name == "incoming_rows" and "value" in frame.columns:
            os.kill(os.getpid(), signal.SIGKILL)
        return self.con.register(name, frame)


storage.store_run = store_run_then_die
print(run_units(Path(sys.argv[1]), config, variants, units, progress=print))
"""


def test_a_unit_killed_mid_transaction_leaves_nothing_and_the_rerun_resumes(tmp_path):
    """SIGKILL while the second unit's rows are being written: no half-written unit remains,
    and the next run reuses the first unit and trains the rest."""
    import subprocess
    import sys

    warehouse = tmp_path / "tsrate.duckdb"
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN)
    killed = subprocess.run(
        [sys.executable, str(script), str(warehouse), "kill"], capture_output=True, text=True
    )
    assert killed.returncode == -9, killed.stderr
    counts = read(
        warehouse,
        "select (select count(*) from raw.interp_runs) as runs, "
        "(select count(distinct run_key) from raw.interp_scores) as scored, "
        "(select count(distinct run_key) from raw.interp_attention) as explained, "
        "(select count(distinct run_key) from raw.interp_predictions) as predicted",
    ).iloc[0]
    assert counts.tolist() == [1, 1, 1, 1]  # only the first unit, whole

    finished = subprocess.run(
        [sys.executable, str(script), str(warehouse), "finish"], capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    assert "stored, reused" in finished.stdout and ", 1, 1)" in finished.stdout  # trained, reused
    runs = read(warehouse, "select seed from raw.interp_runs order by seed")
    assert runs["seed"].tolist() == [1, 2]
    statuses = read(
        warehouse,
        "select status from raw.suite_runs where suite = 'interpretability' order by started_at",
    )
    assert statuses["status"].tolist() == ["running", "trained"]  # the killed one never finished
