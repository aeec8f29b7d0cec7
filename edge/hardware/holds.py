"""How long an output keeps what it was set to: the timer that ends its on-time
(``max_on_seconds``) in a running agent, and what a command may set when no agent runs (a level
lasts only as long as something holds it, or the board keeps it).

>>> from peripherals.base import PinMode
>>> pump = Pin("gpio", "GPIO22", PinMode.OUTPUT, safe=False, max_on_seconds=30, aliases=("pump",))
>>> oneshot_refusal(pump, on=True, board_holds_levels=True, hold_seconds=10) is None
True
>>> oneshot_refusal(pump, on=True, board_holds_levels=True, hold_seconds=None).split(";")[0]
'gpio:GPIO22 (pump) has max_on_seconds = 30'
>>> hold_refusal(pump, 45).split(";")[0]
'gpio:GPIO22 (pump) has max_on_seconds = 30: it goes off after 30 s, before a hold of 45 s ends'
>>> hold_refusal(pump, 30) is None
True
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from edge.hardware.pins import Pin


def hold_refusal(rule: Pin, seconds: float, *, advice: str = "--hold {limit:g}") -> str | None:
    """Why holding ``rule`` on for ``seconds`` would not keep its promise, or None: its
    ``max_on_seconds`` switches it off first. The one check for every hold, whoever asks
    (``edge-cli gpio write --hold``, directly or through the agent; an automation's ``for``).
    ``advice`` is the hold the caller may ask for instead, in its own words, with ``{limit}``
    (``"for {limit:g}s"`` for an action)."""
    limit = rule.max_on_seconds
    if not limit or seconds <= limit:
        return None
    return (f"{rule.label} has max_on_seconds = {limit:g}: it goes off after {limit:g} s, before "
            f"a hold of {seconds:g} s ends; hold it for at most {limit:g} s "
            f"({advice.format(limit=limit)}), or raise max_on_seconds in "
            f"[boards.{rule.board}.pins]")


def oneshot_refusal(rule: Pin, *, on: bool, board_holds_levels: bool,
                    hold_seconds: float | None) -> str | None:
    """Why a command without a running agent may not set ``rule`` (``on``: to a level other
    than off), or None: what would not be true once the command exits (a level on a board that
    does not keep it, such as the Pi header, unless ``--hold`` keeps it; an on-time nobody would
    end). A hold that ``max_on_seconds`` would cut short is :func:`hold_refusal`'s."""
    if not board_holds_levels and hold_seconds is None:
        return (f"{rule.label}: board {rule.board} does not keep a level once this command exits "
                "and no agent is running; start the agent (`edge-cli run` or `sudo systemctl "
                "start edge-agent`) and try again, or add --hold SECONDS to drive it from this "
                "command for that long and then return it to its safe level")
    limit = rule.max_on_seconds
    if on and limit and hold_seconds is None:
        return (f"{rule.label} has max_on_seconds = {limit:g}; only the running agent can time "
                "it out, so start it with `edge-cli run` (or hold it from this command with "
                f"--hold of at most {limit:g} s)")
    return None  # a hold longer than max_on_seconds: the door asks hold_refusal, for every caller


class AutoOffTimers:
    """One timer per output that is on and has ``max_on_seconds``: when it runs out,
    ``turn_off(rule)`` ends the on-time. Switching the output off disarms it; switching it on
    again while it runs does not restart it."""

    def __init__(self, turn_off: Callable[[Pin], Awaitable[None]],
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self._turn_off = turn_off
        self._sleep = sleep
        self._timers: dict[tuple[str, str], asyncio.Task[None]] = {}

    def arm(self, rule: Pin, on: bool) -> None:
        """The output is about to be set ``on`` (or off)."""
        key = (rule.board, rule.pin)
        if not on:
            timer = self._timers.pop(key, None)
            if timer:
                timer.cancel()
        elif rule.max_on_seconds and key not in self._timers:
            self._timers[key] = asyncio.create_task(self._run(rule))

    async def _run(self, rule: Pin) -> None:
        await self._sleep(rule.max_on_seconds or 0.0)
        self._timers.pop((rule.board, rule.pin), None)
        await self._turn_off(rule)

    def cancel_all(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
