"""A study and its runs stored by hand in the old ``raw.runs`` table
(tests.support.warehouses.OLD_RUNS_DDL), for the tests of studies as stored entities.
No test here."""

from __future__ import annotations

from tsrate.config import Study

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
