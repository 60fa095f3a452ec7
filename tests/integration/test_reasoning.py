"""The reasoning suite end to end: flow -> raw tables -> real dbt build -> marts and report."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.integration.suite_publish import assert_suite_published
from tests.support.doc_queries import assert_documented_queries_return_rows
from tests.support.rating_properties import (
    assert_ratings_never_mislead,
    assert_scores_inside_intervals,
)
from tests.support.reasoning_dataset import good_rows, write
from tests.support.warehouses import read
from tsrate.html.page import human
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.suites import SUITES
from tsrate.suites.reasoning.dataset import DatasetError
from tsrate.suites.reasoning.marts import NO_GAP_EVIDENCE
from tsrate.suites.reasoning.tasks import FORECAST_CONTEXTS

pytestmark = pytest.mark.slow

TINY = {"seed": 11, "scenarios": 8, "forecasts": 4, "length": 60}
SELECT = ["build", "--select", "tag:reasoning", "--indirect-selection", "cautious"]
#: the env var naming the suite run the marts describe (not --vars: keeps dbt's parse)
RUN_ENV = SUITES["reasoning"].run_env
MARTS = (
    "rsn_accuracy",
    "rsn_task_accuracy",
    "rsn_forecast_errors",
    "rsn_context_effects",
    "rsn_context_combinations",
    "rsn_perturbation_effects",
    "rsn_ratings",
    "rsn_rating_stability",
)
GROUP = ["suite_run_id", "metric", "task"]  # one rated group of rsn_ratings


def count(warehouse, table: str) -> int:
    return int(read(warehouse, f"select count(*) as n from {table}")["n"][0])


def naive_errors(warehouse) -> pd.Series:
    """Mean normalised MAE of the last-value forecast per item set, computed here from the
    raw items (independent of the suite's code)."""
    items = read(
        warehouse, "select item_id, series, future from raw.rsn_items where task = 'forecast'"
    )
    errors = []
    for row in items.itertuples():
        history, future = np.asarray(row.series), np.asarray(row.future)
        scale = history.std() or 1.0
        errors.append(np.mean(np.abs(history[-1] - future)) / scale)
    return pd.Series(errors, index=items["item_id"])


def t_interval(differences, clip: tuple[float, float] | None = None) -> tuple[float, float]:
    """The t 95 % interval of the mean of paired ``differences``, computed here with
    scipy.stats.t (mean ± t_{0.975, n-1} · sd / sqrt(n), sd with n - 1), optionally clipped."""
    d = np.asarray(differences, dtype=float)
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    low, high = d.mean() - half, d.mean() + half
    return (max(clip[0], low), min(clip[1], high)) if clip else (low, high)


def test_offline_suite_fills_every_mart_and_resumes(tmp_path, prefect_harness, dbt_target):
    from flows.reasoning import reasoning_flow

    warehouse = tmp_path / "tsrate.duckdb"
    target = dbt_target
    # 1. the suite's models build on a warehouse where it never ran (its raw tables empty)
    with connect(warehouse):
        pass
    dbt.run_dbt(SELECT, None, warehouse, lambda _: None, target, {RUN_ENV: "latest"})
    assert count(warehouse, "marts.rsn_ratings") == 0

    # 2. the offline run: procedural items, random + forecasting references (2 fracast items)
    suite_run_id = reasoning_flow(
        generator=TINY, fracast=2, warehouse=str(warehouse), target_path=str(target)
    )
    runs = read(
        warehouse,
        "select status, details->>'source' as source from raw.suite_runs where suite = 'reasoning'",
    )
    assert runs.to_dict("records") == [{"status": "succeeded", "source": "procedural"}]
    for mart in MARTS:
        assert count(warehouse, f"marts.{mart}") > 0, mart
    # the SQL its docs page hands an analyst runs as written on this build, with rows
    assert_documented_queries_return_rows(warehouse, "reasoning")
    # the suite's build is tsrate's: its data tests ran in one connection, all passing
    (log_file,) = (warehouse.parent / "logs").glob(f"dbt-build-{suite_run_id}-*.log")
    build_log = log_file.read_text()
    ran = re.search(r"data tests: (\d+) run in one connection in [\d.]+s: PASS=(\d+) ", build_log)
    assert ran and int(ran.group(1)) == int(ran.group(2)) > 20, build_log[-2000:]
    assert '"unique_id"' not in build_log  # the selected tests' list is not printed

    tasks = read(warehouse, "select * from marts.rsn_task_accuracy").set_index("task")
    assert set(tasks.index) == {"etiological", "qa_single", "qa_two", "qa_perturbed"}
    assert (tasks["system_id"] == "random").all()
    # chance is 1 / options averaged over the items (trend what-ifs have 3 options, others 4)
    n_options = read(
        warehouse, "select task, len(options) as n from raw.rsn_items where task <> 'forecast'"
    )
    chance = (1.0 / n_options["n"]).groupby(n_options["task"]).mean()
    assert tasks["chance_level"].to_dict() == pytest.approx(chance.to_dict())
    assert (tasks.drop(index="qa_single")["chance_level"] == 0.25).all()
    # the mart's accuracy is the share of raw responses naming the stored answer
    raw = read(
        warehouse,
        "select i.task, p.condition, r.parsed_choice = i.answer_index as correct "
        "from raw.rsn_responses r join raw.rsn_prompts p using (prompt_hash) "
        "join raw.rsn_items i using (item_id) where p.system_id = 'random'",
    )
    expected = raw[raw["condition"] == "with_series"].groupby("task")["correct"].mean()
    np.testing.assert_allclose(tasks.loc[expected.index, "accuracy"], expected)
    without = raw[raw["condition"] == "without_series"].groupby("task")["correct"].mean()
    np.testing.assert_allclose(
        tasks.loc[without.index, "series_gap"],
        expected[without.index] - without,
    )
    assert np.isnan(tasks.loc["etiological", "accuracy_without_series"])
    # every accuracy carries its Wilson interval, as statsmodels computes it
    from statsmodels.stats.proportion import proportion_confint

    for task, row in tasks.iterrows():
        k = round(row["accuracy"] * row["n_items"])
        ref = proportion_confint(k, row["n_items"], method="wilson")
        bounds = (row["accuracy_ci_low"], row["accuracy_ci_high"])
        assert bounds == pytest.approx(ref, rel=1e-12, abs=1e-15), task
    # and so does every row of rsn_accuracy (the same wilson_interval macro, its own arguments)
    accuracy = read(warehouse, "select * from marts.rsn_accuracy where accuracy is not null")
    assert len(accuracy) > 0
    for row in accuracy.itertuples():
        k = round(row.accuracy * row.n_items)
        ref = proportion_confint(k, row.n_items, method="wilson")
        bounds = (row.accuracy_ci_low, row.accuracy_ci_high)
        assert bounds == pytest.approx(ref, rel=1e-12, abs=1e-15), row

    errors = read(warehouse, "select * from marts.rsn_forecast_errors").set_index(
        ["system_id", "condition"]
    )
    assert set(errors.index) == {
        ("naive", "without_context"),
        ("median", "without_context"),
        ("arima", "without_context"),
        ("fracast", "without_context"),
        *(("context_rule", condition) for condition in FORECAST_CONTEXTS),
    }
    assert errors.loc[("fracast", "without_context"), "n_items"] == 2
    naive = errors.loc[("naive", "without_context")]
    assert naive["n_scored"] == 4 and naive["n_unparseable"] == 0
    assert naive["mae"] == pytest.approx(naive_errors(warehouse).mean())
    median = errors.loc[("median", "without_context")]
    assert median["mae"] == pytest.approx(median["baseline_mae"])  # the baseline itself
    context = read(warehouse, "select * from marts.rsn_context_effects")
    assert context["system_id"].tolist() == ["context_rule"]
    assert context["n_paired"][0] == 4 and context["mae_gain"][0] > 0
    # the gain recomputed from the raw forecasts: normalised MAE without minus with context
    raw_forecasts = read(
        warehouse,
        "select i.item_id, i.series, i.future, p.condition, r.forecast "
        "from raw.rsn_responses r join raw.rsn_prompts p using (prompt_hash) "
        "join raw.rsn_items i using (item_id) where p.system_id = 'context_rule'",
    )
    rule_mae = {
        (row.item_id, row.condition): np.mean(np.abs(np.asarray(row.forecast) - row.future))
        / (np.asarray(row.series).std() or 1.0)
        for row in raw_forecasts.itertuples()
    }
    rule_items = {item for item, _ in rule_mae}
    assert context["mae_gain"][0] == pytest.approx(
        np.mean(
            [rule_mae[(i, "without_context")] - rule_mae[(i, "with_context")] for i in rule_items]
        )
    )
    # Figure A.5: a row per context combination; the rule reads the caption's numbers
    # wherever the caption is given and nothing else (characteristics state no numbers)
    combos = read(warehouse, "select * from marts.rsn_context_combinations").set_index(
        "paper_label"
    )
    assert sorted(combos.index) == ["Ca", "CaMe", "Ch", "ChMe", "all"]
    assert (combos["system_id"] == "context_rule").all() and (combos["n_paired"] == 4).all()
    for label in ("Ca", "CaMe", "all"):
        assert combos.loc[label, "mae_gain"] == pytest.approx(context["mae_gain"][0])
    for label in ("Ch", "ChMe"):
        assert combos.loc[label, "mae_gain"] == 0 and combos.loc[label, "n_improved"] == 0
    # each gain's t 95 % interval over the paired items, recomputed from the raw forecasts
    for label, row in combos.iterrows():
        gains = [
            rule_mae[(i, "without_context")] - rule_mae[(i, row["condition"])] for i in rule_items
        ]
        assert (row["mae_gain_ci_low"], row["mae_gain_ci_high"]) == pytest.approx(
            t_interval(gains), abs=1e-12
        ), label
    # the caption's gains differ across items: a real width, where a z quantile would fail
    ca = combos.loc["Ca"]
    assert ca["mae_gain_ci_low"] < ca["mae_gain"] < ca["mae_gain_ci_high"]
    # Section 5.3: the random answerer's paired comparison, recomputed from the raw tables
    pert = read(warehouse, "select * from marts.rsn_perturbation_effects").set_index("condition")
    raw_choices = read(
        warehouse,
        "select i.item_id, i.task, i.params, p.condition, r.parsed_choice, i.answer_index "
        "from raw.rsn_responses r join raw.rsn_prompts p using (prompt_hash) "
        "join raw.rsn_items i using (item_id) where p.system_id = 'random' "
        "and i.task in ('qa_two', 'qa_perturbed')",
    )
    by_key = {(r.item_id, r.condition): r for r in raw_choices.itertuples()}
    for condition in ("with_series", "without_series"):
        twins = [
            r for r in raw_choices.itertuples()
            if r.task == "qa_perturbed" and r.condition == condition
        ]  # fmt: skip
        originals = [by_key[(json.loads(r.params)["original_item_id"], condition)] for r in twins]
        row = pert.loc[condition]
        assert row["n_pairs"] == len(twins) == 4
        assert row["accuracy_perturbed"] == pytest.approx(
            np.mean([r.parsed_choice == r.answer_index for r in twins])
        )
        assert row["accuracy_original"] == pytest.approx(
            np.mean([r.parsed_choice == r.answer_index for r in originals])
        )
        assert row["n_lured"] == sum(
            r.parsed_choice == json.loads(r.params)["perturbed_index"] for r in twins
        )
        # the drop's t 95 % interval over the pairs (each 1, 0 or -1), clipped to [-1, 1]
        drops = [
            float(o.parsed_choice == o.answer_index) - float(t.parsed_choice == t.answer_index)
            for o, t in zip(originals, twins, strict=True)
        ]
        assert row["accuracy_drop"] == pytest.approx(np.mean(drops))
        expected_drop = t_interval(drops, clip=(-1.0, 1.0))
        assert (row["accuracy_drop_ci_low"], row["accuracy_drop_ci_high"]) == pytest.approx(
            expected_drop, abs=1e-12
        ), condition
        unclipped = [end for end in expected_drop if -1 < end < 1]
        assert unclipped, condition  # at least one end the quantile and the sd decide

    assert (errors["coverage"] == 1).all()
    assert (errors["mae_ci_low"] <= errors["mae"] + 1e-12).all()
    assert (errors["mae"] <= errors["mae_ci_high"] + 1e-12).all()
    assert (errors["mae_minmax"] > 0).all()
    ratings = read(warehouse, "select * from marts.rsn_ratings")
    stability = read(warehouse, "select * from marts.rsn_rating_stability")
    assert len(stability) == len(ratings)
    assert stability["share_at_rating"].dropna().between(0, 1).all()
    # every rated score carries its interval (series_gap and context_gain included) unless
    # its score is undefined in more than 5 % of the resamples: then share and interval are
    # withheld. Only fracast misses items (it forecast 2 of the 4), so only fracast's score
    # can be undefined in a resample (neither of its items drawn: about 1 in 16)
    withheld = stability["n_resamples_undefined"] > 0.05 * stability["n_resamples"]
    assert stability.loc[~withheld, ["ci_low", "ci_high"]].notna().all().all()
    assert stability.loc[withheld, ["ci_low", "ci_high", "share_at_rating"]].isna().all().all()
    undefined = stability[stability["n_resamples_undefined"] > 0]
    assert set(undefined["system_id"]) <= {"fracast"}
    shown = stability[~withheld]
    assert (shown["ci_low"] <= shown["raw_score"] + 1e-9).all()
    assert (shown["raw_score"] <= shown["ci_high"] + 1e-9).all()
    gains = stability[stability["metric"].isin(["series_gap", "context_gain"])]
    assert set(gains["metric"]) == {"series_gap", "context_gain"}
    assert {"accuracy", "series_gap", "mae", "mse", "context_gain"} <= set(ratings["metric"])
    # a lone context_rule on MAE/MSE (no known worst value) is not rated, and says why; a
    # lone or all-tied series_gap / context_gain (no ideal) is not rated either
    # fracast forecast 2 of the 4 items: its errors are shown but held back from the ranking
    held = ratings["rating_reason"].fillna("").str.contains("of the 4 forecasting items")
    assert set(ratings.loc[held, "system_id"]) == {"fracast"}
    assert set(ratings.loc[held, "metric"]) == {"mae", "mse", "crps"}
    assert ratings.loc[held, ["rating", "rank"]].isna().all().all()
    unrated = ratings["rating"].isna() & ~held
    shown = ratings.loc[unrated, ["metric", "task", "system_id", "raw_score", "rating_reason"]]
    unscaled = unrated & ratings["metric"].isin(["mae", "mse", "crps"])
    no_ideal = unrated & ratings["metric"].isin(["series_gap", "context_gain"])
    assert (unscaled | no_ideal)[unrated].all(), shown
    assert ratings.loc[unscaled, "rating_reason"].str.contains("no known worst value").all()
    assert ratings.loc[no_ideal, "rating_reason"].str.contains("no ideal value").all(), shown
    size = ratings.groupby(GROUP)["raw_score"].transform("nunique")
    assert (size[unrated] == 1).all(), shown  # only lone or all-tied groups are unrated
    assert ratings.loc[~unscaled & ~held, "rating"].between(1, 3).all()
    assert_ratings_never_mislead(ratings, GROUP)
    assert_ratings_never_mislead(stability, GROUP)
    # every published score lies inside its own interval; no near-zero noise in the ends
    assert_scores_inside_intervals(stability, GROUP)
    # reads like marts.ratings: the ranked systems (fracast, held back, not counted)
    per_group = ratings.groupby(["metric", "task"])["rank"].transform("count")
    assert (ratings["n_systems"] == per_group).all()
    report = (tmp_path / "reports" / "reasoning.html").read_text()
    assert "<svg" in report and "Context-aided forecasting" in report and suite_run_id in report
    assert "Perturbed questions (paper Section 5.3)" in report
    assert "<th>CI low</th>" in report and "<th>CI high</th>" in report  # ratings table
    assert "Context combinations (paper Figure A.5)" in report
    for column in ("mae_gain_ci_low", "mae_gain_ci_high", "accuracy_drop_ci_low"):
        assert f"<th>{human(column)}</th>" in report, column
    assert_suite_published(warehouse, "reasoning", suite_run_id, tmp_path)

    # 3. resumable: a second run asks nothing new (every prompt hash has a response)
    responses = count(warehouse, "raw.rsn_responses")
    second = reasoning_flow(generator=TINY, fracast=2, warehouse=str(warehouse), build=False)
    assert count(warehouse, "raw.rsn_responses") == responses
    linked = read(
        warehouse,
        "select count(*) as n from raw.rsn_suite_run_prompts where suite_run_id = ?",
        [second],
    )
    assert linked["n"][0] == responses


def test_import_fills_the_marts_and_a_bad_file_leaves_nothing(
    tmp_path, prefect_harness, dbt_target
):
    from flows.reasoning import reasoning_flow

    warehouse = tmp_path / "tsrate.duckdb"
    rows = good_rows()
    rows[5]["answer_index"] = 7
    bad = write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError, match=r"bad\.jsonl:6: field 'answer_index'"):
        reasoning_flow(import_path=bad, warehouse=str(warehouse))
    with connect(warehouse) as con:  # nothing half-imported: not even a suite run row
        tables = {
            r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()
        }
        # raw tables are created at the writing edge (platform.raw_schema): a refused file may
        # leave them absent, or created and empty, never holding a row of it
        for table in ("rsn_items", "suite_runs"):
            if table in tables:
                assert con.execute(f"select count(*) from raw.{table}").fetchone()[0] == 0

    good = write(tmp_path / "tsqa.jsonl", good_rows())
    reasoning_flow(import_path=good, warehouse=str(warehouse), target_path=str(dbt_target))
    items = read(warehouse, "select task, source, params from raw.rsn_items")
    assert (items["source"] == "import").all()
    assert sorted(items["task"].value_counts().items()) == [
        ("etiological", 5),
        ("forecast", 5),
        ("qa_single", 2),
        ("qa_two", 1),
    ]
    assert json.loads(items["params"][0])["file"] == good
    accuracy = read(
        warehouse, "select task, category, n_items from marts.rsn_accuracy order by all"
    )
    assert accuracy.values.tolist() == [
        ["etiological", "Tourism", 5],
        ["qa_single", "counterfactual", 2],
        ["qa_two", "difference", 1],
    ]
    assert count(warehouse, "marts.rsn_forecast_errors") == 4  # naive, median, arima, fracast
    # the rule needs the generator's parameters: imported items have none
    assert count(warehouse, "marts.rsn_context_effects") == 0


