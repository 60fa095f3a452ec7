"""dbt's events in the dbt child, built only when a logger writes them or a callback reads them.

dbt's ``fire_event`` turns every event into a protobuf message (``msg_from_base_event``:
the event's text, a timestamp, ``ParseDict`` of its info) and hands it to each logger,
which formats and scrubs the line and only then lets Python's logging drop it when the
event's level is below the logger's. The child's loggers are at info (its stdout, and
``dbt.log`` unless ``DBT_LOG_LEVEL_FILE`` says otherwise), so the debug events (each
statement, connection and adapter call: several per node) were built and formatted for
nothing.

:class:`LeanEventManager` is dbt's own event manager that returns early for an event that
no logger would write and no callback reads; every other event goes through dbt's code
unchanged. An event is always handed on when:

- its level is warn or error (dbt's ``--warn-error`` handling reads those), or its caller
  asks for that handling (``warn_or_error``);
- it is one of the events dbt's loggers write whatever their level (``PrintEvent``...);
- a logger's level lets it through (``DBT_LOG_LEVEL_FILE=debug`` or ``--debug``: every
  debug event is built and written as before);
- a callback might read it: a callback reads every event unless it declares the lowest
  level it reads in its attribute :data:`MIN_LEVEL` (e.g. ``"info"``); dbt's own
  ``track_behavior_change_warn`` reads one warn event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbt_common.events import event_manager_client
from dbt_common.events.base_types import BaseEvent, EventLevel
from dbt_common.events.event_manager import EventManager
from dbt_common.events.logger import PRINT_EVENT_NAMES, _log_level_map

#: Python's logging level of each dbt level, as dbt's loggers compare them
_RANK = {level.value: rank for level, rank in _log_level_map.items()}
_WARN = _RANK[EventLevel.WARN.value]
#: the attribute by which a callback declares the lowest level it reads (a dbt level name)
MIN_LEVEL = "tsrate_min_event_level"


def _callback_floor(callback: Callable) -> int:
    from dbt.tracking import track_behavior_change_warn  # reads BehaviorChangeEvent only

    if callback is track_behavior_change_warn:
        return _WARN
    level = getattr(callback, MIN_LEVEL, None)
    return _RANK[EventLevel(level).value] if level is not None else 0


class LeanEventManager(EventManager):
    """dbt's EventManager, skipping the events nothing would write or read (module doc)."""

    def fire_event(
        self,
        e: BaseEvent,
        level: EventLevel | None = None,
        node: Any = None,
        force_warn_or_error_handling: bool = False,
    ) -> None:
        if force_warn_or_error_handling or self.read(e, level):
            super().fire_event(e, level, node, force_warn_or_error_handling)

    def read(self, e: BaseEvent, level: EventLevel | None = None) -> bool:
        """Whether a logger would write the event or a callback might read it."""
        rank = _RANK[EventLevel(level or e.level_tag()).value]
        if rank >= _WARN or type(e).__name__ in PRINT_EVENT_NAMES:
            return True
        floors = [_RANK[EventLevel(logger.level).value] for logger in self.loggers]
        floors += [_callback_floor(callback) for callback in self.callbacks]
        return any(rank >= floor for floor in floors)


def install() -> LeanEventManager:
    """Make a :class:`LeanEventManager` dbt's event manager in this process (its loggers and
    callbacks so far kept); call it before dbt runs a command."""
    current = event_manager_client.get_event_manager()
    if isinstance(current, LeanEventManager):
        return current
    lean = LeanEventManager()
    lean.__dict__.update(vars(current))  # warn-error settings too
    lean.loggers = list(current.loggers)
    lean.callbacks = list(current.callbacks)
    event_manager_client.ctx_set_event_manager(lean)
    return lean
