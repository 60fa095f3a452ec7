"""The planted-error specs stay replayable: each entry's file exists and still holds the text it
plants in (so the code moving on shows up here, not as a SKIP nobody runs), the planted text
differs, ids are unique, and the tests it names exist (a missing test file would otherwise
make pytest exit with a usage error)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "planted"))
import plant  # noqa: E402

SPECS = sorted((ROOT / "tests" / "planted").glob("*.json"))


def test_every_spec_entry_plants_in_current_code_and_names_existing_tests():
    assert len(SPECS) >= 15
    problems, ids, entries = [], set(), 0
    for spec in SPECS:
        for entry in json.loads(spec.read_text()):
            entries += 1
            where = f"{spec.name} {entry['id']}"
            if (spec.name, entry["id"]) in ids:
                problems.append(f"{where}: duplicate id")
            ids.add((spec.name, entry["id"]))
            path = ROOT / entry["file"]
            if not path.is_file():
                problems.append(f"{where}: no file {entry['file']}")
                continue
            text = path.read_text()
            planted = plant.plant(text, entry["old"], entry["new"], entry.get("nth"))
            if planted is None:
                problems.append(f"{where}: its text is gone or ambiguous in {entry['file']}")
            elif planted == text:
                problems.append(f"{where}: plants nothing")
            for test in entry["tests"]:
                if test.startswith("-") or "/" not in test:
                    continue  # a pytest option (--deselect ...) or its argument's node id
                if not (ROOT / test.split("::")[0]).exists():
                    problems.append(f"{where}: no test {test}")
    assert entries >= 1000
    assert not problems, "\n".join(problems)
