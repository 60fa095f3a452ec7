"""The dbt child's event manager: it writes and hands on exactly what dbt's own does, and
builds no message for an event that no logger writes and no callback reads."""

from __future__ import annotations

import importlib
import inspect
import io
import re

import pytest
from dbt.adapters.events.types import ConnectionUsed, SQLQuery
from dbt.events.types import LogModelResult, LogStartLine
from dbt.tracking import track_behavior_change_warn
from dbt_common.events import event_manager as dbt_event_manager
from dbt_common.events import event_manager_client
from dbt_common.events.base_types import BaseEvent, DynamicLevel, EventLevel
from dbt_common.events.event_manager import EventManager
from dbt_common.events.logger import LineFormat, LoggerConfig
from dbt_common.events.types import Note, PrintEvent
from dbt_common.exceptions.events import EventCompilationError

from tsrate.platform.dbt_child import node_progress
from tsrate.platform.dbt_events import MIN_LEVEL, LeanEventManager, install


def _events() -> list[tuple[BaseEvent, EventLevel | None]]:
    node = {"node_name": "ratings", "unique_id": "model.tsrate.ratings"}
    return [
        (ConnectionUsed(conn_type="duckdb", conn_name="model.tsrate.ratings"), None),
        (SQLQuery(conn_name="model.tsrate.ratings", sql="select 1", node_info=node), None),
        (Note(msg="a test-level note"), EventLevel.TEST),
        (Note(msg="a debug note"), EventLevel.DEBUG),
        (Note(msg="an info note"), None),
        (LogStartLine(description="sql table model marts.ratings", index=1, total=2), None),
        (LogModelResult(description="m", status="OK", index=1, total=2), EventLevel.INFO),
        (LogModelResult(description="m", status="error", index=2, total=2), EventLevel.ERROR),
        (PrintEvent(msg="printed whatever the level"), None),
        (Note(msg="a warning"), EventLevel.WARN),
    ]


def _fire(manager: EventManager, levels: list[EventLevel], tag: str, tmp_path, callbacks):
    """Every event of :func:`_events` through ``manager`` with one text logger per level;
    returns each logger's lines (times taken out) and what the callbacks got."""
    streams = []
    for number, level in enumerate(levels):
        stream = io.StringIO()
        manager.add_logger(
            LoggerConfig(
                name=f"tsrate-test-{tag}-{number}",
                level=level,
                line_format=LineFormat.DebugText,
                output_stream=stream,
            )
        )
        streams.append(stream)
    got: list[tuple[str, str]] = []
    for callback in callbacks:

        def recorded(msg, callback=callback):
            got.append(callback(msg))

        if MIN_LEVEL in callback.__dict__:  # the floor the callback declares, kept
            setattr(recorded, MIN_LEVEL, callback.__dict__[MIN_LEVEL])
        manager.add_callback(recorded)
    for event, level in _events():
        manager.fire_event(event, level=level)
    clock = re.compile(r"^\d\d:\d\d:\d\d\.\d+ ")
    written = [[clock.sub("", line) for line in s.getvalue().splitlines()] for s in streams]
    return written, got


@pytest.mark.parametrize(
    "levels",
    [[EventLevel.INFO, EventLevel.INFO], [EventLevel.INFO, EventLevel.DEBUG], [EventLevel.ERROR]],
)
def test_the_lean_manager_writes_what_dbts_own_writes(levels, tmp_path):
    dbts = _fire(EventManager(), levels, "dbt", tmp_path, [])
    lean = _fire(LeanEventManager(), levels, "lean", tmp_path, [])
    assert lean == dbts
    assert all(lean[0])  # every logger wrote something
    if EventLevel.DEBUG in levels:  # DBT_LOG_LEVEL_FILE=debug: the statements are written
        assert any("On model.tsrate.ratings: select 1" in line for line in lean[0][1])


