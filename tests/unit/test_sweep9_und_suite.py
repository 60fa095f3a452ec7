"""The understanding suite's plan and loop (tsrate.suites.understanding.suite): the two
configurations against docs/suites/understanding.md, the configuration checks at their
exact bounds, the split sizes generate_all draws (read back from the generated series),
the formats each kind of dataset is asked in, the systems opened, and real runs of the
offline reference systems on a tiny configuration and a temporary DuckDB warehouse, read
back row by row: the plan, the systems, every response filed under its prompt and system,
the batches, the progress lines, reuse on a rerun, and how a failing system ends the run.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json): a changed preset size, seed, bound, batch boundary or
stored column changes a checked value here.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from tsrate import TsrateError
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst
from tsrate.suites.understanding.scoring import parse_reply
from tsrate.suites.understanding.suite import (
    NUMERIC_FORMS,
    PAPER,
    SMALL,
    ZERO_SHOT_NEW_TOKENS,
    answer_form,
    closed_answers,
    generate_all,
    open_systems,
    plan_prompts,
    resolve_config,
    run_suite,
)

ALL_FORMATS = ("csv", "plain", "tsv", "json", "markdown", "spaces", "context", "symbol", "custom")
ALL_TASKS = (
    "detection",
    "classification",
    "retrieval",
    "arithmetic_min",
    "arithmetic_max",
    "matching_intra",
    "matching_cross",
    "search",
)

# --------------------------------------------------------------------------- configurations


def test_small_configuration_is_the_documented_one() -> None:
    """docs: `--small` (default) 8/4/5 series per split, 42 per position cell, position
    sets of 175 days; feature series 30-150 days; every feature dataset in every format,
    position sets in csv; two printed decimals; zero-shot only; every question (sample 0);
    batches of 64; the data seed 2404 and the random answerer's seed 0."""
    assert (SMALL.name, SMALL.train, SMALL.validation, SMALL.test) == ("small", 8, 4, 5)
    assert SMALL.position_per_cell == 42
    assert (SMALL.min_length, SMALL.max_length, SMALL.position_length) == (30, 150, 175)
    assert SMALL.datasets == (*g.UNIVARIATE, *g.MULTIVARIATE, *g.POSITION)
    assert len(SMALL.datasets) == 6 + 3 + 5
    assert SMALL.formats == ALL_FORMATS and SMALL.position_formats == ("csv",)
    assert SMALL.tasks == ALL_TASKS
    assert (SMALL.decimals, SMALL.random_seed, SMALL.batch_size) == (2, 0, 64)
    assert SMALL.data_seed == 2404
    assert SMALL.promptings == ("zero_shot",) and SMALL.sample == 0


def test_paper_configuration_is_the_documented_one() -> None:
    """docs: `--paper` 5000/2000/200 per dataset and 50 per position cell; every format for
    every task (position sets too); the rest as small."""
    assert (PAPER.name, PAPER.train, PAPER.validation, PAPER.test) == ("paper", 5000, 2000, 200)
    assert PAPER.position_per_cell == 50
    assert PAPER.position_formats == ALL_FORMATS and PAPER.formats == ALL_FORMATS
    assert (PAPER.min_length, PAPER.max_length, PAPER.position_length) == (30, 150, 175)
    assert (PAPER.decimals, PAPER.random_seed, PAPER.batch_size, PAPER.data_seed) == (
        2,
        0,
        64,
        2404,
    )


def test_resolve_config_bounds_are_exact() -> None:
    """train / validation / position_per_cell may be 0; test and batch_size must be >= 1;
    sample must be >= 0."""
    ok = resolve_config(
        "small", {"train": 0, "validation": 0, "position_per_cell": 0, "test": 1, "batch_size": 1}
    )
    assert (ok.train, ok.validation, ok.position_per_cell, ok.test, ok.batch_size) == (
        0,
        0,
        0,
        1,
        1,
    )
    for key in ("train", "validation", "position_per_cell"):
        with pytest.raises(TsrateError, match=f"{key} must be positive \\(got -1\\)"):
            resolve_config("small", {key: -1})
    for key in ("test", "batch_size"):
        with pytest.raises(TsrateError, match=f"{key} must be positive \\(got 0\\)"):
            resolve_config("small", {key: 0})
    assert resolve_config("small", {"sample": 0}).sample == 0
    with pytest.raises(TsrateError, match=r"got -1"):
        resolve_config("small", {"sample": -1})
    assert resolve_config("paper").test == 200


