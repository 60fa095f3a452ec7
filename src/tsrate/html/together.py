"""A page and its folder of files (a report and its chart specs) written together: a reader,
and a failure, sees the old pair or the new pair, never the new folder beside the old page.

:func:`write_page_and_folder` writes everything under temporary names first, beside the
targets (``.<name>.<pid>.<tag>.partial``), then commits with renames on one filesystem:
the old folder moves aside (``….old.partial``; a ``….none.partial`` marker when there was
none), the new folder moves into place, and last the page is renamed over its target. A
failure or a stop (Ctrl-C, SIGTERM: both unwind as ``KeyboardInterrupt``) at any step undoes
the renames, so the old page and folder stay as they were, byte for byte, and the
temporaries are removed. Only after the page is in place is the old folder deleted.

The temporaries follow the one naming convention of :mod:`tsrate.platform.files` (a name too
long for it keeps a shortened, hashed stem so every temporary fits 255 bytes:
:func:`tsrate.platform.files.partial_path`). A writer killed outright (SIGKILL, power loss)
cannot clean up; the next write of the same page finishes its work first
(:func:`sweep_leftovers`): the temporaries of writers that are no longer running on this
machine (:func:`tsrate.platform.files.process_running`) are removed, and a commit they left
half done is undone (their page temporary still exists: the page was not replaced, so the
old folder goes back) or completed (the page was replaced: the old folder is deleted)."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from tsrate.platform.files import (
    partial_marks,
    partial_path,
    process_running,
    writer_token,
)

#: The kinds of temporary a write leaves: the page's (none), the folder's three.
_PAGE_KINDS, _FOLDER_KINDS = ("",), ("new", "old", "none")


def _remove(path: Path) -> None:
    """Delete ``path`` (a folder with what it holds, or a file or link); nothing if absent."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _copy(entry: Path, into: Path) -> None:
    """Copy ``entry`` (a file, link or folder) into folder ``into``, links kept as links."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.copytree(entry, into / entry.name, symlinks=True)
    else:
        shutil.copy2(entry, into / entry.name, follow_symlinks=False)


def _names(page: Path, folder: Path, token: str) -> tuple[Path, Path, Path, Path]:
    """The temporaries of one write (``token``: :func:`tsrate.platform.files.writer_token`):
    page, new folder, old folder, "there was none" marker."""
    return (
        partial_path(page, token),
        partial_path(folder, token, "new"),
        partial_path(folder, token, "old"),
        partial_path(folder, token, "none"),
    )


def sweep_leftovers(page: Path, folder: Path) -> list[Path]:
    """Finish what writers of ``page`` and ``folder`` killed outright left (see the module);
    return the temporaries removed. Writers still running are left alone."""
    removed: list[Path] = []
    marks = partial_marks(folder, _FOLDER_KINDS) + partial_marks(page, _PAGE_KINDS)
    for mark, writer in marks:  # the folder's first: they read whether the page's still exist
        if process_running(writer[0]) or not os.path.lexists(mark):
            continue
        pid, tag, kind = writer
        unfinished = partial_path(page, f"{pid}.{tag}").exists()
        if kind == "old" and (unfinished or not os.path.lexists(folder)):
            _remove(folder)  # the page was not replaced: its old folder goes back
            os.rename(mark, folder)
        elif kind == "none" and unfinished:
            _remove(folder)  # the page was not replaced and had no folder
        _remove(mark)
        removed.append(mark)
    return removed


def write_page_and_folder(
    page: Path,
    text: str,
    folder: Path,
    files: Mapping[str, str],
    replaced: Callable[[Path], bool],
) -> None:
    """Write ``text`` to ``page`` and ``files`` (name -> UTF-8 text) into ``folder``, both or
    neither (see the module). What the old folder holds is kept in the new one unless
    ``replaced(entry)`` says it is the writer's own (an old chart the new page drops).
    ``folder`` existing as a file is refused before anything is written."""
    page, folder = Path(page), Path(folder)
    if folder.is_symlink() and folder.is_dir():
        folder = folder.resolve()  # write where the link points; the link stays
    if os.path.lexists(folder) and not folder.is_dir():
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(folder))
    page.parent.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(page, folder)
    page_temp, staging, backup, none = _names(page, folder, writer_token())
    written = undoing = False  # the state is read from the files: a stop can come anywhere
    try:
        page_temp.write_text(text, encoding="utf-8")
        written = True
        staging.mkdir()
        old = folder.is_dir()
        for entry in folder.iterdir() if old else ():
            if not replaced(entry):
                _copy(entry, staging)
        for name, content in files.items():
            (staging / name).write_text(content, encoding="utf-8")
        if old:
            os.rename(folder, backup)
        else:
            none.mkdir()  # says "no folder before" to a sweep after a kill
        os.rename(staging, folder)
        os.replace(page_temp, page)  # the commit
    except BaseException:
        if not written or page_temp.exists():  # the page was not replaced: undo the renames
            undoing = True
            _undo(folder, staging, backup, none)
            undoing = False
        temporaries = {page_temp: page, staging: folder, backup: folder, none: folder}
        _raise_for_user(temporaries)
        raise
    finally:
        if not undoing:  # an undo that failed keeps its files for the next write's sweep
            page_temp.unlink(missing_ok=True)
            _remove(staging)
            _remove(backup)  # after the commit: the replaced folder; else moved back already
            _remove(none)


def _raise_for_user(temporaries: Mapping[Path, Path]) -> None:
    """Inside ``except``: raise the OSError being handled again naming the paths the user
    gave (``temporaries``: temporary -> target; a file inside a temporary folder -> the same
    file in the target) instead of the temporaries, which no longer exist; else return."""
    exc = sys.exc_info()[1]
    if not isinstance(exc, OSError) or exc.filename is None:
        return

    def target(name: object) -> object:
        if name is None:
            return None
        path = Path(os.fsdecode(name))  # type: ignore[arg-type]
        for temporary, goal in temporaries.items():
            if path == temporary:
                return str(goal)
            if path.parent == temporary:
                return str(goal / path.name)
        return name

    names = [target(exc.filename), target(exc.filename2)]
    if names == [exc.filename, exc.filename2]:
        return
    if names[0] == names[1]:
        names[1] = None
    raise OSError(exc.errno, exc.strerror, names[0], None, names[1]) from exc


def _undo(folder: Path, staging: Path, backup: Path, none: Path) -> None:
    """Put the old folder back where a write stopped before its page was replaced."""
    if not (os.path.lexists(backup) or os.path.lexists(none)):
        return  # the old folder was never moved
    if not os.path.lexists(staging) and os.path.lexists(folder):
        os.rename(folder, staging)  # the new folder was in place
    if os.path.lexists(backup):
        os.rename(backup, folder)
