"""The understanding suite end to end: generate -> prompt -> raw tables -> dbt marts, resumable;
offline references through the Prefect flow, and a language model through a local chat server."""

from __future__ import annotations

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
from tests.support.warehouses import read
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.suites import SUITES
from tsrate.suites.understanding.formats import FORMATS
from tsrate.suites.understanding.scoring import parse_reply
from tsrate.suites.understanding.tasks import TASKS

pytestmark = pytest.mark.slow

GROUP = ["suite_run_id", "metric", "prompting", "feature"]  # one rated group of und_ratings
SELECT = ["build", "--select", "tag:understanding", "--indirect-selection", "cautious"]
#: tsrate's build of the same selection (what the suite's flow runs): its data tests in one
#: connection; plain dbt's build (SELECT) stays checked in the first test and with --vars
BUILD = ["tsrate-build", "--select", "tag:understanding"]
#: the env var naming the suite run the marts describe (not --vars: keeps dbt's parse)
RUN_ENV = SUITES["understanding"].run_env
TINY = {
    "train": 1,
    "validation": 1,
    "test": 2,
    "position_per_cell": 1,
    "position_length": 40,
    "max_length": 60,
    "datasets": ["trend", "seasonality", "anomalies", "volatility", "correlation", "outlier"],
}


#: position sets: left out of the format table and the length curves
POSITION_SETS = ("brownian", "outlier", "monotone", "monotone_noise", "sinusoidal")


def raw_correct(warehouse) -> pd.DataFrame:
    """Every zero-shot reply of the suite run with ``correct`` recomputed here from the raw
    replies and prompts (independent of the suite's scoring code): choice tasks the parsed
    answer equal to the expected one; numeric tasks the parsed value equal to the truth at
    the prompt's printed decimals; an unusable reply wrong."""
    frame = read(
        warehouse,
        "select r.system_id, p.task, p.feature, p.dataset, p.format, p.series_length, "
        "p.decimals, r.parse_ok, r.answer, r.answer_value, p.expected->>'answer' as truth, "
        "cast(p.expected->>'value' as double) as truth_value "
        "from raw.und_responses r join raw.und_prompts p using (prompt_key) "
        "where p.prompting = 'zero_shot'",
    )
    numeric = frame["task"].isin(["retrieval", "arithmetic_min", "arithmetic_max"])
    same_value = [
        bool(ok and num and abs(round(a, d) - round(t, d)) < 0.5 * 10.0**-d)
        for a, t, d, ok, num in zip(
            frame["answer_value"],
            frame["truth_value"],
            frame["decimals"],
            frame["parse_ok"],
            numeric,
            strict=True,
        )
    ]
    same_answer = frame["parse_ok"] & (frame["answer"] == frame["truth"])
    frame["correct"] = np.where(numeric, same_value, same_answer).astype(bool)
    return frame


