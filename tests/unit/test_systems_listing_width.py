"""`tsrate systems` keeps every line within 100 characters (as `tsrate studies` does).

A system whose line would be longer goes on at its spaces onto continuation lines indented
by four; an unavailable one's first line ends with what is missing (its reason's first
clause, outside brackets and back-quotes) and its setup hint starts a line of its own. The
words are those of the one long line it replaces: the listing and the reasons are compared
without whitespace. A word is never split: one longer than a line (a model's cache path, to
be copied) stands alone on its line, the only line allowed past 100 characters. Run through
``tsrate.cli.main`` in this process, with the seed's Gemini systems unavailable (no API
key), as a machine without one lists them.
"""

from __future__ import annotations

import pytest

from tests.support.locks import another_writer
from tests.support.old_runs import STUDY_WITH_IMPORT, warehouse_with_an_import
from tests.support.systems_listing import listing_entries, squeezed
from tsrate.cli import main
from tsrate.commands.systems_listing import system_lines
from tsrate.config import Study
from tsrate.systems import gemma

GEMINI_HINT = (
    "set GEMINI_API_KEY (or name another variable in TSRATE_GEMINI_NUMERIC_API_KEY_ENV, or "
    "point TSRATE_GEMINI_NUMERIC_BASE_URL at a server of your own)"
)
#: an import's source too long for a line
LONG_SOURCE = "/data/" + "long_named_model/" * 3 + "predictions.csv"
STUDY = STUDY_WITH_IMPORT
#: a model cache folder whose checkpoint paths are longer than a line
LONG_CACHE = "model_cache_" + "of_a_shared_machine_" * 3


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    for name in (
        "GEMINI_API_KEY",
        "TSRATE_GEMINI_NUMERIC_API_KEY_ENV",
        "TSRATE_GEMINI_NUMERIC_BASE_URL",
        "TSRATE_GEMINI_NUMERIC_IMAGE_API_KEY_ENV",
        "TSRATE_GEMINI_NUMERIC_IMAGE_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "wh" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    return path


def _fit(lines: list[str]) -> bool:
    """Whether each line is within 100 characters or one word alone (indented)."""
    return all(len(line) <= 100 or len(line.split()) == 1 for line in lines)


def _listed(capsys) -> str:
    assert main(["systems"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def _with_a_long_import(path) -> None:
    warehouse_with_an_import(path, STUDY, LONG_SOURCE)


def test_every_line_fits_and_an_unavailable_llm_keeps_its_whole_hint(warehouse, capsys):
    from tsrate.systems.registry import system_infos

    out = _listed(capsys)
    lines = out.splitlines()
    assert _fit(lines), max(lines, key=len)
    entries = {entry.split()[0]: entry for entry in listing_entries(out)}
    infos = system_infos(Study.from_vars())
    assert list(entries) == [info.system_id for info in infos]
    for info in infos:  # every word of the one long line of old, in its order
        said = f"{info.display_name}: {info.availability.reason}"
        assert squeezed(entries[info.system_id]).endswith(squeezed(said)), info.system_id
    gemini = lines.index(next(x for x in lines if x.startswith("gemini_numeric ")))
    then = lines.index(next(x for x in lines if x.startswith("gemini_numeric_image ")))
    assert "unavailable" in lines[gemini]
    # what is missing, then the hint from a line of its own
    why = next(i for i in range(gemini, then) if lines[i].endswith("needs an API key:"))
    hint = lines[why + 1 : then]
    assert hint[0].startswith("    set GEMINI_API_KEY (or name another variable in"), hint
    assert " ".join(x.strip() for x in hint) == GEMINI_HINT
    # a line that fits stays as it was; an entry's other lines are indented by four exactly
    assert any(x.startswith("naive ") and x.endswith("Naive last value: built in") for x in lines)
    assert all(x.startswith("    ") and x[4] != " " for x in lines if x[0] == " ")


def test_a_first_clause_ends_outside_brackets_and_back_quotes():
    head = "tool  unavailable  [P0]  Tool:"
    reason = "`tool: x` is missing (PATH: /usr/bin; /bin); install it: " + "pip install x " * 9
    lines = system_lines(head, reason, available=False)
    assert lines[0] == head + " `tool: x` is missing (PATH: /usr/bin; /bin);"
    assert lines[1].startswith("    install it: pip install x") and len(lines) == 3
    assert all(len(line) <= 100 for line in lines)
    # an available system's long reason just goes on, from its first line
    head = head.replace("unavailable", "available  ")
    lines = system_lines(head, reason, available=True)
    assert lines[0].startswith(head + " `tool: x` is missing (PATH: /usr/bin; /bin); install")
    assert len(lines[0]) > 90 and squeezed(" ".join(lines)) == squeezed(head + reason)


def test_a_path_longer_than_a_line_stays_whole_on_a_line_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / LONG_CACHE))
    path = str(gemma.checkpoint_dir("a5fd3b62230aa5ec" * 4))
    assert len(path) > 100
    head = "my_llm  unavailable  [P0 P1 P2 P3]  My LLM (numeric):"
    reason = f"no converted checkpoint: convert the GGUF into {path} (minutes), then rerun"
    lines = system_lines(head, reason, available=False)
    assert lines[0] == head + " no converted checkpoint:"
    assert lines[1] == "    convert the GGUF into" and lines[2] == "    " + path
    assert lines[3] == "    (minutes), then rerun" and len(lines) == 4
    # an available one's reason too: the path alone on its line, whole
    head = head.replace("unavailable", "available  ")
    lines = system_lines(head, f"packaged (converted checkpoint cached in {path}) on cpu", True)
    assert f"    {path})" in lines
    assert _fit(lines) and squeezed(" ".join(lines)).endswith(squeezed(f"in {path}) on cpu"))


def test_the_listing_keeps_gemmas_long_cache_path_whole(warehouse, tmp_path, monkeypatch, capsys):
    if gemma.missing_packages():
        pytest.skip(f"needs {gemma.missing_packages()}")
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / LONG_CACHE))
    lines = _listed(capsys).splitlines()
    path = str(gemma.checkpoint_dir(gemma.packaged_sha256()))
    (alone,) = [x for x in lines if path in x]
    assert alone == f"    {path})" and _fit(lines), alone


