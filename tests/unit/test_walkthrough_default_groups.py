"""What the docs say the default study's group comparisons hold, against the study and the
systems seed. The mart's description (a DuckDB comment a BI user reads) still said the
default study rates baselines only, with no foundation group and an empty
'without_baselines' scope, though fracast is in it; it and docs/ratings.md also left the
seasonal naive baseline out of the baseline families."""

from __future__ import annotations

import csv

import yaml

from tsrate.config import Study, project_dir, project_vars

NUMBERS = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def _default_study_families() -> tuple[list[dict], list[dict]]:
    """The default study's systems in the baseline families, and the others (seed rows)."""
    root = project_dir()
    variables = project_vars()
    with open(root / "seeds" / "systems.csv") as handle:
        seed = {row["system_id"]: row for row in csv.DictReader(handle)}
    rows = [seed[system] for system in Study.from_vars({}).systems]
    families = set(variables["baseline_families"])
    return (
        [row for row in rows if row["family"] in families],
        [row for row in rows if row["family"] not in families],
    )


def _description() -> str:
    text = (project_dir() / "models" / "marts" / "group_comparisons.yml").read_text()
    return " ".join(yaml.safe_load(text)["models"][0]["description"].split())


def test_the_mart_description_names_every_baseline_and_what_the_default_study_holds():
    baselines, others = _default_study_families()
    assert others, "the default study rates a system outside the baseline families"
    description = _description()
    families = description.split("(default baseline and statistical: ")[1].split(")")[0]
    for row in baselines:
        assert row["display_name"].lower() in families.lower() or row["system_id"] in families
    assert "without_baselines scope is empty" not in description
    assert "baselines only" not in description
    for row in others:
        assert row["system_id"] in description


def test_ratings_doc_counts_the_default_studys_baselines():
    baselines, others = _default_study_families()
    text = " ".join((project_dir() / "docs" / "ratings.md").read_text().split())
    counted = f"the default study rates the {NUMBERS[len(baselines)]} baselines"
    assert counted in text
    assert all(f"`{row['system_id']}`" in text.split(counted)[1][:40] for row in others)
