"""What the dbt runner's line follower (``tsrate.platform.dbt_runner._follow``) reads of a
dbt child process, stood in for in this process: its stdout lines, then its exit code.
No process is started. No test here."""

from __future__ import annotations

from collections.abc import Callable, Iterator


class ChildStandIn:
    """A finished dbt child that printed ``lines`` and exits 0; ``after_line()`` is called
    once the follower took each line (to see what the runner made of it so far)."""

    def __init__(self, lines: list[str], after_line: Callable[[], None]):
        self.lines, self.after_line = lines, after_line

    @property
    def stdout(self) -> Iterator[str]:
        for line in self.lines:
            yield line + "\n"
            self.after_line()

    def wait(self) -> int:
        return 0
