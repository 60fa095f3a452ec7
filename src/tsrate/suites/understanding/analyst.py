"""Offline reference answerers, so the default run rates something without a language model.

Both answer the very prompts a language model gets and reply in text, which the suite
parses with the same strict parser. They read the series back OUT OF THE PROMPT TEXT (the
block between triple backticks, parsed with :func:`.formats.parse_formatted` for the
prompt's format) and the question and options from the prompt text; nothing else.

* :class:`StatisticalAnalyst` (``system_id`` ``und_analyst``) answers with standard tests:
  trend = OLS regression (R^2 >= 0.5, p < 0.001; sign of the slope); seasonality =
  periodogram of the detrended series (the peak's share of spectral power, peaks per half
  for shifting periods, amplitude per half, a second peak for multiple seasonality);
  anomalies = robust z-scores against a rolling median (|z| > 6), frozen runs, level
  persistence; structural breaks = a single-changepoint Gaussian likelihood-ratio scan
  (mean and variance) with per-segment ADF, trend and skewness checks; volatility = Engle's
  ARCH LM test on the differences (statsmodels ``het_arch``), variance ratio of the halves,
  the asymmetry of |change| after falls vs rises; stationarity = ADF p < 0.05 and KPSS
  p > 0.05 (statsmodels); fat tails = excess kurtosis of the detrended series > 1.5;
  correlation = Pearson r (|r| >= 0.3); cross-correlation = the lag (-8..8) of the largest
  |cross-correlation|; dynamic correlation = |r| of the halves differing by > 0.4.
  Retrieval and min/max are looked up in the table it read; intra-dataset matching counts
  the description's dates and values that agree with the series; cross-dataset matching
  scores each description's keywords against the features it detects.
* :class:`RandomAnswerer` (``und_random``): a seeded uniform choice among the admissible
  answers (yes/no, the listed options, a random row of the series for numeric questions).

Chain-of-thought prompts (``prompting`` = ``cot``): both read the same series and question
(the chain-of-thought instruction follows the question and is not read) and reply in the
asked form: one line of reasoning, then ``Answer: <the same answer>`` (:func:`cot_reply`),
so the chain-of-thought parser is exercised end to end offline.
"""

from __future__ import annotations

import hashlib
import math
import re
import warnings

import numpy as np
from scipy import signal, stats

from tsrate import TsrateError
from tsrate.suites.understanding.formats import number, parse_formatted
from tsrate.suites.understanding.tasks import DETECTIONS, LETTERS, Prompt
from tsrate.systems.base import Availability

#: v5, random v2: numeric answers printed at the prompt's decimals, as the series was shown
#: (``:g`` kept 6 significant digits: a value above 1,000 at 3 decimals came back rounded)
ANALYST_VERSION = 5
RANDOM_VERSION = 2


def series_in(prompt_text: str, fmt: str):
    """(dates, columns) of the series between the prompt's triple backticks."""
    match = re.search(r"```\n(.*?)```", prompt_text, re.DOTALL)
    if not match:
        raise TsrateError("the prompt holds no series between triple backticks")
    return parse_formatted(fmt, match.group(1))


def cot_reply(reasoning: str, answer: str) -> str:
    """A chain-of-thought reply: one reasoning line, then the final ``Answer:`` line."""
    return f"{reasoning}\nAnswer: {answer}"


def _question(prompt_text: str) -> str:
    match = re.search(r"^Question: (.*)$", prompt_text, re.MULTILINE)
    return match.group(1) if match else ""


def _class_options(prompt_text: str) -> list[str]:
    return re.findall(r"^- ([a-z_]+): ", prompt_text, re.MULTILINE)


def _letter_options(prompt_text: str) -> dict[str, str]:
    return dict(re.findall(r"^([ABCD])\. (.*)$", prompt_text, re.MULTILINE))


# --------------------------------------------------------------------------------------
# Univariate and bivariate analyses (pure functions of arrays)
# --------------------------------------------------------------------------------------


def trend_fit(x: np.ndarray) -> dict:
    t = np.arange(len(x), dtype=float)
    fit = stats.linregress(t, x)
    return {"slope": float(fit.slope), "r2": float(fit.rvalue**2), "p": float(fit.pvalue)}


def has_trend(x: np.ndarray) -> bool:
    fit = trend_fit(x)
    return fit["r2"] >= 0.5 and fit["p"] < 1e-3


