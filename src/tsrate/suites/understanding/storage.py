"""Raw tables of the understanding suite, on the same DuckDB file as the rest of tsrate.

Defined once in :mod:`.schema` and created with every raw table at each writing edge
(:func:`tsrate.platform.raw_schema.create_raw_tables`), so the suite's staging views read them
plainly and every other build never depends on this suite having run.

Grain and write rules (append-only):

* ``raw.suite_runs`` (the kit's, suite ``understanding``) — one row per ``tsrate suite
  understanding run`` (status ``running`` -> ``answered`` -> ``succeeded``, or ``failed`` /
  ``build_failed``).
* ``raw.und_suite_run_systems`` — the systems a suite run asks (id, backend, fingerprint).
* ``raw.und_suite_run_prompts`` — the prompts a suite run asks.
* ``raw.und_series`` — one generated series (``series_key`` = hash of generator version,
  dataset, split, index and seed); values in ``values_1`` (and ``values_2`` for pairs).
* ``raw.und_prompts`` — one prompt (``prompt_key`` = hash of its text, task, expected
  answer and, unless zero-shot, its prompting): template id and version, the expected
  answer (JSON), the options, the prompting style (``zero_shot`` or ``cot``; a column added
  by ``alter table ... add column if not exists`` to older warehouses, whose prompts are
  all ``zero_shot``).
* ``raw.und_responses`` — one reply of one system to one prompt (``response_key`` = hash
  of prompt_key, system_id and fingerprint): the raw text always; the parsed answer, or
  ``parse_ok = false`` and the reason; ``parsed_by`` = ``regex`` (the strict parser) or
  ``llm`` (the chain-of-thought parser model, :mod:`.cot_parser`: ``parser`` names it,
  ``parser_text`` holds its extraction), null when unparsed (and in rows stored before the
  column existed). A rerun finds its stored responses and asks again only for the missing
  ones.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import duckdb
import pandas as pd

from tsrate.platform.warehouse import transaction
from tsrate.suites.lifecycle import insert_frame
from tsrate.suites.understanding.generators import GENERATOR_VERSION, Sample
from tsrate.suites.understanding.scoring import Parsed
from tsrate.suites.understanding.tasks import Prompt


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def response_key(prompt_key: str, system_id: str, fingerprint: str) -> str:
    text = f"{prompt_key}|{system_id}|{fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


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
            insert_frame(con, "und_series", frame)
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
                "prompting": p.prompting,
            }
        )
    if rows:
        frame = pd.DataFrame(rows)
        frame["quadrant"] = frame["quadrant"].astype("Int64")
        with transaction(con):
            insert_frame(con, "und_prompts", frame)
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
    parsed_by: list[str | None] | None = None,
    parser: str | None = None,
    parser_text: list[str | None] | None = None,
) -> None:
    """Store one batch of replies in one transaction (an existing response is kept).
    ``parsed_by``: per reply ``regex`` / ``llm`` / None (default: ``regex`` for every parsed
    reply); ``parser``: the parser model's label, recorded on the rows it parsed or tried."""
    now = _now()
    if parsed_by is None:
        parsed_by = ["regex" if a.ok else None for a in parsed]
    texts = parser_text or [None] * len(parsed)
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
            "parsed_by": parsed_by,
            "parser": [parser if t is not None else None for t in texts],
            "parser_text": texts,
        }
    )
    frame = frame.drop_duplicates("response_key")
    with transaction(con):
        insert_frame(con, "und_responses", frame, skip_existing=True)


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
    from tsrate.suites.lifecycle import start_suite_run as start_run

    with transaction(con):
        start_run(
            con,
            "understanding",
            suite_run_id,
            config,
            {"config_name": config_name, "n_prompts": len(prompt_keys)},
        )
        insert_frame(
            con,
            "und_suite_run_prompts",
            pd.DataFrame({"suite_run_id": suite_run_id, "prompt_key": sorted(set(prompt_keys))}),
        )
        insert_frame(
            con,
            "und_suite_run_systems",
            pd.DataFrame(
                [
                    {"suite_run_id": suite_run_id, "system_id": s, "backend": b, "fingerprint": f}
                    for s, b, f in systems
                ]
            ),
        )
