"""Raw tables of the interpretability suite, on the same DuckDB file as the rest of tsrate.

Created idempotently (``create ... if not exists``) by :func:`ensure_tables`; dbt's staging
views read them and fall back to empty typed relations when they are absent, so the
robustness build never depends on this suite having run.

Grain and write rules (append-only, like every raw table of tsrate):

* ``raw.interp_suite_runs`` — one row per ``tsrate suite interpretability run`` invocation
  (status ``running`` -> ``trained`` -> ``succeeded``, or ``failed`` / ``build_failed``).
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

from tsrate.suites.interpretability.datasets import Dataset
from tsrate.suites.interpretability.training import TrainResult
from tsrate.warehouse import transaction

INTERP_DDL = """
create schema if not exists raw;

create table if not exists raw.interp_suite_runs (
    suite_run_id varchar primary key,
    started_at timestamp not null,
    finished_at timestamp,
    status varchar not null,
    config_name varchar not null,
    config json not null,
    n_units integer not null,
    message varchar
);

create table if not exists raw.interp_suite_run_variants (
    suite_run_id varchar not null,
    variant_key varchar not null,
    study varchar not null,
    parameter varchar,
    parameter_value double,
    primary key (suite_run_id, variant_key, study)
);

create table if not exists raw.interp_suite_run_units (
    suite_run_id varchar not null,
    run_key varchar not null,
    reused boolean not null,
    primary key (suite_run_id, run_key)
);

create table if not exists raw.interp_variants (
    variant_key varchar primary key,
    variant_id varchar not null,
    dataset_id integer not null,
    n_series integer not null,
    length integer not null,
    params json not null,
    created_at timestamp not null
);

create table if not exists raw.interp_truth (
    variant_key varchar not null,
    target_index integer not null,
    source_index integer not null,
    lag integer not null,
    weight double not null,
    primary key (variant_key, target_index, source_index, lag)
);

create table if not exists raw.interp_runs (
    run_key varchar primary key,
    variant_key varchar not null,
    model_id varchar not null,
    seed integer not null,
    config_name varchar not null,
    settings json not null,
    device varchar not null,
    n_series integer not null,
    train_mse double not null,
    test_mse double not null,
    loss_history double[] not null,
    seconds double not null,
    finished_at timestamp not null
);

create table if not exists raw.interp_scores (
    run_key varchar not null,
    series_index integer not null,
    split varchar not null check (split in ('train', 'test')),
    mse double not null,
    primary key (run_key, series_index, split)
);

create table if not exists raw.interp_predictions (
    run_key varchar not null,
    series_index integer not null,
    time_index integer not null,
    actual double not null,
    prediction double not null,
    primary key (run_key, series_index, time_index)
);

create table if not exists raw.interp_attention (
    run_key varchar not null,
    attention varchar not null check (attention in ('beta', 'alpha', 'tcdf_picks')),
    target_index integer not null,
    source_index integer not null,
    lag integer,
    value double not null
);
"""


def ensure_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the suite's raw tables when missing (idempotent)."""
    con.execute(INTERP_DDL)


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
            con.register("incoming_rows", frame)
            try:
                con.execute(f"insert into raw.{table} select * from incoming_rows")
            finally:
                con.unregister("incoming_rows")


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
    with transaction(con):
        con.execute(
            "insert into raw.interp_suite_runs values (?, ?, null, 'running', ?, ?, ?, null)",
            [suite_run_id, _now(), config_name, json.dumps(config, sort_keys=True), n_units],
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


def finish_suite_run(
    con: duckdb.DuckDBPyConnection, suite_run_id: str, status: str, message: str | None = None
) -> None:
    con.execute(
        "update raw.interp_suite_runs set status = ?, finished_at = ?, message = ? "
        "where suite_run_id = ?",
        [status, _now(), message, suite_run_id],
    )