def test_resolve_config_turns_lists_into_tuples_and_names_unknown_values() -> None:
    config = resolve_config(
        "small",
        {
            "datasets": ["trend"],
            "formats": ["csv"],
            "position_formats": ["json"],
            "tasks": ["search"],
            "promptings": ["cot"],
        },
    )
    assert config.datasets == ("trend",) and config.formats == ("csv",)
    assert config.position_formats == ("json",) and config.tasks == ("search",)
    assert config.promptings == ("cot",)
    assert config == resolve_config("small", config.to_dict() | {"name": "small"})
    for key, bad in (
        ("datasets", "nope"),
        ("formats", "xml"),
        ("position_formats", "xml"),
        ("tasks", "poetry"),
        ("promptings", "few_shot"),
    ):
        with pytest.raises(TsrateError, match=f"unknown {key} \\['{bad}'\\]"):
            resolve_config("small", {key: [bad]})
    with pytest.raises(TsrateError, match="names no dataset"):
        resolve_config("small", {"datasets": []})
    with pytest.raises(TsrateError, match="names no prompting"):
        resolve_config("small", {"promptings": []})
    with pytest.raises(TsrateError, match="unknown configuration fields"):
        resolve_config("small", {"tset": 1})


# --------------------------------------------------------------------------- answers' forms


def _prompts(datasets, **overrides):
    config = resolve_config(
        "small",
        {
            "train": 1,
            "validation": 1,
            "test": 1,
            "position_per_cell": 1,
            "formats": ["csv"],
            "datasets": list(datasets),
            **overrides,
        },
    )
    return config, plan_prompts(config, generate_all(config))


def test_answer_forms_per_task() -> None:
    """Closed tasks: their admissible answers, each reading back as itself; numeric tasks:
    the numeric pattern and the 32-token cap."""
    import re

    _, prompts = _prompts(["trend", "seasonality", "anomalies", "volatility", "outlier"], train=3)
    by_task = {}
    for p in prompts:
        by_task.setdefault(p.task, p)
    assert set(by_task) == set(ALL_TASKS)
    assert ZERO_SHOT_NEW_TOKENS == 32
    for task, prompt in by_task.items():
        form = answer_form(prompt)
        if task in ("retrieval", "arithmetic_min", "arithmetic_max"):
            assert closed_answers(prompt) is None
            assert form == (NUMERIC_FORMS[task], 32)
            value = " -12.5" if task == "retrieval" else "3.25 on 2021-12-31"
            assert re.fullmatch(form[0], value)
            assert not re.fullmatch(form[0], "3.25 on 2021-13-01")
        else:
            answers = {
                "detection": {"yes", "no"},
                "search": {"yes", "no"},
                "matching_intra": set("ABCD"),
                "matching_cross": set("ABCD"),
                "classification": set(prompt.options),
            }[task]
            read = {parse_reply(task, text, prompt.options, "zero_shot").answer for text in form}
            assert read == answers


# --------------------------------------------------------------------------- systems


def test_open_systems_references_and_refusals() -> None:
    systems = open_systems(random_seed=7)
    assert [(type(s), b) for s, b in systems] == [
        (StatisticalAnalyst, "reference"),
        (RandomAnswerer, "reference"),
    ]
    assert systems[1][0].seed == 7
    assert open_systems()[1][0].seed == 0
    with pytest.raises(TsrateError, match="no system to ask"):
        open_systems(references=False)


# --------------------------------------------------------------------------- generation


