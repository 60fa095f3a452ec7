"""Progress lines and the ETA (tsrate.platform.progress) at the exact values a user sees,
worked out by hand from the module's documented rules: ``duration`` at the minute and hour
boundaries, the phase lines, which logger a flow run gets, the prior weight of 3 items, the
seconds-per-prior-unit price (only groups with a prior above 0 price others), the share of
the items in the workers counted done ((p - 1) / 2p, with p = 3 where p - 1 is not 1), the
divisor floor of 1e-9 s, and the terminal bar's characters.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_platform.json): the older tests pinned the ETA against simulated and
recorded runs within 50 %, which leaves the formatting and the prior's arithmetic free.
"""

from __future__ import annotations

import logging
import types

import pytest

from tsrate.platform.progress import Progress, duration, phase, run_logger


def clocked(pending, **kwargs):
    now = [0.0]
    lines: list[str] = []
    progress = Progress(pending, lines.append, tty=False, clock=lambda: now[0], **kwargs)
    return progress, now, lines


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5.0, "0s"),
        (0.0, "0s"),
        (0.4, "0s"),
        (58.6, "59s"),
        (59.0, "59s"),
        (60.0, "1m00s"),
        (61.0, "1m01s"),
        (185.0, "3m05s"),
        (3599.0, "59m59s"),
        (3600.0, "1h00m"),
        (3601.0, "1h00m"),
        (3720.0, "1h02m"),
    ],
)
def test_duration_at_its_boundaries(seconds, text):
    assert duration(seconds) == text


def test_phase_says_start_and_end_through_the_given_sayer(caplog):
    lines: list[str] = []
    with caplog.at_level(logging.INFO, logger="tsrate.run"), phase("build", lines.append):
        pass
    assert lines[0] == "build: started"
    assert lines[1].startswith("build: done in ") and lines[1].endswith("s")
    assert len(lines) == 2
    assert not [r for r in caplog.records if r.name == "tsrate.run"]  # not the logger too


def test_phase_without_a_sayer_logs_to_the_run_logger(caplog):
    with caplog.at_level(logging.INFO, logger="tsrate.run"), phase("ingest"):
        pass
    messages = [r.getMessage() for r in caplog.records if r.name == "tsrate.run"]
    assert messages[0] == "ingest: started"
    assert messages[1].startswith("ingest: done in ")


def test_a_flow_run_without_a_task_run_gets_prefects_run_logger(monkeypatch):
    """Inside a flow run (no task run) the lines go to Prefect's run logger, so they show
    in the flow run's logs; outside any run to ``tsrate.run``."""
    import prefect.context

    assert run_logger() is logging.getLogger("tsrate.run")
    in_flow = types.SimpleNamespace(flow_run=None, flow=None)
    monkeypatch.setattr(prefect.context.FlowRunContext, "get", classmethod(lambda cls: in_flow))
    monkeypatch.setattr(prefect.context.TaskRunContext, "get", classmethod(lambda cls: None))
    logger = run_logger()
    assert isinstance(logger, logging.LoggerAdapter)
    assert logger.logger.name == "prefect.flow_runs"


def test_the_prior_counts_as_three_items():
    """b's prior cost: a's 4 s per 2 prior units = 2 s per unit, b's prior 1: 2 s. With one
    b item of 5 s: (3 * 2 + 5) / (3 + 1) = 2.75 s."""
    progress, _now, _lines = clocked(["a", "b", "b", "b"], prior={"a": 2, "b": 1})
    progress.update("a", "a", 4.0)
    progress.update("b", "b", 5.0)
    assert progress.group_cost("b") == pytest.approx(2.75)


def test_only_groups_with_a_prior_above_zero_price_others():
    """A group without a prior, or with a prior of 0, says nothing about the seconds per
    prior unit: with only such groups finished, b has no prior cost and is priced by the
    overall mean of the finished items."""
    progress, _now, _lines = clocked(["x", "z", "b"], prior={"z": 0.0, "b": 2.0})
    progress.update("x", "x", 4.0)  # no prior at all
    assert progress.prior_cost("b") is None
    progress.update("z", "z", 2.0)  # a prior of 0
    assert progress.prior_cost("b") is None
    assert progress.group_cost("b") == pytest.approx((4.0 + 2.0) / 2)


