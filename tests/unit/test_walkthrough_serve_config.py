"""A scheduler's mistakes in the schedule vars of dbt_project.yml, as `tsrate serve` (and
`--dry-run`) reports them: one line that names the var, where it lives and how to write it.
A lock wait that is not a number was an "unexpected ValueError" (exit 1); a bad cron was
blamed on "nightly_cron / schedule_timezone" and a bad time zone on the nightly cron."""

from __future__ import annotations

import pytest

from tsrate import TsrateError
from tsrate.platform.serve import ScheduleConfig


def test_a_lock_wait_that_is_not_a_number_is_named_with_a_hint():
    with pytest.raises(TsrateError) as caught:
        ScheduleConfig.from_vars({"writer_lock_timeout_s": "soon"})
    message = str(caught.value)
    assert message.startswith("writer_lock_timeout_s in dbt_project.yml must be a number")
    assert "'soon'" in message and "(hint: " in message and "\n" not in message


def test_a_bad_cron_names_its_var_alone_with_the_fields_to_write():
    with pytest.raises(TsrateError) as caught:
        ScheduleConfig.from_vars({"understanding_cron": "0 8 * *"})
    message = str(caught.value)
    assert message.startswith("understanding_cron in dbt_project.yml: ")
    assert "schedule_timezone" not in message
    assert "(hint: five fields" in message and "empty string turns the schedule off" in message
    with pytest.raises(TsrateError) as caught:
        ScheduleConfig.from_vars({"weekly_cron": "every saturday"})
    assert str(caught.value).startswith("weekly_cron in dbt_project.yml: ")
    assert "turns the schedule off" not in str(caught.value)  # the pipeline's cron is needed


def test_a_bad_time_zone_is_blamed_on_the_time_zone_not_a_cron():
    with pytest.raises(TsrateError) as caught:
        ScheduleConfig.from_vars({"schedule_timezone": "Mars/Olympus"})
    message = str(caught.value)
    assert message.startswith("schedule_timezone in dbt_project.yml: Invalid timezone")
    assert "nightly_cron" not in message
