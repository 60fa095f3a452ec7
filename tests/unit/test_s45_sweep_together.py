"""A page and its folder written together (``html/together.py``) where the s44 tests did not
look (mutation sweep: tests/planted/s45_sweep.json): a user's folder and links inside the
charts folder are kept as they are; a dangling link at the folder's path is refused; a page
in a folder not made yet; a stop right after the commit keeps the new pair; an undo that
fails keeps the old folder; the error names the user's path once; a link that cannot be
copied is named with where it was going; an old folder that cannot be deleted after the
commit is no failure. Failures are real (a path over PATH_MAX, an immutable file) or come
from the standard library's own calls (``os.rename`` of the old folder back refused, a
stop as ``os.replace`` returns), never from one of tsrate's functions replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tsrate.html.together import write_page_and_folder


def tree(root: Path) -> dict[str, object]:
    """Every path under ``root``: a link's target, a file's bytes, None for a folder."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = ("link", os.readlink(path))
        else:
            out[key] = None if path.is_dir() else path.read_bytes()
    return out


def keep_nothing(entry: Path) -> bool:
    return False


@pytest.fixture
def earlier(tmp_path):
    """A page with a charts folder holding a chart, a folder of the user's (a file and a
    relative link inside) and a link of the user's to a file beside the page."""
    page, folder = tmp_path / "report.html", tmp_path / "report-charts"
    write_page_and_folder(page, "<p>old</p>", folder, {"a.vl.json": "{}"}, keep_nothing)
    (tmp_path / "elsewhere.txt").write_text("the user's")
    (folder / "mine").mkdir()
    (folder / "mine" / "notes.txt").write_text("notes")
    (folder / "mine" / "link").symlink_to("notes.txt")
    (folder / "outside").symlink_to("../elsewhere.txt")
    return page, folder


def test_a_users_folder_and_links_are_kept_as_they_are(earlier):
    page, folder = earlier
    write_page_and_folder(
        page, "<p>new</p>", folder, {"b.vl.json": "[]"}, lambda e: e.name == "a.vl.json"
    )
    assert tree(folder) == {
        "b.vl.json": b"[]",
        "mine": None,
        "mine/link": ("link", "notes.txt"),
        "mine/notes.txt": b"notes",
        "outside": ("link", "../elsewhere.txt"),
    }
    assert page.read_text() == "<p>new</p>"


def test_a_dangling_link_at_the_folders_path_is_refused_before_anything_is_written(tmp_path):
    page, folder = tmp_path / "report.html", tmp_path / "report-charts"
    folder.symlink_to(tmp_path / "gone")
    before = tree(tmp_path)
    with pytest.raises(FileExistsError):
        write_page_and_folder(page, "<p>new</p>", folder, {"c.vl.json": "{}"}, keep_nothing)
    assert tree(tmp_path) == before


def test_a_page_in_folders_not_made_yet(tmp_path):
    page = tmp_path / "a" / "b" / "report.html"
    write_page_and_folder(page, "<p>new</p>", page.with_name("c"), {"x": "1"}, keep_nothing)
    assert tree(tmp_path / "a") == {
        "b": None, "b/c": None, "b/c/x": b"1", "b/report.html": b"<p>new</p>"
    }  # fmt: skip


def test_a_stop_right_after_the_commit_keeps_the_new_pair(earlier, monkeypatch):
    """Ctrl-C lands as the page's rename returns: the commit stands (new page, new folder),
    it is not undone into the new page beside the old folder; no temporaries are left."""
    page, folder = earlier
    real_replace = os.replace

    def replace_then_stop(src, dst):
        real_replace(src, dst)
        raise KeyboardInterrupt  # what the SIGINT handler raises (not installed everywhere:
        # a background job starts with SIGINT ignored)

    monkeypatch.setattr(os, "replace", replace_then_stop)
    with pytest.raises(KeyboardInterrupt):
        write_page_and_folder(page, "<p>new</p>", folder, {"b.vl.json": "[]"}, keep_nothing)
    monkeypatch.undo()
    assert page.read_text() == "<p>new</p>"
    assert (folder / "b.vl.json").read_text() == "[]"
    assert sorted(p.name for p in page.parent.iterdir()) == [
        "elsewhere.txt", "report-charts", "report.html"
    ]  # fmt: skip