def test_a_prior_below_one_prices_others():
    """Priors are in any unit (ms per window): a prior of 0.5 prices as well as one of 5.
    a: 3 s for 0.5 units = 6 s per unit; b's prior 0.25: 1.5 s."""
    progress, _now, _lines = clocked(["a", "b"], prior={"a": 0.5, "b": 0.25})
    progress.update("a", "a", 3.0)
    assert progress.prior_cost("b") == pytest.approx(1.5)


def test_without_priors_the_overall_mean_of_several_items():
    """b, never seen and without a prior, costs the mean of all finished items: (1 + 3) / 2."""
    progress, _now, _lines = clocked(["a", "a", "b"])
    progress.update("a", "a", 1.0)
    progress.update("a", "a", 3.0)
    assert progress.group_cost("b") == pytest.approx(2.0)


def test_three_workers_count_a_third_of_their_items_done():
    """parallel = 3: the first 3 pending items count (3 - 1) / (2 * 3) = 1/3 done. Clock 0 to
    2 for one item of 4 s: compute began at max(0, 2 - 4) = 0, wall/compute = 2 / 4. Five
    items of 4 s left: (5 * 4 - 3 * 4 / 3) * 0.5 = 8 s."""
    progress, now, _lines = clocked(["a"] * 6, parallel=3)
    now[0] = 2.0
    progress.update("a", "a", 4.0)
    assert progress.eta() == pytest.approx(8.0)


def test_items_of_a_nanosecond_are_divided_by_their_own_seconds():
    """The wall/compute ratio divides by the compute spent, floored at 1e-9 s: one item of
    exactly 1e-9 s finished at clock 10 (so compute began 1e-9 s before), clock now 20: one
    item of 1e-9 s left takes 1e-9 * (20 - (10 - 1e-9)) / 1e-9 = 10 s."""
    progress, now, _lines = clocked(["a", "a"])
    now[0] = 10.0
    progress.update("a", "a", 1e-9)
    now[0] = 20.0
    assert progress.eta() == pytest.approx(10.0 + 1e-9, rel=1e-6)


def test_nothing_to_do_is_all_done():
    progress, _now, _lines = clocked([])
    assert progress.line("idle") == "[0/0] 100% idle"


def test_the_terminal_bar(capsys):
    """24 characters: int(24 * done / total) '#', the rest '.'; a newline only at the end."""
    progress = Progress(["a"] * 5, lambda _l: None, tty=True, clock=lambda: 0.0)
    progress.update("a", "a1", 0.0)
    err = capsys.readouterr().err
    assert err == "\r\x1b[2K[####" + "." * 20 + "] [1/5]  20% a1 ETA <1s"
    for i in range(2, 5):
        progress.update("a", f"a{i}", 0.0)
    err = capsys.readouterr().err
    assert err.endswith("\r\x1b[2K[###################.....] [4/5]  80% a4 ETA <1s")
    progress.update("a", "a5", 0.0)
    assert capsys.readouterr().err == "\r\x1b[2K[" + "#" * 24 + "] [5/5] 100% a5\n"


def test_the_terminal_bar_of_one_item_and_of_none(capsys):
    progress = Progress(["a"], lambda _l: None, tty=True, clock=lambda: 0.0)
    progress.update("a", "a", 1.0)
    assert capsys.readouterr().err == "\r\x1b[2K[" + "#" * 24 + "] [1/1] 100% a\n"
    # an item nobody listed as pending: the bar is full, not a division by zero
    empty = Progress([], lambda _l: None, tty=True, clock=lambda: 0.0)
    empty.update("a", "a", 1.0)
    assert capsys.readouterr().err == "\r\x1b[2K[" + "#" * 24 + "] [1/0] 100% a\n"
