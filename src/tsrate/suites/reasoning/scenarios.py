"""The offline procedural scenario generator: series, captions and questions written from
the same parameters, so every caption, distractor and answer can be checked.

A :class:`Scenario` is a subject in one of :data:`SUBJECTS`' domains (health, finance,
transport, energy, retail, climate, ...) plus generating parameters: a starting level, a
linear trend (relative change over the series), an optional cycle (relative amplitude,
period from the subject's sampling frequency), an optional outside event (a step up, a
step down, or a three-step spike, at a stated step) and Gaussian noise (3 % of the level).
:func:`clean_series` is the noise-free curve; :func:`observed_series` adds the scenario's
own seeded noise. Steps are numbered from 1 in every text ("day 1" is the first value).

The caption (:func:`caption`) states each parameter in words and numbers. Items:

- etiological: the true caption and three captions of other scenarios, drawn at random as
  the paper does (``distractors="random"``, the default; a caption equivalent to the truth,
  :func:`equivalent_caption`, is redrawn, so the truth explains the series clearly best),
  or, ``distractors="contrastive"``, only captions that differ in a visible feature (trend
  direction, cycle, event) AND explain the series worse: after the best scaling, a
  distractor's clean curve misses the observed series by at least
  :data:`MIN_DISTRACTOR_MISS` (relative RMS) and 2.5 times the true caption's miss
  (:func:`explanation_miss`);
- qa_single: what-if questions (event removed, values scaled, trend removed) whose
  numeric answers are computed from the parameters or the observed values (trend removed:
  lower, higher or about the same, one per trend direction, flat included);
- qa_two: a second series from the same parameters with one change and the same noise
  draw: which what-if produced it, and how its last quarter compares with the first's;
- qa_perturbed: the paper's perturbed twin of each ``which_change`` item (Section 5.3):
  one wrong option replaced by a near copy of the right one with other numbers, which the
  second series refutes (:func:`perturbed_item`);
- forecast: a scenario whose step event falls inside the forecast horizon; the context is
  its caption, so it states the future ("From day 86 on, a promotion doubles the values");
  ``params["context_pieces"]`` also holds its characteristics (:func:`characteristics`,
  words only) and metadata (:func:`metadata`) for the paper's Figure A.5 combinations.

Numeric options (``counterfactual_event`` / ``counterfactual_scale``) are the key and three
distractors on a ladder around it (:func:`option_ladder`: the key's rank drawn uniformly,
neighbours 1.2 to 1.6 times apart), so the options alone do not single out the key and the
right one is unambiguous (at least :data:`MIN_OPTION_GAP` apart, relative). Everything is
seeded: the same configuration gives the same items.

The scenario model (subjects, series, captions, what-ifs) is in
:mod:`tsrate.suites.reasoning.scenario_model`, re-exported here; this module writes the items.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tsrate import TsrateError
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.scenario_model import (
    DOMAINS,
    EVENT_KINDS,
    MIN_DISTRACTOR_MISS,
    MIN_OPTION_GAP,
    NOISE,
    SPIKE_STEPS,
    START_DATE,
    SUBJECTS,
    TRENDS,
    Scenario,
    Subject,
    caption,
    characteristics,
    clean_series,
    draw_scenario,
    event_sentence,
    explanation_miss,
    metadata,
    near_what_ifs,
    noise_draw,
    number_text,
    observed_series,
    scenario_from_dict,
    short_caption,
    timestamp,
    what_ifs,
)

__all__ = [
    "DIFFERENCE_EDGES",
    "DIFFERENCE_LEVELS",
    "DIFFERENCE_OPTIONS",
    "DISTRACTOR_MODES",
    "DOMAINS",
    "EQUIVALENT_MISS_FACTOR",
    "ETIOLOGICAL_QUESTION",
    "EVENT_KINDS",
    "GeneratorConfig",
    "MIN_DISTRACTOR_MISS",
    "MIN_OPTION_GAP",
    "NOISE",
    "OPTION_STEPS",
    "SCALE_FACTORS",
    "SINGLE_CATEGORIES",
    "SPIKE_STEPS",
    "START_DATE",
    "SUBJECTS",
    "Scenario",
    "Subject",
    "TRENDS",
    "TREND_OPTIONS",
    "TWIN_COIN_SEED",
    "TWO_CATEGORIES",
    "caption",
    "characteristics",
    "clean_series",
    "difference_bucket",
    "difference_changes",
    "direct_miss",
    "draw_scenario",
    "equivalent_caption",
    "etiological_item",
    "event_sentence",
    "explanation_miss",
    "forecast_item",
    "generate_items",
    "metadata",
    "near_what_ifs",
    "noise_draw",
    "number_text",
    "observed_series",
    "option_ladder",
    "perturbed_item",
    "scenario_from_dict",
    "short_caption",
    "single_series_item",
    "spaced_options",
    "timestamp",
    "two_series_item",
    "what_ifs",
]


ETIOLOGICAL_QUESTION = "Which description most likely produced this time series?"


def _shuffle(
    rng: np.random.Generator, correct: str, others: list[str]
) -> tuple[tuple[str, ...], int]:
    options = [correct, *others]
    order = rng.permutation(len(options))
    shuffled = tuple(options[i] for i in order)
    return shuffled, int(np.flatnonzero(order == 0)[0])


DISTRACTOR_MODES = ("random", "contrastive")
EQUIVALENT_MISS_FACTOR = 1.5


def equivalent_caption(series: np.ndarray, scenario: Scenario, other: Scenario) -> bool:
    """True when ``other``'s caption could pass for ``scenario``'s on ``series``: the same
    text, the same visible features (:attr:`Scenario.signature`) in the same domain, or a
    clean curve that explains ``series`` within :data:`EQUIVALENT_MISS_FACTOR` times the
    true caption's own miss. Such a distractor would make two options right."""
    if caption(other) == caption(scenario):
        return True
    if other.signature == scenario.signature and other.subject_index == scenario.subject_index:
        return True
    own = explanation_miss(series, scenario)
    return explanation_miss(series, other) <= EQUIVALENT_MISS_FACTOR * max(own, NOISE / 3)