def test_a_long_import_source_and_the_writer_note_fit_too(warehouse, capsys):
    _with_a_long_import(warehouse)
    out = _listed(capsys)
    lines = out.splitlines()
    assert _fit(lines), max(lines, key=len)
    at = lines.index("imported systems (rated in their study's marts once built):")
    assert lines[at + 1].startswith("  ext  imported from /data/") and len(lines[at + 1]) > 80
    assert lines[at + 2].startswith("      ") and lines[at + 2][6] != " "
    (entry,) = [x for x in listing_entries(out) if x.startswith("ext  imported from")]
    assert LONG_SOURCE in entry and f"(sha256 {'ab' * 6}) into study" in entry

    with another_writer(warehouse):
        busy = _listed(capsys)
    note = busy.splitlines()[-2:]
    assert _fit(busy.splitlines())
    assert note[0].startswith("imported systems and registered language models: not listed")
    assert note[1].startswith("    ") and note[1].endswith(
        "rerun `tsrate systems` when it finishes"
    )


def test_the_sample_in_the_docs_is_what_the_listing_prints(warehouse, capsys):
    from tsrate.config import project_dir

    text = (project_dir() / "docs" / "systems.md").read_text()
    sample = text.split("as on a machine without a Gemini key:\n\n```text\n", 1)[1]
    sample = sample.split("```", 1)[0].splitlines()
    lines = _listed(capsys).splitlines()
    at = lines.index(sample[0])
    assert lines[at : at + len(sample)] == sample
