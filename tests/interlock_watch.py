"""What the pins did and who was at the door, watched from underneath the agent, for the
interlock race (tests/test_interlock_race.py).

- :class:`WatchedFactory`: gpiozero's MockFactory whose pins put every change of their level on
  one tape, in the order it happens, stamped with ``perf_counter_ns``: what the pins did, not what
  anybody says they did.
- :class:`DoorVisits`: who was inside the hardware's one door (``write``, ``make_safe``), from
  when to when, and what each was told: the measure of whether two callers raced.

>>> factory = WatchedFactory()
>>> pin = factory.pin(23)
>>> pin.function = "output"
>>> pin.state = 1
>>> [(t.pin, t.level) for t in factory.tape]
[('GPIO23', 0.0), ('GPIO23', 1.0)]
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from edge.core.requester import Requester
from edge.hardware import Hardware
from edge.hardware.pins import Pin

T = TypeVar("T")
ANSWER_SECONDS = 30.0
"""How long any door may take to answer (the real edge-cli starts a Python process)."""


class Transition(NamedTuple):
    ns: int
    """``time.perf_counter_ns()`` as the level changed."""
    pin: str
    """``GPIO23``."""
    level: float
    """The line after the change: 0 or 1 (a duty for PWM)."""


class WatchedPin(MockPWMPin):  # type: ignore[misc]
    """A mock pin that tells its factory's tape of its level when it is made and each time the
    level changes (gpiozero's mock changes a level in ``_change_state``, and only there)."""

    def __init__(self, factory: WatchedFactory, info: Any):
        super().__init__(factory, info)
        factory.tape.append(Transition(time.perf_counter_ns(), info.name, float(self._state)))

    def _change_state(self, value: float) -> bool:
        changed: bool = super()._change_state(value)
        if changed:
            self.factory.tape.append(Transition(time.perf_counter_ns(), self.info.name,
                                                float(value)))
        return changed


class WatchedFactory(MockFactory):  # type: ignore[misc]
    """gpiozero's MockFactory (PWM-capable pins) whose pins share one tape of transitions."""

    def __init__(self) -> None:
        self.tape: list[Transition] = []
        super().__init__(pin_class=WatchedPin)


async def soon(found: Callable[[], T | None], timeout: float = ANSWER_SECONDS) -> T:
    """``found()`` once it is not None, looked at every millisecond or so."""
    deadline = time.monotonic() + timeout
    while (value := found()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"no answer within {timeout} s")
        await asyncio.sleep(0.0005)
    return value


# the hardware's door, watched --------------------------------------------------------------


@dataclass
class Visit:
    """One call at the hardware's door: who, for which pin (its alias), when it came in and
    left (``perf_counter_ns``; 0 while inside), and the refusal it was told (None: done)."""

    caller: str
    pin: str
    entered: int
    left: int = 0
    refusal: str | None = None


class DoorVisits:
    """Every ``write`` and ``make_safe`` at ``hardware``, whoever calls (the door itself is
    untouched: each call passes through as it came)."""

    def __init__(self, hardware: Hardware, monkeypatch: pytest.MonkeyPatch):
        self.hardware = hardware
        self.visits: list[Visit] = []
        write, make_safe = hardware.write, hardware.make_safe

        async def writing(spec: str, on: bool, requester: Requester, **options: Any) -> Pin:
            return await self._inside(spec, requester, write(spec, on, requester, **options))

        async def making_safe(spec: str, requester: Requester) -> Pin:
            return await self._inside(spec, requester, make_safe(spec, requester))

        monkeypatch.setattr(hardware, "write", writing)
        monkeypatch.setattr(hardware, "make_safe", making_safe)

    async def _inside(self, spec: str, requester: Requester, call: Awaitable[Pin]) -> Pin:
        rule = self.hardware.pins[self.hardware.locate(spec)]
        visit = Visit(requester.caller, rule.aliases[0] if rule.aliases else rule.pin,
                      time.perf_counter_ns())
        self.visits.append(visit)
        try:
            return await call
        except Exception as exc:
            visit.refusal = str(exc) or type(exc).__name__
            raise
        finally:
            visit.left = time.perf_counter_ns()

    def find(self, caller: str, pin: str, since: int) -> Visit | None:
        """The first visit since ``since`` by a caller named ``caller...`` for ``pin``."""
        found = None
        for visit in reversed(self.visits):  # in the order they came in
            if visit.entered < since:
                break
            if visit.pin == pin and visit.caller.startswith(caller):
                found = visit
        return found

    async def finished(self, caller: str, pin: str, since: int) -> Visit:
        """That visit, once it has left the door."""
        return await soon(lambda: v if (v := self.find(caller, pin, since)) and v.left else None)
