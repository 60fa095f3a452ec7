"""The resumable run: items -> prompts -> responses, in the warehouse.

1. Items: the procedural dataset (:func:`tsrate.suites.reasoning.scenarios.generate_items`)
   or an import (:func:`tsrate.suites.reasoning.dataset.import_items`); a bad file stops
   the run before anything is written.
2. Answerers: the offline references and every ``--llm`` spec; a language model that
   cannot run here (no endpoint configured, no checkpoint) stops the run with the reason,
   it is never silently skipped.
3. Prompts: every answerer's requests, named by prompt hash, stored and linked to the
   suite run. Prompts already answered (by any earlier run, or before a kill) are reused.
4. Answers: the rest, ``chunk_size`` at a time per answerer (a language model sends a
   chunk with its own endpoint concurrency; the samples of one sampled forecast chat count
   as one and stay in one chunk), each chunk stored in one transaction, with
   progress after each chunk. The suite run ends in status ``answered``; the flow then
   builds the marts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from tsrate import TsrateError
from tsrate.suites.lifecycle import (
    end_suite_run,
    finish_suite_run,
    new_suite_run_id,
    start_suite_run,
    watch_model,
)
from tsrate.suites.reasoning import storage
from tsrate.suites.reasoning.answerers import LanguageModelAnswerer, reference_answerers
from tsrate.suites.reasoning.encoding import DEFAULT_CHOICE_ENCODING, DEFAULT_FORECAST_ENCODING
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.scenarios import GeneratorConfig, generate_items


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What one suite run does. ``import_path`` None: the procedural dataset."""

    generator: GeneratorConfig = GeneratorConfig()
    import_path: str | None = None
    import_seed: int = 0
    llms: tuple[str, ...] = ()
    references: bool = True
    fracast: bool | int = True
    choice_encoding: str = (
        DEFAULT_CHOICE_ENCODING  # the reference QA settings; "plain", "plot", "llmtime_gpt" options
    )
    forecast_encoding: str = DEFAULT_FORECAST_ENCODING  # the paper's GPT-4 settings
    forecast_samples: int = 1  # 1: one greedy reply; the paper's LLMTime setting is 20
    forecast_temperature: float | None = None  # None: the reference's for the encoding
    chunk_size: int = 16
    #: the tasks to ask (None: every task; e.g. ("etiological", "qa_single") for a slow
    #: local model), checked against :data:`~tsrate.suites.reasoning.tasks.CONDITIONS`
    tasks: tuple[str, ...] | None = None

    @property
    def source(self) -> str:
        return "import" if self.import_path else "procedural"

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["source"] = self.source
        return data


def load_items(config: RunConfig) -> list[Item]:
    if config.import_path:
        from tsrate.suites.reasoning.dataset import import_items

        items = import_items(config.import_path, config.import_seed, config.generator.context_share)
    else:
        items = generate_items(config.generator)
    if not items:
        raise TsrateError("the dataset yields no items")
    if config.tasks is not None:
        from tsrate.suites.reasoning.tasks import CONDITIONS

        unknown = sorted(set(config.tasks) - set(CONDITIONS))
        if unknown:
            raise TsrateError(f"unknown tasks {unknown}: choose from {', '.join(CONDITIONS)}")
        items = [item for item in items if item.task in config.tasks]
        if not items:
            raise TsrateError(f"the dataset has no item of the tasks {', '.join(config.tasks)}")
    return items


#: the refusal of a run with no system to ask, and its hint
NOTHING_TO_RUN = (
    "nothing to run: no references and no --llm; give --llm SPEC or keep the reference systems"
)


def require_answerers(llms: Sequence[str], references: bool) -> None:
    """Refuse a run with neither the reference systems nor a language model, from its
    arguments alone: the command and the flow check it before the warehouse writer lock is
    taken, so the refusal leaves no lock file (nor warehouse) behind."""
    if not references and not llms:
        raise TsrateError(NOTHING_TO_RUN)


