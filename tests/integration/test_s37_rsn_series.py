"""The reasoning accuracy intervals count series, not questions (imported files).

Two real imports of the public schema: six series with one counterfactual question each
(k = 1), and the same file with every question asked three times (k = 3; the copies differ
in their wording, so they are distinct items). Scripted systems are added in the raw
tables (tests/support/reasoning_scripted.py, as in tests/integration/test_suite_gaps.py):
``oracle`` (always right), ``by_series`` (right on the even series, on every copy) and
``mixed`` (right on a series' first question, and on every copy of series 0 and 3); the
random answerer's stored replies mix within a series. Then the marts are rebuilt and read,
against independent computations:

- the systems that answer every copy alike get, from the k = 3 file, exactly the accuracy
  and interval of the k = 1 file (the items tripled, the series not);
- every system's interval is statsmodels' Wilson interval on the effective counts,
  computed here from the raw replies grouped by the rows' ``uuid`` (Rao & Scott 1992);
- rsn_rating_stability counts the six series it resamples.
"""

from __future__ import annotations

import json
import string

import numpy as np
import pandas as pd
import pytest

from tests.support.reasoning_dataset import question_row, series_row, write
from tests.support.reasoning_scripted import add_scripted_replies
from tests.support.warehouses import read
from tsrate.platform import dbt_runner as dbt
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow

RUN_ENV = SUITES["reasoning"].run_env
REBUILD = [
    "build",
    "--select",
    "+rsn_accuracy",
    "+rsn_task_accuracy",
    "+rsn_rating_stability",
    "--exclude",  # reads every suite's ratings: the other suites have none here
    "assert_suite_ratings_follow_their_spec",
]
SERIES = 6
#: scripted systems -> whether they answer right, from the series number and the copy
SCRIPTED = {
    "oracle": lambda series, copy: True,
    "by_series": lambda series, copy: series % 2 == 0,
    "mixed": lambda series, copy: copy == 0 or series % 3 == 0,
}


def tsqa_rows(k: int) -> list[dict]:
    rows: list[dict] = [series_row(s) for s in range(SERIES)]
    for s in range(SERIES):
        for copy in range(k):
            row = question_row(s)
            if copy:
                row["question"] += f" (asked again, {copy})"
            rows.append(row)
    return rows


def add_scripted_systems(warehouse) -> None:
    """Copy each choice prompt of the random answerer to every :data:`SCRIPTED` system, with
    a one-letter reply that is right or wrong as the system's rule says."""

    def reply(k: int, prompt) -> dict:  # noqa: ANN001 - the prompt's copy
        question = prompt.question
        copy = int(question.split(", ")[-1][:-1]) if "again" in question else 0
        answer = int(prompt.answer_index)
        right = SCRIPTED[prompt.system_id](int(prompt.uuid[1:]), copy)
        option = answer if right else (answer + 1) % 4
        return {
            "raw_text": string.ascii_uppercase[option],
            "parsed_choice": option,
            "parse_ok": True,
            "parse_error": None,
        }

    items = {"question": "i.question", "uuid": "i.params ->> 'uuid'"}
    add_scripted_replies(warehouse, SCRIPTED, reply, items)


@pytest.fixture(scope="module")
def built(tmp_path_factory, prefect_harness, dbt_target):
    """k -> warehouse of the imported k-copies file, scripted systems added, marts built."""
    from flows.reasoning import reasoning_flow
    from tsrate.platform.warehouse import connect

    out = {}
    for k in (1, 3):
        folder = tmp_path_factory.mktemp(f"rsn_series_k{k}")
        warehouse = folder / "tsrate.duckdb"
        with connect(warehouse):
            pass
        path = write(folder / "tsqa.jsonl", tsqa_rows(k))
        run = reasoning_flow(
            import_path=path,
            fracast=0,
            tasks=["qa_single"],
            build=False,
            warehouse=str(warehouse),
            target_path=str(dbt_target),
        )
        add_scripted_systems(warehouse)
        dbt.run_dbt(REBUILD, None, warehouse, None, dbt_target, {RUN_ENV: run})
        out[k] = warehouse
    return out


def raw_answers(warehouse) -> pd.DataFrame:
    """Each with-series reply of the run judged from the raw tables: system, the series'
    uuid, right or not (no reply or no parse: wrong)."""
    return read(
        warehouse,
        "select p.system_id, i.params ->> 'uuid' as uuid, "
        "coalesce(r.parse_ok and r.parsed_choice = i.answer_index, false) as correct "
        "from raw.rsn_prompts p join raw.rsn_items i using (item_id) "
        "left join raw.rsn_responses r using (prompt_hash) "
        "where p.condition = 'with_series' and i.task = 'qa_single'",
    )