def test_a_callback_gets_every_event_it_reads(tmp_path):
    def reads_all(msg):
        return msg.info.name

    def reads_info(msg):
        return msg.info.name

    setattr(reads_info, MIN_LEVEL, "info")
    info = [EventLevel.INFO]
    _, dbts = _fire(EventManager(), info, "dbt-all", tmp_path, [reads_all])
    _, lean = _fire(LeanEventManager(), info, "lean-all", tmp_path, [reads_all])
    assert lean == dbts and "SQLQuery" in lean  # no floor declared: every event
    _, lean = _fire(LeanEventManager(), info, "lean-info", tmp_path, [reads_info])
    # the events at info and above, in order; the debug and test ones not built for it
    at_info = ["Note", "LogStartLine", "LogModelResult", "LogModelResult", "PrintEvent", "Note"]
    assert lean == at_info and dbts[-6:] == at_info and len(dbts) == 10


def test_no_message_is_built_for_an_event_nothing_reads(monkeypatch, tmp_path):
    built: list[str] = []
    real = dbt_event_manager.msg_from_base_event

    def counted(event, level=None):
        built.append(type(event).__name__)
        return real(event, level=level)

    monkeypatch.setattr(dbt_event_manager, "msg_from_base_event", counted)
    lean = LeanEventManager()
    lean.add_callback(node_progress)  # the callbacks of the child's dbt runner
    lean.add_callback(track_behavior_change_warn)  # dbt's own (a warn event only)
    _fire(lean, [EventLevel.INFO, EventLevel.INFO], "count-lean", tmp_path, [])
    assert "SQLQuery" not in built and "ConnectionUsed" not in built
    assert built.count("Note") == 2  # the info note and the warning; not test nor debug
    built.clear()
    _fire(EventManager(), [EventLevel.INFO], "count-dbt", tmp_path, [])
    assert "SQLQuery" in built  # dbt's own builds them all
    built.clear()
    _fire(LeanEventManager(), [EventLevel.DEBUG], "count-debug", tmp_path, [])
    assert "SQLQuery" in built and "ConnectionUsed" in built  # DBT_LOG_LEVEL_FILE=debug


def test_warnings_still_meet_dbts_warn_error_handling():
    lean = LeanEventManager()  # no logger, no callback: nothing reads a warning
    lean.warn_error = True
    lean.require_warn_or_error_handling = True
    with pytest.raises(EventCompilationError):
        lean.fire_event(Note(msg="warned"), level=EventLevel.WARN)
    with pytest.raises(EventCompilationError):  # warn_or_error on an event of any level
        lean.fire_event(Note(msg="forced"), force_warn_or_error_handling=True)


def test_the_progress_callback_reads_only_events_at_info_or_above():
    """node_progress declares info: every dbt event that carries a node's index and total
    (what it reads) has a level of info or above, or one its caller gives (dbt fires
    those at info or error)."""
    assert node_progress.__dict__[MIN_LEVEL] == "info"
    checked = 0
    for module in ("dbt.events.types", "dbt.adapters.events.types", "dbt_common.events.types"):
        for name, cls in vars(importlib.import_module(module)).items():
            if not (inspect.isclass(cls) and issubclass(cls, BaseEvent)):
                continue
            proto = getattr(cls.PROTO_TYPES_MODULE, name, None)
            if proto is None or not {"index", "total"} <= {f.name for f in proto.DESCRIPTOR.fields}:
                continue
            checked += 1
            if not issubclass(cls, DynamicLevel):
                assert cls.level_tag(cls.__new__(cls)) != EventLevel.DEBUG, name
    assert checked >= 5


def test_install_keeps_dbts_loggers_and_callbacks(monkeypatch):
    before = EventManager()
    before.add_callback(node_progress)
    before.add_logger(LoggerConfig(name="tsrate-test-install", level=EventLevel.INFO))
    monkeypatch.setattr(event_manager_client, "_EVENT_MANAGER", before)
    lean = install()
    assert isinstance(lean, LeanEventManager)
    assert event_manager_client.get_event_manager() is lean
    assert lean.callbacks == [node_progress] and lean.loggers == before.loggers
    assert install() is lean
