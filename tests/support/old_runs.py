"""A study and its runs stored by hand in the old ``raw.runs`` table
(tests.support.warehouses.OLD_RUNS_DDL), for the tests of studies as stored entities.
No test here."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.support.warehouses import OLD_RUNS_DDL
from tsrate.config import Study
from tsrate.robustness import studies

STUDY = Study.from_mapping(
    dict(
        study_tickers=["JPM", "AAPL"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=30,
        horizon=5,
        systems=["naive"],
    )
)


def study_with(**changes) -> Study:
    values = dict(
        study_tickers=list(STUDY.tickers), study_start=str(STUDY.start),
        study_end=str(STUDY.end), context_length=STUDY.context_length,
        horizon=STUDY.horizon, stride=STUDY.stride, systems=list(STUDY.systems),
    )  # fmt: skip
    values.update(changes)
    return Study.from_mapping(values)


#: the study with a system ``ext`` that :func:`warehouse_with_an_import` imports
STUDY_WITH_IMPORT = study_with(systems=["naive", "ext"])


def insert_run(con, run_id: str, study: Study, started: str, status: str = "succeeded") -> None:
    con.execute(
        "insert into raw.runs (run_id, started_at, finished_at, status, study_hash, study, "
        "tickers, systems, perturbations, study_start, study_end, context_length, horizon, "
        "stride, perturbation_phase, message) values (?, ?::timestamp, ?::timestamp, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, 'old')",
        [run_id, started, started, status, study.study_hash, study.to_json(),
         list(study.tickers), list(study.systems), list(study.perturbations), study.start,
         study.end, study.context_length, study.horizon, study.stride,
         study.perturbation_phase],
    )  # fmt: skip


def warehouse_with_an_import(path: Path, study: Study, source: str = "ext.csv") -> str:
    """A warehouse file at ``path`` (its folder made): run r1 of ``study`` in the old
    ``raw.runs`` table, the studies derived from it, and system ``ext`` imported from
    ``source`` into r1. Returns the study id."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as con:
        con.execute(OLD_RUNS_DDL)
        insert_run(con, "r1", study, "2026-01-01")
        study_id = studies.ensure_studies(con)[0][1]
        studies.record_import(con, "r1", "ext", source, "ab" * 32)
    return study_id
