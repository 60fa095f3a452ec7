"""The mutation sweep of tsrate.systems.llm_replies (reply parser 4; tests/planted/s44_sweep.json):
an index-and-value table followed by words or after another table, a run of numbers that a
line carries on and then starts a second run, and the echo looked for at the default two
places. Every expected forecast is read off the reply by hand, by the rules of the module
doc."""

from __future__ import annotations

import numpy as np

from tsrate.systems.llm_replies import parse_forecast, parse_replies


def test_a_table_followed_by_a_sentence_is_still_the_forecast():
    """Five table lines (indices 1..5), then a closing sentence: the table's values. Read as
    runs instead, the pure-number lines would chain into 1, 101.2, 2, 101.4, 3, ..."""
    reply = "Here you go:\n1\t101.2\n2\t101.4\n3\t101.6\n4\t101.8\n5\t102.0\nHope this helps."
    np.testing.assert_array_equal(parse_forecast(reply, 5), [101.2, 101.4, 101.6, 101.8, 102.0])


def test_the_longer_of_two_tables_whose_indices_restart_is_read_from_its_first_value():
    """A two-line table (1 7.5, 2 7.25) and then a four-line one restarting at 1: the second
    block starts at its first line's value, 101.5, and counts on from index 1."""
    reply = "Recent:\n1 7.5\n2 7.25\nForecast:\n1 101.5\n2 101.75\n3 102.5\n4 102.25"
    np.testing.assert_array_equal(parse_forecast(reply, 4), [101.5, 101.75, 102.5, 102.25])
    # no words between the tables: the restart at index 1 alone starts the second block
    reply = "1 7.5\n2 7.25\n1 101.5\n2 101.75\n3 102.5\n4 102.25"
    np.testing.assert_array_equal(parse_forecast(reply, 4), [101.5, 101.75, 102.5, 102.25])


def test_a_line_that_carries_a_run_on_keeps_its_later_runs():
    """Line 1 ends with a separator, so its run (5.5) goes on into line 2's first run (6.5);
    line 2's second run (after words) is a run of its own, the longest: 101 .. 104."""
    reply = "Start: 5.5;\n6.5 then 101.0, 102.0, 103.0, 104.0"
    np.testing.assert_array_equal(parse_forecast(reply, 4), [101.0, 102.0, 103.0, 104.0])


CONTEXT = np.array([99.0, 100.013, 100.042])
#: the context's last two values as the prompt prints them at two places, then the forecast
ECHOED = "100.01, 100.04, 105.5, 106.5"


def test_the_echo_is_looked_for_at_two_places_by_default():
    """At two places the context ends 100.01, 100.04: the reply's first two values are that
    echo and are skipped. (At three places it ends 100.013, 100.042, no echo; at one place
    100.0, 100.0, one value only, no echo: either would give 100.01, 100.04.)"""
    np.testing.assert_array_equal(parse_forecast(ECHOED, 2, CONTEXT), [105.5, 106.5])
    out = parse_replies([ECHOED, "7, 8"], 2, np.vstack([CONTEXT, CONTEXT]))
    np.testing.assert_array_equal(out, [[105.5, 106.5], [7.0, 8.0]])
    # the same at three places given explicitly: no echo
    np.testing.assert_array_equal(parse_forecast(ECHOED, 2, CONTEXT, 3), [100.01, 100.04])
