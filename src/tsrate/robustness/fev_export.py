"""Evaluation summaries in fev's format, so ``fev.leaderboard()`` reads tsrate's results.

One CSV per error metric (``mase.csv``, ``smape.csv``, ``wql.csv``, ``crps.csv``), one record
per system and task of the published ``leaderboard_tasks`` mart, with fev 0.10's columns:
the task definition (``dataset_path`` names tsrate and the study's fingerprint,
``dataset_config`` the task, ``horizon``, context lengths, ``seasonality`` 1 as tsrate's MASE
scale, ``eval_metric``, ``quantile_levels``), ``model_name`` (the system id),
``test_error``, timings, ``trained_on_this_dataset`` (from the ``window_leakage`` mart: true
when any window of the system lies inside its training data, false when none can, empty when
unknown) and ``num_forecasts`` (the task's scored windows, the same for every system of the
task, as fev checks), plus tsrate's run id and version. ``fev_version`` is the
summary format written (0.10.0); fev refuses summaries without it. A system without any
error for a metric (no quantile forecasts for WQL/CRPS) is left out of that file, as fev
expects a result or a failure per task; tasks where it failed stay as empty ``test_error``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pandas as pd

from tsrate import TsrateError, __version__
from tsrate.systems.base import QUANTILE_LEVELS

#: the fev summary format written
FEV_FORMAT_VERSION = "0.10.0"
#: fev's metric names for tsrate's per-window metrics
FEV_METRIC_NAMES = {"mase": "MASE", "smape": "SMAPE", "wql": "WQL", "crps": "CRPS"}


#: the study's keys that define the data the tasks are cut from (fev's dataset): the systems,
#: their settings and seeds do not, so runs of other systems on the same data share it
DATASET_KEYS = ("tickers", "start", "end", "context_length", "horizon", "stride",
                "perturbations", "perturbation_phase")  # fmt: skip


def study_fingerprint(study_json: str | None) -> str:
    """A short hash of the study's data definition (:data:`DATASET_KEYS`: tickers, period,
    window shape, perturbations), the first 16 hex digits of the SHA-256 of those keys' JSON
    (sorted keys, compact); of nothing without a study."""
    if not study_json:
        return hashlib.sha256(b"").hexdigest()[:16]
    study = json.loads(study_json)
    data = {key: study.get(key) for key in DATASET_KEYS}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def trained_on_this_dataset(leakage: pd.DataFrame) -> dict[str, bool | None]:
    """system -> fev's ``trained_on_this_dataset`` from ``window_leakage`` rows: True when any
    window is in the system's training data, False when every window is known not to be,
    None (unknown) otherwise."""
    out: dict[str, bool | None] = {}
    for system, flags in leakage.groupby("system_id")["in_training_data"]:
        known = flags.dropna().astype(bool)
        if known.any():
            out[str(system)] = True
        elif len(known) == len(flags) and len(flags):
            out[str(system)] = False
        else:
            out[str(system)] = None
    return out


def fev_summaries(
    tasks: pd.DataFrame,
    study: dict,
    fingerprint: str,
    trained: dict[str, bool | None] | None = None,
) -> dict[str, pd.DataFrame]:
    """``leaderboard_tasks`` rows → one fev summary frame per metric; ``trained``: system →
    trained_on_this_dataset (:func:`trained_on_this_dataset`; absent: unknown)."""
    trained = trained or {}
    out = {}
    for metric, group in tasks.groupby("metric", sort=True):
        has_error = group.groupby("system_id")["test_error"].transform(lambda s: s.notna().any())
        group = group[has_error]
        if group.empty:
            continue
        out[str(metric)] = pd.DataFrame(
            {
                "dataset_path": f"tsrate/{fingerprint}",
                "dataset_config": group["task_id"].to_numpy(),
                "horizon": int(study.get("horizon", 0)) or None,
                "initial_cutoff": str(study.get("start", "")) or None,
                "min_context_length": int(study.get("context_length", 0)) or None,
                "max_context_length": int(study.get("context_length", 0)) or None,
                "seasonality": 1,
                "eval_metric": FEV_METRIC_NAMES.get(str(metric), str(metric).upper()),
                "extra_metrics": "[]",
                "quantile_levels": json.dumps(list(QUANTILE_LEVELS)),
                "id_column": "ticker",
                "timestamp_column": "price_date",
                "target": "close",
                "generate_univariate_targets_from": None,
                "known_dynamic_columns": "[]",
                "past_dynamic_columns": "[]",
                "static_columns": "[]",
                "model_name": group["system_id"].to_numpy(),
                "test_error": group["test_error"].to_numpy(),
                "training_time_s": None,
                "inference_time_s": group["inference_time_s"].to_numpy(),
                "trained_on_this_dataset": [
                    trained.get(str(system)) for system in group["system_id"]
                ],
                # fev reads num_forecasts as the task's (one value for every model of a
                # task): the windows scored, the most any system has a value for (a system
                # that failed the task has fewer)
                "num_forecasts": group.groupby("task_id")["n_windows"].transform("max").to_numpy(),
                "fev_version": FEV_FORMAT_VERSION,
                "tsrate_run_id": group["run_id"].to_numpy(),
                "tsrate_version": __version__,
                "tsrate_metric": str(metric),
            }
        )
    return out


def export_fev(snapshot: Path, destination: Path) -> list[Path]:
    """Write the published snapshot's task errors as fev evaluation summaries (CSV per metric)."""
    if not Path(snapshot).exists():
        raise TsrateError(f"no published snapshot at {snapshot}: run `tsrate run` first")
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        tables = {
            row[0]
            for row in con.execute("select table_name from information_schema.tables").fetchall()
        }
        if "leaderboard_tasks" not in tables:
            raise TsrateError(
                f"{snapshot} has no leaderboard_tasks mart: rebuild with `tsrate build` and publish"
            )
        tasks = con.execute("select * from marts.leaderboard_tasks").df()
        provenance = (
            con.execute("select * from marts.run_provenance").df()
            if "run_provenance" in tables
            else pd.DataFrame()
        )
        leakage = (
            con.execute("select system_id, in_training_data from marts.window_leakage").df()
            if "window_leakage" in tables
            else pd.DataFrame(columns=["system_id", "in_training_data"])
        )
        # the study of the run these errors describe: a suite's publication (no study) or
        # another run's may be newer, while the marts stay this run's
        run_ids = sorted({str(r) for r in tasks["run_id"].dropna()}) if "run_id" in tasks else []
        run = con.execute(
            "select study from published_runs where study is not null "
            "order by list_contains(?, run_id) desc, published_at desc limit 1",
            [run_ids],
        ).fetchone()
    finally:
        con.close()
    study_json = run[0] if run else None
    study = json.loads(study_json) if study_json else {}
    summaries = fev_summaries(
        tasks, study, study_fingerprint(study_json), trained_on_this_dataset(leakage)
    )
    if not provenance.empty:  # code and data fingerprints travel with every record
        wanted = ["git_revision", "price_rows_fingerprint", "partitions_fingerprint",
                  "training_data", "training_cutoff"]  # fmt: skip
        present = [c for c in wanted if c in provenance]  # an older snapshot lacks the cutoff
        carried = provenance.set_index("system_id")[present].add_prefix("tsrate_")
        for metric, frame in summaries.items():
            summaries[metric] = frame.join(carried, on="model_name")
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for metric, frame in summaries.items():
        path = destination / f"{metric}.csv"
        partial = path.with_name(f".{path.name}.partial")
        frame.to_csv(partial, index=False)
        partial.replace(path)
        written.append(path)
    return written
