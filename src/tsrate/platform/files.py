"""Files written whole: a reader sees the old file or the new one, never a part of it.

Temporary names (one convention for every writer here and in :mod:`tsrate.html.together`):
a writer puts what it writes for target ``NAME`` under ``.STEM.PID.TAG[.KIND].partial``
beside it, where PID is the writer's process id, TAG 8 random lowercase hex digits (so
writers in one process, and writers of one path, never clash), KIND an optional word of
lowercase letters (``new``, ``old``, ``none`` for a folder written together with a page) and
STEM (:func:`partial_stem`) the target's own name, or, for a name longer than
:data:`FULL_STEM_BYTES` bytes (UTF-8), a shortened one so the temporary still fits the file
system's 255 bytes per name: the name's first bytes (whole characters), ``~`` filler and 16
hex digits of the SHA-256 of the whole name, exactly :data:`SHORT_STEM_BYTES` bytes, never
the length of a name used whole. A temporary's writer is stale when its process no longer
runs on this machine (:func:`process_running`); only the next write of the same target
removes stale temporaries, and only those matching this exact pattern for that target.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import stat
import uuid
from pathlib import Path

__all__ = [
    "NAME_MAX_BYTES",
    "FULL_STEM_BYTES",
    "SHORT_STEM_BYTES",
    "partial_stem",
    "writer_token",
    "partial_path",
    "partial_writer",
    "partial_marks",
    "process_running",
    "sweep_partials",
    "write_text_atomic",
]

#: The longest file name (bytes) the file systems tsrate writes on accept.
NAME_MAX_BYTES = 255
#: What a temporary's name adds to its stem at most: the dots, a pid of up to 10 digits
#: (a 32-bit pid), the 8-digit tag, the longest kind (``.none``) and ``.partial``.
_WRITER_BYTES = len(".") + len(".4294967295.") + 8 + len(".none") + len(".partial")
#: The length of a shortened stem: the longest whose temporaries still fit.
SHORT_STEM_BYTES = NAME_MAX_BYTES - _WRITER_BYTES
#: Names up to this many bytes are their own stem (one less than a shortened stem, so a
#: shortened stem never equals a name used whole).
FULL_STEM_BYTES = SHORT_STEM_BYTES - 1
_HASH_HEX = 16


def partial_stem(name: str) -> str:
    """The STEM of target ``name``'s temporaries (see the module): ``name`` itself up to
    :data:`FULL_STEM_BYTES` bytes, else its first whole characters, ``~`` filler and 16 hex
    digits of the SHA-256 of ``name``, :data:`SHORT_STEM_BYTES` bytes in all."""
    encoded = os.fsencode(name)
    if len(encoded) <= FULL_STEM_BYTES:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:_HASH_HEX]
    room = SHORT_STEM_BYTES - _HASH_HEX - 1  # at least one "~" before the digest
    head = name
    while len(os.fsencode(head)) > room:
        head = head[:-1]
    filler = "~" * (SHORT_STEM_BYTES - _HASH_HEX - len(os.fsencode(head)))
    return f"{head}{filler}{digest}"


def writer_token() -> str:
    """``PID.TAG`` of one write by this process (a fresh tag on every call)."""
    return f"{os.getpid()}.{uuid.uuid4().hex[:8]}"


def partial_path(target: Path, token: str, kind: str = "") -> Path:
    """The temporary of ``target`` for the write ``token`` (:func:`writer_token`), with the
    optional ``kind``: ``.STEM.PID.TAG[.KIND].partial`` beside it."""
    suffix = f".{kind}" if kind else ""
    return target.with_name(f".{partial_stem(target.name)}.{token}{suffix}.partial")


def partial_writer(
    mark: Path, target_name: str, kinds: tuple[str, ...] = ("",)
) -> tuple[int, str, str] | None:
    """(pid, tag, kind) when ``mark``'s name is exactly a temporary of target ``target_name``
    with one of ``kinds`` ("" for none), else None (not a name these writers make)."""
    prefix = f".{partial_stem(target_name)}."
    name = mark.name
    if not (name.startswith(prefix) and name.endswith(".partial")):
        return None
    found = re.fullmatch(r"([0-9]+)\.([0-9a-f]{8})(?:\.([a-z]+))?", name[len(prefix) : -8])
    if found is None or (found.group(3) or "") not in kinds:
        return None
    return int(found.group(1)), found.group(2), found.group(3) or ""


def process_running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine: what makes a temporary stale (its
    writer no longer runs). A reused pid counts as running, and so does another user's
    process: its temporaries wait for a later write rather than risk deleting a live
    writer's files."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none, or a number no pid can be
        return False
    except OSError:  # another user's process: running
        return True
    return True


def partial_marks(
    target: Path, kinds: tuple[str, ...] = ("",)
) -> list[tuple[Path, tuple[int, str, str]]]:
    """The temporaries beside ``target`` named exactly as its writers name them, with one of
    ``kinds`` (:func:`partial_writer`; anything else is left out), in name order, each with
    its writer's (pid, tag, kind)."""
    pattern = glob.escape(f".{partial_stem(target.name)}.") + "*.partial"
    found = [
        (mark, partial_writer(mark, target.name, kinds)) for mark in target.parent.glob(pattern)
    ]
    return sorted(((m, w) for m, w in found if w is not None), key=lambda item: item[0])


def sweep_partials(path: Path | str) -> list[Path]:
    """Remove the temporaries :func:`write_text_atomic` writers of ``path`` left when they
    were killed outright (SIGKILL, power loss); return them. Only plain files named exactly
    ``.STEM.PID.TAG.partial`` for this ``path`` whose process no longer runs
    (:func:`process_running`) go; a live writer's file, anything else, and a page temporary
    whose writer also left others (a page written with its folder: that page's own sweep,
    :func:`tsrate.html.together.sweep_leftovers`, finishes it) stay."""
    path = Path(path)
    removed: list[Path] = []
    for mark, writer in partial_marks(path):
        if process_running(writer[0]):
            continue
        try:
            if not stat.S_ISREG(os.lstat(mark).st_mode):
                continue
        except FileNotFoundError:  # another writer's sweep took it
            continue
        others = path.parent.glob(f".*.{writer[0]}.{writer[1]}.*.partial")
        if any(other != mark for other in others):
            continue
        mark.unlink(missing_ok=True)
        removed.append(mark)
    return removed


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path.

    The text goes to a temporary file beside ``path`` (same folder, so the rename stays on one
    filesystem), ``.STEM.PID.TAG.partial`` (see the module; a name too long for that keeps a
    shortened, hashed STEM so the temporary still fits 255 bytes), named per writer so
    concurrent writers of one path do not clash, which is then renamed over ``path``
    (``os.replace``: atomic on POSIX and Windows). If anything fails, the error propagates,
    ``path`` keeps its old content and the temporary file is removed. A writer killed
    outright cannot remove it: each write first removes such leftovers of ``path`` whose
    writer no longer runs (:func:`sweep_partials`). The folder is created when missing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_partials(path)
    partial = partial_path(path, writer_token())
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
