"""The closed-answer items other than the numeric what-ifs do not give the key away through
their options alone (what a model sees without the series).

``tests/unit/test_s44_rsn_option_leak.py`` covers ``counterfactual_event`` /
``counterfactual_scale``. Here: ``counterfactual_trend`` (every option must be the key about
equally often: an option that is never right lets a model without the series strike it and
beat chance), and a cheap regression over the items an option-only rule could most easily
read: etiological captions and ``which_change`` what-ifs (key position, longest / shortest
option, most words shared with the question, the context or the other options, the caption
whose visible features the other captions share least). Bounds: chance (1 / options) plus 4
binomial standard errors, computed here. ``difference`` items: the answers' shares and a
prior learned from the question and context (the question used to name the what-if, which
fixed the bucket). A perturbed twin's key and near copy are, by the paper's design, the two
options most alike; which of the two is right must not follow from their wording (it did:
the near copy always had the altered wording, the key the plain one).
"""

from __future__ import annotations

import collections
import functools
import math
import re

import numpy as np
import pytest

from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning import scenarios as sc

N = 300


def _bound(n: int, k: int) -> float:
    """Hits an option-only rule may score on n items of k options: chance + 4 SE."""
    p = 1 / k
    return p * n + 4 * math.sqrt(n * p * (1 - p))


# --------------------------------------------------------------------------- counterfactual_trend


@functools.cache
def _trend_items() -> tuple:
    """One ``counterfactual_trend`` item per seed, each on a scenario of its own."""
    items = []
    for seed in range(N):
        scenario = sm.draw_scenario(np.random.default_rng(seed), seed % len(sm.SUBJECTS), 100)
        item = sc.single_series_item(
            np.random.default_rng(10_000 + seed), scenario, "counterfactual_trend"
        )
        if item is not None:
            items.append((seed, item))
    assert len(items) >= 0.6 * N
    return tuple(items)


def test_every_trend_option_is_the_key_about_equally_often():
    """Per option text: the items it is the key of within chance +- 4 SE. An option never
    right (the old "exactly zero", or "about the same" when flat trends were left out) fails."""
    items = [item for _, item in _trend_items()]
    texts = sorted({o for item in items for o in item.options})
    k = len(items[0].options)
    assert all(len(item.options) == k for item in items)
    keys = collections.Counter(item.options[item.answer_index] for item in items)
    n = len(items)
    se = math.sqrt(n * (1 / k) * (1 - 1 / k))
    for text in texts:
        assert abs(keys[text] - n / k) <= 4 * se, (text, keys, n)


def test_a_learned_option_text_prior_does_not_beat_chance_on_trend_items():
    """Learn each option text's share of being right on even seeds; on odd seeds pick the
    option with the highest share. Without the series this is all a model could exploit."""
    off, right = collections.Counter(), collections.Counter()
    for seed, item in _trend_items():
        if seed % 2 == 0:
            for i, text in enumerate(item.options):
                off[text] += 1
                right[text] += i == item.answer_index
    test = [item for seed, item in _trend_items() if seed % 2 == 1]
    hits = sum(
        int(np.argmax([(right[o] + 0.5) / (off[o] + 1) for o in item.options])) == item.answer_index
        for item in test
    )
    assert hits <= _bound(len(test), len(test[0].options)), (hits, len(test))


def test_the_trend_key_follows_the_trend_direction_and_its_position_is_uniform():
    """Without the trend the last values sit at base x (1 + cycle, event) instead of
    base x (1 + trend) x (...): lower for a rising trend, higher for a falling one, the same
    for none."""
    positions = collections.Counter()
    items = [item for _, item in _trend_items()]
    for item in items:
        trend = item.params["scenario"]["trend"]
        expected = "lower" if trend > 0 else "higher" if trend < 0 else "about the same"
        assert item.options[item.answer_index].startswith(expected)
        positions[item.answer_index] += 1
    k = len(items[0].options)
    se = math.sqrt(len(items) * (1 / k) * (1 - 1 / k))
    assert all(abs(positions[i] - len(items) / k) <= 4 * se for i in range(k)), positions


# --------------------------------------------------------------------------- default generator

W = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return set(W.findall(text.lower()))


@functools.cache
def _generated() -> dict:
    """Items of the default configuration over 12 seeds, by task and category."""
    out = collections.defaultdict(list)
    for seed in range(12):
        for item in sc.generate_items(sc.GeneratorConfig(seed=500 + seed)):
            out[(item.task, item.category if item.task != "etiological" else "")].append(item)
    return out


def _features(caption: str) -> tuple:
    text = caption.lower()
    trend = "rises" in text, "falls" in text
    return trend, "no regular cycle" in text, "spike" in text, "no outside event" in text


def _odd_one_out(item) -> int:
    f = [_features(o) for o in item.options]
    shared = [
        sum(sum(a == b for a, b in zip(f[i], f[j], strict=True)) for j in range(len(f)) if j != i)
        for i in range(len(f))
    ]
    return int(np.argmin(shared))


RULES = {
    "first": lambda item: 0,
    "last": lambda item: len(item.options) - 1,
    "longest": lambda item: int(np.argmax([len(o) for o in item.options])),
    "shortest": lambda item: int(np.argmin([len(o) for o in item.options])),
    "most words shared with the question": lambda item: int(
        np.argmax([len(_words(o) & _words(item.question)) for o in item.options])
    ),
    "most words shared with the context": lambda item: int(
        np.argmax([len(_words(o) & _words(item.context or "")) for o in item.options])
    ),
    "most words shared with the other options": lambda item: int(
        np.argmax(
            [sum(len(_words(o) & _words(p)) for p in item.options if p != o) for o in item.options]
        )
    ),
    "fewest words shared with the other options": lambda item: int(
        np.argmin(
            [sum(len(_words(o) & _words(p)) for p in item.options if p != o) for o in item.options]
        )
    ),
}