def etiological_item(
    rng: np.random.Generator,
    scenario: Scenario,
    pool: list[Scenario],
    distractors: str = "random",
) -> Item | None:
    """One true caption and three captions of other scenarios from ``pool`` (None if the
    pool has too few).

    ``distractors``: ``random`` (the paper's way: three captions drawn uniformly from the
    rest of the dataset, redrawing any that :func:`equivalent_caption` calls equivalent to
    the truth) or ``contrastive`` (ours: only captions that differ in a visible feature AND
    explain the series measurably worse, :data:`MIN_DISTRACTOR_MISS` and 2.5 times the true
    caption's miss; an easier item)."""
    if distractors not in DISTRACTOR_MODES:
        raise TsrateError(
            f"unknown distractor mode {distractors!r}: choose from {', '.join(DISTRACTOR_MODES)}"
        )
    series = observed_series(scenario)
    own_miss = explanation_miss(series, scenario)
    if distractors == "contrastive":
        candidates = [
            other
            for other in pool
            if other.signature != scenario.signature
            and caption(other) != caption(scenario)
            and explanation_miss(series, other) >= max(MIN_DISTRACTOR_MISS, 2.5 * own_miss)
        ]
        if len(candidates) < 3:
            return None
        chosen = [candidates[i] for i in rng.choice(len(candidates), 3, replace=False)]
    else:
        chosen = []
        texts = {caption(scenario)}
        for i in rng.permutation(len(pool)):  # a uniform draw without replacement
            other = pool[int(i)]
            if caption(other) in texts or equivalent_caption(series, scenario, other):
                continue  # redrawn
            chosen.append(other)
            texts.add(caption(other))
            if len(chosen) == 3:
                break
        if len(chosen) < 3:
            return None
    options, answer = _shuffle(rng, caption(scenario), [caption(c) for c in chosen])
    option_params = [None] * 4
    order = [scenario, *chosen]
    texts = [caption(s) for s in order]
    for position, text in enumerate(options):
        option_params[position] = order[texts.index(text)].to_dict()
    return Item(
        task="etiological",
        category=scenario.subject.domain,
        domain=scenario.subject.domain,
        series=tuple(float(v) for v in series),
        question=ETIOLOGICAL_QUESTION,
        options=options,
        answer_index=answer,
        params={
            "scenario": scenario.to_dict(),
            "option_scenarios": option_params,
            "distractors": distractors,
        },
    )


