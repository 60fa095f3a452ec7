"""The user-study statistics of the paper (section 5.4, Tables 3-4) from their summaries.

Thin wrapper over tsrate.methods.user_study.user_study_tests applied to the user_study_summary seed; the
public mart user_study_tests selects from it.
"""

from tsrate.methods.user_study import user_study_tests


def model(dbt, session):
    return user_study_tests(dbt.ref("user_study_summary").df())
