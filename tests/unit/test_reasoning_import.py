"""Reasoning suite: importing the public dataset's JSONL schema, and rejecting bad files.

The good file's rows: tests/support/reasoning_dataset.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.reasoning_dataset import good_rows, question_row, series_row, write
from tsrate.suites.reasoning.dataset import DatasetError, import_items, read_rows


def test_a_file_in_the_public_schema_becomes_items(tmp_path):
    items = import_items(write(tmp_path / "tsqa.jsonl", good_rows()), seed=3)
    tasks = [item.task for item in items]
    assert tasks.count("etiological") == 5 and tasks.count("forecast") == 5
    assert tasks.count("qa_single") == 2 and tasks.count("qa_two") == 1
    etiological = next(item for item in items if item.task == "etiological")
    assert etiological.options[etiological.answer_index] == series_row(0)["description"]
    assert len(set(etiological.options)) == 4 and etiological.category == "Tourism"
    forecast = next(item for item in items if item.task == "forecast")
    assert len(forecast.series) == 16 and forecast.horizon == 4
    np.testing.assert_array_equal(forecast.series + forecast.future, series_row(0)["series"])
    assert forecast.context == series_row(0)["description"]
    two = next(item for item in items if item.task == "qa_two")
    assert two.series == tuple(series_row(1)["series"]) and len(two.series_b) == 20
    assert "closed on Mondays" in two.context and two.params["line"] == 9
    # a question linked by uuid takes its series row's tiny description and metadata as the
    # QA context (the paper's qa_mcq configuration), not the short description
    single = next(item for item in items if item.task == "qa_single")
    metadata = series_row(0)["metadata"]
    assert single.context == "Museum 0\n" + json.dumps(metadata, sort_keys=True)
    assert two.context.startswith("Museum 1\n" + json.dumps(metadata, sort_keys=True))
    # a question may carry its own series instead of a uuid
    own = {**question_row(0), "series": [1.0] * 12}
    del own["uuid"]
    rows = read_rows(write(tmp_path / "own.jsonl", [own]))
    assert rows.questions[0].series == (1.0,) * 12


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda rows: rows.__setitem__(1, "{not json"), r"bad\.jsonl:2: not valid JSON"),
        (
            lambda rows: rows[0].pop("description_short"),
            r"bad\.jsonl:1: field 'description_short': missing",
        ),
        (
            lambda rows: rows[2]["series"].__setitem__(3, float("nan")),
            r":3: field 'series': value 3 is not finite",
        ),
        (
            lambda rows: rows[2].__setitem__("series", [1, 2, "3"] * 4),
            r":3: field 'series': value 2 is not a number",
        ),
        (lambda rows: rows[0].__setitem__("uuid", "s1"), r":2: field 'uuid': 's1' repeats line 1"),
        (
            lambda rows: rows[5].__setitem__("answer_index", 4),
            r":6: field 'answer_index': 4 is outside the 4 options",
        ),
        (
            lambda rows: rows[5].__setitem__("answer_index", True),
            r":6: field 'answer_index': must be an integer",
        ),
        (
            lambda rows: rows[5].__setitem__("options", ["a", "a"]),
            r":6: field 'options': options repeat",
        ),
        (
            lambda rows: rows[6].__setitem__("uuid", "nope"),
            r":7: field 'series': missing.*no series row has uuid 'nope'",
        ),
        (
            lambda rows: rows[8]["new_series"].pop(),
            r":9: field 'new_series': has 19 values, the series has 20",
        ),
        (lambda rows: rows[8].pop("counterfactual"), r":9: field 'counterfactual': missing"),
        (
            lambda rows: rows[3].__setitem__("metadata", "2024"),
            r":4: field 'metadata': must be an object",
        ),
    ],
)
def test_bad_files_are_rejected_naming_line_and_field(tmp_path, change, expected):
    rows = good_rows()
    change(rows)
    path = write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError, match=expected) as error:
        import_items(path)
    assert "nothing was imported" in str(error.value)


def test_every_problem_is_listed_and_empty_files_fail(tmp_path):
    rows = good_rows()
    rows[0].pop("series")
    rows[5].pop("question")  # becomes a series row without its fields
    with pytest.raises(DatasetError) as error:
        import_items(write(tmp_path / "many.jsonl", rows))
    message = str(error.value)
    assert ":1: field 'series': missing" in message
    assert ":6: field 'description': missing" in message
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(DatasetError, match="no rows"):
        import_items(tmp_path / "empty.jsonl")
    with pytest.raises(DatasetError, match="no such file"):
        import_items(tmp_path / "absent.jsonl")


# ---------------------------------------------------------------------------------------
# The reference repository's row shapes (behavioral-data/TSandLanguage)
# ---------------------------------------------------------------------------------------

OPTIONS = ["fewer visitors", "more visitors", "no change", "zero visitors"]


def evaluation_row(category: str, label, **extra) -> dict:
    """A row of the published evaluation files: its own series, description_tiny,
    metadata, option_0..3 and a 0-based ``label``."""
    row = {
        "uuid": f"q-{category}",
        "category": category,
        "question": "What if the exhibit had not opened?",
        **{f"option_{i}": text for i, text in enumerate(OPTIONS)},
        "label": label,
        "series": [float(t) for t in range(15)],
        "description_tiny": "Museum visitors",
        "metadata": {"units": "visitors", "frequency": "daily"},
    }
    row.update(extra)
    return row


def test_every_answer_shape_of_the_reference_gives_the_same_answer(tmp_path):
    shapes = [
        {**question_row(0), "answer_index": 2},  # its MCQ builders
        {**{k: v for k, v in question_row(0).items() if k != "answer_index"}, "label_index": 2},
        {**{k: v for k, v in question_row(0).items() if k != "answer_index"}, "label": 2},
        {**{k: v for k, v in question_row(0).items() if k != "answer_index"}, "label": "no change"},
    ]
    for index, shape in enumerate(shapes):
        rows = read_rows(write(tmp_path / f"shape{index}.jsonl", [series_row(0), shape]))
        assert rows.questions[0].answer_index == 2, shape
        assert rows.questions[0].options[2] == "no change"


def test_the_evaluation_files_five_categories_import_as_their_own_categories(tmp_path):
    categories = [
        "counterfactual reasoning",
        "explanation",
        "argumentation",
        "analogical_reasoning",
        "Fact Checking",
    ]
    rows = [
        evaluation_row(c, i % 4, prediction="B", model_output="I think B")
        for i, c in enumerate(categories)
    ]
    rows[0]["ts_qid"] = 17
    items = import_items(write(tmp_path / "eval.jsonl", rows))
    assert [item.task for item in items] == ["qa_single"] * 5
    assert [item.category for item in items] == [
        "counterfactual_reasoning",
        "explanation",
        "argumentation",
        "analogical_reasoning",
        "fact_checking",
    ]
    assert [item.answer_index for item in items] == [0, 1, 2, 3, 0]
    assert all(item.options == tuple(OPTIONS) for item in items)
    # the paper's QA context: the tiny description, then the metadata
    assert items[0].context == 'Museum visitors\n{"frequency": "daily", "units": "visitors"}'
    # a recorded model prediction is ignored, and the import says so
    parsed = read_rows(write(tmp_path / "eval2.jsonl", rows))
    assert parsed.ignored_fields == {"model_output": 5, "prediction": 5, "ts_qid": 1}
    assert items[0].params["ignored_fields"] == ["model_output", "prediction", "ts_qid"]
    assert "prediction" not in json.dumps([item.question for item in items])


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda r: r.update(answer_index=1), r"field 'answer_index': answer fields disagree"),
        (lambda r: r.update(label=4), r"field 'label': 4 is outside the 4 options"),
        (lambda r: r.update(label="maybe"), r"field 'label': 'maybe' is not one of the options"),
        (lambda r: r.pop("option_2"), r"field 'option_0': numbered options must run"),
        (
            lambda r: r.update(options=[*OPTIONS[:3], "many visitors"]),
            r":1: field 'options': options and option_0, option_1, option_2, option_3 of item "
            r"'q-explanation' differ",
        ),
        (lambda r: r.update(options=OPTIONS[:3]), r"field 'options': options and option_0"),
        (lambda r: r.pop("label"), r"field 'answer_index': missing \(give answer_index"),
    ],
)
def test_bad_answer_shapes_are_rejected(tmp_path, change, expected):
    row = evaluation_row("explanation", 0)
    change(row)
    with pytest.raises(DatasetError, match=expected):
        import_items(write(tmp_path / "bad.jsonl", [row]))


@pytest.mark.parametrize("answer", [{"label": 2}, {"answer_index": 2}, {"label": "no change"}])
def test_public_question_files_with_options_and_option_fields_import(tmp_path, answer):
    """The public question files carry ``options`` and ``option_0..3`` (the same texts) with
    ``label`` or ``answer_index``: they import as published."""
    row = {k: v for k, v in evaluation_row("explanation", 0).items() if k != "label"}
    row.update(options=[f" {o}" for o in OPTIONS], **answer)  # stray blanks: the same texts
    items = import_items(write(tmp_path / "public.jsonl", [row]))
    assert [item.options for item in items] == [tuple(OPTIONS)]
    assert items[0].answer_index == 2
    assert "ignored_fields" not in items[0].params  # options: used, not ignored
