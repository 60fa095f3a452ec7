"""What users read names no folder of the machines tsrate was built on: docs/ratings.md told
a reader to run with a session's scratch warehouse (/tmp/h15/...), and docs/bi.md named CI's
scratch virtual environment. Product files (docs, code, models, macros, Python models,
flows) say where things are in words or relative to the project."""

from __future__ import annotations

import re

from tsrate.config import project_dir

PRODUCT_FOLDERS = ("docs", "src", "models", "macros", "python_models", "flows", "seeds")
#: an absolute path under /work or /tmp (not `~/tmp/` nor a relative `x/tmp/`)
WORKSPACE_PATH = re.compile(r"(?<![\w.~/])/(?:work|tmp)/")


def test_no_product_file_names_a_workspace_or_scratch_path():
    root = project_dir()
    found = []
    for folder in PRODUCT_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or path.suffix in (".pyc", ".pt", ".png"):
                continue
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if WORKSPACE_PATH.search(line):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)
