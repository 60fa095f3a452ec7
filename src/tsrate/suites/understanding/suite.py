"""The suite plan: configurations, systems, and the resumable generate -> prompt -> answer loop.

Everything is named by a hash of what determines it: a series by its generator coordinates
(``series_key``), a prompt by its text, expected answer and prompting (``prompt_key``), a response by
(prompt, system, system fingerprint). A rerun — or a run after a kill — regenerates the same
series and prompts, finds the stored responses and asks only for the missing ones.
Responses are stored per batch (one transaction each), so progress survives a kill.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tsrate import TsrateError
from tsrate.suites.lifecycle import end_suite_run, new_suite_run_id, watch_model
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding import storage
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst
from tsrate.suites.understanding.formats import FORMATS
from tsrate.suites.understanding.scoring import parse_answer, parse_reply
from tsrate.suites.understanding.tasks import PROMPTINGS, TASKS, Prompt, build_prompts

ALL_DATASETS = (*g.UNIVARIATE, *g.MULTIVARIATE, *g.POSITION)
REFERENCE_SYSTEMS = ("und_analyst", "und_random")


@dataclasses.dataclass(frozen=True)
class SuiteConfig:
    """One configuration. ``train``/``validation``/``test``: series per split of each
    feature dataset (prompts are built for the test split, as the paper evaluates);
    ``position_per_cell``: series per (quadrant, max/min) cell of each position set (test
    split only; 8 cells); ``promptings``: the prompting styles every question is asked in
    (``zero_shot`` and/or ``cot``, :data:`.tasks.PROMPTINGS`)."""

    name: str
    data_seed: int
    train: int
    validation: int
    test: int
    position_per_cell: int
    min_length: int
    max_length: int
    position_length: int
    datasets: tuple[str, ...]
    formats: tuple[str, ...]
    position_formats: tuple[str, ...]
    tasks: tuple[str, ...]
    decimals: int
    random_seed: int
    batch_size: int
    promptings: tuple[str, ...] = ("zero_shot",)
    #: questions to ask (each in every prompting style), drawn stratified by
    #: :func:`sample_prompts`; 0: every question of the configuration
    sample: int = 0

    def to_dict(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self), default=list))


SMALL = SuiteConfig(
    name="small",
    data_seed=2404,
    train=8,
    validation=4,
    test=5,
    # 42 per cell: every (dataset, task, quadrant) of the position test holds >= 42 prompts
    # against >= 126 in the other quadrants, what the two-proportion test needs for 80 %
    # power against a 25-point gap (tsrate.suites.intervals.items_for_power(ratio=3) = 42)
    position_per_cell=42,
    min_length=30,
    max_length=150,
    position_length=175,
    datasets=ALL_DATASETS,
    formats=tuple(FORMATS),
    position_formats=("csv",),
    tasks=TASKS,
    decimals=2,
    random_seed=0,
    batch_size=64,
)

#: The paper's sizes: 5000 / 2000 / 200 per dataset, 400 series per position set (50 per
#: cell), length 175; every format for every task (145,449 prompts per system and
#: prompting style, as plan_prompts counts them).
PAPER = dataclasses.replace(
    SMALL,
    name="paper",
    train=5000,
    validation=2000,
    test=200,
    position_per_cell=50,
    position_formats=tuple(FORMATS),
)

CONFIGS = {"small": SMALL, "paper": PAPER}


def resolve_config(config_name: str, overrides: dict | None = None) -> SuiteConfig:
    """The named configuration with field ``overrides`` applied (checked)."""
    if config_name not in CONFIGS:
        raise TsrateError(f"unknown configuration {config_name!r}: small or paper")
    changes = dict(overrides or {})
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(SuiteConfig)})
    if unknown:
        raise TsrateError(f"unknown configuration fields {unknown}")
    for key in ("datasets", "formats", "position_formats", "tasks", "promptings"):
        if key in changes:
            changes[key] = tuple(changes[key])
    config = dataclasses.replace(CONFIGS[config_name], **changes)
    checks = (
        ("datasets", ALL_DATASETS),
        ("formats", tuple(FORMATS)),
        ("position_formats", tuple(FORMATS)),
        ("tasks", TASKS),
        ("promptings", PROMPTINGS),
    )
    for key, known in checks:
        bad = sorted(set(getattr(config, key)) - set(known))
        if bad:
            raise TsrateError(f"unknown {key} {bad}: choose from {', '.join(known)}")
    if not config.datasets:
        raise TsrateError("the configuration names no dataset")
    if not config.promptings:
        raise TsrateError("the configuration names no prompting: zero_shot and/or cot")
    if config.sample < 0:
        raise TsrateError(f"sample must be 0 (every question) or positive (got {config.sample})")
    for key in ("train", "validation", "test", "position_per_cell", "batch_size"):
        if getattr(config, key) < (1 if key in ("test", "batch_size") else 0):
            raise TsrateError(f"{key} must be positive (got {getattr(config, key)})")
    return config


# --------------------------------------------------------------------------------------
# Systems
# --------------------------------------------------------------------------------------


#: new tokens a local (``hf_local``) model may write for a zero-shot answer: the templates
#: ask for the answer alone (a date, a number, a label: under 16 tokens), and a CPU pays for
#: every token of a reply that rambles on; chain-of-thought replies keep the model's
#: setting (``TSRATE_HF_MAX_NEW_TOKENS``, default 256)
ZERO_SHOT_NEW_TOKENS = 32


#: the admissible answers of the closed tasks (classification: the prompt's options)
CLOSED_ANSWERS = {
    "detection": ("yes", "no"),
    "search": ("yes", "no"),
    "matching_intra": ("A", "B", "C", "D"),
    "matching_cross": ("A", "B", "C", "D"),
}


def closed_answers(prompt: Prompt) -> list[str] | None:
    """The replies a closed question admits, each in every spelling the strict parser reads
    as that answer (:func:`tsrate.systems.choice_decoding.admissible`); None for the
    numeric tasks (retrieval, arithmetic), whose answers are not a closed set."""
    from tsrate.systems.choice_decoding import admissible

    if prompt.task == "classification":
        answers = tuple(prompt.options)
    elif prompt.task in CLOSED_ANSWERS:
        answers = CLOSED_ANSWERS[prompt.task]
    else:
        return None

    def reads_as(text: str) -> str | None:
        parsed = parse_answer(prompt.task, text, prompt.options)
        return parsed.answer if parsed.ok else None

    return admissible(answers, reads_as)


#: the regular form of a numeric answer, as the templates ask for it ("12.34";
#: "12.34 on 2020-01-31"), each optionally after a space (a reply following ``Answer:``)
NUMBER_PATTERN = r" ?-?\d+(\.\d+)?"
NUMERIC_FORMS = {
    "retrieval": NUMBER_PATTERN,
    "arithmetic_min": NUMBER_PATTERN + r" on \d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
    "arithmetic_max": NUMBER_PATTERN + r" on \d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
}


def answer_form(prompt: Prompt) -> list[str] | tuple[str, int]:
    """What a model that decodes in an answer's form (``choice_replies``) is given: the
    closed answers (:func:`closed_answers`), else the numeric task's regular form and its
    new-token cap (:data:`ZERO_SHOT_NEW_TOKENS`)."""
    closed = closed_answers(prompt)
    if closed is not None:
        return closed
    return (NUMERIC_FORMS[prompt.task], ZERO_SHOT_NEW_TOKENS)


class LanguageModelAnswerer:
    """A :mod:`tsrate.systems.language` model answering prompts (its own concurrency,
    retries and response cache). A local model's zero-shot replies are capped at
    :data:`ZERO_SHOT_NEW_TOKENS` new tokens (named in the fingerprint). A model that
    decodes in an answer's form itself (``choice_replies``: the packaged Gemma) answers
    every task greedily in the task's form only (:func:`answer_form`: the closed tasks over
    their admissible answers, the numeric ones over their regular form), after its own
    reasoning for chain of thought (:data:`~tsrate.systems.gemma.CHOICE_DECODING`, named in
    the fingerprint)."""

    def __init__(self, spec: str):
        from tsrate.systems.language import open_language_model, parse_spec

        self.backend, _ = parse_spec(spec)
        self.model = open_language_model(spec)
        self.system_id = self.model.system_id
        self.capped = self.backend == "hf_local"
        self.closed = hasattr(self.model, "choice_replies")

    def fingerprint(self) -> str:
        fingerprint = self.model.fingerprint()
        if self.capped:
            fingerprint += f";zero_shot_new_tokens={ZERO_SHOT_NEW_TOKENS}"
        if self.closed:
            from tsrate.systems.gemma import CHOICE_DECODING

            fingerprint += f";closed={CHOICE_DECODING}"
        return fingerprint

    def availability(self):
        return self.model.availability()

    def answer_all(self, prompts: list[Prompt]) -> list[str]:
        if not self.capped:
            return self.model.complete_all([p.chat() for p in prompts])
        replies: list[str] = [""] * len(prompts)
        closed = [answer_form(p) if self.closed else None for p in prompts]
        for prompting in sorted({p.prompting for p in prompts}):
            rows = [
                i for i, p in enumerate(prompts) if p.prompting == prompting and closed[i] is None
            ]
            cap = ZERO_SHOT_NEW_TOKENS if prompting == "zero_shot" else None
            if rows:
                texts = self.model.complete_all(
                    [prompts[i].chat() for i in rows], max_new_tokens=cap
                )
                for i, text in zip(rows, texts, strict=True):
                    replies[i] = text
            rows = [
                i
                for i, p in enumerate(prompts)
                if p.prompting == prompting and closed[i] is not None
            ]
            if rows:
                reasoning = None if prompting == "zero_shot" else self.model.settings.max_new_tokens
                texts = self.model.choice_replies(
                    [prompts[i].chat() for i in rows], [closed[i] for i in rows], reasoning
                )
                for i, text in zip(rows, texts, strict=True):
                    replies[i] = text
        return replies


#: the refusal of a run with no system to ask, and its hint
NO_SYSTEM = "no system to ask: give --llm BACKEND:ID or keep the reference systems"


def require_a_system(llm_specs: Sequence[str], references: bool) -> None:
    """Refuse a run with neither the reference systems nor a language model, from its
    arguments alone: the command and the flow check it before the warehouse writer lock is
    taken, so the refusal leaves no lock file (nor warehouse) behind."""
    if not references and not llm_specs:
        raise TsrateError(NO_SYSTEM)


def open_systems(llm_specs: Sequence[str] = (), references: bool = True, random_seed: int = 0):
    """The systems to ask: the offline references (unless ``references`` is False) and one
    answerer per language-model spec (``endpoint:<ID>`` / ``hf_local:<ID>``); none is
    refused here too (:func:`require_a_system` refuses it earlier)."""
    systems: list[tuple[object, str]] = []
    if references:
        systems += [(StatisticalAnalyst(), "reference"), (RandomAnswerer(random_seed), "reference")]
    for spec in llm_specs:
        answerer = LanguageModelAnswerer(spec)
        systems.append((answerer, answerer.backend))
    ids = [s.system_id for s, _ in systems]
    if len(set(ids)) != len(ids):
        raise TsrateError(f"two systems share an id: {ids}")
    if not systems:
        raise TsrateError(NO_SYSTEM)
    return systems


# --------------------------------------------------------------------------------------
# Generation and prompts
# --------------------------------------------------------------------------------------


def generate_all(config: SuiteConfig) -> dict[str, dict[str, list[g.Sample]]]:
    """dataset -> split -> series (position sets: the test split only)."""
    lengths = {
        "min_length": config.min_length,
        "max_length": config.max_length,
        "position_length": config.position_length,
    }
    out: dict[str, dict[str, list[g.Sample]]] = {}
    for dataset in config.datasets:
        if dataset in g.POSITION:
            sizes = {"test": 8 * config.position_per_cell}
        else:
            sizes = {"train": config.train, "validation": config.validation, "test": config.test}
        out[dataset] = {
            split: g.generate_split(dataset, split, size, config.data_seed, **lengths)
            for split, size in sizes.items()
        }
    return out


def plan_prompts(
    config: SuiteConfig, generated: dict[str, dict[str, list[g.Sample]]]
) -> list[Prompt]:
    """Every prompt of the test split: feature sets in ``formats``, position sets in
    ``position_formats``. Matching distractors come from all splits of a dataset; the
    cross-dataset options draw from the feature datasets generated with as many series as the
    question's (at least 4 needed: univariate series only)."""
    pool = {
        d: [s for split in splits.values() for s in split]
        for d, splits in generated.items()
        if d not in g.POSITION
    }
    prompts: list[Prompt] = []
    for dataset, splits in generated.items():
        formats = config.position_formats if dataset in g.POSITION else config.formats
        for sample in splits.get("test", []):
            prompts += build_prompts(
                sample, formats, config.decimals, pool, config.tasks, config.promptings
            )
    keys: dict[str, Prompt] = {}
    for p in prompts:
        keys.setdefault(p.prompt_key, p)
    return list(keys.values())


