"""The procedural scenario model of the reasoning suite: subjects, a :class:`Scenario`'s
generating parameters, its clean and observed series, its caption, characteristics and
metadata, and the what-if changes that apply to it. The items asked about scenarios (and
the generator of the whole dataset) are in :mod:`tsrate.suites.reasoning.scenarios`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

NOISE = 0.03
MIN_DISTRACTOR_MISS = 0.08
MIN_OPTION_GAP = 0.12
SPIKE_STEPS = 3


@dataclasses.dataclass(frozen=True)
class Subject:
    domain: str
    sentence: str  # "daily sales of a grocery store"
    tiny: str  # "grocery sales"
    unit: str
    frequency: str  # "day", "hour", "week", "month"
    base_range: tuple[float, float]
    period: int
    cycle: str  # "weekly"
    rise: str  # an event that raises the values
    fall: str  # an event that lowers them
    spike: str  # a brief outside event


SUBJECTS: tuple[Subject, ...] = (
    Subject("health", "daily emergency admissions at a city hospital", "ER admissions",
            "admissions", "day", (150, 400), 7, "weekly", "a heat wave",
            "a new urgent-care clinic opening nearby", "a multi-car pile-up"),
    Subject("finance", "daily trading volume of a mid-cap stock", "stock volume",
            "thousand shares", "day", (200, 900), 5, "trading-week", "an index inclusion",
            "the end of a takeover rumour", "an earnings surprise"),
    Subject("transport", "hourly vehicle counts on a motorway bridge", "bridge traffic",
            "vehicles", "hour", (800, 3000), 24, "daily", "the closure of a parallel road",
            "a lane closure for repairs", "a stadium event"),
    Subject("energy", "hourly electricity demand of a small town", "town power demand", "MW",
            "hour", (20, 80), 24, "daily", "a cold snap", "a factory shutdown",
            "a grid test"),
    Subject("retail", "daily sales of a grocery store", "grocery sales", "units", "day",
            (300, 1200), 7, "weekly", "a promotion", "a competitor opening next door",
            "a holiday rush"),
    Subject("climate", "monthly rainfall at a coastal weather station", "coastal rainfall",
            "mm", "month", (40, 160), 12, "yearly", "an El Nino phase", "a drought",
            "a tropical storm"),
    Subject("agriculture", "weekly milk output of a dairy farm", "dairy output", "litres",
            "week", (5000, 20000), 13, "quarterly", "a new feed supplement",
            "a disease outbreak in the herd", "a backlog of collections being cleared"),
    Subject("technology", "hourly requests to a web service", "web requests",
            "thousand requests", "hour", (50, 400), 24, "daily", "a viral social-media post",
            "a partial outage", "a bot attack"),
    Subject("education", "daily visits to a university library", "library visits", "visits",
            "day", (200, 1500), 7, "weekly", "the start of exam season",
            "the start of the holidays", "an open day"),
    Subject("environment", "hourly PM2.5 concentration in a city centre", "city PM2.5",
            "micrograms per cubic metre", "hour", (15, 60), 24, "daily",
            "a wildfire upwind", "a car-free-zone scheme", "a fireworks display"),
    Subject("tourism", "daily hotel bookings in a resort town", "resort bookings",
            "bookings", "day", (40, 200), 7, "weekly", "a new direct flight route",
            "a travel advisory", "a music festival"),
    Subject("manufacturing", "daily output of a bottling line", "bottling output",
            "thousand bottles", "day", (50, 150), 7, "weekly", "a second shift being added",
            "a machine breakdown", "a catch-up run after maintenance"),
)  # fmt: skip
DOMAINS = tuple(dict.fromkeys(s.domain for s in SUBJECTS))
EVENT_KINDS = ("step_up", "step_down", "spike", "none")
TRENDS = ("rising", "falling", "flat")


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Generating parameters of one series (see the module docstring)."""

    subject_index: int
    length: int
    base: float
    trend: float  # relative change of the level from the first to the last step
    amplitude: float  # relative cycle amplitude (0: no cycle)
    event_kind: str
    event_step: int  # 0-based index of the first affected value (-1: no event)
    event_effect: float  # step: relative change; spike: added share of the base
    noise_seed: int

    @property
    def subject(self) -> Subject:
        return SUBJECTS[self.subject_index]

    @property
    def trend_direction(self) -> str:
        return "rising" if self.trend > 0 else "falling" if self.trend < 0 else "flat"

    @property
    def signature(self) -> tuple[str, bool, str]:
        """The visible features a distractor must differ in."""
        return (self.trend_direction, self.amplitude > 0, self.event_kind)

    @property
    def event_noun(self) -> str:
        s = self.subject
        return {"step_up": s.rise, "step_down": s.fall, "spike": s.spike}.get(self.event_kind, "")

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["domain"] = self.subject.domain
        return out


