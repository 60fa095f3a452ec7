"""Raw tables of the understanding suite, on the same DuckDB file as the rest of tsrate.

Created idempotently by :func:`ensure_tables`; the suite's staging views read them and
fall back to empty typed relations when they are absent, so every other build (the default
robustness ``tsrate run`` builds every model) never depends on this suite having run.

Grain and write rules (append-only):

* ``raw.und_suite_runs`` — one row per ``tsrate suite understanding run`` (status
  ``running`` -> ``answered`` -> ``succeeded``, or ``failed`` / ``build_failed``).
* ``raw.und_suite_run_systems`` — the systems a suite run asks (id, backend, fingerprint).
* ``raw.und_suite_run_prompts`` — the prompts a suite run asks.
* ``raw.und_series`` — one generated series (``series_key`` = hash of generator version,
  dataset, split, index and seed); values in ``values_1`` (and ``values_2`` for pairs).
* ``raw.und_prompts`` — one prompt (``prompt_key`` = hash of its text, task and expected
  answer): template id and version, the expected answer (JSON), the options.
* ``raw.und_responses`` — one reply of one system to one prompt (``response_key`` = hash
  of prompt_key, system_id and fingerprint): the raw text always; the parsed answer, or
  ``parse_ok = false`` and the reason. A rerun finds its stored responses and asks again
  only for the missing ones.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import duckdb
import pandas as pd

from tsrate.suites.understanding.generators import GENERATOR_VERSION, Sample
from tsrate.suites.understanding.tasks import Parsed, Prompt
from tsrate.warehouse import transaction

UND_DDL = """
create schema if not exists raw;

create table if not exists raw.und_suite_runs (
    suite_run_id varchar primary key,
    started_at timestamp not null,
    finished_at timestamp,
    status varchar not null,
    config_name varchar not null,
    config json not null,
    n_prompts integer not null,
    message varchar
);

create table if not exists raw.und_suite_run_systems (
    suite_run_id varchar not null,
    system_id varchar not null,
    backend varchar not null,
    fingerprint varchar not null,
    primary key (suite_run_id, system_id)
);

create table if not exists raw.und_suite_run_prompts (
    suite_run_id varchar not null,
    prompt_key varchar not null,
    primary key (suite_run_id, prompt_key)
);

create table if not exists raw.und_series (
    series_key varchar primary key,
    dataset varchar not null,
    series_group varchar not null,
    split varchar not null,
    series_index integer not null,
    seed ubigint not null,
    generator_version integer not null,
    start_date date not null,
    length integer not null,
    sub_feature varchar not null,
    labels json not null,
    column_names varchar[] not null,
    values_1 double[] not null,
    values_2 double[],
    qualitative varchar not null,
    quantitative varchar not null,
    created_at timestamp not null
);

create table if not exists raw.und_prompts (
    prompt_key varchar primary key,
    series_key varchar not null,
    dataset varchar not null,
    task varchar not null,
    feature varchar not null,
    format varchar not null,
    decimals integer not null,
    template_id varchar not null,
    template_version integer not null,
    prompt_text varchar not null,
    expected json not null,
    options varchar[] not null,
    quadrant integer,
    series_length integer not null,
    created_at timestamp not null
);

create table if not exists raw.und_responses (
    response_key varchar primary key,
    prompt_key varchar not null,
    system_id varchar not null,
    fingerprint varchar not null,
    raw_text varchar,
    parse_ok boolean not null,
    parse_error varchar,
    answer varchar,
    answer_value double,
    answer_date date,
    answered_at timestamp not null
);
"""


def ensure_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the suite's raw tables when missing (idempotent)."""
    con.execute(UND_DDL)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def response_key(prompt_key: str, system_id: str, fingerprint: str) -> str:
    text = f"{prompt_key}|{system_id}|{fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _insert(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    if frame.empty:
        return
    con.register("incoming_rows", frame)
    try:
        columns = ", ".join(frame.columns)
        con.execute(f"insert into raw.{table} ({columns}) select {columns} from incoming_rows")
    finally:
        con.unregister("incoming_rows")