@pytest.mark.parametrize("kind", [("etiological", ""), ("qa_two", "which_change")])
@pytest.mark.parametrize("rule", sorted(RULES))
def test_no_option_only_rule_beats_chance_on_captions_and_what_ifs(kind, rule):
    items = _generated()[kind]
    assert len(items) >= 100
    hits = sum(RULES[rule](item) == item.answer_index for item in items)
    assert hits <= _bound(len(items), 4), (rule, hits, len(items))


def test_the_odd_caption_out_is_not_the_true_one():
    """Distractors are redrawn when equivalent to the truth; that must not leave the true
    caption the one whose visible features the others share least."""
    items = _generated()[("etiological", "")]
    hits = sum(_odd_one_out(item) == item.answer_index for item in items)
    assert hits <= _bound(len(items), 4), (hits, len(items))


# --------------------------------------------------------------------------- known leaks


def _wording(option: str) -> str:
    """A what-if's wording with the scenario's own nouns taken out."""
    text = re.sub(r"(the effect of ).*?( had been)", r"\1EVENT\2", option)
    text = re.sub(r"What if .*? had not happened", "What if EVENT had not happened", text)
    return re.sub(r"\b(a|no|the) [\w-]+ cycle", r"\1 CYCLE cycle", text)


def _halves(kind: tuple, seeds_of: dict) -> tuple[list, list]:
    items = _generated()[kind]
    return (
        [i for i in items if seeds_of[i.item_id] % 2 == 0],
        [i for i in items if seeds_of[i.item_id] % 2 == 1],
    )


@functools.cache
def _seeds_of() -> dict:
    return {
        item.item_id: seed
        for seed in range(12)
        for item in sc.generate_items(sc.GeneratorConfig(seed=500 + seed))
    }


@functools.cache
def _difference_items() -> tuple:
    """One ``difference`` item per seed (where one applies), each on a scenario of its own."""
    items = []
    for seed in range(N):
        scenario = sm.draw_scenario(np.random.default_rng(seed), seed % len(sm.SUBJECTS), 100)
        item = sc.two_series_item(np.random.default_rng(20_000 + seed), scenario, "difference")
        if item is not None:
            items.append((seed, item))
    assert len(items) >= 0.6 * N
    return tuple(items)


def test_each_difference_answer_is_the_key_about_equally_often():
    """The four answers' shares of the keys within chance +- 4 SE: when some bucket was
    right in 37 % of the items (as before the key's bucket was drawn first), a model
    without the series could answer it every time."""
    items = [item for _, item in _difference_items()]
    keys = collections.Counter(item.options[item.answer_index] for item in items)
    n = len(items)
    se = math.sqrt(n * 0.25 * 0.75)
    assert all(abs(keys[text] - n / 4) <= 4 * se for text in sc.DIFFERENCE_OPTIONS), keys


def test_the_question_and_context_of_a_difference_item_do_not_give_the_bucket():
    """Learn, on even seeds, the commonest key for each question wording (the scenario's
    own nouns taken out) and context; on odd seeds answer with it. A question that names
    the what-if fails: a 50% higher level is always "higher by 10% to 60%"."""
    best = collections.defaultdict(collections.Counter)

    def cue(item) -> tuple:
        question = re.sub(r"Over the last \d+ \w+", "Over the last N steps", item.question)
        return _wording(question), "undisturbed" in item.context

    for seed, item in _difference_items():
        if seed % 2 == 0:
            best[cue(item)][item.options[item.answer_index]] += 1
    picked = hits = 0
    for seed, item in _difference_items():
        counts = best.get(cue(item))
        if seed % 2 == 1 and counts:
            picked += 1
            hits += item.options.index(counts.most_common(1)[0][0]) == item.answer_index
    assert picked >= 50
    assert hits <= _bound(picked, 4), (hits, picked)


def test_a_perturbed_twins_near_copy_is_not_told_apart_by_its_wording():
    """The two options sharing the most words are the key and its near copy (Section 5.3's
    design: a model without the series can narrow four options to those two, so a coin
    between them scores about half the twins; docs/suites/reasoning.md). Of the two, pick
    the wording that was right more often on even seeds: that must not beat the coin,
    i.e. it may pick the key in at most half the twins whose key is in the pair, + 4 SE.
    With the near copy always the altered wording it picked the key in every one."""
    train, test = _halves(("qa_perturbed", "which_change"), _seeds_of())
    off, right = collections.Counter(), collections.Counter()
    for item in train:
        for i, option in enumerate(item.options):
            off[_wording(option)] += 1
            right[_wording(option)] += i == item.answer_index

    def most_alike(item) -> tuple[int, int]:
        o = item.options
        pairs = [(i, j) for i in range(len(o)) for j in range(i + 1, len(o))]
        return max(
            pairs,
            key=lambda p: (
                len(_words(o[p[0]]) & _words(o[p[1]])) / len(_words(o[p[0]]) | _words(o[p[1]]))
            ),
        )

    hits = in_pair = 0
    for item in test:
        pair = most_alike(item)
        rate = [
            (right[_wording(item.options[k])] + 0.5) / (off[_wording(item.options[k])] + 1)
            for k in pair
        ]
        hits += pair[int(np.argmax(rate))] == item.answer_index
        in_pair += item.answer_index in pair
    assert in_pair >= 30
    assert hits <= in_pair / 2 + 4 * math.sqrt(in_pair / 4), (hits, in_pair, len(test))
