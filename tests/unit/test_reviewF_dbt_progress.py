"""The dbt build's progress that `tsrate status --format json` shows (``writer.progress``)
counts the nodes finished, as docs/operations.md says ("while ... the dbt build count up
writer.progress: done, total").

dbt numbers a node when it starts; with the profile's two threads nodes finish out of
order (a build's dbt log read ``... 53 54 55 46 57 56 ... 70 71 61 72``). Before, ``done``
was the number of the node that finished last: it went back (71 done, then 61) and did not
end at the count of finished nodes. The unit tests the dbt child runs after the models are
a second dbt invocation, numbered from 1 again: their count starts again.

Real parts: the runner's own line follower (``dbt_runner._follow``), the writer lock and
its file as `tsrate status` reads it. The dbt child is stood in for by an object with what
the follower reads of a process (its stdout lines, its exit code):
tests/support/dbt_child_stand_in.py.
"""

from __future__ import annotations

from tests.support.dbt_child_stand_in import ChildStandIn
from tsrate.platform import dbt_runner
from tsrate.platform.dbt_child import PROGRESS
from tsrate.platform.locking import writer_lock, writer_status
from tsrate.platform.progress import phase


def test_the_build_progress_counts_finished_nodes_when_they_finish_out_of_order(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    counts: list[dict | None] = []

    def after_line():
        counts.append(writer_status(warehouse).get("progress"))

    lines = [
        f"{PROGRESS} 1 of 4 stg_a",
        f"{PROGRESS} 3 of 4 int_c",  # started third, finished second
        f"{PROGRESS} 2 of 4 int_b",
        f"{PROGRESS} 4 of 4 marts_d",
        f"{PROGRESS} 2 of 4 unit_y",  # the unit tests: a new invocation, numbered anew
        f"{PROGRESS} 1 of 4 unit_x",
        f"{PROGRESS} 4 of 4 unit_w",
        f"{PROGRESS} 3 of 4 unit_z",
        f"{PROGRESS} 5 of 6 other_e",  # another invocation, of another size
        f"{PROGRESS} 1 of 6 other_a",
    ]
    with writer_lock(warehouse), phase("build (dbt)", lambda _: None):
        dbt_runner._follow(
            ChildStandIn(lines, after_line), ["build"], lambda _: None, None, False, 0.0
        )
    # by hand: one more node finished at each line; each new invocation counts from one
    assert counts == [
        {"done": 1, "total": 4},
        {"done": 2, "total": 4},
        {"done": 3, "total": 4},
        {"done": 4, "total": 4},
        {"done": 1, "total": 4},
        {"done": 2, "total": 4},
        {"done": 3, "total": 4},
        {"done": 4, "total": 4},
        {"done": 1, "total": 6},
        {"done": 2, "total": 6},
    ]
