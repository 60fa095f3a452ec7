"""The dbt child's progress line is written in one piece: dbt's loggers write from its worker
threads too, and a line written as text then newline (print's two writes) had a logger's
line run into it (`tsrate-dbt-progress: 7 of 79 stg_x  8 of 79 OK created ...`)."""

import io
import sys
import threading

from dbt.events.types import LogModelResult
from dbt_common.events.base_types import EventLevel
from dbt_common.events.event_manager import EventManager

from tsrate.platform.dbt_child import PROGRESS, node_progress


class Writes(io.StringIO):
    """Records every write call (a logger thread could cut in between two of them)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


def _events(n: int) -> list:
    caught: list = []
    manager = EventManager()
    manager.add_callback(caught.append)
    for index in range(1, n + 1):
        manager.fire_event(
            LogModelResult(
                description=f"model m{index}",
                status="OK",
                index=index,
                total=n,
                execution_time=0.1,
                node_info={"node_name": f"m{index}"},
            ),  # fmt: skip
            level=EventLevel.INFO,
        )
    return caught


def test_each_progress_line_is_one_write_ending_in_its_newline(monkeypatch):
    out = Writes()
    monkeypatch.setattr(sys, "stdout", out)
    events = _events(3)
    assert len(events) == 3
    for event in events:
        node_progress(event)
    lines = [f"{PROGRESS} {k} of 3 m{k}\n" for k in (1, 2, 3)]
    assert out.calls == lines, out.calls


def test_lines_from_several_threads_never_mix(monkeypatch):
    out = Writes()
    monkeypatch.setattr(sys, "stdout", out)
    events = _events(40)
    threads = [threading.Thread(target=node_progress, args=(e,)) for e in events]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(call.endswith("\n") and call.count("\n") == 1 for call in out.calls)
    assert sorted(out.getvalue().splitlines()) == sorted(
        f"{PROGRESS} {k} of 40 m{k}" for k in range(1, 41)
    )
