"""tsrate.platform.files.write_text_atomic: a reader sees the old file or the whole new one."""

from __future__ import annotations

import os
import threading

import pytest

from tsrate.platform.files import write_text_atomic


def test_writes_the_text_and_leaves_no_temporary_file(tmp_path):
    path = write_text_atomic(tmp_path / "new" / "page.html", "é" * 3)
    assert path == tmp_path / "new" / "page.html"
    assert path.read_text(encoding="utf-8") == "ééé"
    assert os.listdir(path.parent) == ["page.html"]
    write_text_atomic(path, "second")
    assert path.read_text() == "second" and os.listdir(path.parent) == ["page.html"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary_one(tmp_path):
    path = tmp_path / "key"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "\udcff")  # a lone surrogate: no UTF-8 for it
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["key"]
    folder = tmp_path / "a-folder"
    (folder / "inside").mkdir(parents=True)
    with pytest.raises(OSError):
        write_text_atomic(folder, "text")  # the rename onto a non-empty folder fails
    assert (folder / "inside").is_dir() and sorted(os.listdir(tmp_path)) == ["a-folder", "key"]


def test_concurrent_writers_of_one_path_each_land_whole(tmp_path):
    path = tmp_path / "reply.json"
    texts = [str(i) * 50_000 for i in range(8)]
    errors: list[BaseException] = []

    def write(text: str) -> None:
        try:
            for _ in range(5):
                write_text_atomic(path, text)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert path.read_text() in texts and os.listdir(tmp_path) == ["reply.json"]