def clean_series(scenario: Scenario) -> np.ndarray:
    """The noise-free curve of ``scenario``: level x (1 + trend x t/(n-1)) plus the cycle,
    the step event multiplying everything from its step on, the spike adding a share of the
    starting level for :data:`SPIKE_STEPS` steps."""
    n = scenario.length
    t = np.arange(n, dtype=float)
    base = scenario.base
    values = base * (1.0 + scenario.trend * t / (n - 1))
    if scenario.amplitude > 0:
        values = values + base * scenario.amplitude * np.sin(
            2 * np.pi * t / scenario.subject.period
        )
    if scenario.event_kind in ("step_up", "step_down"):
        values[scenario.event_step :] *= 1.0 + scenario.event_effect
    elif scenario.event_kind == "spike":
        values[scenario.event_step : scenario.event_step + SPIKE_STEPS] += (
            base * scenario.event_effect
        )
    return values


def noise_draw(scenario: Scenario) -> np.ndarray:
    """The scenario's seeded standard-normal draw (shared by its what-if variants)."""
    return np.random.default_rng(scenario.noise_seed).standard_normal(scenario.length)


def observed_series(scenario: Scenario, noise: np.ndarray | None = None) -> np.ndarray:
    """Clean curve + noise (``NOISE`` x starting level), rounded to 2 decimals."""
    draw = noise_draw(scenario) if noise is None else noise
    return np.round(clean_series(scenario) + scenario.base * NOISE * draw, 2)


def number_text(value: float) -> str:
    """A number as captions write it: 3 significant figures, thousands separated."""
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    rounded = round(value, digits)
    if not digits:
        return f"{rounded:,.0f}"
    return f"{rounded:,.{digits}f}".rstrip("0").rstrip(".")


def _percent(share: float) -> str:
    return f"{abs(share) * 100:.0f}%"


def event_sentence(scenario: Scenario) -> str:
    s = scenario.subject
    when = f"{s.frequency} {scenario.event_step + 1}"
    noun = scenario.event_noun
    if scenario.event_kind == "step_up":
        if abs(scenario.event_effect - 1.0) < 1e-9:
            return f"From {when} on, {noun} doubles the values."
        return (
            f"From {when} on, {noun} raises the values by about {_percent(scenario.event_effect)}."
        )
    if scenario.event_kind == "step_down":
        return (
            f"From {when} on, {noun} lowers the values by about {_percent(scenario.event_effect)}."
        )
    if scenario.event_kind == "spike":
        return (
            f"On {when}, {noun} causes a brief spike of about {_percent(scenario.event_effect)} "
            f"of the starting level, lasting {SPIKE_STEPS} {s.frequency}s."
        )
    return "No outside event disturbs it."


def caption(scenario: Scenario) -> str:
    """The full description, written from the parameters only."""
    s = scenario.subject
    trend = {
        "rising": f"rises steadily by about {_percent(scenario.trend)} over the period",
        "falling": f"falls steadily by about {_percent(scenario.trend)} over the period",
        "flat": "has no underlying trend",
    }[scenario.trend_direction]
    cycle = (
        f", with a {s.cycle} cycle of about plus or minus {_percent(scenario.amplitude)}"
        if scenario.amplitude > 0
        else ", with no regular cycle"
    )
    return (
        f"The {s.sentence} over {scenario.length} {s.frequency}s ({s.frequency} 1 to "
        f"{scenario.length}). It starts near {number_text(scenario.base)} {s.unit} and {trend}"
        f"{cycle}. {event_sentence(scenario)}"
    )


