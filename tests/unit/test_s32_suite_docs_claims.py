"""docs/suites/understanding.md, restated against the code it describes: which dataset gets
which task, which metrics the ratings mart rates, and the default run's prompt counts."""

from __future__ import annotations

import re
from collections import defaultdict

from tsrate.config import project_dir
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding import suite
from tsrate.suites.understanding.marts import RATED_METRICS
from tsrate.suites.understanding.tasks import TASKS

PAGE = project_dir() / "docs" / "suites" / "understanding.md"


def _page() -> str:
    return " ".join(PAGE.read_text(encoding="utf-8").split())


def _tasks_by_group(datasets: list[str]) -> dict[str, set[str]]:
    config = suite.resolve_config(
        "small", {"datasets": datasets, "test": 1, "position_per_cell": 1, "formats": ["csv"]}
    )
    tasks: dict[str, set[str]] = defaultdict(set)
    for prompt in suite.plan_prompts(config, suite.generate_all(config)):
        group = (
            "position"
            if prompt.dataset in g.POSITION
            else "pair"
            if prompt.dataset in g.MULTIVARIATE
            else "univariate"
        )
        tasks[group].add(prompt.task)
    return tasks


def test_which_dataset_gets_which_task_is_what_the_page_says():
    """ "the six univariate feature datasets every task but search; the three pair datasets
    ... detection, classification and matching inside their dataset; the position sets
    retrieval, the minimum or maximum ... and search; matching across datasets needs 4 or
    more univariate feature datasets"."""
    text = _page()
    assert "the six univariate feature datasets every task but search" in text
    assert "matching across datasets needs 4 or more univariate feature datasets" in text
    assert len(g.UNIVARIATE) == 6 and len(g.MULTIVARIATE) == 3
    four = [*g.UNIVARIATE[:4], g.MULTIVARIATE[0], "brownian", "sinusoidal"]
    tasks = _tasks_by_group(four)
    assert tasks["univariate"] == set(TASKS) - {"search"}
    # distractors only from datasets with as many series: the pair sets are too few
    assert tasks["pair"] == {"detection", "classification", "matching_intra"}
    assert tasks["position"] == {"retrieval", "arithmetic_min", "arithmetic_max", "search"}
    # three univariate feature datasets (and a pair one): no cross-dataset matching at all
    three = _tasks_by_group([*g.UNIVARIATE[:3], *g.MULTIVARIATE])
    assert "matching_cross" not in set().union(*three.values())
    # the page's example of a choice that meets nowhere plans no prompt
    assert "`--datasets trend --tasks search`" in text
    config = suite.resolve_config("small", {"datasets": ["trend"], "tasks": ["search"]})
    assert suite.plan_prompts(config, suite.generate_all(config)) == []


def test_the_rated_metrics_are_the_ones_the_page_lists():
    row = next(
        line
        for line in PAGE.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `marts.und_ratings` |")
    )
    listed = set(re.findall(r"`([a-z_]+_(?:f1|accuracy|mape))`", row))
    assert listed == set(RATED_METRICS)
    assert not any("search" in tasks for tasks, _ in RATED_METRICS.values())
    assert "the search task is scored in `und_scores`, not rated" in row


def test_the_default_run_asks_the_documented_prompts():
    """ "The offline default run asks 7,317 prompts per system (zero-shot; 5,040 of them on
    the five position sets)"."""
    text = _page()
    assert "asks 7,317 prompts per system (zero-shot; 5,040 of them on the five position" in text
    prompts = suite.plan_prompts(suite.SMALL, suite.generate_all(suite.SMALL))
    assert len(prompts) == 7317
    assert sum(p.dataset in g.POSITION for p in prompts) == 5040
    assert len(g.POSITION) == 5