def test_generate_all_draws_each_split_and_the_position_cells() -> None:
    config = resolve_config(
        "small",
        {
            "train": 3,
            "validation": 2,
            "test": 1,
            "position_per_cell": 2,
            "min_length": 20,
            "max_length": 25,
            "position_length": 40,
            "datasets": ["trend", "correlation", "outlier"],
            "data_seed": 11,
        },
    )
    generated = generate_all(config)
    assert {d: {s: len(v) for s, v in splits.items()} for d, splits in generated.items()} == {
        "trend": {"train": 3, "validation": 2, "test": 1},
        "correlation": {"train": 3, "validation": 2, "test": 1},
        "outlier": {"test": 16},
    }
    for dataset, splits in generated.items():
        for split, samples in splits.items():
            assert [s.index for s in samples] == list(range(len(samples)))
            for s in samples:
                assert (s.dataset, s.split) == (dataset, split)
                assert s.seed == g.sample_seed(11, dataset, split, s.index)
                if dataset == "outlier":
                    assert len(s.values) == 40
                else:
                    assert 20 <= len(s.values) <= 25
    # each position cell (quadrant x max/min) twice
    cells = sorted(s.sub_feature for s in generated["outlier"]["test"])
    assert len(set(cells)) == 8 and all(cells.count(c) == 2 for c in cells)


def test_plan_prompts_formats_per_kind_and_no_duplicates() -> None:
    config, prompts = _prompts(
        ["trend", "seasonality", "anomalies", "volatility", "outlier"],
        formats=["csv", "json"],
        position_formats=["tsv"],
    )
    formats = {}
    for p in prompts:
        formats.setdefault(p.dataset, set()).add(p.format)
    assert formats["outlier"] == {"tsv"}
    assert all(formats[d] == {"csv", "json"} for d in formats if d != "outlier")
    assert len({p.prompt_key for p in prompts}) == len(prompts)
    # only the test split is asked about
    test_keys = {s.series_key for splits in generate_all(config).values() for s in splits["test"]}
    assert {p.series_key for p in prompts} <= test_keys
    assert {p.series_key for p in prompts} == test_keys


# --------------------------------------------------------------------------- the loop