def characteristics(scenario: Scenario) -> str:
    """The paper's ``characteristics``: the patterns to expect and how outside events may
    shift them, in words only (no step, no size: what the caption states in numbers)."""
    s = scenario.subject
    lines = [
        {
            "rising": "The values trend upward over the period.",
            "falling": "The values trend downward over the period.",
            "flat": "The values show no long-run trend.",
        }[scenario.trend_direction],
        f"A {s.cycle} pattern repeats every {s.period} {s.frequency}s."
        if scenario.amplitude > 0
        else "There is no regular cycle.",
        {
            "step_up": f"{s.rise.capitalize()} can shift the level upward and keep it there.",
            "step_down": f"{s.fall.capitalize()} can shift the level downward and keep it there.",
            "spike": f"{s.spike.capitalize()} can cause a brief spike.",
            "none": "No outside event is expected to disturb the values.",
        }[scenario.event_kind],
        "Random fluctuations of a few percent move around the pattern.",
    ]
    return " ".join(lines)


START_DATE = "2023-01-02"  # a Monday; the procedural series' first timestamp


def timestamp(scenario: Scenario, step: int) -> str:
    """The time of 0-based ``step`` of a series starting at :data:`START_DATE`, in the
    subject's frequency (ISO 8601; hours as ``YYYY-MM-DD HH:00``)."""
    start = np.datetime64(START_DATE)
    frequency = scenario.subject.frequency
    if frequency == "month":
        month = np.datetime64(START_DATE[:7], "M") + step
        return f"{month}-01"
    if frequency == "hour":
        moment = start.astype("datetime64[h]") + step
        return str(moment).replace("T", " ") + ":00"
    days = step * (7 if frequency == "week" else 1)
    return str(start + np.timedelta64(days, "D"))


def metadata(scenario: Scenario) -> dict:
    """The paper's ``metadata``: first and last timestamps of the whole series (history and
    horizon, as in the public data), the frequency and the units."""
    s = scenario.subject
    frequency = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly"}
    return {
        "start": timestamp(scenario, 0),
        "end": timestamp(scenario, scenario.length - 1),
        "frequency": frequency[s.frequency],
        "units": s.unit,
    }


def short_caption(scenario: Scenario) -> str:
    """A summary without numbers (the paper's ``description_short``)."""
    s = scenario.subject
    if scenario.event_kind == "none":
        return f"{s.sentence.capitalize()}, undisturbed by outside events"
    return f"{s.sentence.capitalize()}, affected by {scenario.event_noun}"


def explanation_miss(series: np.ndarray, scenario: Scenario) -> float:
    """How badly ``scenario``'s clean curve explains ``series`` (same length): the RMS of
    the residual after the best least-squares scale factor, relative to the RMS of the
    series. About :data:`NOISE`/level for the scenario that produced it."""
    series = np.asarray(series, dtype=float)
    curve = clean_series(dataclasses.replace(scenario, length=len(series)))
    scale = float(curve @ series) / float(curve @ curve)
    residual = series - scale * curve
    return float(np.sqrt(np.mean(residual**2)) / np.sqrt(np.mean(series**2)))


# -- drawing scenarios ---------------------------------------------------------------------------


def _round_to(value: float, step: float) -> float:
    return round(round(value / step) * step, 6)


def _nice_base(rng: np.random.Generator, subject: Subject) -> float:
    low, high = subject.base_range
    value = rng.uniform(low, high)
    digits = 1 - int(math.floor(math.log10(value)))
    return float(round(value, digits))


def draw_scenario(
    rng: np.random.Generator,
    subject_index: int,
    length: int,
    event_kind: str | None = None,
    event_window: tuple[float, float] = (0.55, 0.75),
) -> Scenario:
    """One scenario of subject ``subject_index``; ``event_kind`` None draws one, the event
    step falls in ``event_window`` (shares of the length)."""
    subject = SUBJECTS[subject_index]
    direction = TRENDS[int(rng.integers(3))]
    trend = {
        "rising": _round_to(rng.uniform(0.3, 0.6), 0.05),
        "falling": -_round_to(rng.uniform(0.3, 0.45), 0.05),
        "flat": 0.0,
    }[direction]
    amplitude = _round_to(rng.uniform(0.12, 0.25), 0.05) if rng.random() < 0.6 else 0.0
    kind = event_kind or EVENT_KINDS[int(rng.integers(len(EVENT_KINDS)))]
    if kind == "step_up":
        effect = 1.0 if rng.random() < 0.4 else _round_to(rng.uniform(0.5, 0.9), 0.05)
    elif kind == "step_down":
        effect = -_round_to(rng.uniform(0.3, 0.5), 0.05)
    elif kind == "spike":
        effect = _round_to(rng.uniform(1.0, 2.0), 0.1)
    else:
        effect = 0.0
    low, high = (int(round(share * length)) for share in event_window)
    step = int(rng.integers(low, max(low + 1, high))) if kind != "none" else -1
    return Scenario(
        subject_index=subject_index,
        length=length,
        base=_nice_base(rng, subject),
        trend=trend,
        amplitude=amplitude,
        event_kind=kind,
        event_step=step,
        event_effect=effect,
        noise_seed=int(rng.integers(2**31)),
    )