def _keys(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> set[str]:
    return {row[0] for row in con.execute(sql, params or []).fetchall()}


def store_series(con: duckdb.DuckDBPyConnection, samples: list[Sample]) -> int:
    """Store the series not stored yet (one transaction); returns how many were new."""
    done = _keys(con, "select series_key from raw.und_series")
    now = _now()
    rows = []
    for s in samples:
        if s.series_key in done:
            continue
        done.add(s.series_key)
        columns = s.columns
        names = list(columns)
        rows.append(
            {
                "series_key": s.series_key,
                "dataset": s.dataset,
                "series_group": s.group,
                "split": s.split,
                "series_index": s.index,
                "seed": s.seed,
                "generator_version": GENERATOR_VERSION,
                "start_date": s.start_date,
                "length": s.length,
                "sub_feature": s.sub_feature,
                "labels": json.dumps(s.labels, sort_keys=True),
                "column_names": names,
                "values_1": [float(v) for v in columns[names[0]]],
                "values_2": [float(v) for v in columns[names[1]]] if len(names) > 1 else None,
                "qualitative": s.qualitative,
                "quantitative": s.quantitative,
                "created_at": now,
            }
        )
    if rows:
        frame = pd.DataFrame(rows)
        frame["seed"] = frame["seed"].astype("uint64")
        with transaction(con):
            _insert(con, "und_series", frame)
    return len(rows)


def store_prompts(con: duckdb.DuckDBPyConnection, prompts: list[Prompt]) -> int:
    """Store the prompts not stored yet (one transaction); returns how many were new."""
    done = _keys(con, "select prompt_key from raw.und_prompts")
    now = _now()
    rows = []
    for p in prompts:
        key = p.prompt_key
        if key in done:
            continue
        done.add(key)
        rows.append(
            {
                "prompt_key": key,
                "series_key": p.series_key,
                "dataset": p.dataset,
                "task": p.task,
                "feature": p.feature,
                "format": p.format,
                "decimals": p.decimals,
                "template_id": p.template_id,
                "template_version": p.template_version,
                "prompt_text": p.text,
                "expected": json.dumps(p.expected, sort_keys=True),
                "options": list(p.options),
                "quadrant": p.quadrant,
                "series_length": p.length,
                "created_at": now,
            }
        )
    if rows:
        frame = pd.DataFrame(rows)
        frame["quadrant"] = frame["quadrant"].astype("Int64")
        with transaction(con):
            _insert(con, "und_prompts", frame)
    return len(rows)


def answered_prompts(con: duckdb.DuckDBPyConnection, system_id: str, fingerprint: str) -> set[str]:
    return _keys(
        con,
        "select prompt_key from raw.und_responses where system_id = ? and fingerprint = ?",
        [system_id, fingerprint],
    )


def store_responses(
    con: duckdb.DuckDBPyConnection,
    system_id: str,
    fingerprint: str,
    prompts: list[Prompt],
    replies: list[str],
    parsed: list[Parsed],
) -> None:
    """Store one batch of replies in one transaction (an existing response is kept)."""
    now = _now()
    frame = pd.DataFrame(
        {
            "response_key": [response_key(p.prompt_key, system_id, fingerprint) for p in prompts],
            "prompt_key": [p.prompt_key for p in prompts],
            "system_id": system_id,
            "fingerprint": fingerprint,
            "raw_text": [None if r is None else str(r) for r in replies],
            "parse_ok": [a.ok for a in parsed],
            "parse_error": [a.error for a in parsed],
            "answer": [a.answer for a in parsed],
            "answer_value": pd.array([a.value for a in parsed], dtype="Float64"),
            "answer_date": [dt.date.fromisoformat(a.date) if a.date else None for a in parsed],
            "answered_at": now,
        }
    )
    frame = frame.drop_duplicates("response_key")
    with transaction(con):
        con.register("incoming_rows", frame)
        try:
            con.execute(
                "insert into raw.und_responses select * from incoming_rows "
                "where response_key not in (select response_key from raw.und_responses)"
            )
        finally:
            con.unregister("incoming_rows")


def start_suite_run(
    con: duckdb.DuckDBPyConnection,
    suite_run_id: str,
    config_name: str,
    config: dict,
    prompt_keys: list[str],
    systems: list[tuple[str, str, str]],
) -> None:
    """Record a suite run (status ``running``), its prompts and its systems
    (``(system_id, backend, fingerprint)``)."""
    with transaction(con):
        con.execute(
            "insert into raw.und_suite_runs values (?, ?, null, 'running', ?, ?, ?, null)",
            [
                suite_run_id,
                _now(),
                config_name,
                json.dumps(config, sort_keys=True),
                len(prompt_keys),
            ],
        )
        _insert(
            con,
            "und_suite_run_prompts",
            pd.DataFrame({"suite_run_id": suite_run_id, "prompt_key": sorted(set(prompt_keys))}),
        )
        _insert(
            con,
            "und_suite_run_systems",
            pd.DataFrame(
                [
                    {"suite_run_id": suite_run_id, "system_id": s, "backend": b, "fingerprint": f}
                    for s, b, f in systems
                ]
            ),
        )


def finish_suite_run(
    con: duckdb.DuckDBPyConnection, suite_run_id: str, status: str, message: str | None = None
) -> None:
    con.execute(
        "update raw.und_suite_runs set status = ?, finished_at = ?, message = ? "
        "where suite_run_id = ?",
        [status, _now(), message, suite_run_id],
    )
