"""The suites' remaining SQL (und_length_curves, und_position_bias, int_und_answers_selected,
rsn_unparseable_responses, int_interp_attention_selected, int_interp_runs_selected) against
the small errors a mutation sweep plants in it: every operator, number, avg/median, and/or
or = changed one at a time. The suites' integration tests (a real offline run, minutes
each) catch the joins' and filters' errors, but not a wrong bin end, a bin edge at 59 days,
a median for a mean, or the position-bias shares off their percent scale: in the real run's
bins the median of the right/wrong answers happens to equal their mean, and no test reads
the bin end, the curves' mape or the percentages. The hand-computed
dbt unit cases in the models' YAML pin those, and the joins too (caught here in seconds):

* the 30-day length bins of Figure 3 at their edges (59 the last day of 30-59, 60 the first
  of 60-89), the bin's end (start + 29), accuracy as a mean over all prompts (1 of 4, where
  a median gives 0), mape as a mean of the errors, and the filter keeping only the numeric
  tasks on the feature datasets (``und_length_curves_bins_by_30_days``);
* the position-bias shares in percent (``und_position_bias_in_percent``);
* a suite run's answer is the reply with the same prompt, system and fingerprint, never a
  stale fingerprint's, another system's or another run's
  (``int_und_answers_selected_joins_the_runs_reply``), and the interpretability run's
  training runs and attention rows joined on their keys
  (``int_interp_runs_selected_joins_units_runs_and_variants``,
  ``int_interp_attention_selected_keeps_the_runs_attention``);
* the reasoning suite lists a reply as unparseable only when one came back
  (``rsn_unparseable_responses_answered_but_unreadable``).

``test_suite_sql_sweep8_unit_cases_pass`` builds those models and their parents on an empty
warehouse with the unit cases forced on (a failing case fails the build; see
``tests/integration/builds.unit_cases_pass``); the expected rows were worked out by hand
from the models' stated definitions (the arithmetic is in each case's description)."""

from __future__ import annotations

import pytest

from tests.integration.builds import unit_cases_pass
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow

#: The swept models; their unit cases run here (with their parents' cases).
SWEPT_MODELS = (
    "+und_length_curves +und_position_bias +int_und_answers_selected "
    "+rsn_unparseable_responses +int_interp_attention_selected +int_interp_runs_selected"
)


def test_suite_sql_sweep8_unit_cases_pass(tmp_path, dbt_target, monkeypatch):
    env = {SUITES[suite].run_env: "latest" for suite in SUITES}
    selection = ["--select", *SWEPT_MODELS.split(), "--exclude", "test_type:data"]
    unit_cases_pass(selection, tmp_path, dbt_target, monkeypatch, env)