# -- items ---------------------------------------------------------------------------------------


def what_ifs(scenario: Scenario) -> dict[str, tuple[str, Scenario]]:
    """The what-if changes that apply to ``scenario``: name -> (question, changed scenario)."""
    s = scenario.subject
    out: dict[str, tuple[str, Scenario]] = {}
    if scenario.event_kind != "none":
        out["event_removed"] = (
            f"What if {scenario.event_noun} had not happened?",
            dataclasses.replace(scenario, event_kind="none", event_step=-1, event_effect=0.0),
        )
    if scenario.event_kind in ("step_up", "step_down", "spike"):
        out["event_doubled"] = (
            f"What if the effect of {scenario.event_noun} had been twice as large?",
            dataclasses.replace(scenario, event_effect=2 * scenario.event_effect)
            if scenario.event_kind != "step_down"
            else dataclasses.replace(scenario, event_effect=max(-0.9, 2 * scenario.event_effect)),
        )
    if scenario.trend != 0:
        out["trend_reversed"] = (
            "What if the underlying trend had gone the other way?",
            dataclasses.replace(scenario, trend=-scenario.trend),
        )
    if scenario.amplitude > 0:
        out["cycle_removed"] = (
            f"What if there had been no {s.cycle} cycle?",
            dataclasses.replace(scenario, amplitude=0.0),
        )
    else:
        out["cycle_added"] = (
            f"What if there had been a {s.cycle} cycle of plus or minus 20%?",
            dataclasses.replace(scenario, amplitude=0.2),
        )
    out["level_raised"] = (
        "What if the starting level had been 50% higher?",
        dataclasses.replace(scenario, base=scenario.base * 1.5),
    )
    return out


def near_what_ifs(scenario: Scenario) -> dict[str, tuple[str, Scenario]]:
    """For each what-if of :func:`what_ifs`, a similar-looking one that is wrong: the same
    sentence with other numbers (or another size word), as the paper's manual perturbation
    edits the right option's numbers (Section 5.3, Appendix B.5)."""
    s = scenario.subject
    out: dict[str, tuple[str, Scenario]] = {}
    if scenario.event_kind != "none":
        out["event_removed"] = (
            f"What if the effect of {scenario.event_noun} had been half as large?",
            dataclasses.replace(scenario, event_effect=scenario.event_effect / 2),
        )
    if scenario.event_kind in ("step_up", "step_down", "spike"):
        out["event_doubled"] = (
            f"What if the effect of {scenario.event_noun} had been three times as large?",
            dataclasses.replace(scenario, event_effect=max(-0.9, 3 * scenario.event_effect)),
        )
    if scenario.trend != 0:
        out["trend_reversed"] = (
            "What if the underlying trend had been twice as steep?",
            dataclasses.replace(scenario, trend=2 * scenario.trend),
        )
    if scenario.amplitude > 0:
        out["cycle_removed"] = (
            f"What if the {s.cycle} cycle had been twice as large?",
            dataclasses.replace(scenario, amplitude=2 * scenario.amplitude),
        )
    else:
        out["cycle_added"] = (
            f"What if there had been a {s.cycle} cycle of plus or minus 50%?",
            dataclasses.replace(scenario, amplitude=0.5),
        )
    out["level_raised"] = (
        "What if the starting level had been 20% higher?",
        dataclasses.replace(scenario, base=scenario.base * 1.2),
    )
    return out


def scenario_from_dict(data: dict) -> Scenario:
    """The :class:`Scenario` stored in an item's params."""
    fields = {f.name for f in dataclasses.fields(Scenario)}
    return Scenario(**{k: v for k, v in data.items() if k in fields})