def test_an_undo_that_fails_keeps_the_old_folder(tmp_path, monkeypatch):
    """The page's path is a folder, so the commit fails after the old charts folder moved
    aside; putting it back fails too (its rename refused): the old folder is kept, under its
    temporary name, for the next write's sweep, not deleted with the other temporaries."""
    page, folder = tmp_path / "report.html", tmp_path / "report-charts"
    write_page_and_folder(page, "<p>old</p>", folder, {"a.vl.json": "{}"}, keep_nothing)
    page.unlink()
    page.mkdir()
    (page / "kept.txt").write_text("a folder someone made")
    real_rename = os.rename

    def rename(src, dst):
        if str(src).endswith(".old.partial"):
            raise PermissionError(1, "refused", str(src))
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError):
        write_page_and_folder(page, "<p>new</p>", folder, {"b.vl.json": "[]"}, keep_nothing)
    monkeypatch.undo()
    (backup,) = tmp_path.glob(".report-charts.*.old.partial")
    assert tree(backup) == {"a.vl.json": b"{}"}


def test_a_failed_commit_names_the_page_once(tmp_path):
    """The page's path is a folder: the rename over it fails naming the temporary and the
    page; the user is told the page, once (no "page -> page")."""
    page, folder = tmp_path / "report.html", tmp_path / "report-charts"
    page.mkdir()
    (page / "kept.txt").write_text("a folder someone made")
    with pytest.raises(OSError) as failure:
        write_page_and_folder(page, "<p>new</p>", folder, {"c.vl.json": "{}"}, keep_nothing)
    assert (failure.value.filename, failure.value.filename2) == (str(page), None)


def test_a_link_that_cannot_be_copied_names_its_target_and_the_folders_path(tmp_path):
    """The charts folder sits so deep that its link fits under PATH_MAX (4096) but the same
    link in the longer-named temporary folder does not: the copy fails (ENAMETOOLONG) naming
    the link's target and its place in the user's folder, not the temporary."""
    parent = tmp_path
    while len(str(parent)) < 3800:
        parent = parent / ("d" * 200)
    parent.mkdir(parents=True)
    page, folder = parent / "r.html", parent / "c"
    folder.mkdir()
    name = "n" * (4095 - len(str(folder)) - 1)  # folder / name: 4095 characters
    (folder / name).symlink_to("t")
    with pytest.raises(OSError) as failure:
        write_page_and_folder(page, "<p>new</p>", folder, {"x": "1"}, keep_nothing)
    assert failure.value.filename == "t"
    assert failure.value.filename2 == str(folder / name)
    assert sorted(p.name for p in parent.iterdir()) == ["c"]


FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL = 0x80086601, 0x40086602, 0x10


def _set_immutable(path: Path, on: bool) -> None:
    import array
    import fcntl

    fd = os.open(path, os.O_RDONLY)
    try:
        flags = array.array("l", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags)
        flags[0] = flags[0] | FS_IMMUTABLE_FL if on else flags[0] & ~FS_IMMUTABLE_FL
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, flags)
    finally:
        os.close(fd)


def test_an_old_folder_that_cannot_be_deleted_after_the_commit_is_not_a_failure(earlier):
    """The old chart the new page drops cannot be deleted (immutable: even root is refused):
    the pair was committed, so the write succeeds; the old folder stays under its temporary
    name. Needs root and a file system with the immutable flag (ext4 here)."""
    page, folder = earlier
    stuck = folder / "a.vl.json"
    try:
        _set_immutable(stuck, True)
    except OSError as error:
        pytest.skip(f"no immutable files here: {error}")
    try:
        write_page_and_folder(
            page, "<p>new</p>", folder, {"b.vl.json": "[]"}, lambda e: e.name == "a.vl.json"
        )
        assert page.read_text() == "<p>new</p>"
        assert sorted(p.name for p in folder.iterdir()) == ["b.vl.json", "mine", "outside"]
        (backup,) = page.parent.glob(".report-charts.*.old.partial")
        assert [p.name for p in backup.iterdir()] == ["a.vl.json"]
    finally:
        for path in page.parent.glob(".report-charts.*.old.partial/a.vl.json"):
            _set_immutable(path, False)
        if stuck.exists():
            _set_immutable(stuck, False)