#: which datasets each task is asked of (:func:`.tasks.build_prompts`)
TASK_NEEDS = {
    "detection": "a univariate or pair dataset",
    "classification": "a univariate or pair dataset",
    "retrieval": "a univariate dataset or position set",
    "arithmetic_min": "a univariate dataset or position set",
    "arithmetic_max": "a univariate dataset or position set",
    "matching_intra": "a univariate or pair dataset",
    "matching_cross": "4 or more univariate datasets",
    "search": "a position set",
}


def refuse_empty_plan(config: SuiteConfig, prompts: Sequence[Prompt]) -> None:
    """A plan of no prompts is an error naming what each chosen task needs."""
    if prompts:
        return
    needs = "; ".join(f"{t} needs {TASK_NEEDS.get(t, 'a known dataset')}" for t in config.tasks)
    raise TsrateError(
        f"--datasets {','.join(config.datasets)} with --tasks {','.join(config.tasks)} "
        f"gives no prompts ({needs}): choose datasets the tasks are asked of"
    )


def question_key(prompt: Prompt) -> tuple:
    """What a question is, whatever its prompting style: its series, task, feature, format,
    expected answer and options (the chain-of-thought prompt of a question differs from the
    zero-shot one only by the appended instruction)."""
    return (
        prompt.series_key,
        prompt.dataset,
        prompt.task,
        prompt.feature,
        prompt.format,
        json.dumps(prompt.expected, sort_keys=True, default=str),
        tuple(prompt.options),
        prompt.quadrant,
    )


