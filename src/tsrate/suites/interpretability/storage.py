"""Raw tables of the interpretability suite, on the same DuckDB file as the rest of tsrate.

Defined once in :mod:`.schema` and created with every raw table at each writing edge
(:func:`tsrate.platform.raw_schema.create_raw_tables`), so dbt's staging views read them
plainly and the robustness build never depends on this suite having run.

Grain and write rules (append-only, like every raw table of tsrate):

* ``raw.suite_runs`` (the kit's, suite ``interpretability``) — one row per ``tsrate suite
  interpretability run`` (status ``running`` -> ``trained`` -> ``succeeded``, or ``failed`` /
  ``build_failed``).
* ``raw.interp_suite_run_variants`` — the plan: which dataset variants a suite run uses and
  in which study (``main``, ``sensitivity_f``, ``sensitivity_sigma``, ``sensitivity_n``).
* ``raw.interp_suite_run_units`` — the training runs a suite run uses (``reused`` when an
  earlier suite run had already trained it).
* ``raw.interp_variants`` / ``raw.interp_truth`` — a generated dataset (dataset id and every
  generator parameter) and its true edges (target, source, lag, weight).
* ``raw.interp_runs`` — one trained model: (variant, model, seed, settings) -> errors.
* ``raw.interp_scores`` — MSE per (run, series, split) on the original scale.
* ``raw.interp_predictions`` — test predictions per (run, series, time step).
* ``raw.interp_attention`` — long attention: ``beta`` (target, source), ``alpha`` (target,
  source, lag; source -1 = DA-RNN's encoder-state attention), ``tcdf_picks`` (0/1).

A training run is written in ONE transaction (run row, scores, predictions, attention), so a
killed suite run leaves only whole units behind and the next invocation resumes after them.
"""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import numpy as np
import pandas as pd

from tsrate.platform.warehouse import transaction
from tsrate.suites.interpretability.datasets import Dataset
from tsrate.suites.interpretability.training import TrainResult
from tsrate.suites.lifecycle import insert_frame


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def stored_variants(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select variant_key from raw.interp_variants").fetchall()}


def stored_runs(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select run_key from raw.interp_runs").fetchall()}


def store_variant(
    con: duckdb.DuckDBPyConnection, variant_key: str, variant_id: str, dataset: Dataset
) -> None:
    """Store a dataset variant and its true edges (one transaction; no-op if stored)."""
    truth = pd.DataFrame(
        list(dataset.edges), columns=["target_index", "source_index", "lag", "weight"]
    )
    truth = truth.groupby(["target_index", "source_index", "lag"], as_index=False)["weight"].sum()
    truth.insert(0, "variant_key", variant_key)
    with transaction(con):
        if con.execute(
            "select 1 from raw.interp_variants where variant_key = ?", [variant_key]
        ).fetchone():
            return
        con.execute(
            "insert into raw.interp_variants values (?, ?, ?, ?, ?, ?, ?)",
            [
                variant_key,
                variant_id,
                dataset.dataset_id,
                dataset.n_series,
                int(dataset.params.get("length", dataset.values.shape[0])),
                json.dumps(dataset.params, sort_keys=True),
                _now(),
            ],
        )
        if len(truth):
            con.register("incoming_truth", truth)
            try:
                con.execute("insert into raw.interp_truth select * from incoming_truth")
            finally:
                con.unregister("incoming_truth")


def attention_frame(run_key: str, result: TrainResult) -> pd.DataFrame:
    """The long attention rows of one trained model."""
    att = result.attention
    frames = []
    targets, sources = np.indices(att.beta.shape)
    frames.append(
        pd.DataFrame(
            {
                "attention": "beta",
                "target_index": targets.ravel(),
                "source_index": sources.ravel(),
                "lag": pd.array([None] * att.beta.size, dtype="Int64"),
                "value": att.beta.ravel(),
            }
        )
    )
    if att.alpha is not None:
        t, s, lag = np.indices(att.alpha.shape)
        source = np.full(s.size, -1) if att.alpha_sources == "encoder" else s.ravel()
        frames.append(
            pd.DataFrame(
                {
                    "attention": "alpha",
                    "target_index": t.ravel(),
                    "source_index": source,
                    "lag": pd.array(lag.ravel() + 1, dtype="Int64"),
                    "value": att.alpha.ravel(),
                }
            )
        )
    if att.picks is not None:
        t, s = np.indices(att.picks.shape)
        frames.append(
            pd.DataFrame(
                {
                    "attention": "tcdf_picks",
                    "target_index": t.ravel(),
                    "source_index": s.ravel(),
                    "lag": pd.array([None] * att.picks.size, dtype="Int64"),
                    "value": att.picks.ravel().astype(float),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "run_key", run_key)
    return out


def store_run(
    con: duckdb.DuckDBPyConnection,
    run_key: str,
    variant_key: str,
    model_id: str,
    seed: int,
    config_name: str,
    settings: dict,
    result: TrainResult,
) -> None:
    """Store one trained model (run row, scores, predictions, attention) in one transaction."""
    n_series = int(result.test_mse.size)
    scores = pd.DataFrame(
        {
            "run_key": run_key,
            "series_index": np.tile(np.arange(n_series), 2),
            "split": ["train"] * n_series + ["test"] * n_series,
            "mse": np.concatenate([result.train_mse, result.test_mse]),
        }
    )
    steps, series = np.indices(result.test_targets.shape)
    predictions = pd.DataFrame(
        {
            "run_key": run_key,
            "series_index": series.ravel(),
            "time_index": steps.ravel() + result.test_start,
            "actual": result.test_targets.ravel(),
            "prediction": result.test_predictions.ravel(),
        }
    )
    attention = attention_frame(run_key, result)
    if not (np.isfinite(scores["mse"]).all() and np.isfinite(predictions["prediction"]).all()):
        raise ValueError(f"{model_id} seed {seed} produced non-finite predictions; nothing stored")
    with transaction(con):
        con.execute(
            "insert into raw.interp_runs values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_key,
                variant_key,
                model_id,
                seed,
                config_name,
                json.dumps(settings, sort_keys=True),
                str(settings.get("device", "cpu")),
                n_series,
                float(result.train_mse.mean()),
                float(result.test_mse.mean()),
                [float(v) for v in result.loss_history],
                float(result.seconds),
                _now(),
            ],
        )
        for table, frame in (
            ("interp_scores", scores),
            ("interp_predictions", predictions),
            ("interp_attention", attention),
        ):
            insert_frame(con, table, frame)


def start_suite_run(
    con: duckdb.DuckDBPyConnection,
    suite_run_id: str,
    config_name: str,
    config: dict,
    plan: pd.DataFrame,
    n_units: int,
) -> None:
    """Record a suite run (status ``running``) and its plan of variants."""
    frame = plan[["variant_key", "study", "parameter", "parameter_value"]].copy()
    frame.insert(0, "suite_run_id", suite_run_id)
    from tsrate.suites.lifecycle import start_suite_run as start_run

    with transaction(con):
        start_run(
            con,
            "interpretability",
            suite_run_id,
            config,
            {"config_name": config_name, "n_units": n_units},
        )
        con.register("incoming_plan", frame)
        try:
            con.execute("insert into raw.interp_suite_run_variants select * from incoming_plan")
        finally:
            con.unregister("incoming_plan")


def link_unit(
    con: duckdb.DuckDBPyConnection, suite_run_id: str, run_key: str, reused: bool
) -> None:
    con.execute(
        "insert into raw.interp_suite_run_units values (?, ?, ?) on conflict do nothing",
        [suite_run_id, run_key, reused],
    )