def _read(path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _tiny(**overrides):
    return resolve_config(
        "small",
        {
            "train": 1,
            "validation": 1,
            "test": 1,
            "position_per_cell": 1,
            "formats": ["csv"],
            "datasets": ["trend", "seasonality", "anomalies", "volatility", "outlier"],
            "batch_size": 10,
            **overrides,
        },
    )


def test_run_suite_stores_every_answer_under_its_prompt_and_system(tmp_path) -> None:
    """Both references answer every prompt in batches of 10; each stored reply is the one
    the system gives for that very prompt, parsed; a rerun reuses all of them."""
    warehouse = tmp_path / "w.duckdb"
    config = _tiny()
    systems = open_systems()
    lines: list[str] = []
    run_id, counts = run_suite(warehouse, config, systems, lines.append)
    prompts = plan_prompts(config, generate_all(config))
    n = len(prompts)
    assert n == 48  # 4 feature series x 10 questions + 8 position series x 1 search question
    assert counts == {"und_analyst": (n, 0), "und_random": (n, 0)}
    assert lines[0].startswith(f"generated 20 series in 5 datasets; {n} prompts (")
    assert "sample" not in lines[0]
    assert lines[1] == f"stored 20 new series and {n} new prompts"
    analyst_lines = [x for x in lines if x.startswith("und_analyst: ")]
    assert analyst_lines[0] == f"und_analyst: 0 answers reused, {n} to ask"
    done = [int(x.split(": ")[1].split("/")[0]) for x in analyst_lines[1:]]
    assert done == [10, 20, 30, 40, 48]
    assert all(f"/{n} answered (0 unparseable so far; batch " in x for x in analyst_lines[1:])

    assert _read(warehouse, "select suite, status, message from raw.suite_runs") == [
        ("understanding", "answered", None)
    ]
    details = json.loads(_read(warehouse, "select details from raw.suite_runs")[0][0])
    assert details == {"config_name": "small", "n_prompts": n}
    stored_config = json.loads(_read(warehouse, "select config from raw.suite_runs")[0][0])
    assert stored_config["batch_size"] == 10 and stored_config["cot_parser"] is None
    assert sorted(_read(warehouse, "select prompt_key from raw.und_suite_run_prompts")) == sorted(
        (p.prompt_key,) for p in prompts
    )
    assert _read(
        warehouse,
        "select system_id, backend, fingerprint from raw.und_suite_run_systems order by 1",
    ) == [(s.system_id, "reference", s.fingerprint()) for s, _ in systems]
    assert _read(warehouse, "select count(*) from raw.und_series") == [(20,)]
    stored = {
        (row[0], row[1]): row[2:]
        for row in _read(
            warehouse,
            "select prompt_key, system_id, fingerprint, raw_text, parse_ok, answer, parsed_by "
            "from raw.und_responses",
        )
    }
    assert len(stored) == 2 * n
    for system, _ in systems:
        replies = system.answer_all(prompts)
        for prompt, reply in zip(prompts, replies, strict=True):
            parsed = parse_reply(prompt.task, reply, prompt.options, prompt.prompting)
            row = stored[(prompt.prompt_key, system.system_id)]
            assert row == (
                system.fingerprint(),
                reply,
                parsed.ok,
                parsed.answer,
                "regex" if parsed.ok else None,
            )

    lines.clear()
    again, counts = run_suite(warehouse, config, systems, lines.append)
    assert again != run_id and counts == {"und_analyst": (0, n), "und_random": (0, n)}
    assert lines[1] == "stored 0 new series and 0 new prompts"
    assert f"und_random: {n} answers reused, 0 to ask" in lines
    assert not any("answered (" in x for x in lines)
    assert _read(warehouse, "select count(*) from raw.und_responses") == [(2 * n,)]


def test_a_sample_is_announced_and_only_it_is_asked(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    config = _tiny(sample=16, batch_size=64)
    lines: list[str] = []
    _, counts = run_suite(warehouse, config, open_systems(), lines.append)
    planned = len(plan_prompts(config, generate_all(config)))
    asked = counts["und_analyst"][0]
    assert asked < planned
    assert f"; {asked} prompts (a stratified sample of {planned}) (" in lines[0]
    assert _read(warehouse, "select count(*) from raw.und_suite_run_prompts") == [(asked,)]


class Scripted:
    """A system outside tsrate: a fixed reply per prompt, or a wrong number of replies."""

    system_id = "scripted"

    def __init__(self, reply: str = "yes", short: bool = False, available: bool = True):
        self.reply, self.short, self.available = reply, short, available

    def fingerprint(self) -> str:
        return "scripted-v1"

    def availability(self):
        from tsrate.suites.understanding.analyst import Availability

        return Availability(self.available, "" if self.available else "no key here")

    def answer_all(self, prompts):
        replies = [self.reply] * len(prompts)
        return replies[:-1] if self.short else replies


def test_unparseable_replies_are_counted_in_the_progress_line(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    config = _tiny(datasets=["outlier"], batch_size=10)  # 24 prompts on 8 position series
    lines: list[str] = []
    run_suite(warehouse, config, [(Scripted("maybe"), "endpoint")], lines.append)
    answered = [x.split("; batch ")[0] for x in lines if " answered (" in x]
    assert answered == [
        f"scripted: {k}/24 answered ({k} unparseable so far" for k in (10, 20, 24)
    ], lines
    assert _read(warehouse, "select count(*), sum(parse_ok::int) from raw.und_responses") == [
        (24, 0)
    ]


def test_a_system_with_too_few_replies_fails_the_run_and_names_it(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    config = _tiny(datasets=["outlier"], batch_size=5)
    with pytest.raises(TsrateError, match="scripted returned 4 replies for 5 prompts"):
        run_suite(warehouse, config, [(Scripted(short=True), "endpoint")], lambda _: None)
    assert _read(warehouse, "select status, message from raw.suite_runs") == [
        ("failed", "scripted returned 4 replies for 5 prompts")
    ]
    assert _read(warehouse, "select count(*) from raw.und_responses") == [(0,)]


def test_an_unavailable_system_is_named_before_anything_is_stored(tmp_path) -> None:
    warehouse = tmp_path / "w.duckdb"
    with pytest.raises(TsrateError, match="system scripted cannot run: no key here"):
        run_suite(warehouse, _tiny(), [(Scripted(available=False), "endpoint")], lambda _: None)
    assert not warehouse.exists()


def _documented_sample(prompts, n: int, seed: int) -> list:
    """sample_prompts' docstring, written out: questions grouped by (feature, task) cell;
    numpy's generator seeded [seed, 28] permutes the sorted cells, then each cell's
    questions (sorted by repr); cells holding the most missing features and tasks first
    until every one is present; then one question per cell in turn; prompts' order kept."""
    import numpy as np

    from tsrate.suites.understanding.suite import question_key

    questions: dict = {}
    for p in prompts:
        questions.setdefault(question_key(p), []).append(p)
    rng = np.random.default_rng([seed, 28])
    cells: dict = {}
    for key, group in questions.items():
        cells.setdefault((group[0].feature, group[0].task), []).append(key)
    order = sorted(cells)
    order = [order[i] for i in rng.permutation(len(order))]
    queues = {}
    for cell in order:
        keys = sorted(cells[cell], key=repr)
        queues[cell] = [keys[i] for i in rng.permutation(len(keys))]
    features, tasks = {f for f, _ in order}, {t for _, t in order}
    chosen = []
    while features or tasks:
        best = max((c[0] in features) + (c[1] in tasks) for c in order)
        cell = next(c for c in order if (c[0] in features) + (c[1] in tasks) == best)
        chosen.append(queues[cell].pop(0))
        features.discard(cell[0])
        tasks.discard(cell[1])
    if n < len(chosen):
        return len(chosen)  # the fewest that cover every feature and task
    while len(chosen) < n:
        for cell in order:
            if queues[cell] and len(chosen) < n:
                chosen.append(queues[cell].pop(0))
    return [p for p in prompts if question_key(p) in set(chosen)]


def test_the_sample_is_the_documented_seeded_draw() -> None:
    from tsrate.suites.understanding.suite import sample_prompts

    _, prompts = _prompts(
        ["trend", "seasonality", "anomalies", "volatility", "outlier"], train=3, test=2
    )
    for n, seed in ((16, 2404), (20, 7), (25, 0)):
        got = sample_prompts(prompts, n, seed)
        assert [p.prompt_key for p in got] == [
            p.prompt_key for p in _documented_sample(prompts, n, seed)
        ]
    # the fewest questions that hold every feature and task: accepted; one fewer refused
    fewest = _documented_sample(prompts, 0, 2404)
    assert len({p.feature for p in sample_prompts(prompts, fewest, 2404)}) == len(
        {p.feature for p in prompts}
    )
    with pytest.raises(TsrateError, match=f"a sample of {fewest - 1} questions .* {fewest} or"):
        sample_prompts(prompts, fewest - 1, 2404)
    # every question, exactly: all prompts, in order
    n_questions = len({p.prompt_key for p in prompts})
    assert sample_prompts(prompts, n_questions, 0) == prompts


def test_an_unavailable_cot_parser_is_named_before_anything_is_stored(
    tmp_path, monkeypatch
) -> None:
    from tsrate.suites.understanding.cot_parser import CotParser

    for name in ("BASE_URL", "MODEL", "API_KEY_ENV"):
        monkeypatch.delenv(f"TSRATE_NOPE_MODEL_{name}", raising=False)
    warehouse = tmp_path / "w.duckdb"
    with pytest.raises(TsrateError, match="cot parser nope-model cannot run: no endpoint"):
        run_suite(
            warehouse,
            _tiny(),
            open_systems(),
            lambda _: None,
            cot_parser=CotParser("endpoint:nope-model"),
        )
    assert not warehouse.exists()