def effective_counts(correct: pd.Series, series: pd.Series) -> tuple[float, float]:
    """Rao & Scott's effective (successes, trials), written out: d = sum over series of
    (y - p m)^2 / (n p (1 - p)), at least 1; every series once when p is 0 or 1."""
    frame = pd.DataFrame({"y": correct.astype(float), "series": series})
    per = frame.groupby("series")["y"].agg(["sum", "size"])
    n, p = float(per["size"].sum()), float(per["sum"].sum() / per["size"].sum())
    if p in (0.0, 1.0):
        return p * len(per), float(len(per))
    d = float(((per["sum"] - p * per["size"]) ** 2).sum() / (n * p * (1 - p)))
    n_eff = n / max(d, 1.0)
    return p * n_eff, n_eff


def marts_of(warehouse) -> dict[str, pd.DataFrame]:
    return {
        "rsn_task_accuracy": read(warehouse, "select * from marts.rsn_task_accuracy"),
        "rsn_accuracy": read(warehouse, "select * from marts.rsn_accuracy"),
    }


def test_k_copies_of_every_question_give_the_intervals_of_one(built):
    columns = ["accuracy", "accuracy_ci_low", "accuracy_ci_high"]
    for mart in ("rsn_task_accuracy", "rsn_accuracy"):
        one = marts_of(built[1])[mart].set_index("system_id").sort_index()
        three = marts_of(built[3])[mart].set_index("system_id").sort_index()
        assert (one["n_items"] == SERIES).all() and (three["n_items"] == 3 * SERIES).all()
        assert (one["n_series"] == SERIES).all() and (three["n_series"] == SERIES).all()
        alike = ["by_series", "oracle"]  # every copy answered as the first
        np.testing.assert_allclose(
            three.loc[alike, columns].to_numpy(float),
            one.loc[alike, columns].to_numpy(float),
            rtol=0,
            atol=1e-12,
        )
        np.testing.assert_allclose(three.loc[alike, "design_effect"], 3.0, rtol=1e-12)
        np.testing.assert_allclose(one["design_effect"], 1.0, rtol=0, atol=0)
        # an interval that means something: by_series is right on half the series
        assert (
            one.loc["by_series", "accuracy_ci_high"] - one.loc["by_series", "accuracy_ci_low"] > 0.5
        )


def test_every_interval_is_wilson_on_the_effective_counts_of_the_series(built):
    from statsmodels.stats.proportion import proportion_confint

    for warehouse in built.values():
        answers = raw_answers(warehouse)
        for mart, frame in marts_of(warehouse).items():
            frame = frame.set_index("system_id")
            assert sorted(frame.index) == sorted([*SCRIPTED, "random"]), mart
            for system, block in answers.groupby("system_id"):
                successes, trials = effective_counts(block["correct"], block["uuid"])
                low, high = proportion_confint(successes, trials, method="wilson")
                row = frame.loc[system]
                assert row["accuracy"] == pytest.approx(block["correct"].mean(), abs=1e-15)
                assert row["accuracy_ci_low"] == pytest.approx(max(low, 0.0), abs=1e-12)
                assert row["accuracy_ci_high"] == pytest.approx(min(high, 1.0), abs=1e-12)
                assert row["design_effect"] == pytest.approx(len(block) / trials, rel=1e-12)
    # mixed is right on 3 of 3 copies of two series, 1 of 3 of four: a design effect
    # strictly between 1 and the copies (hand-computed: 1.2)
    mixed = marts_of(built[3])["rsn_task_accuracy"].set_index("system_id").loc["mixed"]
    assert mixed["design_effect"] == pytest.approx(1.2, rel=1e-12)


def test_rating_stability_resamples_the_series(built):
    for k, warehouse in built.items():
        stability = read(
            warehouse,
            "select * from marts.rsn_rating_stability "
            "where metric = 'accuracy' and task = 'qa_single'",
        )
        assert len(stability) == len(SCRIPTED) + 1
        assert (stability["n_series"] == SERIES).all()
        assert (stability["n_items"] == k * SERIES).all()
    # the series each item asks about is its row's uuid
    items = read(built[3], "select series_id, params from staging.stg_rsn_items")
    uuids = items["params"].map(lambda p: "uuid:" + json.loads(p)["uuid"])
    assert items["series_id"].tolist() == uuids.tolist()
