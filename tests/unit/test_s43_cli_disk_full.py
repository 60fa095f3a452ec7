"""A full disk (or ``tsrate query ... > /dev/full``) is one line naming it, exit 2, not an
"unexpected ... report it" (tsrate.cli._error_line)."""

from __future__ import annotations

import errno
import os

from tsrate import cli


def test_a_full_disk_is_named_not_reported_as_a_bug():
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    line, status = cli._error_line(full)
    assert status == 2
    assert line.startswith(f"out of disk space: {os.strerror(errno.ENOSPC)} (hint: free space")
    quota = OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), "/data/w.duckdb")
    assert cli._error_line(quota)[0].startswith("out of disk space: ")
    # other OS errors without a path stay unexpected
    assert cli._error_line(OSError(errno.EIO, "I/O error"))[1] == 1
