"""A real writer of ``write_text_atomic`` killed with SIGKILL mid-write (its temporary whole
on disk, not yet renamed) leaves ``.NAME.PID.TAG.partial`` beside the file; the next write
of the same path removes it, and the file holds the new text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.integration.scripts import ROOT
from tsrate.platform.files import partial_path, write_text_atomic

# The child writes for real and is held at its rename (a profile hook sees the call to
# os.replace, says so and sleeps), so the kill lands mid-write on every run.
CHILD = """
import os, sys, time
from tsrate.platform.files import write_text_atomic

def hold(frame, event, arg):
    if event == "c_call" and arg is os.replace:
        print("renaming", flush=True)
        time.sleep(600)

sys.setprofile(hold)
write_text_atomic(sys.argv[1], "killed mid-write")
"""


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path):
    page = tmp_path / ("s" * 240 + ".html")  # a long name: its temporary is shortened too
    page.write_text("before")
    environment = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(page)], cwd=ROOT, env=environment,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout.readline().strip() == "renaming"
        left = [p for p in tmp_path.iterdir() if p != page]
        assert [p.name for p in left] == [
            partial_path(page, f"{child.pid}.{left[0].name.split('.')[-2]}").name
        ]
        assert left[0].read_text() == "killed mid-write"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert page.read_text() == "before" and left[0].exists()  # nothing cleaned up after a kill
    write_text_atomic(page, "after")
    assert os.listdir(tmp_path) == [page.name] and page.read_text() == "after"