def test_language_model_through_a_local_server_fills_the_same_marts(
    tmp_path, monkeypatch, prefect_harness, dbt_target
):
    pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
    from flows.reasoning import reasoning_flow
    from tests.support.chat_server import ChatServer

    def responder(payload):
        prompt = payload["messages"][-1]["content"]
        if "Continue the series" in prompt:  # repeat the last encoded value (a naive forecaster)
            horizon = int(re.search(r"write the next (\d+) values", prompt).group(1))
            # the history line ends with the value separator: " ," (llmtime_gpt) or ", "
            # (llmtime_gpt4, the forecasting default)
            series = [line for line in prompt.splitlines() if line.endswith((" ,", ", "))][-1]
            last = series.split(",")[-2]
            return 200, (last + " ,") * horizon
        if "trend" in prompt:
            return 200, "It depends on the trend."  # unparseable: kept and counted
        return 200, "Answer: A"

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")  # resuming must not rely on the cache
    with ChatServer(responder, delay_s=0.02) as server:
        monkeypatch.setenv("TSRATE_QA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_QA_LLM_MODEL", "echo")
        warehouse = tmp_path / "tsrate.duckdb"
        reasoning_flow(
            generator=TINY,
            llms=["endpoint:qa_llm"],
            warehouse=str(warehouse),
            target_path=str(dbt_target),
        )
        asked = len(server.payloads)
        assert server.max_in_flight >= 2  # the endpoint's concurrency
        reasoning_flow(
            generator=TINY, llms=["endpoint:qa_llm"], warehouse=str(warehouse), build=False
        )
        assert len(server.payloads) == asked  # resumed: nothing asked twice

    tasks = read(warehouse, "select * from marts.rsn_task_accuracy where system_id = 'qa_llm'")
    assert set(tasks["task"]) == {"etiological", "qa_single", "qa_two", "qa_perturbed"}
    assert (tasks["system_kind"] == "language_model").all()
    # hand-worked Section 5.3 scoring: "Answer: A" is right where the answer is A, and
    # lured where the near copy stands at A (4 pairs; (answer, near copy) of the seed-11
    # twins: (2,1), (0,3), (2,0), (0,3); the first and last originals' prompts mention a
    # trend, so the responder's reply there is unparseable: the last pair is gained)
    pert = read(
        warehouse,
        "select * from marts.rsn_perturbation_effects "
        "where system_id = 'qa_llm' and condition = 'with_series'",
    )
    assert pert["n_pairs"][0] == 4
    assert pert["n_lured"][0] == 1 and pert["share_lured"][0] == pytest.approx(1 / 4)
    assert pert["accuracy_perturbed"][0] == pytest.approx(2 / 4)
    assert pert["accuracy_original"][0] == pytest.approx(1 / 4) and pert["n_lost"][0] == 0
    unparseable = read(warehouse, "select * from marts.rsn_unparseable_responses")
    assert (
        len(unparseable)
        == tasks["n_unparseable"].sum() + tasks["n_unparseable_without_series"].fillna(0).sum()
    )
    assert len(unparseable) > 0
    assert (unparseable["raw_text"] == "It depends on the trend.").all()
    assert unparseable["parse_error"].str.contains("no option letter").all()
    # "Answer: A" is right exactly where the answer is A
    raw = read(
        warehouse,
        "select i.answer_index, r.parse_ok from raw.rsn_responses r "
        "join raw.rsn_prompts p using (prompt_hash) join raw.rsn_items i using (item_id) "
        "where p.system_id = 'qa_llm' and p.condition = 'with_series' and i.task = 'etiological'",
    )
    etiological = tasks.set_index("task").loc["etiological", "accuracy"]
    assert etiological == pytest.approx(((raw["answer_index"] == 0) & raw["parse_ok"]).mean())

    errors = read(warehouse, "select * from marts.rsn_forecast_errors").set_index(
        ["system_id", "condition"]
    )
    llm = errors.loc[("qa_llm", "with_context")]
    assert llm["n_scored"] == 4 and llm["n_unparseable"] == 0
    # decoded LLMTime replies are the last value up to the encoding's precision
    assert llm["mae"] == pytest.approx(errors.loc[("naive", "without_context"), "mae"], rel=0.02)
    effects = read(warehouse, "select * from marts.rsn_context_effects where system_id = 'qa_llm'")
    assert effects["n_paired"][0] == 4 and effects["mae_gain"][0] == pytest.approx(0.0)
    ratings = read(warehouse, "select * from marts.rsn_ratings")
    assert "qa_llm" in set(ratings["system_id"])
    assert_ratings_never_mislead(ratings, GROUP)
    assert_ratings_never_mislead(read(warehouse, "select * from marts.rsn_rating_stability"), GROUP)