def spaced_options(correct: float, candidates: list[float], k: int = 3) -> list[float] | None:
    """``k`` candidates (in order) at least :data:`MIN_OPTION_GAP` (relative) from the
    correct value and from each other; None if fewer qualify."""
    chosen: list[float] = []
    for value in candidates:
        if not np.isfinite(value) or value <= 0:
            continue
        if all(
            abs(value - other) / max(abs(other), 1e-9) >= MIN_OPTION_GAP
            for other in [correct, *chosen]
        ):
            chosen.append(value)
        if len(chosen) == k:
            return chosen
    return None


def _about(value: float, unit: str) -> str:
    return f"about {number_text(value)} {unit}"


#: neighbouring numeric options (sorted) differ by a factor drawn log-uniformly from this
#: range: at least 1.2, so still more than :data:`MIN_OPTION_GAP` apart once the texts
#: round them to 3 significant figures
OPTION_STEPS = (1.2, 1.6)


def option_ladder(rng: np.random.Generator, correct: float, k: int = 3) -> list[float]:
    """``k`` distractors for the numeric answer ``correct``: the key's rank among the
    ``k + 1`` options is drawn uniformly (``below`` of them under it), then ``k`` factors
    log-uniform in :data:`OPTION_STEPS`; the first ``below`` step down from the key one
    after another, the rest step up. Every option is a neighbour's multiple by a factor of
    the same distribution wherever the key sits, so the options alone do not single it
    out (no option is a stated factor or a midpoint of others by construction)."""
    below = int(rng.integers(k + 1))
    steps = np.exp(rng.uniform(np.log(OPTION_STEPS[0]), np.log(OPTION_STEPS[1]), k))
    lower = correct / np.cumprod(steps[:below])
    upper = correct * np.cumprod(steps[below:])
    return [float(v) for v in (*lower, *upper)]


def _numeric_item(
    rng: np.random.Generator,
    scenario: Scenario,
    series: np.ndarray,
    category: str,
    question: str,
    correct: float,
    extra: dict,
) -> Item | None:
    # the ladder's own generator, seeded by the scenario and the question (the shared
    # ``rng`` only shuffles, so the items drawn after this one do not change with it);
    # spaced_options drops a ladder that is not positive and finite (no item then)
    ladder_rng = np.random.default_rng(
        [scenario.noise_seed, SINGLE_CATEGORIES.index(category), int(extra.get("factor", 0))]
    )
    others = spaced_options(correct, option_ladder(ladder_rng, correct))
    if others is None:
        return None
    unit = scenario.subject.unit
    options, answer = _shuffle(rng, _about(correct, unit), [_about(v, unit) for v in others])
    value_of = {_about(v, unit): v for v in [correct, *others]}
    return Item(
        task="qa_single",
        category=category,
        domain=scenario.subject.domain,
        series=tuple(float(v) for v in series),
        question=question,
        options=options,
        answer_index=answer,
        context=short_caption(scenario),
        params={
            "scenario": scenario.to_dict(),
            "correct_value": correct,
            # raw values in option order: an encoded prompt writes them on the series' scale
            "option_values": [value_of[text] for text in options],
            **extra,
        },
    )


#: ``counterfactual_trend``'s options: each is the key for one of the three trend directions
#: (drawn uniformly), so no option is a distractor that is never right
TREND_OPTIONS = (
    "lower than observed",
    "higher than observed",
    "about the same as observed",
)
SCALE_FACTORS = (2, 3, 10)


def single_series_item(rng: np.random.Generator, scenario: Scenario, category: str) -> Item | None:
    """A what-if question about one series (None when ``category`` does not apply)."""
    series = observed_series(scenario)
    s = scenario.subject
    if category == "counterfactual_event":
        if scenario.event_kind not in ("step_up", "step_down"):
            return None
        without = clean_series(dataclasses.replace(scenario, event_kind="none", event_step=-1))
        correct = float(without[-1])
        question = (
            f"What if {scenario.event_noun} had not happened? The last value of the series "
            f"({s.frequency} {scenario.length}) would then be:"
        )
        return _numeric_item(rng, scenario, series, category, question, correct, {})
    if category == "counterfactual_scale":
        factor = SCALE_FACTORS[int(rng.integers(len(SCALE_FACTORS)))]
        correct = factor * float(series.max())
        question = (
            f"What if every value had been {factor} times as large? The highest value of the "
            "series would then be:"
        )
        return _numeric_item(rng, scenario, series, category, question, correct, {"factor": factor})
    if category == "counterfactual_trend":
        correct = TREND_OPTIONS[0] if scenario.trend > 0 else TREND_OPTIONS[1]
        if scenario.trend_direction == "flat":  # no trend to take away: the values stay
            correct = TREND_OPTIONS[2]
        others = [o for o in TREND_OPTIONS if o != correct]
        options, answer = _shuffle(rng, correct, others)
        return Item(
            task="qa_single",
            category=category,
            domain=s.domain,
            series=tuple(float(v) for v in series),
            question=(
                "What if the values had had no underlying trend, staying around their starting "
                "level apart from any cycle or event? Compared with what was observed, the "
                "last values would have been:"
            ),
            options=options,
            answer_index=answer,
            context=short_caption(scenario),
            params={"scenario": scenario.to_dict()},
        )
    raise TsrateError(f"unknown single-series question category {category!r}")


