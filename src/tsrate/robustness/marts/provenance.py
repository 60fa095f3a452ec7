"""Which code, data and settings produced a run's marts, and what each system was trained on.

One row per system of the run: tsrate's version and git revision (null with the reason when
the project is not a git checkout), the dbt and DuckDB versions of the build, a fingerprint
of the price rows the run used (sha256 of the run's tickers' (ticker, date, close) rows over
the study period, closes to 10 decimals, in ticker and date order), the study's id (the one
``tsrate studies`` shows) and the hash of the run's study JSON, the selection scope, a
fingerprint of the system's partitions (sha256 of their sorted input keys, which hash the
system's forecast-changing settings and weights name with the data), and what the system was
trained on and up to which day, from stg_systems' ``training_corpus``, ``training_cutoff``
and ``training_reason`` (the systems seed's, or what an import's ``--metadata`` states; null
with the reason where not known; a system outside stg_systems is unknown).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pandas as pd

from tsrate import __version__

#: the reason for a system the systems' rows do not describe
UNKNOWN_TRAINING = "not stated: the system's training corpus and cutoff are not recorded here"
#: the systems' columns read (stg_systems, from the systems seed): a corpus starting "none:"
#: means the system trains on nothing (window_leakage reads it: its windows cannot leak)
TRAINING_COLUMNS = ["system_id", "training_corpus", "training_cutoff", "training_reason"]

PROVENANCE_COLUMNS = [
    "run_id",
    "system_id",
    "tsrate_version",
    "git_revision",
    "git_reason",
    "dbt_version",
    "duckdb_version",
    "study_id",
    "study_hash",
    "selection_scope",
    "price_rows",
    "price_rows_fingerprint",
    "partitions",
    "partitions_fingerprint",
    "training_data",
    "training_cutoff",
    "training_data_reason",
]


PROVENANCE_SCHEMA = {
    **{column: "string" for column in PROVENANCE_COLUMNS},
    "price_rows": "Int64",
    "partitions": "Int64",
    "training_cutoff": "datetime64[ns]",
}


def git_revision(project: Path) -> tuple[str | None, str | None]:
    """(revision, None) of the project's checkout, or (None, why not)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(project), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"git is not available ({exc})"
    if done.returncode != 0:
        return None, "the project is not a git checkout"
    return done.stdout.strip(), None


def fingerprint_rows(prices: pd.DataFrame) -> str:
    ordered = prices.sort_values(["ticker", "price_date"])
    digest = hashlib.sha256()
    for ticker, day, close in ordered[["ticker", "price_date", "close"]].itertuples(index=False):
        digest.update(f"{ticker}|{pd.Timestamp(day).date()}|{round(float(close), 10)}\n".encode())
    return digest.hexdigest()


def _text(value: object) -> str | None:
    return None if value is None or pd.isna(value) or not str(value).strip() else str(value)


def training_by_system(
    systems: pd.DataFrame | None,
) -> dict[str, tuple[str | None, pd.Timestamp | None, str | None]]:
    """system -> (training corpus, cutoff, reason) from the systems' rows; an empty corpus or
    cutoff without a reason gets :data:`UNKNOWN_TRAINING` (a null always says why)."""
    if systems is None or systems.empty:
        return {}
    out = {}
    for row in systems[TRAINING_COLUMNS].itertuples(index=False):
        corpus, reason = _text(row.training_corpus), _text(row.training_reason)
        cutoff = None if pd.isna(row.training_cutoff) else pd.Timestamp(row.training_cutoff)
        if (corpus is None or cutoff is None) and reason is None:
            reason = UNKNOWN_TRAINING
        out[str(row.system_id)] = (corpus, cutoff, reason)
    return out


def run_provenance(
    runs: pd.DataFrame,
    prices: pd.DataFrame,
    partitions: pd.DataFrame,
    versions: dict[str, str],
    project: Path,
    systems: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``runs``: int_runs_selected; ``prices``: ticker, price_date, close; ``partitions``:
    run_id, system_id, input_key of the run's partitions; ``versions``: dbt and duckdb;
    ``systems``: stg_systems' :data:`TRAINING_COLUMNS` (a system absent from it, or no
    frame, is unknown with :data:`UNKNOWN_TRAINING`)."""
    revision, git_reason = git_revision(project)
    training = training_by_system(systems)
    rows = []
    for run in runs.itertuples():
        tickers = list(run.tickers)
        used = prices[
            prices["ticker"].isin(tickers)
            & (pd.to_datetime(prices["price_date"]) >= pd.Timestamp(run.study_start))
            & (pd.to_datetime(prices["price_date"]) <= pd.Timestamp(run.study_end))
        ]
        price_fingerprint = fingerprint_rows(used)
        mine = partitions[partitions["run_id"] == run.run_id]
        for system_id in sorted(mine["system_id"].unique()):
            keys = sorted(mine.loc[mine["system_id"] == system_id, "input_key"])
            corpus, cutoff, reason = training.get(system_id, (None, None, UNKNOWN_TRAINING))
            rows.append(
                {
                    "run_id": run.run_id,
                    "system_id": system_id,
                    "tsrate_version": __version__,
                    "git_revision": revision,
                    "git_reason": git_reason,
                    "dbt_version": versions.get("dbt"),
                    "duckdb_version": versions.get("duckdb"),
                    # absent from hand-built runs of older callers: unknown, not an error
                    "study_id": getattr(run, "study_id", None),
                    "study_hash": run.study_hash,
                    "selection_scope": getattr(run, "selection_scope", None),
                    "price_rows": len(used),
                    "price_rows_fingerprint": price_fingerprint,
                    "partitions": len(keys),
                    "partitions_fingerprint": hashlib.sha256("\n".join(keys).encode()).hexdigest(),
                    "training_data": corpus,
                    "training_cutoff": cutoff,
                    "training_data_reason": reason,
                }
            )
    # typed even when empty (no run): an empty object column reaches DuckDB as type NULL,
    # which dbt's unit-test fixtures of readers (window_leakage) cannot be cast to
    return pd.DataFrame(rows, columns=PROVENANCE_COLUMNS).astype(PROVENANCE_SCHEMA)
