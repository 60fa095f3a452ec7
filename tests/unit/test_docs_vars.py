"""The dbt vars the docs tell a reader to set exist: every "var `name`" of README.md and
docs/**/*.md, and every name in docs/ratings.md's list of the vars that tune the ratings, is a
key of `vars:` in dbt_project.yml (a renamed or removed var left the docs naming a setting
dbt ignores). The tuning list also names every var the ratings read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tsrate.config import project_dir

#: "var `name`" / "vars `name`", across a line break too.
VAR_MENTION = re.compile(r"\bvars?\s+`([a-z_][a-z0-9_]*)`")
#: docs/ratings.md: the paragraph under "## Tuning the ratings" up to the next heading.
TUNING = re.compile(r"^## Tuning the ratings\n(?P<body>.*?)^#", flags=re.S | re.M)
BACKTICKED = re.compile(r"`([a-z_][a-z0-9_]*)`")
#: Backticked words of the tuning paragraph that are values or marts, not vars.
NOT_VARS = {"max", "mean", "derived", "seed", "confounder", "company", "rating_stability"}
#: The vars the rating marts read (models/, python_models/): the tuning list must name them.
RATING_VARS = {
    "rating_levels",
    "matching_estimand",
    "causal_seed",
    "treatment_draws",
    "effect_strata",
    "distribution_aggregation",
    "confounder_distributions",
    "max_company_distributions",
    "robustness_outcome",
    "bootstrap_resamples",
    "bootstrap_block_length",
    "bootstrap_seed",
    "bootstrap_confidence",
    "bootstrap_effect_distributions",
}


def declared_vars(root: Path) -> set[str]:
    spec = yaml.safe_load((root / "dbt_project.yml").read_text())
    return set(spec["vars"])


def mentioned_vars(text: str) -> set[str]:
    """Names the text calls a var, and the names of its tuning list (if it has one)."""
    names = set(VAR_MENTION.findall(text))
    tuning = TUNING.search(text)
    if tuning:
        names |= {n for n in BACKTICKED.findall(tuning.group("body")) if n not in NOT_VARS}
    return names


def tuning_list(text: str) -> set[str]:
    tuning = TUNING.search(text)
    assert tuning, "docs/ratings.md has no '## Tuning the ratings' section"
    return {n for n in BACKTICKED.findall(tuning.group("body")) if n not in NOT_VARS}


def doc_pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def test_every_var_the_docs_name_is_a_var_of_dbt_project():
    root = project_dir()
    declared = declared_vars(root)
    unknown = [
        f"{page.relative_to(root)}: {name}"
        for page in doc_pages(root)
        for name in sorted(mentioned_vars(page.read_text()))
        if name not in declared
    ]
    assert not unknown, f"docs name dbt vars that dbt_project.yml lacks: {unknown}"


def test_the_tuning_list_names_every_var_the_ratings_read():
    root = project_dir()
    assert RATING_VARS <= declared_vars(root), "RATING_VARS names a var dbt_project.yml lacks"
    text = (root / "docs" / "ratings.md").read_text()
    missing = sorted(RATING_VARS - tuning_list(text))
    assert not missing, f"docs/ratings.md's tuning list lacks {missing}"


def test_the_rating_vars_are_the_ones_the_models_read():
    """RATING_VARS is not a guess: each is read by a model (`var('name'` in SQL or
    `dbt.config.get("name")`-style Python), so the list above stays honest."""
    root = project_dir()
    sources = "\n".join(
        path.read_text()
        for folder in ("models", "python_models", "macros")
        for path in sorted((root / folder).rglob("*"))
        if path.suffix in {".sql", ".py", ".yml"}
    )
    unread = sorted(
        name for name in RATING_VARS if f"'{name}'" not in sources and f'"{name}"' not in sources
    )
    assert not unread, f"RATING_VARS names vars no model reads: {unread}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("set var `bootstrap_sed` to 7", {"bootstrap_sed"}),
        ("the dbt\nvar `rating_levels` (L)", {"rating_levels"}),
        ("## Tuning the ratings\n\n`rating_level` (L), `max`\n\n## Next\n", {"rating_level"}),
        ("no var here, `bootstrap_seed` alone", set()),
    ],
)
def test_the_mention_check_reads_every_form(text, expected):
    assert mentioned_vars(text) == expected


def test_a_misspelt_var_is_caught(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "dbt_project.yml").write_text("vars:\n  bootstrap_seed: 42\n")
    (tmp_path / "README.md").write_text("var `bootstrap_seed`\n")
    (tmp_path / "docs" / "x.md").write_text("var `bootstrap_sed`\n")
    declared = declared_vars(tmp_path)
    named = {n for page in doc_pages(tmp_path) for n in mentioned_vars(page.read_text())}
    assert named - declared == {"bootstrap_sed"}