SINGLE_CATEGORIES = ("counterfactual_event", "counterfactual_scale", "counterfactual_trend")
TWO_CATEGORIES = ("which_change", "difference")


DIFFERENCE_OPTIONS = (
    "the second series is lower by more than 10%",
    "the two are about the same (within 10%)",
    "the second series is higher by 10% to 60%",
    "the second series is higher by more than 60%",
)
DIFFERENCE_EDGES = (0.9, 1.1, 1.6)


def difference_bucket(ratio: float) -> int | None:
    """Index into :data:`DIFFERENCE_OPTIONS` for a ratio of means (second / first); None
    within 3% of an edge (too close to call)."""
    if any(abs(ratio - edge) / edge < 0.03 for edge in DIFFERENCE_EDGES):
        return None
    return int(np.searchsorted(DIFFERENCE_EDGES, ratio))


#: ``difference``-only what-ifs (its question does not name the change): the level scaled by
#: these factors, so that every answer bucket always has a change that gives it
DIFFERENCE_LEVELS = {"level_lowered": 0.6, "level_doubled": 2.0}


def difference_changes(scenario: Scenario) -> dict[str, Scenario]:
    """The changes a ``difference`` item may show: :func:`what_ifs` and
    :data:`DIFFERENCE_LEVELS`, name -> changed scenario."""
    out = {name: changed for name, (_, changed) in what_ifs(scenario).items()}
    for name, factor in DIFFERENCE_LEVELS.items():
        out[name] = dataclasses.replace(scenario, base=scenario.base * factor)
    return out


def _difference_change(
    rng: np.random.Generator, scenario: Scenario, quarter: int
) -> tuple[str, Scenario, float, int] | None:
    """The key's bucket drawn uniformly, then one of the changes that give it (name,
    changed scenario, ratio of the last ``quarter`` means, bucket); None when none does.
    Drawing the bucket first keeps the keys' shares equal: a bucket cannot be guessed from
    how often it is right."""
    by_bucket: dict[int, list] = {}
    for name, changed in sorted(difference_changes(scenario).items()):
        ratio = float(
            clean_series(changed)[-quarter:].mean() / clean_series(scenario)[-quarter:].mean()
        )
        bucket = difference_bucket(ratio)
        if bucket is not None:
            by_bucket.setdefault(bucket, []).append((name, changed, ratio, bucket))
    fitting = by_bucket.get(int(rng.integers(len(DIFFERENCE_OPTIONS))))
    if not fitting:
        return None
    return fitting[int(rng.integers(len(fitting)))]


