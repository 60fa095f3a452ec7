"""Raw tables of the reasoning suite, on the same DuckDB file as the rest of tsrate.

Defined once in :mod:`.schema` and created with every raw table at each writing edge
(:func:`tsrate.platform.raw_schema.create_raw_tables`), so dbt's staging views read them
plainly and the robustness build never depends on this suite having run.

Grain and write rules (append-only):

* ``raw.suite_runs`` (the kit's, suite ``reasoning``) — one row per ``tsrate suite reasoning
  run`` (status ``running`` -> ``answered`` -> ``succeeded``, or ``failed`` / ``build_failed``).
* ``raw.rsn_items`` — one row per item (hash of its content): task, category, domain,
  question, options, answer, series (and second series), context, future, parameters.
* ``raw.rsn_suite_run_items`` — the items a suite run uses.
* ``raw.rsn_prompts`` — one row per prompt hash: system, item, condition, encoding and the
  exact chat sent (null for offline references, which get the item itself); a sampled
  forecast reply (``--forecast-samples N``) is a prompt of its own, with ``sample_index``
  (0..N-1) and ``temperature`` (null for greedy prompts).
* ``raw.rsn_suite_run_prompts`` — the prompts a suite run asks (answered now or earlier).
* ``raw.rsn_responses`` — one row per prompt hash: the raw reply, the parsed choice or
  forecast, and for an unparseable reply ``parse_ok = false`` with the reason.

A response is written with its prompt in one transaction per chunk, so a killed run keeps
whole chunks and the next run asks only the prompts without a response (resumable).
An import is stored in one transaction: all its items or none.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import duckdb
import pandas as pd

from tsrate.platform.warehouse import transaction
from tsrate.suites.lifecycle import insert_frame
from tsrate.suites.reasoning.answerers import Request, Response
from tsrate.suites.reasoning.items import Item


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def items_frame(items: Sequence[Item]) -> pd.DataFrame:
    now = _now()
    return pd.DataFrame(
        {
            "item_id": [i.item_id for i in items],
            "source": [i.source for i in items],
            "task": [i.task for i in items],
            "category": [i.category for i in items],
            "domain": [i.domain for i in items],
            "question": [i.question for i in items],
            "options": [list(i.options) for i in items],
            "answer_index": pd.array([i.answer_index for i in items], dtype="Int64"),
            "series": [list(i.series) for i in items],
            "series_b": [None if i.series_b is None else list(i.series_b) for i in items],
            "context": [i.context for i in items],
            "future": [None if i.future is None else list(i.future) for i in items],
            "params": [json.dumps(i.params, sort_keys=True, default=str) for i in items],
            "created_at": [now] * len(items),
        }
    )


def upgrade_items_table(con: duckdb.DuckDBPyConnection) -> None:
    """Warehouses made before the ``qa_perturbed`` task have a task check without it (DuckDB
    cannot alter a check): rebuild ``raw.rsn_items`` from the current DDL, rows kept."""
    (checks,) = con.execute(
        "select coalesce(string_agg(expression, ' '), '') from duckdb_constraints() "
        "where schema_name = 'raw' and table_name = 'rsn_items' and constraint_type = 'CHECK'"
    ).fetchone()
    if "'qa_two'" not in checks or "qa_perturbed" in checks:
        return
    from tsrate.suites.reasoning.schema import DDL

    create = DDL[DDL.index("create table if not exists raw.rsn_items (") :]
    create = create[: create.index(");") + 2]
    with transaction(con):
        con.execute("alter table raw.rsn_items rename to rsn_items_before_perturbed")
        con.execute(create)
        con.execute("insert into raw.rsn_items select * from raw.rsn_items_before_perturbed")
        con.execute("drop table raw.rsn_items_before_perturbed")


def store_items(con: duckdb.DuckDBPyConnection, suite_run_id: str, items: Sequence[Item]) -> None:
    """Store the items (new ones only) and link them to the suite run, in one transaction."""
    upgrade_items_table(con)
    frame = items_frame(items).drop_duplicates("item_id")
    links = pd.DataFrame({"suite_run_id": suite_run_id, "item_id": frame["item_id"]})
    with transaction(con):
        insert_frame(con, "rsn_items", frame, skip_existing=True)
        insert_frame(con, "rsn_suite_run_items", links, skip_existing=True)


def answered(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select prompt_hash from raw.rsn_responses").fetchall()}


def store_prompts(
    con: duckdb.DuckDBPyConnection,
    suite_run_id: str,
    requests: Sequence[Request],
    kinds: dict[str, str],
    fingerprints: dict[str, str],
) -> None:
    """Store the prompts of a suite run's plan (new ones only) and link them to the run."""
    now = _now()
    frame = pd.DataFrame(
        {
            "prompt_hash": [r.prompt_hash for r in requests],
            "system_id": [r.system_id for r in requests],
            "system_kind": [kinds[r.system_id] for r in requests],
            "fingerprint": [fingerprints[r.system_id] for r in requests],
            "item_id": [r.item.item_id for r in requests],
            "condition": [r.condition for r in requests],
            "encoding": [r.encoding for r in requests],
            "messages": [None if r.messages is None else json.dumps(r.messages) for r in requests],
            "created_at": [now] * len(requests),
            "sample_index": pd.array([r.sample_index for r in requests], dtype="Int64"),
            "temperature": pd.array([r.temperature for r in requests], dtype="Float64"),
        }
    ).drop_duplicates("prompt_hash")
    links = pd.DataFrame({"suite_run_id": suite_run_id, "prompt_hash": frame["prompt_hash"]})
    with transaction(con):
        insert_frame(con, "rsn_prompts", frame, skip_existing=True)
        insert_frame(con, "rsn_suite_run_prompts", links, skip_existing=True)


def store_responses(
    con: duckdb.DuckDBPyConnection, system_id: str, responses: Sequence[Response]
) -> None:
    """Store a chunk of responses in one transaction (a prompt answered before is kept)."""
    now = _now()
    frame = pd.DataFrame(
        {
            "prompt_hash": [r.prompt_hash for r in responses],
            "system_id": system_id,
            "raw_text": [r.raw_text for r in responses],
            "parsed_choice": pd.array([r.choice for r in responses], dtype="Int64"),
            "forecast": [None if r.forecast is None else list(r.forecast) for r in responses],
            "parse_ok": [r.parse_ok for r in responses],
            "parse_error": [r.parse_error for r in responses],
            "seconds": [float(r.seconds) for r in responses],
            "answered_at": [now] * len(responses),
        }
    )
    with transaction(con):
        insert_frame(con, "rsn_responses", frame, skip_existing=True)
