"""Small reasoning-suite inputs several unit test files share: a forecasting item with every
piece of the six forecasting conditions, and a plain scenario of the scenario model. No test
here."""

from __future__ import annotations

from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning.items import Item

#: A rising series with a weekly wobble: 30 values, the item's 24 of context and 6 to come.
SERIES = tuple(float(100 + 3 * t + (t % 7)) for t in range(30))
#: A forecasting item on :data:`SERIES` with every piece of the six forecasting conditions
#: (Figure A.5).
FORECAST = Item(
    task="forecast",
    category="retail",
    series=SERIES[:24],
    future=SERIES[24:],
    context="From day 25 on, a promotion doubles the values.",
    params={
        "context_pieces": {
            "characteristics": "A retail series with a weekly rhythm.",
            "metadata": {"start": "2024-01-01", "frequency": "D"},
        }
    },
)

#: Subject 0: daily hospital admissions (a weekly, 7-day cycle), a flat level of 200, no
#: event.
PLAIN = sm.Scenario(
    subject_index=0,
    length=50,
    base=200.0,
    trend=0.0,
    amplitude=0.0,
    event_kind="none",
    event_step=-1,
    event_effect=0.0,
    noise_seed=7,
)