def _detrended(x: np.ndarray) -> np.ndarray:
    t = np.arange(len(x), dtype=float)
    slope, intercept = np.polyfit(t, x, 1)
    return x - (slope * t + intercept)


def periodogram_peaks(x: np.ndarray) -> list[tuple[float, float]]:
    """(period, share of power) of the spectral peaks of the detrended series, largest first
    (periods from 2.5 days to half the length)."""
    y = _detrended(np.asarray(x, dtype=float))
    freqs, power = signal.periodogram(y, detrend=False)
    keep = (freqs > 0) & (freqs <= 1 / 2.5) & (freqs >= 2.0 / len(x))
    if not keep.any() or power[freqs > 0].sum() <= 0:
        return []
    total = power[freqs > 0].sum()
    peaks, _ = signal.find_peaks(np.concatenate([[0], power, [0]]))
    peaks = peaks - 1
    peaks = [p for p in peaks if keep[p]]
    out = sorted(((1 / freqs[p], power[p] / total) for p in peaks), key=lambda r: -r[1])
    return [(float(a), float(b)) for a, b in out]


def seasonal_strength(x: np.ndarray) -> float:
    peaks = periodogram_peaks(x)
    return peaks[0][1] if peaks else 0.0


def has_seasonality(x: np.ndarray) -> bool:
    return seasonal_strength(x) >= 0.2


def seasonality_kind(x: np.ndarray) -> str:
    peaks = periodogram_peaks(x)
    if len(peaks) >= 2:
        (p1, s1), (p2, s2) = peaks[0], peaks[1]
        if s2 >= 0.25 * s1 and max(p1, p2) / min(p1, p2) > 2.5:
            return "multiple"
    half = len(x) // 2
    first, second = periodogram_peaks(x[:half]), periodogram_peaks(x[half:])
    if first and second:
        ratio = second[0][0] / first[0][0]
        if (ratio > 1.2 or ratio < 1 / 1.2) and len(x) >= 60:
            return "shifting"
    y = _detrended(x)
    amplitude_ratio = np.std(y[half:]) / max(np.std(y[:half]), 1e-9)
    if amplitude_ratio > 1.6 or amplitude_ratio < 1 / 1.6:
        return "varying_amplitude"
    return "fixed"


def _robust_z(x: np.ndarray, window: int = 21) -> np.ndarray:
    import pandas as pd

    median = pd.Series(x).rolling(window, center=True, min_periods=1).median().to_numpy()
    residual = x - median
    mad = np.median(np.abs(np.diff(x))) / (0.6745 * math.sqrt(2))  # noise sd from changes
    return residual / max(mad, 1e-9)


def _frozen_run(x: np.ndarray) -> int:
    longest = current = 0
    for d in np.diff(x):
        current = current + 1 if d == 0 else 0
        longest = max(longest, current)
    return longest + 1 if longest else 0


def _clusters(indices: np.ndarray) -> list[list[int]]:
    out: list[list[int]] = []
    for i in indices:
        if out and i - out[-1][-1] <= 1:
            out[-1].append(int(i))
        else:
            out.append([int(i)])
    return out


