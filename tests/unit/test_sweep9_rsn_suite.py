"""The reasoning suite's run (tsrate.suites.reasoning.suite): the run configuration's
documented defaults, the task filter, the answerers built, the chunks (a sampled chat's
replies kept together), and real runs of the offline references (fracast left out: it
loads a foundation model) on a small procedural dataset and a temporary DuckDB warehouse,
read back: every response filed under its prompt and system, the counts returned, the
progress lines after each chunk, reuse on a rerun and how a failure ends the run.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json): a changed default, count, chunk boundary or stored
column changes a checked value here.
"""

from __future__ import annotations

import dataclasses
import json

import duckdb
import pytest

from tsrate import TsrateError
from tsrate.suites.reasoning.answerers import RandomChoice, Request, Response, parse_reply
from tsrate.suites.reasoning.scenarios import GeneratorConfig
from tsrate.suites.reasoning.suite import RunConfig, build_answerers, chunks, load_items, run_suite

SMALL_DATA = GeneratorConfig(seed=5, scenarios=4, forecasts=2, length=40)


def _read(path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_run_config_defaults_are_the_documented_ones() -> None:
    """The paper's LLMTime encodings, one greedy forecast reply, the references with fracast
    on every forecasting item, the procedural dataset, every task, chunks of 16, and the
    random reference seeded 0."""
    config = RunConfig()
    assert config.generator == GeneratorConfig()
    assert (config.import_path, config.import_seed, config.llms) == (None, 0, ())
    assert config.references is True and config.fracast is True
    assert (config.choice_encoding, config.forecast_encoding) == ("llmtime_gpt4", "llmtime_gpt4")
    assert (config.forecast_samples, config.forecast_temperature) == (1, None)
    assert config.chunk_size == 16 and config.tasks is None
    assert config.source == "procedural"
    assert RunConfig(import_path="x.jsonl").source == "import"
    assert config.to_dict()["source"] == "procedural"
    ids = [(a.system_id, a.fingerprint()) for a in build_answerers(dataclasses.replace(config))]
    assert ids[0] == ("random", "uniform;seed=0")
    assert [i for i, _ in ids] == ["random", "naive", "median", "arima", "context_rule", "fracast"]


def test_build_answerers_without_references_or_models_refuses() -> None:
    with pytest.raises(TsrateError, match="nothing to run"):
        build_answerers(RunConfig(references=False))
    assert [a.system_id for a in build_answerers(RunConfig(fracast=False))] == [
        "random",
        "naive",
        "median",
        "arima",
        "context_rule",
    ]


def test_the_task_filter_keeps_only_the_named_tasks() -> None:
    every = load_items(RunConfig(generator=SMALL_DATA))
    assert {i.task for i in every} == {
        "etiological",
        "qa_single",
        "qa_two",
        "qa_perturbed",
        "forecast",
    }
    some = load_items(RunConfig(generator=SMALL_DATA, tasks=("etiological", "forecast")))
    assert [i.item_id for i in some] == [
        i.item_id for i in every if i.task in ("etiological", "forecast")
    ]
    with pytest.raises(TsrateError, match=r"unknown tasks \['poetry'\]"):
        load_items(RunConfig(generator=SMALL_DATA, tasks=("poetry", "forecast")))
    # every task known, none of them drawn: named
    no_two = GeneratorConfig(seed=5, scenarios=4, forecasts=0, length=40)
    with pytest.raises(TsrateError, match="has no item of the tasks forecast"):
        load_items(RunConfig(generator=no_two, tasks=("forecast",)))


def _requests(n_greedy: int, sampled: dict[str, int]) -> list[Request]:
    items = load_items(RunConfig(generator=SMALL_DATA))
    out = [
        Request("s", items[k], "with_series", None, None, None, f"g{k}") for k in range(n_greedy)
    ]
    for j, (condition, n) in enumerate(sampled.items()):
        out += [
            Request("s", items[j], condition, None, None, None, f"s{j}_{k}", k, 1.0)
            for k in range(n)
        ]
    return out


def test_chunks_count_a_chats_samples_as_one_unit() -> None:
    requests = _requests(5, {"a": 3, "b": 2})
    got = [[r.prompt_hash for r in chunk] for chunk in chunks(requests, 2)]
    assert got == [
        ["g0", "g1"],
        ["g2", "g3"],
        ["g4", "s0_0", "s0_1", "s0_2"],
        ["s1_0", "s1_1"],
    ]
    assert [[r.prompt_hash for r in c] for c in chunks(requests[:5], 5)] == [
        ["g0", "g1", "g2", "g3", "g4"]
    ]
    assert chunks([], 3) == []


class Garbled(RandomChoice):
    """A system outside the references: the random reference's prompts, a reply no parser
    reads for every second prompt (parsed by the suite's own strict parser)."""

    system_id = "garbled"

    def answer(self, requests):
        return [parse_reply(r, "B" if k % 2 else "no idea", 0.0) for k, r in enumerate(requests)]


def test_run_suite_stores_every_response_under_its_prompt(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    config = RunConfig(generator=SMALL_DATA, fracast=False, chunk_size=5)
    lines: list[str] = []
    run_id, asked, reused = run_suite(warehouse, config, lines.append)
    items = load_items(config)
    answerers = build_answerers(config)
    plan = {a.system_id: a.requests(items) for a in answerers}
    n = sum(len(v) for v in plan.values())
    assert (asked, reused) == (n, 0)
    assert lines[0] == (
        f"reasoning suite run {run_id}: {len(items)} items (procedural), {n} prompts for 5 systems"
    )
    random_lines = [x for x in lines[1:] if x.startswith("random: ")]
    total = len(plan["random"])
    expected = list(range(5, total, 5)) + [total]
    assert random_lines == [f"random: {k}/{total} answered" for k in expected]
    assert _read(warehouse, "select suite, status, message from raw.suite_runs") == [
        ("reasoning", "answered", None)
    ]
    details = json.loads(_read(warehouse, "select details from raw.suite_runs")[0][0])
    assert details == {"source": "procedural", "n_items": len(items), "n_prompts": n}
    stored = {
        row[0]: row[1:]
        for row in _read(
            warehouse,
            "select r.prompt_hash, r.system_id, p.system_id, p.item_id, p.condition, "
            "r.parsed_choice, r.parse_ok from raw.rsn_responses r join raw.rsn_prompts p "
            "using (prompt_hash)",
        )
    }
    assert len(stored) == n
    for answerer in answerers:
        requests = plan[answerer.system_id]
        for request, response in zip(requests, answerer.answer(requests), strict=True):
            assert stored[request.prompt_hash] == (
                answerer.system_id,
                answerer.system_id,
                request.item.item_id,
                request.condition,
                response.choice,
                response.parse_ok,
            )
    assert _read(warehouse, "select count(*) from raw.rsn_suite_run_items") == [(len(items),)]
    assert _read(warehouse, "select count(*) from raw.rsn_suite_run_prompts") == [(n,)]

    # a rerun with one more system: the references' answers reused, the new one asked
    lines.clear()
    answerers2 = [*answerers, Garbled(0)]
    again, asked2, reused2 = run_suite(warehouse, config, lines.append, answerers=answerers2)
    new = len(Garbled(0).requests(items))
    assert (asked2, reused2) == (new, n) and again != run_id
    assert f"random: {total}/{total} answered earlier, reused" in lines
    assert not any(x.startswith("random: ") and x.endswith(" answered") for x in lines)
    garbled = [x for x in lines if x.startswith("garbled: ")]
    # chunks of 5 alternate unparseable / parsed starting with unparseable: 3 then 2
    assert garbled[0] == f"garbled: 5/{new} answered (3 unparseable in this chunk)"
    assert garbled[-1].startswith(f"garbled: {new}/{new} answered")
    assert len(garbled) == -(-new // 5)
    counts = _read(
        warehouse,
        "select count(*), sum((not parse_ok)::int) from raw.rsn_responses "
        "where system_id = 'garbled'",
    )
    assert counts == [(new, sum((k % 5) % 2 == 0 for k in range(new)))]
    statuses = _read(warehouse, "select status from raw.suite_runs order by started_at")
    assert statuses == [("answered",), ("answered",)]


def test_a_part_answered_system_counts_its_earlier_answers(tmp_path) -> None:
    """Half the prompts answered by a first run (only the etiological task); the full run
    reuses them and its progress starts after them."""
    warehouse = tmp_path / "w.duckdb"
    first = RunConfig(generator=SMALL_DATA, references=False, tasks=("etiological",))
    full = RunConfig(generator=SMALL_DATA, references=False, chunk_size=100)
    _, asked, reused = run_suite(warehouse, first, lambda _: None, answerers=[RandomChoice(0)])
    items = load_items(full)
    n_before = sum(i.task == "etiological" for i in items)
    assert (asked, reused) == (n_before, 0)
    total = len(RandomChoice(0).requests(items))
    lines: list[str] = []
    _, asked, reused = run_suite(warehouse, full, lines.append, answerers=[RandomChoice(0)])
    assert (asked, reused) == (total - n_before, n_before)
    assert lines[1:] == [
        f"random: {n_before}/{total} answered earlier, reused",
        f"random: {total}/{total} answered",
    ]


class Failing(RandomChoice):
    system_id = "failing"

    def answer(self, requests):
        raise RuntimeError("x" * 600)


class LongNamed(RandomChoice):
    """Its requests name a system the run was not given: storing the plan fails."""

    def requests(self, items):
        return [dataclasses.replace(r, system_id="y" * 600) for r in super().requests(items)]


def test_failures_end_the_run_failed_with_the_message_cut_to_500(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    config = RunConfig(generator=SMALL_DATA, references=False)
    with pytest.raises(RuntimeError):
        run_suite(warehouse, config, lambda _: None, answerers=[Failing(0)])
    assert _read(warehouse, "select status, message from raw.suite_runs") == [("failed", "x" * 500)]
    other = tmp_path / "v.duckdb"
    with pytest.raises(KeyError):
        run_suite(other, config, lambda _: None, answerers=[LongNamed(0)])
    ((status, message),) = _read(other, "select status, message from raw.suite_runs")
    assert status == "failed" and message == ("'" + "y" * 600 + "'")[:500]
    assert _read(other, "select count(*) from raw.rsn_prompts") == [(0,)]


def test_responses_are_the_answerers_own(tmp_path) -> None:
    """A Response carries the request's hash: the stored raw text is the letter chosen."""
    warehouse = tmp_path / "w.duckdb"
    config = RunConfig(generator=SMALL_DATA, references=False, chunk_size=3)
    run_suite(warehouse, config, lambda _: None, answerers=[RandomChoice(4)])
    rows = _read(warehouse, "select prompt_hash, raw_text, parsed_choice from raw.rsn_responses")
    answerer = RandomChoice(4)
    requests = answerer.requests(load_items(config))
    expected = {r.prompt_hash: (r.raw_text, r.choice) for r in answerer.answer(requests)}
    assert {h: (t, c) for h, t, c in rows} == expected
    assert all(isinstance(r, Response) for r in answerer.answer(requests[:1]))


def test_a_language_model_that_cannot_run_here_is_named(monkeypatch) -> None:
    """No endpoint configured: the run stops naming the model and the reason; configured,
    the model joins the references."""
    for name in ("BASE_URL", "MODEL", "API_KEY_ENV"):
        monkeypatch.delenv(f"TSRATE_NOPE_MODEL_{name}", raising=False)
    config = RunConfig(generator=SMALL_DATA, fracast=False, llms=("endpoint:nope-model",))
    with pytest.raises(TsrateError, match="'endpoint:nope-model' cannot run here: no endpoint"):
        build_answerers(config)
    monkeypatch.setenv("TSRATE_NOPE_MODEL_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TSRATE_NOPE_MODEL_MODEL", "nope")
    ids = [a.system_id for a in build_answerers(config)]
    assert ids == ["random", "naive", "median", "arima", "context_rule", "nope-model"]
    twice = dataclasses.replace(config, llms=("endpoint:nope-model", "endpoint:nope-model"))
    with pytest.raises(TsrateError, match="given twice"):
        build_answerers(twice)
