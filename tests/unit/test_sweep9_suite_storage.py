"""The suites' shared run lifecycle (tsrate.suites.lifecycle) and the understanding and
reasoning suites' raw tables (tsrate.suites.understanding.storage,
tsrate.suites.reasoning.storage), written to a temporary DuckDB warehouse and read back:
JSON stored with sorted keys, a status change of a run that does not exist refused, a
failure's message cut to 500 characters, appends that keep what is stored (and one that
refuses a duplicate), a response's key from its documented hash, a two-column series' second
column, the parser recorded only where it was asked, and the upgrade of an old warehouse's
items table.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json).
"""

from __future__ import annotations

import hashlib
import json

import duckdb
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.suites import lifecycle
from tsrate.suites.reasoning import storage as rsn_storage
from tsrate.suites.reasoning.answerers import RandomChoice, Response
from tsrate.suites.reasoning.scenarios import GeneratorConfig, generate_items
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding import storage as und_storage
from tsrate.suites.understanding.scoring import Parsed
from tsrate.suites.understanding.tasks import build_prompts


@pytest.fixture
def con(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    create_raw_tables(con)
    yield con
    con.close()


# --------------------------------------------------------------------------- lifecycle


def test_a_suite_run_is_started_and_finished(con, tmp_path) -> None:
    lifecycle.start_suite_run(con, "reasoning", "rsn-1", {"b": 1, "a": [2]}, {"z": 1, "n": 2})
    row = con.execute(
        "select suite, suite_run_id, status, finished_at, config, details, message "
        "from raw.suite_runs"
    ).fetchone()
    assert row == (
        "reasoning",
        "rsn-1",
        "running",
        None,
        '{"a": [2], "b": 1}',
        '{"n": 2, "z": 1}',
        None,
    )
    assert lifecycle.suite_run_status(con, "rsn-1") == "running"
    lifecycle.finish_suite_run(con, "rsn-1", "answered")
    assert lifecycle.suite_run_status(con, "rsn-1") == "answered"
    assert con.execute("select finished_at is not null from raw.suite_runs").fetchone() == (True,)
    with pytest.raises(TsrateError, match="no suite run 'rsn-2' in raw.suite_runs"):
        lifecycle.finish_suite_run(con, "rsn-2", "failed")
    with pytest.raises(TsrateError, match="no suite run 'rsn-2'"):
        lifecycle.suite_run_status(con, "rsn-2")
    with pytest.raises(TsrateError, match="unknown suite"):
        lifecycle.start_suite_run(con, "nope", "x-1", {}, {})


def test_end_suite_run_cuts_the_message_to_500(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    con = duckdb.connect(str(warehouse))
    create_raw_tables(con)
    lifecycle.start_suite_run(con, "understanding", "und-1", {}, {})
    lifecycle.start_suite_run(con, "understanding", "und-2", {}, {})
    con.close()
    lifecycle.end_suite_run(warehouse, "und-1", "failed", RuntimeError("e" * 499 + "fg"))
    lifecycle.end_suite_run(warehouse, "und-2", "answered")
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute(
        "select suite_run_id, status, message from raw.suite_runs order by 1"
    ).fetchall()
    con.close()
    assert rows == [("und-1", "failed", "e" * 499 + "f"), ("und-2", "answered", None)]


def test_new_suite_run_ids_carry_the_prefix_and_differ() -> None:
    ids = {lifecycle.new_suite_run_id("reasoning") for _ in range(5)}
    assert len(ids) == 5 and all(i.startswith("rsn-") for i in ids)


def test_insert_frame_appends_by_name_and_refuses_duplicates_unless_told(con) -> None:
    frame = pd.DataFrame({"prompt_key": ["p1"], "suite_run_id": ["r"]})  # columns reordered
    lifecycle.insert_frame(con, "und_suite_run_prompts", frame)
    assert con.execute("select * from raw.und_suite_run_prompts").fetchall() == [("r", "p1")]
    with pytest.raises(duckdb.ConstraintException):
        lifecycle.insert_frame(con, "und_suite_run_prompts", frame)
    lifecycle.insert_frame(con, "und_suite_run_prompts", frame, skip_existing=True)
    lifecycle.insert_frame(con, "und_suite_run_prompts", frame.iloc[:0])
    assert con.execute("select count(*) from raw.und_suite_run_prompts").fetchone() == (1,)


class _Model:
    def __init__(self, with_hook: bool):
        if with_hook:
            self.progress = None


class _Answerer:
    system_id = "sys"

    def __init__(self, model):
        self.model = model


def test_watch_model_hooks_only_a_model_with_a_progress_hook() -> None:
    lines: list[str] = []
    hooked = _Answerer(_Model(True))
    lifecycle.watch_model(hooked, lines.append)
    hooked.model.progress("batch 2/3")
    assert lines == ["sys: batch 2/3"]
    plain = _Answerer(_Model(False))
    lifecycle.watch_model(plain, lines.append)
    assert not hasattr(plain.model, "progress")
    lifecycle.watch_model(_Answerer(None), lines.append)  # no model: nothing to hook
    assert lines == ["sys: batch 2/3"]


# --------------------------------------------------------------------------- understanding


def _samples():
    uni = g.generate_sample("trend", "test", 0, 5, min_length=30, max_length=40)
    multi = g.generate_sample("correlation", "test", 0, 5, min_length=30, max_length=40)
    return uni, multi


def test_understanding_series_rows(con) -> None:
    uni, multi = _samples()
    assert und_storage.store_series(con, [uni, multi, uni]) == 2
    assert und_storage.store_series(con, [uni]) == 0
    rows = {
        r[0]: r[1:]
        for r in con.execute(
            "select dataset, series_group, split, series_index, seed, column_names, values_1, "
            "values_2, labels, length from raw.und_series"
        ).fetchall()
    }
    u = rows["trend"]
    assert u[:5] == ("univariate", "test", 0, uni.seed, ["Value"])
    assert u[5] == [float(v) for v in uni.values] and u[6] is None
    assert u[7] == json.dumps(uni.labels, sort_keys=True) and u[8] == len(uni.values)
    m = rows["correlation"]
    assert m[:5] == ("multivariate", "test", 0, multi.seed, ["Series1", "Series2"])
    assert m[5] == [float(v) for v in multi.values[:, 0]]
    assert m[6] == [float(v) for v in multi.values[:, 1]]


def test_understanding_prompts_and_responses(con) -> None:
    uni, _ = _samples()
    prompts = build_prompts(uni, ("csv",), 2, {"trend": [uni]}, ("detection",), ("zero_shot",))
    assert und_storage.store_prompts(con, prompts + prompts) == len(prompts) == 1
    (p,) = prompts
    stored = con.execute(
        "select prompt_key, expected, options, task from raw.und_prompts"
    ).fetchone()
    assert stored == (
        p.prompt_key,
        json.dumps(p.expected, sort_keys=True),
        list(p.options),
        "detection",
    )
    expected_key = hashlib.sha256(f"{p.prompt_key}|sys|fp".encode()).hexdigest()[:24]
    assert und_storage.response_key(p.prompt_key, "sys", "fp") == expected_key

    # parser asked on the second reply only: recorded there only
    two = [p, p]
    und_storage.store_responses(
        con,
        "sys",
        "fp",
        [p],
        ["yes"],
        [Parsed(True, answer="yes")],
    )
    und_storage.store_responses(
        con, "sys", "fp2", two, ["x", "y"], [Parsed(False, error="e"), Parsed(True, answer="no")],
        ["regex", "llm"], "parser@1", [None, "no"],
    )  # fmt: skip
    rows = con.execute(
        "select response_key, fingerprint, raw_text, parse_ok, answer, parsed_by, parser, "
        "parser_text from raw.und_responses order by fingerprint"
    ).fetchall()
    assert rows == [
        (expected_key, "fp", "yes", True, "yes", "regex", None, None),
        # a batch naming one prompt twice keeps its first reply
        (und_storage.response_key(p.prompt_key, "sys", "fp2"), "fp2", "x", False, None, "regex", None, None),
    ]  # fmt: skip
    # stored again: the stored reply is kept
    und_storage.store_responses(con, "sys", "fp", [p], ["no"], [Parsed(True, answer="no")])
    assert con.execute(
        "select raw_text from raw.und_responses where fingerprint = 'fp'"
    ).fetchall() == [("yes",)]
    assert und_storage.answered_prompts(con, "sys", "fp") == {p.prompt_key}
    assert und_storage.answered_prompts(con, "other", "fp") == set()


def test_understanding_parser_is_recorded_only_where_asked(con) -> None:
    uni, _ = _samples()
    prompts = build_prompts(
        uni, ("csv", "json"), 2, {"trend": [uni]}, ("detection",), ("zero_shot",)
    )
    und_storage.store_responses(
        con, "sys", "fp", prompts, ["a", "yes"], [Parsed(False, error="e"), Parsed(True, answer="yes")],
        [None, "llm"], "parser@1", [None, "yes"],
    )  # fmt: skip
    rows = con.execute(
        "select raw_text, parsed_by, parser, parser_text from raw.und_responses order by raw_text"
    ).fetchall()
    assert rows == [("a", None, None, None), ("yes", "llm", "parser@1", "yes")]


# --------------------------------------------------------------------------- reasoning


def _items():
    return generate_items(GeneratorConfig(seed=5, scenarios=4, forecasts=1, length=40))


def test_reasoning_items_prompts_and_responses(con) -> None:
    items = _items()
    rsn_storage.store_items(con, "rsn-1", items)
    rsn_storage.store_items(con, "rsn-2", items)  # stored once, linked to both runs
    assert con.execute("select count(*) from raw.rsn_items").fetchone() == (len(items),)
    assert con.execute(
        "select suite_run_id, count(*) from raw.rsn_suite_run_items group by 1 order by 1"
    ).fetchall() == [("rsn-1", len(items)), ("rsn-2", len(items))]
    item = items[0]
    params = con.execute(
        "select params from raw.rsn_items where item_id = ?", [item.item_id]
    ).fetchone()[0]
    assert params == json.dumps(item.params, sort_keys=True, default=str)

    answerer = RandomChoice(0)
    requests = answerer.requests(items)
    kinds, fingerprints = {"random": "reference"}, {"random": "uniform;seed=0"}
    rsn_storage.store_prompts(con, "rsn-1", requests, kinds, fingerprints)
    rsn_storage.store_prompts(con, "rsn-2", requests, kinds, fingerprints)
    assert con.execute("select count(*) from raw.rsn_prompts").fetchone() == (len(requests),)
    assert con.execute("select count(*) from raw.rsn_suite_run_prompts").fetchone() == (
        2 * len(requests),
    )
    r0 = requests[0]
    assert con.execute(
        "select system_id, system_kind, fingerprint, item_id, condition from raw.rsn_prompts "
        "where prompt_hash = ?",
        [r0.prompt_hash],
    ).fetchone() == ("random", "reference", "uniform;seed=0", r0.item.item_id, r0.condition)

    responses = answerer.answer(requests[:2])
    rsn_storage.store_responses(con, "random", responses)
    again = [Response(r.prompt_hash, "Z", parse_error="changed") for r in responses]
    rsn_storage.store_responses(con, "random", again)  # the first answer stays
    rows = con.execute(
        "select prompt_hash, raw_text, parsed_choice, parse_ok from raw.rsn_responses"
    ).fetchall()
    assert sorted(rows) == sorted((r.prompt_hash, r.raw_text, r.choice, True) for r in responses)
    assert rsn_storage.answered(con) == {r.prompt_hash for r in responses}


def test_an_old_items_table_is_upgraded_with_its_rows(con) -> None:
    """A warehouse from before the perturbed questions: its task check lacks
    'qa_perturbed'; the upgrade rebuilds the table with the current check, rows kept."""
    from tsrate.suites.reasoning.schema import DDL

    create = DDL[DDL.index("create table if not exists raw.rsn_items (") :]
    create = create[: create.index(");") + 2]
    old = create.replace("'qa_perturbed', ", "")
    assert old != create
    con.execute("drop table raw.rsn_items")
    con.execute(old)
    items = [i for i in _items() if i.task != "qa_perturbed"]
    perturbed = [i for i in _items() if i.task == "qa_perturbed"]
    assert perturbed
    frame = rsn_storage.items_frame(items[:2])
    lifecycle.insert_frame(con, "rsn_items", frame)
    rsn_storage.store_items(con, "rsn-1", perturbed)
    stored = {r[0] for r in con.execute("select item_id from raw.rsn_items").fetchall()}
    assert stored == {i.item_id for i in items[:2] + perturbed}
    # the rebuilt table is the current one: upgrading again changes nothing
    rsn_storage.upgrade_items_table(con)
    assert con.execute("select count(*) from raw.rsn_items").fetchone() == (2 + len(perturbed),)
    assert not con.execute(
        "select 1 from duckdb_tables() where table_name = 'rsn_items_before_perturbed'"
    ).fetchall()


def test_understanding_expected_answers_are_stored_with_sorted_keys(con) -> None:
    uni, _ = _samples()
    prompts = build_prompts(
        uni, ("csv",), 2, {"trend": [uni]}, ("retrieval", "arithmetic_max"), ("zero_shot",)
    )
    assert any(list(p.expected) != sorted(p.expected) for p in prompts)  # 'value' first
    und_storage.store_prompts(con, prompts)
    stored = dict(con.execute("select prompt_key, expected from raw.und_prompts").fetchall())
    assert stored == {p.prompt_key: json.dumps(p.expected, sort_keys=True) for p in prompts}