def sample_prompts(prompts: Sequence[Prompt], n: int, seed: int) -> list[Prompt]:
    """``n`` questions drawn stratified over (feature, task) cells, every prompting style
    of each chosen question kept (so zero-shot and chain of thought answer the same
    questions), in the order of ``prompts``.

    The draw is seeded and independent of the systems asked: first, until every feature
    and every task of ``prompts`` is present, the cell holding the most features and tasks
    not yet present (ties: the seeded order of cells); then one question per cell in turn
    (the seeded order), each cell's questions in a seeded random order. ``n`` smaller than
    what covers every feature and task is refused, naming the number needed."""
    import numpy as np

    questions: dict[tuple, list[Prompt]] = {}
    for p in prompts:
        questions.setdefault(question_key(p), []).append(p)
    if n >= len(questions):
        return list(prompts)
    rng = np.random.default_rng([seed, 28])
    cells: dict[tuple[str, str], list[tuple]] = {}
    for key, group in questions.items():
        cells.setdefault((group[0].feature, group[0].task), []).append(key)
    order = sorted(cells)
    order = [order[i] for i in rng.permutation(len(order))]
    queues = {}
    for cell in order:
        keys = sorted(cells[cell], key=repr)
        queues[cell] = [keys[i] for i in rng.permutation(len(keys))]
    missing_features = {f for f, _ in order}
    missing_tasks = {t for _, t in order}
    chosen: list[tuple] = []
    while missing_features or missing_tasks:
        cell = max(
            order,
            key=lambda c: (c[0] in missing_features) + (c[1] in missing_tasks),
        )
        chosen.append(queues[cell].pop(0))
        missing_features.discard(cell[0])
        missing_tasks.discard(cell[1])
    if n < len(chosen):
        raise TsrateError(
            f"a sample of {n} questions cannot hold every feature and task: give --sample "
            f"{len(chosen)} or more"
        )
    while len(chosen) < n:
        for cell in order:
            if queues[cell] and len(chosen) < n:
                chosen.append(queues[cell].pop(0))
    keep = set(chosen)
    return [p for p in prompts if question_key(p) in keep]


