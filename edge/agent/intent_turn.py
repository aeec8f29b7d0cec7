"""A turn answered by a local intent (:mod:`edge.agent.intents`): the operation's own tool runs
for the person who asked, through the one door, and the reply says that no model was asked. The
hardware's receipt is added by the agent as for any turn.

A switch with a duration ("pump on for 10 minutes") is held by the door's hold check (refused
when the pin's ``max_on_seconds`` is shorter) and switched off again by a timer here; a newer
intent on the same pin replaces the timer.

:func:`reading_tools` is the other half of the restraint: the tools a model may call in a turn
that asks about state, which actuate nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace

from edge.agent.intents import SWITCH, Intent, Vocabulary
from edge.core.requester import Requester
from edge.hardware import Hardware
from edge.ops.catalog import CATALOG
from edge.ops.operation import Kind
from edge.tools.base import Tool, ToolResult
from peripherals.base import PinMode

log = logging.getLogger(__name__)

NO_MODEL_ASKED = "(Understood here; no model was asked.)"


def reading_tools(tools: list[Tool]) -> list[Tool]:
    """``tools`` without those of operations that actuate or change the agent."""
    moving = {op.tool_name for op in CATALOG.values() if op.kind is not Kind.READ}
    return [tool for tool in tools if tool.name not in moving]


def vocabulary(hardware: Hardware, sensors: Mapping[str, Mapping[str, str]]) -> Vocabulary:
    """The agent's names: every allowlisted pin by alias, pin name and ``board:pin``; every
    sensor by name with its quantities."""
    pins: dict[str, str] = {}
    outputs = set()
    for rule in hardware.pin_list():
        spec = f"{rule.board}:{rule.pin}"
        for name in (*rule.aliases, rule.pin, spec):
            pins.setdefault(name, spec)
        if rule.mode is PinMode.OUTPUT:
            outputs.add(spec)
    return Vocabulary.of(pins, outputs=outputs, sensors={n: tuple(q) for n, q in sensors.items()})


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


class IntentRunner:
    """Runs intents through the agent's tools (by the catalog's tool names)."""

    def __init__(self, tools: Mapping[str, Tool]):
        self.tools = tools
        self._timers: dict[str, asyncio.Task[None]] = {}

    def can_run(self, intent: Intent) -> bool:
        return CATALOG[intent.operation].tool_name in self.tools

    async def run(self, intent: Intent, requester: Requester) -> str:
        """The reply to ``intent`` asked by ``requester``: what the tool returned, or why not."""
        result = await self.execute(intent, requester)
        log.info("local_intent operation=%s success=%s by=%s", intent.operation, result.success,
                 requester.caller)
        if not result.success:
            return f"I could not do that: {result.error}\n{NO_MODEL_ASKED}"
        return f"{result.output}\n{NO_MODEL_ASKED}"

    async def execute(self, intent: Intent, requester: Requester) -> ToolResult:
        """``intent``'s tool call; a switch on for ``seconds`` is held that long through the
        door's hold check and switched off again by a timer."""
        tool = self.tools[CATALOG[intent.operation].tool_name]
        args = dict(intent.args)
        if intent.operation == SWITCH:
            self._cancel(args["pin"])
            if intent.seconds is not None:
                args["hold_seconds"] = intent.seconds
        result = await tool.execute(args, requester)
        if intent.seconds is not None and result.success:
            self._timers[args["pin"]] = asyncio.create_task(
                self._switch_off(tool, args["pin"], intent.seconds, requester))
            result = replace(result, output=f"{result.output}; it goes off again in "
                                            f"{_duration(intent.seconds)}")
        return result

    def _cancel(self, pin: str) -> None:
        timer = self._timers.pop(pin, None)
        if timer is not None:
            timer.cancel()

    async def _switch_off(self, tool: Tool, pin: str, seconds: float,
                          requester: Requester) -> None:
        await asyncio.sleep(seconds)
        self._timers.pop(pin, None)
        result = await tool.execute({"pin": pin, "value": "off"},
                                    requester._replace(why=f"{requester.why} timer"))
        log.info("local_intent_timer pin=%s success=%s by=%s", pin, result.success,
                 requester.caller)

    def cancel_all(self) -> None:
        for pin in list(self._timers):
            self._cancel(pin)
