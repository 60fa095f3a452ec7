"""Tasks of the paper's Section 4: prompts (versioned templates in ``prompts/``); their strict
answer parsing and per-answer scoring are in :mod:`tsrate.suites.understanding.scoring`.

Tasks (``task`` column) and what a correct answer is:

* ``detection`` — yes/no: is the feature present? (F1 per feature, macro over yes/no);
* ``classification`` — one sub-feature among the dataset's classes, whose definitions the
  prompt gives (F1 macro over the classes); asked for every series that carries the feature
  (the paper asks it after a successful detection; we ask it always, so every system answers
  the same prompts);
* ``retrieval`` — the value on a date (correct = the number as printed, i.e. equal after
  rounding to the prompt's decimals; absolute percentage error kept for MAPE);
* ``arithmetic_min`` / ``arithmetic_max`` — the minimum / maximum and its date (correct =
  the value as printed; the date is scored separately);
* ``search`` — position sets only (Appendix E.1): yes/no, does the value V appear in the
  series? Half the series (every other replicate of the 8 position cells) are asked about the printed value on
  a date in the set's quadrant (truth yes, the quadrant kept for position bias), the other
  half about a value inside the series' range that is not printed in it (truth no);
* ``matching_intra`` — 4 full (qualitative + quantitative) descriptions from the same dataset;
* ``matching_cross`` — 4 qualitative descriptions from 4 different datasets with as many
  series as the question's (so that "This time series ..." / "These two time series ..." does
  not give the answer away); only univariate series are asked: the 3 pair datasets are too
  few (accuracy).

Prompting styles (``prompting``): ``zero_shot`` (the task's template alone, the default) and
``cot`` (chain of thought: the same prompt followed by ``prompts/cot.txt``, which asks the
model to reason step by step and end with one line ``Answer: <answer in the asked form>``).

Parsing is strict (:func:`.scoring.parse_answer`; chain-of-thought replies: :func:`.scoring.parse_cot_answer`
reads the last ``Answer:`` line with the same parser): an answer that does not state exactly one
admissible answer in the asked form is *unparseable*; it is stored with its raw text and the
reason, counts as wrong, and is never guessed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import string
from importlib import resources

import numpy as np

from tsrate import TsrateError
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.formats import format_series, number

TASKS = (
    "detection",
    "classification",
    "retrieval",
    "arithmetic_min",
    "arithmetic_max",
    "matching_intra",
    "matching_cross",
    "search",
)
TEMPLATE_OF = {
    "detection": "detection",
    "classification": "classification",
    "retrieval": "retrieval",
    "arithmetic_min": "arithmetic",
    "arithmetic_max": "arithmetic",
    "matching_intra": "matching_intra",
    "matching_cross": "matching_cross",
    "search": "search",
}
FORMAT_NAMES = {
    "csv": "CSV",
    "plain": "plain (Date:...,Value:... per line)",
    "tsv": "TSV",
    "json": "JSON lines",
    "markdown": "markdown table",
    "spaces": "CSV with the digits of each number separated by spaces",
    "context": "CSV with each value in brackets",
    "symbol": "CSV with a direction column (↑ up, ↓ down, → unchanged)",
    "custom": "rows of Date|Value separated by a vertical bar",
}
LETTERS = ("A", "B", "C", "D")
#: Prompting styles: ``zero_shot`` (the task's template alone) and ``cot`` (the same prompt
#: followed by the chain-of-thought instruction of ``prompts/cot.txt``).
PROMPTINGS = ("zero_shot", "cot")
COT_TEMPLATE = "cot"


# --------------------------------------------------------------------------------------
# What is asked of each dataset
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Detection:
    feature: str
    question: str
    present: object  # Callable[[Sample], bool]


@dataclasses.dataclass(frozen=True)
class Classification:
    question: str
    classes: dict[str, str]  # label -> definition
    truth: object  # Callable[[Sample], str | None]; None = not asked


def _sub(sample: g.Sample) -> str:
    return sample.sub_feature


DETECTIONS: dict[str, tuple[Detection, ...]] = {
    "trend": (
        Detection(
            "trend",
            "Is there a clear upward or downward trend in this time series?",
            lambda s: s.sub_feature != "none",
        ),
    ),
    "seasonality": (
        Detection(
            "seasonality",
            "Does this time series have a seasonal (repeating, cyclical) pattern?",
            lambda s: s.sub_feature != "none",
        ),
    ),
    "anomalies": (
        Detection(
            "anomalies",
            "Does this time series contain anomalies (spikes, level shifts or disruptions)?",
            lambda s: s.sub_feature != "none",
        ),
    ),
    "structural_breaks": (
        Detection(
            "structural_breaks",
            "Does this time series contain a structural break (a change in the process that generates it)?",
            lambda s: s.sub_feature != "none",
        ),
    ),
    "volatility": (
        Detection(
            "volatility",
            "Does the volatility of this time series change over time (rather than stay constant)?",
            lambda s: s.sub_feature not in ("constant", "none"),
        ),
    ),
    "statistical_properties": (
        Detection(
            "fat_tails",
            "Does this time series have fat tails (extreme values more frequent than under a normal distribution)?",
            lambda s: bool(s.labels["fat_tails"]),
        ),
        Detection(
            "stationarity",
            "Is this time series stationary (constant mean, variance and autocorrelation over time)?",
            lambda s: bool(s.labels["stationary"]),
        ),
    ),
    "correlation": (
        Detection(
            "correlation",
            "Are these two time series correlated?",
            lambda s: s.sub_feature != "none",
        ),
    ),
    "cross_correlation": (
        Detection(
            "cross_correlation",
            "Does one of these two time series follow the other with a time lag?",
            lambda s: s.sub_feature.endswith("lagged"),
        ),
    ),
    "dynamic_correlation": (
        Detection(
            "dynamic_correlation",
            "Does the correlation between these two time series change over time?",
            lambda s: s.sub_feature != "constant",
        ),
    ),
}

CLASSIFICATIONS: dict[str, Classification] = {
    "trend": Classification(
        "Which kind of trend does this time series have?",
        {"up": "the series rises over time", "down": "the series falls over time"},
        lambda s: None if s.sub_feature == "none" else s.sub_feature.split("_")[1],
    ),
    "seasonality": Classification(
        "Which kind of seasonality does this time series have?",
        {
            "fixed": "a cycle with a constant period and amplitude",
            "varying_amplitude": "a cycle with a constant period whose amplitude grows or shrinks",
            "shifting": "a cycle whose peaks and troughs drift (the period changes)",
            "multiple": "two or more cycles of different periods on top of each other",
        },
        lambda s: None if s.sub_feature == "none" else s.sub_feature,
    ),
    "anomalies": Classification(
        "Which kind of anomaly does this time series contain?",
        {
            "single_spike": "one isolated sharp jump that immediately returns",
            "double_spike": "two sharp jumps on consecutive days",
            "triple_spike": "three sharp jumps on consecutive days",
            "step_spike": "a jump to another level that lasts four days or more, then returns",
            "level_shift": "a jump to another level that persists until the end",
            "temporal_disruption": "a stretch where the series freezes at one value, then resumes",
        },
        lambda s: None if s.sub_feature == "none" else s.sub_feature,
    ),
    "structural_breaks": Classification(
        "Which kind of structural break does this time series contain?",
        {
            "parameter_shift": "a parameter of the same process changes (mean, variance, both, seasonal amplitude or autocorrelation)",
            "regime_shift": "the process itself changes (distribution, stationarity, linearity, noise to trend, frequency, error correlation or variance type)",
        },
        lambda s: None if s.sub_feature == "none" else s.sub_feature,
    ),
    "volatility": Classification(
        "Which kind of volatility does this time series show?",
        {
            "constant": "the size of the daily changes stays the same",
            "increasing": "the daily changes grow steadily larger over time",
            "clustered": "calm periods alternate with bursts of large changes (GARCH-like)",
            "leverage": "volatility rises after falls and decays after rises",
            "none": "no volatility: the series moves smoothly, without random day-to-day changes",
        },
        _sub,
    ),
    "statistical_properties": Classification(
        "Which statistical property describes this time series?",
        {
            "fat_tailed": "stationary, with extreme values far more frequent than under a normal distribution",
            "stationary": "stationary, with roughly normal values",
            "changing_mean": "non-stationary: the mean drifts over time",
            "changing_variance": "non-stationary: the variance changes over time",
            "seasonal": "non-stationary because of a seasonal cycle",
            "trend_and_seasonality": "non-stationary with both a trend and a seasonal cycle",
        },
        _sub,
    ),
    "correlation": Classification(
        "Which kind of correlation do these two time series have?",
        {
            "positive": "they tend to move in the same direction",
            "negative": "they tend to move in opposite directions",
        },
        lambda s: None if s.sub_feature == "none" else s.sub_feature,
    ),
    "cross_correlation": Classification(
        "Which kind of relationship do these two time series have?",
        {
            "positive_direct": "Series2 moves with Series1 on the same days",
            "positive_lagged": "Series2 repeats Series1's moves some days later",
            "negative_direct": "Series2 moves against Series1 on the same days",
            "negative_lagged": "Series2 moves against Series1 some days later",
        },
        _sub,
    ),
    "dynamic_correlation": Classification(
        "When are these two time series correlated?",
        {
            "correlated_first_half": "correlated in the first half, independent in the second",
            "correlated_second_half": "independent in the first half, correlated in the second",
        },
        lambda s: None if s.sub_feature == "constant" else s.sub_feature,
    ),
}


@functools.cache
def design_answer_shares() -> dict[tuple[str, str], dict[str, float]]:
    """(task, feature) -> the share of each true answer that the generators' design gives
    detection and classification (every generator draws its kinds uniformly): e.g. 4 of the
    5 trend kinds have a trend, so ``("detection", "trend")`` is ``{"yes": 0.8, "no": 0.2}``.
    Classification shares are over the kinds that are asked (``none`` is not). Read off one
    short series of every kind, so a changed generator or label changes it too (computed once
    per process; treat the result as read-only)."""
    shares: dict[tuple[str, str], dict[str, float]] = {}
    for dataset in (*g.UNIVARIATE, *g.MULTIVARIATE):
        samples = [
            g.generate_sample(dataset, "test", 0, 0, min_length=30, max_length=30, kind=kind)
            for kind in g.KINDS[dataset]
        ]
        for det in DETECTIONS[dataset]:
            yes = sum(bool(det.present(s)) for s in samples) / len(samples)
            shares[("detection", det.feature)] = {"yes": yes, "no": 1 - yes}
        truths = [t for t in (CLASSIFICATIONS[dataset].truth(s) for s in samples) if t]
        shares[("classification", dataset)] = {
            label: truths.count(label) / len(truths) for label in CLASSIFICATIONS[dataset].classes
        }
    return shares


def most_frequent_answers() -> dict[tuple[str, str], str]:
    """(task, feature) -> the answer the design makes most frequent
    (:func:`design_answer_shares`; a tie goes to the first option: ``yes``, or the first
    class listed). Answering it to every question reads neither the series nor the options
    beyond the question's feature: the best answer-blind rule, and the chance level of a
    task whose truths are not balanced."""
    return {
        key: max(share, key=lambda answer, s=share: (s[answer], -list(s).index(answer)))
        for key, share in design_answer_shares().items()
    }


# --------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Template:
    template_id: str
    version: int
    text: str

    def render(self, **fields: str) -> str:
        try:
            return string.Template(self.text).substitute(**fields)
        except KeyError as exc:
            raise TsrateError(f"prompt template {self.template_id}: no value for {exc}") from exc


def load_template(template_id: str) -> Template:
    """The template ``prompts/<id>.txt``; its first line is ``version: N``."""
    try:
        raw = (
            resources.files("tsrate.suites.understanding")
            .joinpath("prompts", f"{template_id}.txt")
            .read_text(encoding="utf-8")
        )
    except FileNotFoundError as exc:
        raise TsrateError(f"no prompt template {template_id!r}") from exc
    head, _, body = raw.partition("\n")
    match = re.fullmatch(r"version:\s*(\d+)", head.strip())
    if not match:
        raise TsrateError(f"prompt template {template_id}: the first line must be 'version: N'")
    return Template(template_id, int(match.group(1)), body)


def templates() -> dict[str, Template]:
    """The task templates and the chain-of-thought instruction (``cot``)."""
    ids = sorted({*TEMPLATE_OF.values(), COT_TEMPLATE})
    return {tid: load_template(tid) for tid in ids}


def with_prompting(text: str, prompting: str, cot: Template | None = None) -> str:
    """The prompt text in a prompting style: ``zero_shot`` = ``text`` unchanged; ``cot`` =
    ``text`` followed by the chain-of-thought instruction (``prompts/cot.txt``)."""
    if prompting == "zero_shot":
        return text
    if prompting == "cot":
        cot = cot or load_template(COT_TEMPLATE)
        return text.rstrip("\n") + "\n" + cot.render()
    raise TsrateError(f"unknown prompting {prompting!r}: choose from {', '.join(PROMPTINGS)}")


# --------------------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Prompt:
    """One question about one series in one format (the unit every system answers)."""

    series_key: str
    dataset: str
    task: str
    feature: str
    format: str
    decimals: int
    template_id: str
    template_version: int
    text: str
    expected: dict
    options: tuple[str, ...]
    quadrant: int | None
    length: int
    prompting: str = "zero_shot"

    @property
    def prompt_key(self) -> str:
        """Hash of everything that determines the prompt (its text, task, expectation and,
        unless zero-shot, its prompting; zero-shot keys are those of the suite before
        prompting styles existed, so old warehouses' answers are reused)."""
        parts = [self.text, self.task, self.feature, self.expected, self.options]
        if self.prompting != "zero_shot":
            parts.append(self.prompting)
        blob = json.dumps(parts, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def chat(self) -> list[dict]:
        return [{"role": "user", "content": self.text}]


def _series_block(sample: g.Sample, fmt: str, decimals: int) -> str:
    text = format_series(fmt, sample.dates, sample.columns, decimals)
    return text.rstrip("\n") + "\n"


def _extreme(sample: g.Sample, kind: str, decimals: int) -> tuple[float, list[str]]:
    """The printed extreme value and every date holding it (ties at the printed precision)."""
    printed = np.array([float(number(v, decimals)) for v in sample.values])
    target = printed.min() if kind == "min" else printed.max()
    dates = [str(d) for d, v in zip(sample.dates, printed, strict=True) if v == target]
    return float(target), dates


def build_prompts(
    sample: g.Sample,
    formats: tuple[str, ...],
    decimals: int,
    pool: dict[str, list[g.Sample]],
    tasks: tuple[str, ...] = TASKS,
    promptings: tuple[str, ...] = ("zero_shot",),
) -> list[Prompt]:
    """Every prompt about ``sample`` in every format of ``formats`` and every prompting
    style of ``promptings`` (:data:`PROMPTINGS`).

    ``pool``: dataset -> generated series to draw matching distractors from (the series
    itself is skipped). Question randomness (queried date, options, their order) comes from
    the series' own seed, so it is the same in every format and every run. Multivariate
    series get detection, classification and matching inside their dataset (no cross-dataset
    matching: see :func:`_matching_options`); position series retrieval and
    arithmetic (the quadrant of the queried date / extreme is kept for position bias)."""
    rng = np.random.default_rng([sample.seed, 7])
    tpl = templates()
    plans: list[tuple[str, str, dict, tuple[str, ...], int | None, dict]] = []
    group = sample.group
    if group != "position" and "detection" in tasks:
        for det in DETECTIONS[sample.dataset]:
            answer = "yes" if det.present(sample) else "no"
            plans.append(
                (
                    "detection",
                    det.feature,
                    {"question": det.question},
                    ("yes", "no"),
                    None,
                    {"answer": answer},
                )
            )
    if group != "position" and "classification" in tasks:
        cls = CLASSIFICATIONS[sample.dataset]
        truth = cls.truth(sample)
        if truth is not None:
            labels = tuple(cls.classes)
            options = "\n".join(f"- {label}: {cls.classes[label]}" for label in labels)
            plans.append(
                (
                    "classification",
                    sample.dataset,
                    {"question": cls.question, "options": options, "example": labels[0]},
                    labels,
                    None,
                    {"answer": truth},
                )
            )
    n = sample.length
    if group != "multivariate":
        if group == "position":
            query = int(sample.labels["query_index"])
        else:
            query = int(rng.integers(0, n))
        value = float(number(sample.values[query], decimals))
        if "retrieval" in tasks:
            plans.append(
                (
                    "retrieval",
                    sample.dataset,
                    {"date": str(sample.dates[query])},
                    (),
                    g.quadrant_of(query, n),
                    {"value": value, "date": str(sample.dates[query])},
                )
            )
        for kind in ("min", "max"):
            task = f"arithmetic_{kind}"
            if task not in tasks:
                continue
            if group == "position" and sample.labels["extreme"] != kind:
                continue
            target, dates = _extreme(sample, kind, decimals)
            position = int(np.argmin(sample.values) if kind == "min" else np.argmax(sample.values))
            plans.append(
                (
                    task,
                    sample.dataset,
                    {"extreme_word": "minimum" if kind == "min" else "maximum"},
                    (),
                    g.quadrant_of(position, n),
                    {"value": target, "dates": dates},
                )
            )
    if group == "position" and "search" in tasks:
        plans.append(_search_plan(sample, decimals))
    if group != "position":
        for task in ("matching_intra", "matching_cross"):
            if task not in tasks:
                continue
            options, answer = _matching_options(sample, task, pool, rng)
            if options is None:
                continue
            block = "\n".join(
                f"{letter}. {text}" for letter, text in zip(LETTERS, options, strict=True)
            )
            plans.append(
                (task, sample.dataset, {"options": block}, LETTERS, None, {"answer": answer})
            )
    out = []
    for fmt in formats:
        series = _series_block(sample, fmt, decimals)
        for task, feature, fields, options, quadrant, expected in plans:
            template = tpl[TEMPLATE_OF[task]]
            text = template.render(series=series, format_name=FORMAT_NAMES[fmt], **fields)
            for prompting in promptings:
                out.append(
                    Prompt(
                        sample.series_key,
                        sample.dataset,
                        task,
                        feature,
                        fmt,
                        decimals,
                        template.template_id,
                        template.version,
                        with_prompting(text, prompting, tpl[COT_TEMPLATE]),
                        expected,
                        options,
                        quadrant,
                        n,
                        prompting,
                    )
                )
    return out


def _search_plan(sample: g.Sample, decimals: int) -> tuple:
    """The search question (see the module docstring); its own random stream so that the
    other questions about the series do not change."""
    rng = np.random.default_rng([sample.seed, 11])
    printed = [number(v, decimals) for v in sample.values]
    # every other replicate of the 8 (quadrant, extreme) cells: exactly half the series of
    # each quadrant are asked about a present value, so every quadrant holds as many
    # present-value questions as series per cell (enough to judge position bias)
    present = (sample.index // 8) % 2 == 0
    query = int(sample.labels["query_index"])
    if present:
        value, quadrant = printed[query], g.quadrant_of(query, sample.length)
    else:
        # a value strictly inside the range, half-way between two neighbouring printed values
        # (rounded to the printed precision) that is not printed anywhere in the series
        levels = sorted({float(p) for p in printed})
        gaps = [
            number((a + b) / 2, decimals)
            for a, b in zip(levels, levels[1:], strict=False)
            if number((a + b) / 2, decimals) not in printed
        ]
        if not gaps:  # every midpoint is printed (a coarse series): just above the maximum
            gaps = [number(levels[-1] + 10.0**-decimals, decimals)]
        value, quadrant = gaps[int(rng.integers(0, len(gaps)))], None
    return (
        "search",
        sample.dataset,
        {"value": value},
        ("yes", "no"),
        quadrant,
        {"answer": "yes" if present else "no", "value": float(value)},
    )


def _matching_options(sample, task, pool, rng):
    """Four descriptions, the right one at a random letter; None when the pool is too small."""
    if task == "matching_intra":
        others = [s for s in pool.get(sample.dataset, []) if s.series_key != sample.series_key]
        if len(others) < 3:
            return None, None
        picks = [others[i] for i in rng.choice(len(others), 3, replace=False)]
        texts = [f"{s.qualitative} {s.quantitative}" for s in picks]
        own = f"{sample.qualitative} {sample.quantitative}"
    else:
        # only datasets with as many series: a pair's "These two time series ..." among
        # single series' "This time series ..." would name the answer by its subject alone
        width = len(sample.columns)
        datasets = [
            d
            for d in pool
            if d != sample.dataset
            and d not in g.POSITION
            and pool[d]
            and len(pool[d][0].columns) == width
        ]
        if len(datasets) < 3:
            return None, None
        chosen = [datasets[i] for i in rng.choice(len(datasets), 3, replace=False)]
        texts = [pool[d][int(rng.integers(0, len(pool[d])))].qualitative for d in chosen]
        own = sample.qualitative
    slot = int(rng.integers(0, 4))
    texts.insert(slot, own)
    return texts, LETTERS[slot]