def build_answerers(config: RunConfig) -> list:
    """The references (when enabled) and one answerer per language-model spec; each
    language model must say it can run here. None is refused here too
    (:func:`require_answerers` refuses it earlier)."""
    from tsrate.systems.language import open_language_model

    answerers = (
        list(reference_answerers(config.fracast, config.import_seed)) if config.references else []
    )
    seen = {a.system_id for a in answerers}
    for spec in config.llms:
        model = open_language_model(spec)
        availability = model.availability()
        if not availability.available:
            raise TsrateError(f"language model {spec!r} cannot run here: {availability.reason}")
        answerer = LanguageModelAnswerer(
            model,
            config.choice_encoding,
            config.forecast_encoding,
            config.forecast_samples,
            config.forecast_temperature,
        )
        if answerer.system_id in seen:
            raise TsrateError(f"system id {answerer.system_id!r} is given twice")
        seen.add(answerer.system_id)
        answerers.append(answerer)
    if not answerers:
        raise TsrateError(NOTHING_TO_RUN)
    return answerers


def chunks(requests: Sequence, size: int) -> list[list]:
    """``requests`` in chunks of ``size`` units, a unit being one greedy request or the
    sampled requests of one chat (its pending samples), so a chat's samples are asked
    together (one request with ``n``, one seeded ``generate``)."""
    units: dict[object, list] = {}
    for r in requests:
        sampled = getattr(r, "sample_index", None) is not None
        key = (r.item.item_id, r.condition) if sampled else r.prompt_hash
        units.setdefault(key, []).append(r)
    groups = list(units.values())
    return [
        [r for unit in groups[start : start + size] for r in unit]
        for start in range(0, len(groups), size)
    ]


def run_suite(
    warehouse: str | Path,
    config: RunConfig,
    progress: Callable[[str], None] = print,
    answerers: Sequence | None = None,
) -> tuple[str, int, int]:
    """Ask every pending prompt; return (suite_run_id, answered now, reused)."""
    from tsrate.platform.warehouse import connect

    items = load_items(config)
    answerers = list(answerers) if answerers is not None else build_answerers(config)
    plan = {a.system_id: a.requests(items) for a in answerers}
    requests = [r for rs in plan.values() for r in rs]
    kinds = {a.system_id: a.kind for a in answerers}
    fingerprints = {a.system_id: a.fingerprint() for a in answerers}
    suite_run_id = new_suite_run_id("reasoning")
    with connect(warehouse) as con:
        start_suite_run(
            con,
            "reasoning",
            suite_run_id,
            config.to_dict(),
            {"source": config.source, "n_items": len(items), "n_prompts": len(requests)},
        )
        try:
            storage.store_items(con, suite_run_id, items)
            storage.store_prompts(con, suite_run_id, requests, kinds, fingerprints)
        except Exception as exc:
            finish_suite_run(con, suite_run_id, "failed", str(exc)[:500])
            raise
        done = storage.answered(con)
    progress(
        f"reasoning suite run {suite_run_id}: {len(items)} items ({config.source}), "
        f"{len(requests)} prompts for {len(answerers)} systems"
    )
    asked = reused = 0
    try:
        for answerer in answerers:
            pending = [r for r in plan[answerer.system_id] if r.prompt_hash not in done]
            total = len(plan[answerer.system_id])
            reused += total - len(pending)
            if total - len(pending):
                progress(
                    f"{answerer.system_id}: {total - len(pending)}/{total} answered earlier, reused"
                )
            answered_now = 0
            watch_model(answerer, progress)
            for chunk in chunks(pending, config.chunk_size):
                responses = answerer.answer(chunk)
                with connect(warehouse) as con:
                    storage.store_responses(con, answerer.system_id, responses)
                asked += len(chunk)
                answered_now += len(chunk)
                done.update(r.prompt_hash for r in chunk)
                failed = sum(not r.parse_ok for r in responses)
                progress(
                    f"{answerer.system_id}: {total - len(pending) + answered_now}/{total} answered"
                    + (f" ({failed} unparseable in this chunk)" if failed else "")
                )
        end_suite_run(warehouse, suite_run_id, "answered")
    except BaseException as exc:
        end_suite_run(warehouse, suite_run_id, "failed", exc)
        raise
    return suite_run_id, asked, reused