def wilson(k: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    return proportion_confint(k, n, alpha=0.05, method="wilson")


def test_offline_suite_fills_the_marts_and_resumes(tmp_path, prefect_harness, dbt_target):
    from flows.understanding import understanding_flow

    warehouse = tmp_path / "tsrate.duckdb"
    target = dbt_target
    # 1. the suite's models build on a warehouse where it never ran (no raw.und_* tables)
    with connect(warehouse):
        pass
    dbt.run_dbt(SELECT, None, warehouse, lambda _: None, target, {RUN_ENV: "latest"})
    assert read(warehouse, "select count(*) n from marts.und_ratings")["n"][0] == 0

    # 2. the offline run: statistical analyst and random answerer, every task and format
    suite_run_id = understanding_flow(
        warehouse=str(warehouse), target_path=str(target), overrides=TINY
    )
    status = read(
        warehouse, "select status from raw.suite_runs where suite_run_id = ?", [suite_run_id]
    )
    assert status["status"].tolist() == ["succeeded"]
    assert_suite_published(warehouse, "understanding", suite_run_id, tmp_path)
    # the SQL its docs page hands an analyst runs as written on this build, with rows
    assert_documented_queries_return_rows(warehouse, "understanding")
    scores = read(warehouse, "select * from marts.und_scores")
    assert set(scores["suite_run_id"]) == {suite_run_id}
    assert set(scores["system_id"]) == {"und_analyst", "und_random"}
    for system in ("und_analyst", "und_random"):
        mine = scores[scores["system_id"] == system]
        assert set(mine["task"]) == set(TASKS) and set(mine["format"]) == set(FORMATS)
    analyst = scores[scores["system_id"] == "und_analyst"].set_index(["task", "feature", "format"])
    # reading the table back out of any format, the analyst retrieves every value and extreme
    assert (analyst.loc["retrieval", "accuracy"] == 1).all()
    assert (analyst.loc["arithmetic_max", "date_accuracy"] == 1).all()
    # the marts agree with the raw replies: accuracy recomputed from raw for one cell
    raw = read(
        warehouse,
        "select r.parse_ok, r.answer, p.expected->>'answer' as truth from raw.und_responses r "
        "join raw.und_prompts p using (prompt_key) where r.system_id = 'und_random' "
        "and p.task = 'detection' and p.feature = 'trend' and p.format = 'json'",
    )
    random_trend = scores.set_index(["system_id", "task", "feature", "format"]).loc[
        ("und_random", "detection", "trend", "json")
    ]
    assert random_trend["n_prompts"] == len(raw)
    assert random_trend["accuracy"] == pytest.approx((raw["answer"] == raw["truth"]).mean())
    unparsed = read(warehouse, "select count(*) n from marts.und_unparsed_answers")["n"][0]
    # the mart lists every kind of unusable answer; a finished run left none unanswered
    assert unparsed == scores[["n_unparsed", "n_abstained", "n_unanswered"]].sum().sum()
    assert scores["n_unanswered"].sum() == 0
    # abstentions ("None of these": the analyst's honest answer when its finding is not an
    # option) are counted apart: the stored replies re-read by the parser agree
    replies = read(
        warehouse,
        "select r.raw_text, p.task, p.options, p.prompting from raw.und_responses r "
        "join raw.und_prompts p using (prompt_key)",
    )
    abstained = sum(
        parse_reply(r.task, r.raw_text, tuple(r.options), r.prompting).abstained
        for r in replies.itertuples(index=False)
    )
    assert scores["n_abstained"].sum() == abstained
    # Appendix D: the confusion matrix counts the raw answers (unusable ones a column)
    keys = ["task", "feature", "truth", "predicted"]
    answers = read(
        warehouse,
        "select p.task, p.feature, p.expected->>'answer' as truth, r.parse_ok, r.answer "
        "from raw.und_responses r join raw.und_prompts p using (prompt_key) "
        "where r.system_id = 'und_random' and p.task in ('detection', 'classification')",
    )
    answers["predicted"] = answers["answer"].where(answers["parse_ok"], "(unusable)")
    confusion = read(
        warehouse,
        "select task, feature, truth, predicted, n_prompts from marts.und_confusion_matrix "
        "where system_id = 'und_random' and task in ('detection', 'classification')",
    )
    assert (confusion["predicted"] != "(unusable)").any() and len(confusion) > 10
    assert confusion.set_index(keys)["n_prompts"].sort_index().to_dict() == (
        answers.groupby(keys).size().sort_index().to_dict()
    )
    # Figure 3: prompts per 30-day length bin, counted from the raw prompts
    lengths = read(
        warehouse,
        "select task, dataset, format, series_length from raw.und_prompts "
        "where task in ('retrieval', 'arithmetic_min', 'arithmetic_max') and dataset <> 'outlier'",
    )
    lengths["length_bin_start"] = lengths["series_length"] // 30 * 30
    binned = read(
        warehouse,
        "select task, dataset, format, length_bin_start, n_prompts from marts.und_length_curves "
        "where system_id = 'und_random'",
    )
    bin_keys = ["task", "dataset", "format", "length_bin_start"]
    assert len(binned) > 10
    assert binned.set_index(bin_keys)["n_prompts"].sort_index().to_dict() == (
        lengths.groupby(bin_keys).size().sort_index().to_dict()
    )
    # the series, the unit the pooled intervals count: every prompt of every cell once
    per_series = read(
        warehouse,
        "select system_id, task, sum(n_prompts) as n, sum(n_correct) as k, count(*) as units "
        "from marts.und_series_scores group by all order by all",
    ).set_index(["system_id", "task"])
    cells = scores.assign(k=(scores["accuracy"] * scores["n_prompts"]).round())
    cells = cells.groupby(["system_id", "task"])[["n_prompts", "k"]].sum()
    assert per_series["n"].to_dict() == cells["n_prompts"].to_dict()
    assert per_series["k"].to_dict() == cells["k"].astype(int).to_dict()
    # detection is asked of feature series only, each in every format
    detection = per_series.xs("detection", level="task")
    assert (detection["units"] * len(FORMATS) <= detection["n"]).all()
    bias = read(warehouse, "select * from marts.und_position_bias where dataset = 'outlier'")
    assert set(bias["quadrant"]) == {1, 2, 3, 4}
    # one series per cell: every cell too small to judge, so no flag at all
    assert not bias["judgeable"].any() and bias["position_bias"].isna().all()
    stability = read(warehouse, "select * from marts.und_rating_stability")
    assert len(stability) == len(read(warehouse, "select * from marts.und_ratings"))
    assert stability["share_at_rating"].dropna().between(0, 1).all()
    # every rated score carries the interval of the same prompt resamples
    assert stability[["ci_low", "ci_high"]].notna().all().all()
    assert (stability["ci_low"] <= stability["raw_score"] + 1e-9).all()
    assert (stability["raw_score"] <= stability["ci_high"] + 1e-9).all()
    assert (scores["accuracy_ci_low"] <= scores["accuracy"]).all()
    curves = read(warehouse, "select * from marts.und_length_curves")
    assert set(curves["length_bin_start"]) <= {30, 60} and curves["n_prompts"].sum() > 0
    # every bin's accuracy carries the Wilson interval of its prompts, as statsmodels
    # computes it from the raw replies (a wrong z or formula fails: k = 0 gives
    # z^2 / (n + z^2) at the top, k = n the mirror at the bottom)
    replies = raw_correct(warehouse)
    replies = replies[
        replies["task"].isin(["retrieval", "arithmetic_min", "arithmetic_max"])
        & ~replies["dataset"].isin(POSITION_SETS)
    ].assign(length_bin_start=lambda f: f["series_length"] // 30 * 30)
    curve_keys = ["system_id", "task", "dataset", "format", "length_bin_start"]
    counted = replies.groupby(curve_keys)["correct"].agg(["sum", "size"])
    by_curve = curves.set_index(curve_keys).sort_index()
    assert len(by_curve) == len(counted)
    assert {0, 1} <= set((counted["sum"] / counted["size"]).round(6))  # both extremes met
    for key, (k, n) in counted.iterrows():
        row = by_curve.loc[key]
        assert row["accuracy"] == pytest.approx(k / n), key
        assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == pytest.approx(
            wilson(int(k), int(n)), abs=1e-12
        ), key
    # Table 4: score's interval = score ± z sqrt(sum_f se_f^2) / F, se_f the cell's 95 %
    # interval width / (2 z); accuracy cells' Wilson ends recomputed from the raw replies,
    # F1 cells' bootstrap ends taken from und_scores
    z = stats.norm.ppf(0.975)
    table = read(warehouse, "select * from marts.und_format_table")
    table = table.set_index(["system_id", "format", "task"]).sort_index()
    cells = raw_correct(warehouse)
    cells = cells[~cells["feature"].isin(POSITION_SETS)]
    cell_counts = cells.groupby(["system_id", "format", "task", "feature"])["correct"].agg(
        ["sum", "size"]
    )
    f1_cells = (
        scores[
            scores["task"].isin(["detection", "classification"])
            & ~scores["feature"].isin(POSITION_SETS)
        ]
        .set_index(["system_id", "format", "task", "feature"])
        .sort_index()
    )
    checked = {"f1": 0, "accuracy": 0}
    for key, row in table.iterrows():
        if row["metric"] == "f1":
            block = f1_cells.loc[key]
            values = block["f1"].to_numpy()
            widths = (block["f1_ci_high"] - block["f1_ci_low"]).to_numpy()
        else:
            block = cell_counts.loc[key]
            values = (block["sum"] / block["size"]).to_numpy()
            ends = np.array([wilson(int(k), int(n)) for k, n in block.to_numpy()])
            widths = ends[:, 1] - ends[:, 0]
        score = values.mean()
        half = z * np.sqrt(np.sum((widths / (2 * z)) ** 2)) / len(values)
        assert row["score"] == pytest.approx(score), key
        assert row["n_features"] == len(values), key
        assert row["score_ci_low"] == pytest.approx(max(0.0, score - half), abs=1e-12), key
        assert row["score_ci_high"] == pytest.approx(min(1.0, score + half), abs=1e-12), key
        checked[row["metric"]] += 1
    assert checked["f1"] > 0 and checked["accuracy"] > 0
    # rows of several features: there sqrt(sum se^2) / F differs from the mean of the ends
    assert (table["n_features"] > 1).any()
    ratings = read(warehouse, "select * from marts.und_ratings")
    assert {"detection_f1", "retrieval_accuracy", "matching_cross_accuracy"} <= set(
        ratings["metric"]
    )
    assert_ratings_never_mislead(ratings, GROUP)
    assert_ratings_never_mislead(stability, GROUP)
    # every published score lies inside its own interval; no near-zero noise in the ends
    assert_scores_inside_intervals(stability, GROUP)
    retrieval = ratings[ratings["metric"] == "retrieval_accuracy"].set_index(
        ["feature", "system_id"]
    )
    assert (
        retrieval.xs("und_analyst", level="system_id")["rating"]
        > retrieval.xs("und_random", level="system_id")["rating"]
    ).all()
    report = (tmp_path / "reports" / "understanding.html").read_text()
    assert "<svg" in report and "Feature detection (F1)" in report and "spaces" in report
    assert "show every rated score with its interval" in report
    assert "und_analyst reads the series back out of the prompt's own table" in report
    # the new intervals are shown where their scores are: Table 4 and the length curves
    first = table.reset_index().iloc[0]
    assert f"<small>[{first['score_ci_low']:.2f}, {first['score_ci_high']:.2f}]</small>" in report
    assert "show the accuracy of every length bin with its interval" in report

    # 3. a rerun reuses every stored answer and asks nothing
    n_responses = read(warehouse, "select count(*) n from raw.und_responses")["n"][0]
    second = understanding_flow(
        warehouse=str(warehouse), target_path=str(target), overrides=TINY, build=False
    )
    assert second != suite_run_id
    assert read(warehouse, "select count(*) n from raw.und_responses")["n"][0] == n_responses


def test_zero_shot_and_chain_of_thought_fill_the_marts_side_by_side(
    tmp_path, prefect_harness, dbt_target
):
    """``--prompting both``: every question asked zero-shot and with the CoT instruction;
    the offline references reply in the CoT form and the marts keep the styles apart."""
    from flows.understanding import understanding_flow

    warehouse = tmp_path / "tsrate.duckdb"
    target = dbt_target
    overrides = {
        **TINY,
        "formats": ["csv", "json"],
        "datasets": ["trend", "anomalies", "correlation", "seasonality", "outlier"],
        "promptings": ["zero_shot", "cot"],
    }
    suite_run_id = understanding_flow(
        warehouse=str(warehouse), target_path=str(target), overrides=overrides
    )
    prompts = read(
        warehouse,
        "select prompting, count(*) n from raw.und_prompts join raw.und_suite_run_prompts "
        "using (prompt_key) where suite_run_id = ? group by all",
        [suite_run_id],
    ).set_index("prompting")["n"]
    assert set(prompts.index) == {"zero_shot", "cot"} and prompts["cot"] == prompts["zero_shot"]
    cot_replies = read(
        warehouse,
        "select r.raw_text from raw.und_responses r join raw.und_prompts p using (prompt_key) "
        "where p.prompting = 'cot'",
    )
    assert cot_replies["raw_text"].str.contains("\nAnswer: ").all()

    scores = read(warehouse, "select * from marts.und_scores")
    grain = ["prompting", "system_id", "task", "feature", "format"]
    assert not scores.duplicated(grain).any()
    assert set(scores["prompting"]) == {"zero_shot", "cot"}
    by = scores.set_index(grain).sort_index()
    zero, cot = by.xs("zero_shot", level="prompting"), by.xs("cot", level="prompting")
    assert zero.index.equals(cot.index)  # the same cells in both styles
    # the analyst gives the same answers in both styles: the CoT path parses every one of them
    analyst = ["und_analyst"]
    for column in ("accuracy", "n_unparsed"):
        assert (zero.loc[analyst, column] == cot.loc[analyst, column]).all()
    assert (cot.loc[("und_analyst", "retrieval"), "accuracy"] == 1).all()
    for mart, key in (
        ("und_format_table", ["suite_run_id", "prompting", "system_id", "format", "task"]),
        ("und_position_bias", ["suite_run_id", "prompting", "system_id", "dataset", "task", "quadrant"]),
        ("und_confusion_matrix", ["suite_run_id", "prompting", "system_id", "task", "feature", "truth", "predicted"]),
        ("und_length_curves", ["suite_run_id", "prompting", "system_id", "task", "dataset", "format", "length_bin_start"]),
        ("und_ratings", [*GROUP, "system_id"]),
        ("und_rating_stability", [*GROUP, "system_id"]),
    ):  # fmt: skip
        frame = read(warehouse, f"select * from marts.{mart}")
        assert set(frame["prompting"]) == {"zero_shot", "cot"}, mart
        assert not frame.duplicated(key).any(), mart
    ratings = read(warehouse, "select * from marts.und_ratings")
    # rated within each prompting: each group compares the two references, never four entries
    assert (ratings["n_systems"] <= 2).all()
    assert_ratings_never_mislead(ratings, GROUP)
    unparsed = read(warehouse, "select * from marts.und_unparsed_answers where prompting = 'cot'")
    assert len(unparsed) == cot["n_unparsed"].sum() + cot["n_abstained"].sum()
    assert cot["n_unanswered"].sum() == 0
    assert unparsed["abstained"].sum() == cot["n_abstained"].sum()
    assert unparsed["parse_error"].str.startswith("the last 'Answer:' line: ").all()
    report = (tmp_path / "reports" / "understanding.html").read_text()
    assert "Zero-shot against chain of thought" in report and "und_analyst · cot" in report

    # a CoT-only rerun finds every answer stored and asks nothing
    n_responses = read(warehouse, "select count(*) n from raw.und_responses")["n"][0]
    understanding_flow(
        warehouse=str(warehouse),
        target_path=str(target),
        overrides={**overrides, "promptings": ["cot"]},
        build=False,
    )
    assert read(warehouse, "select count(*) n from raw.und_responses")["n"][0] == n_responses


def test_cot_parser_model_reads_replies_without_an_answer_line(tmp_path, monkeypatch):
    """A tiny local model that never writes an 'Answer:' line, asked with CoT; a second tiny
    local model (always "yes") as --cot-parser: yes/no questions are parsed by it (and
    recorded as such), every other answer stays unparseable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import GARBAGE, save_bigram_model
    from tsrate.suites.understanding.cot_parser import CotParser
    from tsrate.suites.understanding.suite import open_systems, resolve_config, run_suite

    says_yes = {":": "y", "y": "e", "e": "s", "s": "<eos>"}
    monkeypatch.setenv(
        "TSRATE_TINY_GARBAGE_MODEL_PATH", str(save_bigram_model(tmp_path / "g", GARBAGE))
    )
    monkeypatch.setenv(
        "TSRATE_TINY_YES_MODEL_PATH", str(save_bigram_model(tmp_path / "y", says_yes))
    )
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "4")
    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config(
        "small",
        {**TINY, "formats": ["csv"], "datasets": ["trend", "outlier"], "promptings": ["cot"]},
    )
    systems = open_systems(["hf_local:tiny_garbage"], references=False)
    suite_run_id, _ = run_suite(
        warehouse,
        config,
        systems,
        progress=lambda _: None,
        cot_parser=CotParser("hf_local:tiny_yes"),
    )
    dbt.run_dbt(
        # plain dbt's --vars (own target folder: a var costs the shared one's parse)
        SELECT,
        {"und_suite_run_id": suite_run_id},
        warehouse,
        lambda _: None,
        tmp_path / "target",
    )
    raw = read(
        warehouse,
        "select p.task, r.raw_text, r.parse_ok, r.parsed_by, r.parser, r.parser_text, r.answer "
        "from raw.und_responses r join raw.und_prompts p using (prompt_key)",
    )
    assert (raw["raw_text"] == "xxxx").all() and (raw["parser_text"] == "yes").all()
    assert raw["parser"].str.startswith("tiny_yes@").all()
    yes_no = raw["task"].isin(["detection", "search"])
    assert yes_no.any() and (raw.loc[yes_no, "parsed_by"] == "llm").all()
    assert (raw.loc[yes_no, "answer"] == "yes").all()
    assert not raw.loc[~yes_no, "parse_ok"].any() and raw.loc[~yes_no, "parsed_by"].isna().all()
    scores = read(warehouse, "select * from marts.und_scores")
    assert set(scores["prompting"]) == {"cot"}
    by_task = scores.groupby("task")[["n_prompts", "n_parsed_by_llm", "n_unparsed"]].sum()
    assert (
        by_task.loc[["detection", "search"], "n_parsed_by_llm"]
        == by_task.loc[["detection", "search"], "n_prompts"]
    ).all()
    assert (
        by_task.drop(["detection", "search"])["n_unparsed"]
        == by_task.drop(["detection", "search"])["n_prompts"]
    ).all()
    unparsed = read(warehouse, "select * from marts.und_unparsed_answers")
    assert (unparsed["parser_text"] == "yes").all()
    assert unparsed["parse_error"].str.contains("the parser model's extraction: ").all()


def test_language_model_through_a_local_chat_server_fills_the_same_marts(
    tmp_path, monkeypatch, dbt_target
):
    pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
    from tests.support.chat_server import ChatServer
    from tsrate.suites.understanding.suite import open_systems, resolve_config, run_suite

    def responder(payload):
        prompt = payload["messages"][-1]["content"]
        if "yes or no" in prompt:
            return 200, "Yes."
        if "single letter" in prompt:
            return 200, "B"
        if "<value> on" in prompt:
            return 200, "I cannot compute that."  # unparseable: kept, never guessed
        if "option name" in prompt:
            return 200, "up"
        return 200, "42"

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "cache"))
    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config(
        "small",
        {
            **TINY,
            "formats": ["csv", "plain"],
            "datasets": ["trend", "anomalies", "correlation", "seasonality", "outlier"],
        },
    )
    with ChatServer(responder) as server:
        monkeypatch.setenv("TSRATE_UND_CHAT_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_UND_CHAT_MODEL", "scripted")
        systems = open_systems(["endpoint:und_chat"], references=False)
        suite_run_id, counts = run_suite(warehouse, config, systems, progress=lambda _: None)
        asked = counts["und_chat"][0]
        assert asked > 0 and len(server.payloads) == asked
        # rerun: every answer is reused from raw.und_responses, nothing is sent
        _, again = run_suite(
            warehouse,
            config,
            open_systems(["endpoint:und_chat"], references=False),
            progress=lambda _: None,
        )
        assert again["und_chat"] == (0, asked) and len(server.payloads) == asked
    dbt.run_dbt(BUILD, None, warehouse, lambda _: None, dbt_target, {RUN_ENV: suite_run_id})
    scores = read(warehouse, "select * from marts.und_scores").set_index(
        ["task", "feature", "format"]
    )
    assert set(scores["system_id"]) == {"und_chat"}
    detection = scores.loc[("detection", "trend", "csv")]
    # always "yes": accuracy = share of trend series with a trend; F1 averages yes and no
    truth = read(
        warehouse,
        "select avg(case when p.expected->>'answer' = 'yes' then 1.0 else 0 end) as share from raw.und_prompts p "
        "join raw.und_suite_run_prompts using (prompt_key) where suite_run_id = ? and task = 'detection' "
        "and feature = 'trend' and format = 'csv'",
        [suite_run_id],
    )["share"][0]
    assert detection["accuracy"] == pytest.approx(truth)
    arithmetic = scores.loc[["arithmetic_min", "arithmetic_max"]]
    assert (arithmetic["n_unparsed"] == arithmetic["n_prompts"]).all() and (
        arithmetic["accuracy"] == 0
    ).all()
    unparsed = read(warehouse, "select * from marts.und_unparsed_answers")
    cannot = unparsed[unparsed["raw_text"] == "I cannot compute that."]
    assert set(cannot["parse_error"]) == {"no date in the reply"}
    assert len(cannot) == arithmetic["n_prompts"].sum()
    # "up" answers the trend classification; for any other dataset it names no option
    other = unparsed[unparsed["raw_text"] == "up"]
    assert set(other["task"]) == {"classification"} and "trend" not in set(other["feature"])
    assert set(other["parse_error"]) == {"names none of the options"}
    assert scores.loc[("classification", "trend", "csv"), "n_unparsed"] == 0
    ratings = read(warehouse, "select * from marts.und_ratings")
    assert set(ratings["system_id"]) == {"und_chat"} and (ratings["n_systems"] == 1).all()
    # a lone system: rated by its distance from the ideal, and the mart says so
    assert ratings["rating_reason"].str.startswith("only one system").all()
    assert_ratings_never_mislead(ratings, GROUP)
    assert_ratings_never_mislead(read(warehouse, "select * from marts.und_rating_stability"), GROUP)


def test_a_system_answering_garbage_ranks_last_and_the_report_says_so(
    tmp_path, monkeypatch, dbt_target
):
    pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")
    from tests.support.chat_server import ChatServer
    from tsrate.suites.understanding.report import write_report
    from tsrate.suites.understanding.suite import open_systems, resolve_config, run_suite

    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path / "cache"))
    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config(
        "small",
        {**TINY, "test": 3, "formats": ["csv"], "datasets": ["trend", "anomalies", "outlier"]},
    )
    with ChatServer(lambda payload: (200, "<|endoftext|> lorem ipsum")) as server:
        monkeypatch.setenv("TSRATE_UND_CHAT_BASE_URL", server.base_url)
        monkeypatch.setenv("TSRATE_UND_CHAT_MODEL", "garbage")
        systems = open_systems(["endpoint:und_chat"], references=True)
        suite_run_id, _ = run_suite(warehouse, config, systems, progress=lambda _: None)
    dbt.run_dbt(BUILD, None, warehouse, lambda _: None, dbt_target, {RUN_ENV: suite_run_id})
    scores = read(warehouse, "select * from marts.und_scores where system_id = 'und_chat'")
    assert (scores["n_unparsed"] == scores["n_prompts"]).all() and (scores["coverage"] == 0).all()
    ratings = read(warehouse, "select * from marts.und_ratings")
    assert {"retrieval_mape", "arithmetic_mape", "detection_f1"} <= set(ratings["metric"])
    assert_ratings_never_mislead(ratings, GROUP)
    assert_ratings_never_mislead(read(warehouse, "select * from marts.und_rating_stability"), GROUP)
    for (metric, feature), block in ratings.groupby(["metric", "feature"]):
        mine = block[block["system_id"] == "und_chat"]
        others = block[block["system_id"] != "und_chat"]
        assert len(mine) == 1, (metric, feature)
        if mine["higher_is_better"].iloc[0]:
            assert (mine["raw_score"].iloc[0] <= others["raw_score"]).all(), (metric, feature)
        else:
            assert (mine["raw_score"].iloc[0] >= others["raw_score"]).all(), (metric, feature)
    report = write_report(warehouse, tmp_path / "understanding.html").read_text()
    asked = read(
        warehouse,
        "select count(*) as n from raw.und_suite_run_prompts where suite_run_id = ?",
        [suite_run_id],
    )["n"][0]
    assert f"und_chat: {asked} of {asked} answers unusable" in report
    assert "und_analyst: 0 of" in report
