"""The reasoning dataset importer (tsrate.suites.reasoning.dataset) at the edges of its
schema, against the rules its docstring states: a series of exactly MIN_LENGTH (10) values
and one fewer, 2 and 10 options and one outside each end, blank texts and options, the
characteristics' accepted shapes, the cap of 10 problems listed, the truncation of long
values in a message, a question's own short description as its context, the etiological
item's three others (exactly three available, two), the forecast split's bounds (a history
of 2 values, one, all of them) and the defaults (seed 0, context share 0.8).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_data.json): each test pins a bound or a default, so a
changed limit, comparison or default in the importer changes a checked result.
"""

from __future__ import annotations

import re

import pytest

from tests.support.reasoning_dataset import question_row, series_row, write
from tsrate.suites.reasoning.dataset import DatasetError, import_items, items_from_rows, read_rows


def _problem(tmp_path, rows) -> str:
    with pytest.raises(DatasetError) as error:
        read_rows(write(tmp_path / "bad.jsonl", rows))
    return str(error.value)


def _own_question(**changes) -> dict:
    """A question row carrying its own series (no uuid, so no parent series row)."""
    row = {k: v for k, v in question_row(0).items() if k != "uuid"}
    row["series"] = [float(t) for t in range(12)]
    row.update(changes)
    return row


def test_a_series_needs_at_least_ten_values(tmp_path):
    """MIN_LENGTH = 10: ten values import, nine are refused with the count."""
    read_rows(write(tmp_path / "ten.jsonl", [series_row(0, length=10)]))
    message = _problem(tmp_path, [series_row(0, length=9)])
    assert "field 'series': has 9 values; at least 10 needed" in message


def test_at_most_ten_problems_are_listed_then_a_count_of_the_rest(tmp_path):
    """Twelve rows each missing its description: 12 problems, the first ten shown (lines
    1-10), then '... and 2 more problem(s)'."""
    rows = []
    for k in range(12):
        row = series_row(k)
        del row["description"]
        rows.append(row)
    message = _problem(tmp_path, rows)
    assert ": 12 problem(s); nothing was imported:" in message
    shown = re.findall(r":(\d+): field 'description': missing", message)
    assert shown == [str(line) for line in range(1, 11)]
    assert message.endswith("\n... and 2 more problem(s)")


def test_blank_text_is_not_text(tmp_path):
    """A description of blanks only is refused (must be non-empty text)."""
    message = _problem(tmp_path, [{**series_row(0), "description": "   "}])
    assert "field 'description': must be non-empty text, got str" in message


@pytest.mark.parametrize(
    "value", [[], {"rises": "yes"}, ["rises after the opening", 5], "  "], ids=repr
)
def test_characteristics_must_be_text_or_a_non_empty_list_of_texts(tmp_path, value):
    message = _problem(tmp_path, [{**series_row(0), "characteristics": value}])
    assert "field 'characteristics': must be text or a list of texts" in message


def test_characteristics_as_a_list_become_lines(tmp_path):
    rows = read_rows(write(tmp_path / "ok.jsonl", [series_row(0)]))
    assert rows.series[0].characteristics == "rises after the opening\nweekly cycle"


def test_a_long_bad_value_is_cut_to_120_characters_in_the_message(tmp_path):
    """A non-number in a series: its problem text is cut at 120 characters."""
    bad = "x" * 300
    message = _problem(tmp_path, [{**series_row(0), "series": [bad] * 12}])
    text = f"value 0 is not a number: {bad!r}"[:120]
    assert f"field 'series': {text}\n" in message + "\n"
    assert f"field 'series': {text}x" not in message


def test_a_long_unknown_label_is_cut_to_120_and_a_bad_index_to_80(tmp_path):
    """A text label that is no option: cut at 120 characters; an answer index that is not
    an integer: cut at 80."""
    label = "y" * 300
    row = {k: v for k, v in _own_question().items() if k != "answer_index"}
    message = _problem(tmp_path, [{**row, "label": label}])
    text = f"{label!r} is not one of the options"[:120]
    assert f"field 'label': {text}\n" in message + "\n"
    assert f"field 'label': {text}y" not in message
    message = _problem(tmp_path, [_own_question(answer_index=label)])
    text = f"must be an integer, got {label!r}"[:80]
    assert f"field 'answer_index': {text}\n" in message + "\n"
    assert f"field 'answer_index': {text}y" not in message


