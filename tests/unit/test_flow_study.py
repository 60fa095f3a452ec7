"""One study per flow run: the pipeline and forecast flows take the typed Study that
``tsrate run`` checked (or build it once from vars + overrides), and a Study survives the
trip through Prefect's parameters (JSON for the API, validated back into a Study)."""

from __future__ import annotations

import json

import pytest
from pydantic_core import to_jsonable_python

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.robustness.study import flow_study

OVERRIDES = {"study_tickers": "KO,XOM", "study_start": "2022-07-01", "study_end": "2022-12-28",
             "stride": 3, "systems": "naive,random"}  # fmt: skip


def test_a_typed_study_is_used_as_it_is():
    study = Study.from_vars(OVERRIDES)
    assert flow_study(study, None) is study


def test_without_a_study_the_vars_and_overrides_make_it():
    study = flow_study(None, OVERRIDES)
    assert study == Study.from_vars(OVERRIDES)
    assert study.tickers == ("KO", "XOM") and study.stride == 3
    assert study.systems == ("naive", "random")


def test_a_study_given_as_its_json_fields_is_the_same_study():
    study = Study.from_vars(OVERRIDES)
    assert flow_study(json.loads(study.to_json()), None) == study


def test_a_study_and_overrides_together_are_refused():
    with pytest.raises(TsrateError, match="both a study and study overrides"):
        flow_study(Study.from_vars(OVERRIDES), {"stride": 5})


@pytest.mark.parametrize("flow_name", ["pipeline", "forecast"])
def test_prefect_parameters_carry_the_typed_study_both_ways(flow_name):
    """What a deployment or the API stores is JSON; validated back it is the same Study."""
    from prefect.utilities.callables import parameter_schema

    from flows.forecast import forecast_flow
    from flows.pipeline import pipeline_flow

    flow = {"pipeline": pipeline_flow, "forecast": forecast_flow}[flow_name]
    study = Study.from_vars(OVERRIDES)
    schema = parameter_schema(flow.fn).model_dump()
    assert "Study" in json.dumps(schema["properties"]["study"])
    stored = json.loads(json.dumps(to_jsonable_python(study)))  # as the API keeps it
    assert flow.validate_parameters({"study": stored})["study"] == study
    assert flow.validate_parameters({"study": study})["study"] == study
    assert flow.validate_parameters({})["study"] is None  # a scheduled run: vars at its start