def run_suite(
    warehouse: Path | str,
    config: SuiteConfig,
    systems: list[tuple[object, str]],
    progress: Callable[[str], None] = print,
    cot_parser: object | None = None,
) -> tuple[str, dict[str, tuple[int, int]]]:
    """Generate, store, prompt every system and store the parsed replies; returns
    (suite_run_id, {system_id: (asked, reused)}). The suite run ends ``answered``.
    ``cot_parser``: a :class:`.cot_parser.CotParser` asked for the final answer of each
    chain-of-thought reply whose ``Answer:`` line does not parse (None: such replies are
    unparseable).

    A system that cannot run here (no endpoint configured, no checkpoint) is an error
    naming the reason, never skipped."""
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.platform.warehouse import connect

    for system, _ in systems:
        available = system.availability()
        if not available.available:
            raise TsrateError(f"system {system.system_id} cannot run: {available.reason}")
    if cot_parser is not None:
        available = cot_parser.availability()
        if not available.available:
            raise TsrateError(f"cot parser {cot_parser.system_id} cannot run: {available.reason}")
    started = time.perf_counter()
    generated = generate_all(config)
    samples = [s for splits in generated.values() for split in splits.values() for s in split]
    prompts = plan_prompts(config, generated)
    refuse_empty_plan(config, prompts)
    planned = len(prompts)
    if config.sample:
        prompts = sample_prompts(prompts, config.sample, config.data_seed)
    progress(
        f"generated {len(samples)} series in {len(generated)} datasets; "
        f"{len(prompts)} prompts"
        + (f" (a stratified sample of {planned})" if len(prompts) < planned else "")
        + f" ({time.perf_counter() - started:.1f}s)"
    )
    suite_run_id = new_suite_run_id("understanding")
    with connect(warehouse) as con:
        create_raw_tables(con)  # a suite run is a writing edge
        new_series = storage.store_series(con, samples)
        new_prompts = storage.store_prompts(con, prompts)
        storage.start_suite_run(
            con,
            suite_run_id,
            config.name,
            {
                **config.to_dict(),
                "cot_parser": None if cot_parser is None else cot_parser.label(),
            },
            [p.prompt_key for p in prompts],
            [(s.system_id, backend, s.fingerprint()) for s, backend in systems],
        )
    progress(f"stored {new_series} new series and {new_prompts} new prompts")
    counts: dict[str, tuple[int, int]] = {}
    try:
        for system, _ in systems:
            fingerprint = system.fingerprint()
            with connect(warehouse) as con:
                done = storage.answered_prompts(con, system.system_id, fingerprint)
            pending = [p for p in prompts if p.prompt_key not in done]
            reused = len(prompts) - len(pending)
            counts[system.system_id] = (len(pending), reused)
            progress(f"{system.system_id}: {reused} answers reused, {len(pending)} to ask")
            watch_model(system, progress)
            unparsed = 0
            for start in range(0, len(pending), config.batch_size):
                batch = pending[start : start + config.batch_size]
                t0 = time.perf_counter()
                replies = system.answer_all(batch)
                if len(replies) != len(batch):
                    raise TsrateError(
                        f"{system.system_id} returned {len(replies)} replies for {len(batch)} prompts"
                    )
                parsed = [
                    parse_reply(p.task, r, p.options, p.prompting, p.format)
                    for p, r in zip(batch, replies, strict=True)
                ]
                parsed_by, parser_text, parser = None, None, None
                if cot_parser is not None:
                    parsed, parsed_by, parser_text = cot_parser.rescue(batch, replies, parsed)
                    parser = cot_parser.label()
                unparsed += sum(not a.ok for a in parsed)
                with connect(warehouse) as con:
                    storage.store_responses(
                        con,
                        system.system_id,
                        fingerprint,
                        batch,
                        replies,
                        parsed,
                        parsed_by,
                        parser,
                        parser_text,
                    )
                progress(
                    f"{system.system_id}: {start + len(batch)}/{len(pending)} answered "
                    f"({unparsed} unparseable so far; batch {time.perf_counter() - t0:.1f}s)"
                )
        end_suite_run(warehouse, suite_run_id, "answered")
    except BaseException as exc:
        end_suite_run(warehouse, suite_run_id, "failed", exc)
        raise
    return suite_run_id, counts