def test_a_language_model_answering_garbage_ranks_last(
    tmp_path, monkeypatch, prefect_harness, dbt_target
):
    pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
    from flows.reasoning import reasoning_flow
    from tests.support.chat_server import ChatServer

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    with ChatServer(lambda payload: (200, "<|endoftext|> lorem ipsum")) as server:
        monkeypatch.setenv("TSRATE_QA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_QA_LLM_MODEL", "garbage")
        warehouse = tmp_path / "tsrate.duckdb"
        reasoning_flow(
            generator=TINY,
            llms=["endpoint:qa_llm"],
            warehouse=str(warehouse),
            target_path=str(dbt_target),
        )
    errors = read(warehouse, "select * from marts.rsn_forecast_errors where system_id = 'qa_llm'")
    assert (errors["n_scored"] == 0).all() and (errors["coverage"] == 0).all()
    assert (errors["n_unparseable"] == errors["n_items"]).all()
    tasks = read(warehouse, "select * from marts.rsn_task_accuracy where system_id = 'qa_llm'")
    assert (tasks["accuracy"] == 0).all() and tasks["series_gap"].isna().all()
    ratings = read(warehouse, "select * from marts.rsn_ratings")
    assert_ratings_never_mislead(ratings, GROUP)
    assert_ratings_never_mislead(read(warehouse, "select * from marts.rsn_rating_stability"), GROUP)
    attempted = ratings[ratings["system_id"] == "qa_llm"]
    assert {"accuracy", "mae", "mse"} <= set(attempted["metric"])
    # no usable answer: no series_gap, listed not rated with why (never silently missing)
    gaps = attempted[attempted["metric"] == "series_gap"]
    assert len(gaps) == len(tasks[tasks["task"].str.startswith("qa_")]) > 0
    assert gaps["raw_score"].isna().all() and gaps["rating"].isna().all()
    assert (gaps["rating_reason"] == f"not rated: {NO_GAP_EVIDENCE}").all()
    rated_together = ratings[ratings["metric"] == "series_gap"].groupby("task")["rank"].count()
    assert (gaps["n_systems"].to_numpy() == rated_together[gaps["task"]].to_numpy()).all()
    for (metric, task), block in ratings.groupby(["metric", "task"]):
        mine = block[(block["system_id"] == "qa_llm") & block["raw_score"].notna()]
        if mine.empty:
            continue
        others = block[block["system_id"] != "qa_llm"]
        if mine["higher_is_better"].iloc[0]:
            assert (mine["raw_score"].iloc[0] <= others["raw_score"]).all(), (metric, task)
        else:
            assert (mine["raw_score"].iloc[0] >= others["raw_score"]).all(), (metric, task)
    report = (tmp_path / "reports" / "reasoning.html").read_text()
    n_unusable = int(
        read(
            warehouse,
            "select count(*) as n from marts.rsn_unparseable_responses where system_id = 'qa_llm'",
        )["n"][0]
    )
    assert n_unusable > 0 and f"qa_llm: {n_unusable} of" in report
    listed = re.search(r'<section id="not-rated">.*?</section>', report, re.S).group(0)
    assert "<code>qa_llm</code>" in listed and NO_GAP_EVIDENCE in listed
