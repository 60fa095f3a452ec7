"""Scored reasoning-suite responses written by hand (the rows
``tsrate.suites.reasoning.marts.forecast_errors`` reads), for the tests that check its
errors against hand-worked numbers. No test here."""

from __future__ import annotations


def forecast_response(
    system: str,
    item: str,
    forecast: list[float] | None,
    future: list[float],
    history: list[float],
    *,
    condition: str = "without_context",
    parsed: bool = True,
    answered: bool = True,
) -> dict:
    """``system``'s forecast task response on ``item`` under ``condition`` of suite run
    'run' (category 'c'): its ``forecast`` of ``future`` after ``history``; an unanswered or
    unparsed response keeps no forecast."""
    usable = parsed and answered
    return {
        "suite_run_id": "run",
        "prompt_hash": f"{system}-{item}-{condition}",
        "item_id": item,
        "system_id": system,
        "condition": condition,
        "category": "c",
        "task": "forecast",
        "is_answered": answered,
        "parse_ok": usable,
        "forecast": forecast if usable else None,
        "series": history,
        "future": future,
        "is_correct": None,
    }
