"""What happens on the pins, as one stream for whoever subscribes (the MQTT bridge, the rules,
the service status): what the boards report by themselves (input changes as logical values,
firmware watchdog trips, boards going down and coming back) and each change the door to the pins
makes (``output``: 1/0, a PWM duty, a servo angle), whoever asked. The latest reports are kept for
status and the model's prompt.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from edge.hardware.pins import Pin, logical, wiring
from peripherals.base import Board, BoardEvent, BoardListener

log = logging.getLogger(__name__)

RECENT_EVENTS_KEPT = 20


class BoardEvents:
    def __init__(self, boards: Mapping[str, Board], pins: Mapping[tuple[str, str], Pin]):
        self._boards = boards
        self._pins = pins
        self.recent: deque[tuple[float, BoardEvent]] = deque(maxlen=RECENT_EVENTS_KEPT)
        """What the boards reported by themselves, newest last."""
        self._listeners: list[BoardListener] = []
        """Subscribers told of each output change, whoever asked for it."""

    def keep(self, event: BoardEvent) -> None:
        """Log and keep a board's own report (a resident agent subscribes this)."""
        if event.kind == "output":  # our own actuations are logged where they happen
            return
        self.recent.append((time.time(), event))
        log.info("board_event board=%s kind=%s pin=%s value=%s",
                 event.board, event.kind, event.pin, event.value)

    def output_changed(self, rule: Pin, value: float) -> None:
        """Tell subscribers an output now has ``value`` (logical: 1/0, a PWM duty, a servo angle)."""
        event = BoardEvent(rule.board, "output", rule.pin, value)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # the pin has changed: a broken observer must not undo that
                log.exception("output_listener_failed board=%s pin=%s", rule.board, rule.pin)

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        """Every board's reports (made logical) and every output change, on the event loop;
        returns the function that unsubscribes."""
        def made_logical(event: BoardEvent) -> None:
            rule = self._pins.get((event.board, event.pin)) if event.pin else None
            if rule is not None and rule.active_low and event.value is not None:
                event = replace(event, value=logical(rule, event.value))
            listener(event)

        unsubscribers = [board.subscribe(made_logical) for board in self._boards.values()]
        self._listeners.append(listener)

        def unsubscribe_all() -> None:
            for unsubscribe in unsubscribers:
                unsubscribe()
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe_all

    def rows(self, last: int = RECENT_EVENTS_KEPT) -> list[dict[str, Any]]:
        """The most recent reports as plain data, newest last; an input's also says what it
        means to a person (``shown``: ``tank2 on (switch closed: line low, pulled up)``)."""
        return [{"time": at, "board": e.board, "kind": e.kind, "pin": e.pin, "value": e.value,
                 **self._shown(e)} for at, e in list(self.recent)[-last:]]

    def _shown(self, event: BoardEvent) -> dict[str, str]:
        rule = self._pins.get((event.board, event.pin)) if event.pin else None
        if event.kind != "input" or rule is None or event.value is None:
            return {}
        on = bool(event.value)
        words = wiring(rule, on)
        name = rule.aliases[0] if rule.aliases else rule.pin
        return {"shown": f"{name} {'on' if on else 'off'}" + (f" ({words})" if words else "")}
