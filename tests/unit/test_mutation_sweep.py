"""The planted-error sweep (tests/planted/mutate.py): which mutants it makes, and where it never plants."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "planted"))
import mutate  # noqa: E402


def kinds(mutants, text):
    return [(m.line, m.kind, m.apply(text).splitlines()[m.line - 1].strip()) for m in mutants]


def test_python_mutants_change_operators_numbers_and_names_but_never_strings():
    text = (
        "def f(x, *args, ddof=1, **kw):\n"
        '    """a - b < 3"""  # c * d\n'
        "    y = -x + 2 * x / 4\n"
        "    if y <= 0.5 and not kw:\n"
        '        raise ValueError(f"n - 1 = {len(args) - 1}")\n'
        '    return max(y, np.mean(x)), "1 + 1"\n'
    )
    made = kinds(mutate.python_mutants(text), text)
    assert (1, "1 -> 2", "def f(x, *args, ddof=2, **kw):") in made
    assert (1, "1 -> 0", "def f(x, *args, ddof=0, **kw):") in made
    assert (3, "drop unary -", "y = x + 2 * x / 4") in made
    assert (3, "+ -> -", "y = -x - 2 * x / 4") in made
    assert (3, "* -> /", "y = -x + 2 / x / 4") in made
    assert (3, "/ -> *", "y = -x + 2 * x * 4") in made
    assert (4, "<= -> <", "if y < 0.5 and not kw:") in made
    assert (4, "0.5 -> 1.0", "if y <= 1.0 and not kw:") in made
    assert (4, "and -> or", "if y <= 0.5 or not kw:") in made
    assert (4, "drop not", "if y <= 0.5 and kw:") in made
    assert (6, "max -> min", 'return min(y, np.mean(x)), "1 + 1"') in made
    assert (6, "mean -> median", 'return max(y, np.median(x)), "1 + 1"') in made
    lines = {line for line, _, _ in made}
    assert 2 not in lines  # the docstring and the comment
    assert 5 not in lines  # an error message's arithmetic
    assert not [k for line, k, _ in made if line == 1 and k in ("* -> /", "** -> *")]  # unpacking
    assert len(made) == 16  # 2 + 8 + 4 + 2: each number both ways, each operator once


def test_sql_mutants_leave_jinja_strings_and_comments_alone():
    text = (
        "-- a - b\n"
        "select {{ ref('x') }} as r, count(*) as n,\n"
        "    avg(a - b) / nullif(max(c), 0) as m, 'p-1' as s\n"
        "from t where d is null and lag(e) over w >= 2\n"
        "order by r desc\n"
    )
    made = kinds(mutate.sql_mutants(text), text)
    assert (3, "avg -> median", "median(a - b) / nullif(max(c), 0) as m, 'p-1' as s") in made
    assert (3, "- -> +", "avg(a + b) / nullif(max(c), 0) as m, 'p-1' as s") in made
    assert (3, "/ -> *", "avg(a - b) * nullif(max(c), 0) as m, 'p-1' as s") in made
    assert (3, "0 -> 1", "avg(a - b) / nullif(max(c), 1) as m, 'p-1' as s") in made
    assert (
        4,
        "is null -> is not null",
        "from t where d is not null and lag(e) over w >= 2",
    ) in made
    assert (4, "lag -> lead", "from t where d is null and lead(e) over w >= 2") in made
    assert (4, ">= -> >", "from t where d is null and lag(e) over w > 2") in made
    assert (5, "desc -> asc", "order by r asc") in made
    assert {line for line, _, _ in made} == {3, 4, 5}  # no comment, no Jinja, no count(*)


def test_a_missed_mutant_becomes_a_plant_spec_entry_that_plants_the_same_error():
    text = "a = 1\nb = x - 1\nc = x - 1\n"
    mutant = [m for m in mutate.python_mutants(text) if m.line == 3 and m.kind == "- -> +"][0]
    entry = mutate.spec_entry("pkg/mod.py", text, mutant, ["tests/t.py"])
    assert entry["old"] == "c = x - 1" and entry["new"] == "c = x + 1"
    assert entry["id"] == "pkg_mod_L3c6_minus_to_plus"  # the folder too: two stability.py
    text2 = "b = x - 1\nb = x - 1\n"
    second = [m for m in mutate.python_mutants(text2) if m.line == 2 and m.kind == "- -> +"][0]
    entry2 = mutate.spec_entry("pkg/mod.py", text2, second, [])
    assert entry2["nth"] == 2
    sys.path.insert(0, str(Path(mutate.__file__).parent))
    import plant

    assert plant.plant(text2, entry2["old"], entry2["new"], entry2["nth"]) == second.apply(text2)


def test_sql_names_with_digits_and_jinja_values_are_operands():
    text = "select q10 - actual as a, q{{ level }} - actual as b, -c as d from t\n"
    made = kinds(mutate.sql_mutants(text), text)
    assert (
        1,
        "- -> +",
        "select q10 + actual as a, q{{ level }} - actual as b, -c as d from t",
    ) in made
    assert (
        1,
        "- -> +",
        "select q10 - actual as a, q{{ level }} + actual as b, -c as d from t",
    ) in made
    assert (
        1,
        "drop unary -",
        "select q10 - actual as a, q{{ level }} - actual as b, c as d from t",
    ) in made
    assert len(made) == 3  # q10 is a name, not the number 10
