"""Cross-dataset matching does not give its answer away by the subject of the descriptions:
every option describes as many series as the question's series ("This time series ..." for
one, "These two time series ..." for a pair), so the distractors come only from datasets
with the same number of series."""

from __future__ import annotations

import pytest

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.tasks import LETTERS, build_prompts


@pytest.fixture(scope="module")
def pool():
    return {d: g.generate_split(d, "test", 4, 3) for d in (*g.UNIVARIATE, *g.MULTIVARIATE)}


def _subject(description: str) -> str:
    for subject in ("This time series", "These two time series"):
        if description.startswith(subject):
            return subject
    raise AssertionError(f"a description with no known subject: {description!r}")


def _options(prompt) -> list[str]:
    block = prompt.text.split("```")[-1]
    lines = [line for line in block.splitlines() if line[:3] in {f"{x}. " for x in LETTERS}]
    assert [line[0] for line in lines] == list(LETTERS)
    return [line[3:] for line in lines]


def test_every_cross_matching_option_shares_the_series_subject(pool):
    asked = 0
    for dataset in g.UNIVARIATE:
        for sample in pool[dataset]:
            own = _subject(sample.qualitative)
            for p in build_prompts(sample, ("csv",), 2, pool, tasks=("matching_cross",)):
                options = _options(p)
                assert [_subject(o) for o in options] == [own] * 4, options
                assert options[LETTERS.index(p.expected["answer"])] == sample.qualitative
                asked += 1
    assert asked == len(g.UNIVARIATE) * 4  # every univariate series is still asked


def test_pair_series_get_no_cross_matching_question(pool):
    """Only three pair datasets exist: a pair series has two pair datasets to draw its three
    distractors from, too few for four descriptions from four datasets."""
    for dataset in g.MULTIVARIATE:
        for sample in pool[dataset]:
            assert _subject(sample.qualitative) == "These two time series"
            prompts = build_prompts(sample, ("csv",), 2, pool, tasks=("matching_cross",))
            assert prompts == []
