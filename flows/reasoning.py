"""Reasoning suite flow: items (generated or imported) -> prompts -> answers -> dbt build
(tag reasoning) -> publish -> report (from the snapshot).

Resumable: every prompt is named by its hash and each answered chunk is stored in one
transaction; a rerun (or a run after a kill) asks only what has no response yet.
Progress is logged per chunk. Run it alone with ``python flows/reasoning.py``.
"""

from __future__ import annotations

from tsrate import TsrateError
from tsrate.config import warehouse_path
from tsrate.platform.orchestration import call, flow, task
from tsrate.platform.progress import announcing, run_logger
from tsrate.platform.published_paths import check_publish
from tsrate.suites.publishing import run_and_publish
from tsrate.suites.reasoning.encoding import DEFAULT_CHOICE_ENCODING, DEFAULT_FORECAST_ENCODING
from tsrate.suites.reasoning.scenarios import GeneratorConfig
from tsrate.suites.reasoning.suite import RunConfig, require_answerers, run_suite


@task(name="rsn-answer")
def answer_task(warehouse: str, config: RunConfig) -> str:
    """Store the items and prompts, answer every pending prompt; returns the suite run id."""
    logger = run_logger()
    suite_run_id, asked, reused = run_suite(warehouse, config, progress=announcing(logger.info))
    logger.info("suite run %s: %d prompts answered, %d reused", suite_run_id, asked, reused)
    return suite_run_id


@flow(name="tsrate-reasoning")
def reasoning_flow(
    import_path: str | None = None,
    llms: list[str] | None = None,
    references: bool = True,
    fracast: bool | int = True,
    choice_encoding: str = DEFAULT_CHOICE_ENCODING,
    forecast_encoding: str = DEFAULT_FORECAST_ENCODING,
    forecast_samples: int = 1,
    forecast_temperature: float | None = None,
    generator: dict | None = None,
    build: bool = True,
    warehouse: str | None = None,
    lock_timeout: float = 0.0,
    target_path: str | None = None,
    chunk_size: int = 16,
    tasks: list[str] | None = None,
) -> str:
    """Run the reasoning suite; return its suite run id.

    ``import_path``: a JSONL file in the public schema (default: the procedural dataset,
    sized by ``generator``: seed, scenarios, forecasts, length, context_share, distractors, perturbed); ``llms``:
    language-model specs (``endpoint:ID``, ``hf_local:ID``); ``fracast``: also forecast with
    fracast (True, the default: every forecasting item; or at most that many items; 0: none);
    ``forecast_samples``: sampled replies per forecast prompt of a language model (1: one
    greedy reply; 20: the paper's LLMTime setting, median forecast and CRPS) at
    ``forecast_temperature`` (None: the reference's for the encoding, 1.0 for the default
    llmtime_gpt4, 0.7 for llmtime_gpt); ``forecast_encoding``: llmtime_gpt4 by default, the
    paper's GPT-4 forecasting settings (basic scaling: the values keep their ratios);
    ``tasks``: only these tasks' items (None: every task).
    """
    require_answerers(llms or [], references)  # before the writer lock: it leaves a file behind
    try:
        generator_config = GeneratorConfig(**(generator or {}))
    except TypeError as exc:
        raise TsrateError(f"bad generator settings {generator}: {exc}") from exc
    config = RunConfig(
        generator=generator_config,
        import_path=import_path,
        llms=tuple(llms or ()),
        references=references,
        fracast=fracast,
        choice_encoding=choice_encoding,
        forecast_encoding=forecast_encoding,
        forecast_samples=forecast_samples,
        forecast_temperature=forecast_temperature,
        chunk_size=chunk_size,
        tasks=tuple(tasks) if tasks else None,
    )

    def work(store: str) -> str:
        return call(answer_task, store, config)

    if build:  # pre-flight: what would stop the publish at the end, before any work
        check_publish(warehouse or warehouse_path())
    return run_and_publish("reasoning", work, warehouse, lock_timeout, build, target_path)


if __name__ == "__main__":
    reasoning_flow()