def two_series_item(rng: np.random.Generator, scenario: Scenario, category: str) -> Item | None:
    """A question about the series and its what-if variant (same noise draw)."""
    changes = what_ifs(scenario)
    names = sorted(changes)
    name = names[int(rng.integers(len(names)))]
    question_text, changed = changes[name]
    if category == "difference":  # its own draw: the key's bucket first (_difference_change)
        quarter = max(1, scenario.length // 4)
        picked = _difference_change(rng, scenario, quarter)
        if picked is None:
            return None
        name, changed, ratio, bucket = picked
    noise = noise_draw(scenario)
    first = observed_series(scenario, noise)
    second = observed_series(changed, noise)
    base = {
        "task": "qa_two",
        "category": category,
        "domain": scenario.subject.domain,
        "series": tuple(float(v) for v in first),
        "series_b": tuple(float(v) for v in second),
    }
    params = {"scenario": scenario.to_dict(), "change": name, "changed": changed.to_dict()}
    if category == "which_change":
        others = [
            n
            for n in names
            if n != name and explanation_miss(second, changes[n][1]) >= MIN_DISTRACTOR_MISS
        ]
        if len(others) < 3:
            return None
        chosen = [others[i] for i in rng.choice(len(others), 3, replace=False)]
        options, answer = _shuffle(rng, question_text, [changes[n][0] for n in chosen])
        return Item(
            **base,
            question=(
                "The second series shows the same scenario as the first under one what-if "
                "change. Which change produced the second series?"
            ),
            options=options,
            answer_index=answer,
            context=short_caption(scenario),
            params={**params, "option_changes": [name, *chosen]},
        )
    if category == "difference":
        order = rng.permutation(len(DIFFERENCE_OPTIONS))
        options = tuple(DIFFERENCE_OPTIONS[i] for i in order)
        # the change is not named: named, it alone would give the answer ("50% higher")
        return Item(
            **base,
            question=(
                "The second series shows the same scenario as the first under one what-if "
                f"change. Over the last {quarter} {scenario.subject.frequency}s, how does the "
                "average of the second series compare with that of the first?"
            ),
            options=options,
            answer_index=int(np.flatnonzero(order == bucket)[0]),
            context=short_caption(scenario),
            params={**params, "ratio": ratio},
        )
    raise TsrateError(f"unknown two-series question category {category!r}")


def direct_miss(series: np.ndarray, scenario: Scenario) -> float:
    """How badly ``scenario``'s clean curve, as it is (no rescaling: a what-if that changes
    the level must show the level), misses ``series``: relative RMS."""
    series = np.asarray(series, dtype=float)
    curve = clean_series(dataclasses.replace(scenario, length=len(series)))
    return float(np.sqrt(np.mean((series - curve) ** 2)) / np.sqrt(np.mean(series**2)))


#: the seed of a twin's coin (which wording the series shows), mixed with the scenario's own
TWIN_COIN_SEED = 503


def perturbed_item(rng: np.random.Generator, original: Item) -> Item | None:
    """The paper's perturbed twin (Section 5.3) of a ``which_change`` item: a randomly
    chosen wrong option is replaced, in place, by a near copy of the right one with other
    numbers (:func:`near_what_ifs`); the right option keeps its position.

    Which of the two wordings is the truth is a coin seeded by the scenario: on one side
    (``near_is_key`` false) the twin shows the original (the plain what-if is right, the
    near copy the lure); on the other the second series is drawn again, same noise, from
    the near what-if, which becomes the right option, and the plain wording the lure. Either wording is the key in half the
    twins, so the options cannot tell which of the pair is right. None (whatever the coin)
    when the change has no near copy, the near copy is already an option, either series
    fails to refute the other wording (:func:`direct_miss` below
    :data:`MIN_DISTRACTOR_MISS`) or a wrong option (:func:`explanation_miss`), or the near
    what-if's series is not positive throughout."""
    if original.task != "qa_two" or original.category != "which_change":
        return None
    scenario = scenario_from_dict(original.params["scenario"])
    name = original.params["change"]
    near = near_what_ifs(scenario).get(name)
    if near is None:
        return None
    text, near_scenario = near
    second = np.asarray(original.series_b, dtype=float)
    if direct_miss(second, near_scenario) < MIN_DISTRACTOR_MISS or text in original.options:
        return None
    wrong = [i for i in range(len(original.options)) if i != original.answer_index]
    position = wrong[int(rng.integers(len(wrong)))]
    plain_text, plain_scenario = what_ifs(scenario)[name]
    near_second = observed_series(near_scenario, noise_draw(scenario))
    others = [n for n in original.params["option_changes"][1:] if n != name]
    if (
        direct_miss(near_second, plain_scenario) < MIN_DISTRACTOR_MISS
        or near_second.min() <= 0
        or any(
            explanation_miss(near_second, what_ifs(scenario)[n][1]) < MIN_DISTRACTOR_MISS
            for n in others
        )
    ):
        return None
    coin = np.random.default_rng((scenario.noise_seed, TWIN_COIN_SEED)).random() < 0.5
    options = list(original.options)
    replaced = options[position]
    if coin:  # the near what-if is the truth
        key_text, key_scenario, lure_text, lure_scenario = (
            text,
            near_scenario,
            plain_text,
            plain_scenario,
        )
        series_b = tuple(float(v) for v in near_second)
    else:
        key_text, key_scenario, lure_text, lure_scenario = (
            plain_text,
            plain_scenario,
            text,
            near_scenario,
        )
        series_b = original.series_b
    options[original.answer_index] = key_text
    options[position] = lure_text
    return dataclasses.replace(
        original,
        task="qa_perturbed",
        options=tuple(options),
        series_b=series_b,
        params={
            **original.params,
            "changed": key_scenario.to_dict(),
            "original_item_id": original.item_id,
            "perturbed_index": position,
            "replaced_option": replaced,
            "near_change": name,
            "near_scenario": lure_scenario.to_dict(),
            "near_is_key": bool(coin),
        },
    )


def forecast_item(
    rng: np.random.Generator, subject_index: int, length: int, context_share: float
) -> Item:
    """A series whose step event falls in the horizon; the context (its caption) says so."""
    history = int(round(length * context_share))
    horizon = length - history
    kind = ("step_up", "step_down")[int(rng.integers(2))]
    window = ((history + 1) / length, (history + max(2, horizon // 2)) / length)
    scenario = draw_scenario(rng, subject_index, length, kind, window)
    series = observed_series(scenario)
    return Item(
        task="forecast",
        category=scenario.subject.domain,
        domain=scenario.subject.domain,
        series=tuple(float(v) for v in series[:history]),
        future=tuple(float(v) for v in series[history:]),
        context=caption(scenario),
        params={
            "scenario": scenario.to_dict(),
            "event_step": scenario.event_step - history,  # 0-based step of the horizon
            "event_effect": scenario.event_effect,
            "context_pieces": {
                "description": caption(scenario),
                "characteristics": characteristics(scenario),
                "metadata": metadata(scenario),
            },
        },
    )


@dataclasses.dataclass(frozen=True)
class GeneratorConfig:
    """Sizes of the procedural dataset. ``scenarios``: series for the etiological and
    question items (one etiological, one single-series and one two-series item each, where
    the drawn category applies); ``forecasts``: forecasting items."""

    seed: int = 2024
    scenarios: int = 24
    forecasts: int = 12
    length: int = 100
    context_share: float = 0.8
    distractors: str = "random"
    perturbed: bool = True

    def __post_init__(self) -> None:
        if self.distractors not in DISTRACTOR_MODES:
            raise TsrateError(
                f"distractors must be one of {', '.join(DISTRACTOR_MODES)}, "
                f"got {self.distractors!r}"
            )
        if self.scenarios < 4:
            raise TsrateError("the generator needs at least 4 scenarios (an item has 4 captions)")
        if self.length < 30:
            raise TsrateError("series must have at least 30 steps")
        if not 0.5 <= self.context_share < 0.95:
            raise TsrateError("context_share must be in [0.5, 0.95)")


def generate_items(config: GeneratorConfig = GeneratorConfig()) -> list[Item]:
    """The procedural dataset: etiological, qa_single, qa_two, qa_perturbed (the twins of
    which_change items, when ``config.perturbed``) and forecast items."""
    rng = np.random.default_rng(config.seed)
    scenarios = [
        draw_scenario(rng, i % len(SUBJECTS), config.length) for i in range(config.scenarios)
    ]
    items: list[Item] = []
    for index, scenario in enumerate(scenarios):
        item = etiological_item(
            rng, scenario, [s for s in scenarios if s is not scenario], config.distractors
        )
        if item is not None:
            items.append(item)
        for offset in range(len(SINGLE_CATEGORIES)):
            category = SINGLE_CATEGORIES[(index + offset) % len(SINGLE_CATEGORIES)]
            item = single_series_item(rng, scenario, category)
            if item is not None:
                items.append(item)
                break
        for offset in range(len(TWO_CATEGORIES)):
            category = TWO_CATEGORIES[(index + offset) % len(TWO_CATEGORIES)]
            item = two_series_item(rng, scenario, category)
            if item is not None:
                items.append(item)
                twin = perturbed_item(rng, item) if config.perturbed else None
                if twin is not None:
                    items.append(twin)
                break
    for index in range(config.forecasts):
        items.append(forecast_item(rng, index % len(SUBJECTS), config.length, config.context_share))
    return items