def _step_beats_line(x: np.ndarray) -> bool:
    """The best single step (two means, split anywhere) leaves under half the squared
    residuals of the least-squares line."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n < 4:
        return False
    t = np.arange(n, dtype=float)
    slope, intercept = np.polyfit(t, x, 1)
    line = float(np.sum((x - (slope * t + intercept)) ** 2))
    csum, csq = np.cumsum(x), np.cumsum(x * x)
    k = np.arange(1, n)  # the first segment is x[:k]
    left = csq[k - 1] - csum[k - 1] ** 2 / k
    right = (csq[-1] - csq[k - 1]) - (csum[-1] - csum[k - 1]) ** 2 / (n - k)
    return float(np.min(left + right)) < 0.5 * line


def anomaly_kind(x: np.ndarray) -> str:
    """single/double/triple_spike, step_spike, level_shift, temporal_disruption or none."""
    if _frozen_run(x) >= 5:
        return "temporal_disruption"
    noise = np.median(np.abs(np.diff(x))) / (0.6745 * math.sqrt(2))
    n = len(x)
    edge = max(3, n // 10)
    shift = np.median(x[-edge:]) - np.median(x[:edge])
    z = _robust_z(x)
    clusters = _clusters(np.flatnonzero(np.abs(z) > 6))
    if abs(shift) > 5 * max(noise, 1e-9) and not has_trend(x):
        return "level_shift"
    # a straight line fitted to a jump half-way along has a high R^2 too: a jump that one
    # step fits far better than a line is a level shift, not a trend
    if abs(shift) > 5 * max(noise, 1e-9) and _step_beats_line(x):
        return "level_shift"
    if not clusters:
        return "none"
    if any(len(c) >= 4 for c in clusters):
        return "step_spike"
    # double / triple spikes are 2 / 3 anomalies on consecutive days (Appendix B): read the
    # number of spike days, whether they form one run or lie apart
    days = sum(len(c) for c in clusters)
    return {1: "single_spike", 2: "double_spike"}.get(days, "triple_spike")


def changepoint(x: np.ndarray) -> tuple[int, float]:
    """The single changepoint (mean and variance, Gaussian likelihood ratio) and its LR."""
    n = len(x)
    best_k, best = 0, 0.0
    total = n * math.log(max(np.var(x), 1e-12))
    for k in range(max(5, int(0.15 * n)), min(n - 5, int(0.85 * n)) + 1):
        a, b = x[:k], x[k:]
        lr = total - k * math.log(max(np.var(a), 1e-12)) - (n - k) * math.log(max(np.var(b), 1e-12))
        if lr > best:
            best_k, best = k, lr
    return best_k, best


def _adf_p(x: np.ndarray) -> float:
    from statsmodels.tsa.stattools import adfuller

    if len(x) < 12 or np.ptp(x) == 0:
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(adfuller(x, autolag="AIC")[1])


def _kpss_p(x: np.ndarray) -> float:
    from statsmodels.tsa.stattools import kpss

    if len(x) < 12 or np.ptp(x) == 0:
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(kpss(x, regression="c", nlags="auto")[1])


def is_stationary(x: np.ndarray) -> bool:
    return _adf_p(x) < 0.05 and _kpss_p(x) > 0.05


def has_break(x: np.ndarray) -> bool:
    _, lr = changepoint(x)
    return lr > 25


def break_kind(x: np.ndarray) -> str:
    k, _ = changepoint(x)
    if not has_break(x):
        return "none"
    a, b = x[:k], x[k:]
    regime = (
        is_stationary(a) != is_stationary(b)
        or abs(stats.skew(a) - stats.skew(b)) > 1.0
        or has_trend(a) != has_trend(b)
    )
    return "regime_shift" if regime else "parameter_shift"


def arch_p(x: np.ndarray) -> float:
    """Engle's ARCH LM p-value of the differences (5 lags)."""
    from statsmodels.stats.diagnostic import het_arch

    d = np.diff(x)
    d = d - d.mean()
    if len(d) < 20 or np.ptp(d) == 0:
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(het_arch(d, nlags=5)[1])


def volatility_kind(x: np.ndarray) -> str:
    d = np.diff(x)
    if len(d) > 2 and np.std(np.diff(d)) < 0.02:  # steady steps (printing noise only)
        return "none"
    half = len(d) // 2
    ratio = np.var(d[half:]) / max(np.var(d[:half]), 1e-12)
    trend_in_size = stats.spearmanr(np.arange(len(d)), np.abs(d))[0]
    if ratio > 2.5 and trend_in_size > 0.25:
        return "increasing"
    after_fall = np.abs(d[1:][d[:-1] < 0])
    after_rise = np.abs(d[1:][d[:-1] >= 0])
    if len(after_fall) > 3 and len(after_rise) > 3:
        if after_fall.mean() > 2.0 * after_rise.mean():
            return "leverage"
    if arch_p(x) < 0.05:
        return "clustered"
    return "constant"


def excess_kurtosis(x: np.ndarray) -> float:
    return float(stats.kurtosis(_detrended(np.asarray(x, dtype=float))))


def has_fat_tails(x: np.ndarray) -> bool:
    return excess_kurtosis(x) > 1.5


def statistical_kind(x: np.ndarray) -> str:
    if is_stationary(x):
        return "fat_tailed" if has_fat_tails(x) else "stationary"
    seasonal, trending = has_seasonality(x), trend_fit(x)["r2"] >= 0.3
    if seasonal and trending:
        return "trend_and_seasonality"
    if seasonal:
        return "seasonal"
    if trending:
        return "changing_mean"
    return "changing_variance"