@pytest.mark.parametrize("count", [2, 10])
def test_two_to_ten_options_import(tmp_path, count):
    options = [f"option {k}" for k in range(count)]
    rows = read_rows(write(tmp_path / "ok.jsonl", [_own_question(options=options)]))
    assert rows.questions[0].options == tuple(options)


@pytest.mark.parametrize(
    "options",
    [["only one"], [f"option {k}" for k in range(11)], ["a", "  ", "c", "d"]],
    ids=["one", "eleven", "blank"],
)
def test_other_option_lists_are_refused(tmp_path, options):
    message = _problem(tmp_path, [_own_question(options=options)])
    assert "field 'options': must be a list of 2 to 10 non-empty texts" in message


def test_a_question_with_its_own_series_takes_its_short_description_as_context(tmp_path):
    """No parent series row and no tiny description: the context is the row's own
    description_short."""
    items = import_items(
        write(tmp_path / "q.jsonl", [_own_question(description_short=" Museum visitors ")])
    )
    assert items[0].context == "Museum visitors"


def test_a_question_on_a_broken_series_row_is_reported_too(tmp_path):
    """A series row missing its characteristics is not a series row: the question linked
    to it by uuid gets its own problem (no series row has that uuid), both listed."""
    broken = {k: v for k, v in series_row(0).items() if k != "characteristics"}
    message = _problem(tmp_path, [broken, question_row(0)])
    assert ":1: field 'characteristics': missing" in message
    assert ":2: field 'series': missing: give the series or the uuid" in message
    assert "(no series row has uuid 's0')" in message


def test_option_fields_of_a_series_row_are_reported_as_ignored(tmp_path):
    """option_* fields are part of a question's schema, not a series row's: on a series row
    they are ignored and reported."""
    rows = read_rows(write(tmp_path / "s.jsonl", [{**series_row(0), "option_0": "x"}]))
    assert rows.ignored_fields == {"option_0": 1}
    assert rows.series[0].ignored == ("option_0",)


def _descriptions_file(tmp_path, count: int, length: int = 20) -> str:
    return write(tmp_path / f"s{count}.jsonl", [series_row(k, length) for k in range(count)])


def test_etiological_items_need_three_other_descriptions(tmp_path):
    """Four series rows: each has exactly three others, so each gets an item with all four
    descriptions; three rows: no etiological item at all."""
    items = import_items(_descriptions_file(tmp_path, 4))
    etiological = [item for item in items if item.task == "etiological"]
    descriptions = {series_row(k)["description"] for k in range(4)}
    assert len(etiological) == 4
    for k, item in enumerate(etiological):
        assert set(item.options) == descriptions
        assert item.options[item.answer_index] == series_row(k)["description"]
    items = import_items(_descriptions_file(tmp_path, 3))
    assert [item.task for item in items] == ["forecast"] * 3


def test_the_default_seed_is_0_and_the_default_context_share_0_8(tmp_path):
    """import_items and items_from_rows draw with seed 0 unless told (another seed draws
    other options); the default history is round(0.8 x 20) = 16 values."""
    path = _descriptions_file(tmp_path, 8)

    def options(items):
        return [item.options for item in items if item.task == "etiological"]

    assert options(import_items(path)) == options(import_items(path, seed=0))
    assert options(import_items(path, seed=1)) != options(import_items(path, seed=0))
    rows = read_rows(path)
    assert options(items_from_rows(rows)) == options(items_from_rows(rows, seed=0))
    forecasts = [item for item in items_from_rows(rows) if item.task == "forecast"]
    assert len(forecasts) == 8 and all(len(f.series) == 16 and f.horizon == 4 for f in forecasts)


@pytest.mark.parametrize(
    ("share", "history"),
    [(0.15, 2), (0.1, None), (1.0, None), (0.9, 9)],  # round(1.5) = 2, 1, 10, 9
)
def test_a_forecast_needs_two_history_values_and_one_future_value(tmp_path, share, history):
    """Ten values: the history is round(10 x share); it must hold at least 2 values and
    leave at least one to forecast."""
    rows = read_rows(_descriptions_file(tmp_path, 1, length=10))
    forecasts = [
        item for item in items_from_rows(rows, context_share=share) if item.task == "forecast"
    ]
    if history is None:
        assert forecasts == []
    else:
        assert [len(f.series) for f in forecasts] == [history]
        assert forecasts[0].horizon == 10 - history