def cross_lag(a: np.ndarray, b: np.ndarray, max_lag: int = 8) -> tuple[int, float]:
    """The lag L (b follows a by L days; negative = a follows b) of the largest |corr|."""
    best = (0, 0.0)
    for lag in range(-max_lag, max_lag + 1):
        if lag >= 0:
            u, v = a[: len(a) - lag], b[lag:]
        else:
            u, v = a[-lag:], b[: len(b) + lag]
        if len(u) < 10:
            continue
        r = float(np.corrcoef(u, v)[0, 1])
        if abs(r) > abs(best[1]) + 1e-12:
            best = (lag, r)
    return best


def half_correlations(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    half = len(a) // 2
    return (
        float(np.corrcoef(a[:half], b[:half])[0, 1]),
        float(np.corrcoef(a[half:], b[half:])[0, 1]),
    )


# --------------------------------------------------------------------------------------
# Answering prompts
# --------------------------------------------------------------------------------------

_KEYWORDS = {
    "trend": ("trend", "rises", "falls"),
    "seasonality": ("season", "cycle"),
    "anomalies": ("spike", "anomal", "level shift", "freezes", "interrupted", "outlier"),
    "structural_breaks": ("structural break",),
    "volatility": ("volatil",),
    "fat_tails": ("fat-tailed",),
    "multivariate": ("two time series",),
}


class StatisticalAnalyst:
    """Answers every task with standard statistics (see the module docstring)."""

    system_id = "und_analyst"

    def fingerprint(self) -> str:
        return f"und_analyst-v{ANALYST_VERSION}"

    def availability(self) -> Availability:
        return Availability(True, "")

    def _feature_flags(self, columns: dict[str, list[float]]) -> dict[str, bool]:
        if len(columns) > 1:
            return {"multivariate": True}
        x = np.asarray(next(iter(columns.values())), dtype=float)
        return {
            "multivariate": False,
            "trend": has_trend(x),
            "seasonality": has_seasonality(x),
            "anomalies": anomaly_kind(x) != "none",
            "structural_breaks": has_break(x),
            "volatility": volatility_kind(x) not in ("constant", "none"),
            "fat_tails": has_fat_tails(x),
        }

    def answer(self, prompt: Prompt) -> str:
        reply = self._answer(prompt)
        if prompt.prompting == "cot":
            n = len(series_in(prompt.text, prompt.format)[0])
            return cot_reply(
                f"I read the {n} days of the series from the {prompt.format} block and "
                f"applied the standard statistics to the {prompt.task} question.",
                reply,
            )
        return reply

    def _answer(self, prompt: Prompt) -> str:
        text = prompt.text
        dates, columns = series_in(text, prompt.format)
        names = list(columns)
        x = np.asarray(columns[names[0]], dtype=float)
        task = prompt.task
        if task == "search":
            match = re.search(r"Does the value (-?\d+(?:\.\d+)?) appear", text)
            if not match:
                raise TsrateError("und_analyst: the search prompt names no value")
            wanted = float(match.group(1))
            found = any(
                np.any(np.abs(np.asarray(v, dtype=float) - wanted) < 1e-9) for v in columns.values()
            )
            return "yes" if found else "no"
        if task == "detection":
            question = _question(text)
            feature = next(
                (d.feature for ds in DETECTIONS.values() for d in ds if d.question == question),
                None,
            )
            if feature is None:
                raise TsrateError(f"und_analyst: unknown detection question {question!r}")
            return "yes" if self._detect(feature, columns) else "no"
        if task == "classification":
            labels = _class_options(text)
            label = self._classify(prompt.dataset, columns)
            if label not in labels:
                return "none of these"  # honest: the analyst's finding is not an option
            return label
        if task == "retrieval":
            asked = re.search(r"on (\d{4}-\d{2}-\d{2})\?", _question(text))
            if not asked:
                raise TsrateError("und_analyst: no date in the retrieval question")
            day = asked.group(1)
            for d, v in zip(dates, x, strict=True):
                if str(d) == day:
                    return number(v, prompt.decimals)
            return "the date is not in the series"
        if task in ("arithmetic_min", "arithmetic_max"):
            i = int(np.argmin(x) if "minimum" in _question(text) else np.argmax(x))
            return f"{number(x[i], prompt.decimals)} on {dates[i]}"
        if task == "matching_intra":
            return self._match_numbers(dates, columns, _letter_options(text))
        if task == "matching_cross":
            return self._match_keywords(self._feature_flags(columns), _letter_options(text))
        raise TsrateError(f"und_analyst: unknown task {task!r}")

    def _detect(self, feature: str, columns) -> bool:
        values = [np.asarray(v, dtype=float) for v in columns.values()]
        x = values[0]
        if feature == "trend":
            return has_trend(x)
        if feature == "seasonality":
            return has_seasonality(x)
        if feature == "anomalies":
            return anomaly_kind(x) != "none"
        if feature == "structural_breaks":
            return has_break(x)
        if feature == "volatility":
            return volatility_kind(x) not in ("constant", "none")
        if feature == "fat_tails":
            return has_fat_tails(x)
        if feature == "stationarity":
            return is_stationary(x)
        a, b = values[0], values[1]
        if feature == "correlation":
            return abs(np.corrcoef(a, b)[0, 1]) >= 0.3
        if feature == "cross_correlation":
            return cross_lag(a, b)[0] != 0
        if feature == "dynamic_correlation":
            r1, r2 = half_correlations(a, b)
            return abs(abs(r1) - abs(r2)) > 0.4
        raise TsrateError(f"und_analyst: unknown feature {feature!r}")

    def _classify(self, dataset: str, columns) -> str:
        values = [np.asarray(v, dtype=float) for v in columns.values()]
        x = values[0]
        if dataset == "trend":
            return "up" if trend_fit(x)["slope"] > 0 else "down"
        if dataset == "seasonality":
            return seasonality_kind(x)
        if dataset == "anomalies":
            return anomaly_kind(x)
        if dataset == "structural_breaks":
            return break_kind(x)
        if dataset == "volatility":
            return volatility_kind(x)
        if dataset == "statistical_properties":
            return statistical_kind(x)
        a, b = values[0], values[1]
        if dataset == "correlation":
            return "positive" if np.corrcoef(a, b)[0, 1] > 0 else "negative"
        if dataset == "cross_correlation":
            lag, r = cross_lag(a, b)
            return ("positive" if r > 0 else "negative") + ("_lagged" if lag else "_direct")
        if dataset == "dynamic_correlation":
            r1, r2 = half_correlations(a, b)
            return "correlated_first_half" if abs(r1) > abs(r2) else "correlated_second_half"
        raise TsrateError(f"und_analyst: no classification for dataset {dataset!r}")

    @staticmethod
    def _match_numbers(dates, columns, options: dict[str, str]) -> str:
        facts = {str(dates[0]), str(dates[-1])}
        for values in columns.values():
            v = np.asarray(values, dtype=float)
            facts |= {
                f"{v.min():.2f}",
                f"{v.max():.2f}",
                str(dates[int(np.argmin(v))]),
                str(dates[int(np.argmax(v))]),
            }
        best = max(options, key=lambda letter: sum(f in options[letter] for f in facts))
        return best

    @staticmethod
    def _match_keywords(flags: dict[str, bool], options: dict[str, str]) -> str:
        def score(description: str) -> int:
            lower = description.lower()
            total = 0
            for feature, words in _KEYWORDS.items():
                mentioned = any(w in lower for w in words)
                if feature == "trend" and "no clear trend" in lower:
                    mentioned = False
                if mentioned:
                    total += 1 if flags.get(feature, False) else -1
            return total

        return max(options, key=lambda letter: score(options[letter]))

    def answer_all(self, prompts: list[Prompt]) -> list[str]:
        return [self.answer(p) for p in prompts]


class RandomAnswerer:
    """A seeded uniform choice among the admissible answers of each prompt."""

    system_id = "und_random"

    def __init__(self, seed: int = 0):
        self.seed = int(seed)

    def fingerprint(self) -> str:
        return f"und_random-v{RANDOM_VERSION}-seed{self.seed}"

    def availability(self) -> Availability:
        return Availability(True, "")

    def answer(self, prompt: Prompt) -> str:
        reply = self._answer(prompt)
        if prompt.prompting == "cot":
            return cot_reply("I pick an admissible answer at random.", reply)
        return reply

    def _answer(self, prompt: Prompt) -> str:
        digest = hashlib.sha256(f"{self.seed}|{prompt.prompt_key}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        if prompt.task in ("detection", "classification", "search"):
            return str(rng.choice(prompt.options))
        if prompt.task in ("matching_intra", "matching_cross"):
            return str(rng.choice(LETTERS))
        dates, columns = series_in(prompt.text, prompt.format)
        i = int(rng.integers(0, len(dates)))
        value = next(iter(columns.values()))[i]
        if prompt.task == "retrieval":
            return number(value, prompt.decimals)
        return f"{number(value, prompt.decimals)} on {dates[i]}"

    def answer_all(self, prompts: list[Prompt]) -> list[str]:
        return [self.answer(p) for p in prompts]
