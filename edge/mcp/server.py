"""The agent's pins as an MCP server: its tools and resources, over any door to the running agent.

Every tool is an operation of the control socket (:mod:`edge.control.ops`) asked through a
:class:`Door`: ``edge-cli mcp`` asks the running agent over its socket
(:mod:`edge.mcp.server_stdio`), the agent's own HTTP server asks it in-process
(:mod:`edge.mcp.server_http`). Either way the call enters the one door to the pins as the caller
``mcp:<client>``, so the allowlist, modes, interlocks, rate limits, approvals and the audit trail
hold for it, and a refusal comes back as a tool error saying why. A result is what the hardware
did: the door's read-back (``value``), not an echo of what was asked.

=================  =====================================================  =========================
tool               what it does                                           annotations
=================  =====================================================  =========================
pin_read           one pin's value                                        read-only
pins_list          every allowlisted pin, its mode and state              read-only
pin_write          switch an output on or off                             destructive, idempotent
pin_pwm            a PWM pin's duty cycle (and frequency)                 destructive, idempotent
servo_angle        turn a servo to an angle                               destructive, idempotent
pin_safe           an output back to its safe level                       idempotent
sensors_list       every sensor's latest reading                          read-only
sensor_read        one sensor (``fresh``: measured now)                   read-only
sensor_history     a sensor over a span: lowest, highest, when, points    read-only
status             the agent: boards, channels, tasks                     read-only
history            the audit trail (who switched what, when, why)         read-only
schedules_list     the schedules                                          read-only
schedule_add       add a schedule (only a caller the policy lets)         additive
schedule_remove    remove one (only a caller the policy lets)             destructive, idempotent
=================  =====================================================  =========================

Resources: ``edge://pins``, ``edge://pins/{name}``, ``edge://sensors``, ``edge://sensors/{name}``
(JSON). ``openWorldHint`` is false throughout: a tool's world is this agent's allowlisted pins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from edge import __version__
from edge.control.ops import OpResult
from edge.status import format_status


@dataclass(frozen=True)
class McpCaller:
    """Who calls: ``name`` is the caller the policy and the audit trail see (``mcp:<client>``);
    ``identity`` is what verified it on this side (``token:claude``, a bearer token of
    ``[mcp.tokens]``), empty when nothing did: a client that only named itself, or ``edge-cli
    mcp``, whose agent names it by the socket peer's uid instead (:mod:`edge.control.server`).
    Approvals remember *Always* by the identity, never by the name."""

    name: str
    identity: str = ""


Door = Callable[[str, dict[str, Any], McpCaller], Awaitable[OpResult]]
"""``door(op, args, caller)``: the agent's answer to control operation ``op`` asked by
``caller``."""
CallerOf = Callable[["Context | None"], McpCaller]
"""Who is calling in this request (None: a static resource, whose handler the SDK gives no
request context)."""

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ACTUATE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                          open_world_hint=False)
"""Switching a pin changes the world (a pump runs, a lock opens): clients confirm before it."""
MAKE_SAFE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                      open_world_hint=False)
REMOVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                         open_world_hint=False)

PIN_HELP = "Pin name or alias, e.g. 'led', 'GPIO17', or 'board:pin' when several boards exist"
INSTRUCTIONS = ("The pins, sensors and schedules of an edge-agent (a Raspberry Pi or a board it "
                "drives). Only allowlisted pins can be used; the agent's policy (modes, interlocks, "
                "rate limits, approvals) may refuse a call, and the error says why. Results are "
                "what the hardware reads back.")
UNSAFE_NAME = re.compile(r"[^a-z0-9_.-]+")


def client_caller(name: str | None) -> str:
    """The caller for an MCP client by the name it gives (``clientInfo.name``): lowercase
    letters, digits, ``.``, ``_`` and ``-`` (at most 64), starting with a letter.

    >>> client_caller("Claude Desktop"), client_caller("42"), client_caller(None)
    ('mcp:claude-desktop', 'mcp:client-42', 'mcp:unknown')
    """
    cleaned = UNSAFE_NAME.sub("-", (name or "").lower()).strip("-.")
    if not cleaned:
        cleaned = "unknown"
    if not cleaned[0].isalpha():
        cleaned = f"client-{cleaned}"
    return f"mcp:{cleaned[:64]}"


def session_caller(ctx: Context) -> str:
    """The caller named by the client's ``initialize`` (its ``clientInfo.name``)."""
    params = ctx.session.client_params
    return client_caller(params.client_info.name if params is not None else None)


class StdioCaller:
    """The caller of a stdio server, which serves one client for its whole life: named by that
    client's ``initialize``, seen by :meth:`middleware` (so that a static resource, read with no
    request context, is read as that client too)."""

    def __init__(self) -> None:
        self.caller = client_caller(None)

    async def middleware(self, ctx: ServerRequestContext[Any, Any],
                         call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize" and isinstance(ctx.params, Mapping):
            info = ctx.params.get("clientInfo")
            name = info.get("name") if isinstance(info, Mapping) else None
            self.caller = client_caller(name if isinstance(name, str) else None)
        return await call_next(ctx)

    def __call__(self, ctx: Context | None) -> McpCaller:
        return McpCaller(session_caller(ctx) if ctx is not None else self.caller)


def tool_result(result: OpResult) -> CallToolResult:
    """The door's outcome as an MCP tool result: its words, its data (structured), and
    ``isError`` for a refusal or a failure."""
    text = result.message if result.ok else (result.message or "failed")
    if result.ok and not text:
        text = json.dumps(result.data, indent=1, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=result.data or None, is_error=not result.ok)


def build_server(door: Door, caller_of: CallerOf,
                 middleware: Sequence[ServerMiddleware[Any]] = ()) -> MCPServer:
    """The MCP server whose tools and resources ask ``door``, as ``caller_of`` names the caller."""
    server: MCPServer = MCPServer("edge-agent", version=__version__, instructions=INSTRUCTIONS,
                                  middleware=middleware)

    async def ask(ctx: Context, op: str, args: dict[str, Any]) -> CallToolResult:
        return tool_result(await door(op, args, caller_of(ctx)))

    async def resource(ctx: Context | None, op: str, args: dict[str, Any]) -> str:
        result = await door(op, args, caller_of(ctx))
        if not result.ok:
            raise ResourceError(result.message)  # the client gets the door's words
        return json.dumps(result.data, default=str)

    async def pin_read(pin: Annotated[str, Field(description=PIN_HELP)],
                       ctx: Context) -> CallToolResult:
        """Read an allowlisted pin: 1 on, 0 off; a PWM pin's duty, an analog pin's fraction of
        its reference, a servo's angle."""
        return await ask(ctx, "gpio.read", {"pin": pin})

    async def pins_list(ctx: Context) -> CallToolResult:
        """List the boards and every allowlisted pin with its mode, safe level and state."""
        return await ask(ctx, "pins", {})

    async def pin_write(pin: Annotated[str, Field(description=PIN_HELP)],
                        value: Annotated[Literal["on", "off"],
                                         Field(description="Level to drive the output to")],
                        ctx: Context) -> CallToolResult:
        """Switch an allowlisted output pin on or off; the result is what the pin reads back."""
        return await ask(ctx, "gpio.write", {"pin": pin, "value": value})

    async def pin_pwm(pin: Annotated[str, Field(description=PIN_HELP)],
                      duty: Annotated[float, Field(ge=0.0, le=1.0, description=(
                          "Duty cycle from 0.0 (off) to 1.0 (fully on)"))],
                      ctx: Context,
                      frequency: Annotated[float | None, Field(gt=0, le=100_000, description=(
                          "PWM frequency in Hz"))] = None) -> CallToolResult:
        """Set the duty cycle (and optionally the frequency) of an allowlisted PWM pin."""
        args: dict[str, Any] = {"pin": pin, "duty": duty}
        if frequency is not None:
            args["frequency"] = frequency
        return await ask(ctx, "gpio.pwm", args)

    async def servo_angle(pin: Annotated[str, Field(description=PIN_HELP)],
                          angle: Annotated[float, Field(ge=0.0, le=180.0, description=(
                              "Servo angle in degrees, 0 to 180"))],
                          ctx: Context) -> CallToolResult:
        """Turn a hobby servo on an allowlisted PWM pin to an angle."""
        return await ask(ctx, "gpio.servo", {"pin": pin, "angle": angle})

    async def pin_safe(pin: Annotated[str, Field(description=PIN_HELP)],
                       ctx: Context) -> CallToolResult:
        """Return an allowlisted output to its configured safe level (off if it has none)."""
        return await ask(ctx, "gpio.safe", {"pin": pin})

    async def sensors_list(ctx: Context) -> CallToolResult:
        """Every configured sensor's latest reading: each quantity with its unit and age."""
        return await ask(ctx, "sensors", {})

    async def sensor_read(name: Annotated[str, Field(description="The sensor's name")],
                          ctx: Context,
                          fresh: Annotated[bool, Field(description=(
                              "Measure now instead of giving the last polled reading"))] = False,
                          ) -> CallToolResult:
        """One sensor's reading: each quantity with its unit and how old it is."""
        return await ask(ctx, "sensors", {"name": name, "fresh": fresh})

    async def sensor_history(name: Annotated[str, Field(description="The sensor's name")],
                             ctx: Context,
                             quantity: Annotated[str | None, Field(description=(
                                 "One quantity (temperature, humidity...); all the sensor's when "
                                 "omitted"))] = None,
                             since: Annotated[str, Field(description=(
                                 "Start: a span ago ('12h', '7d', '90m') or a local time "
                                 "('2026-11-25T18:00')"))] = "24h",
                             until: Annotated[str | None, Field(description=(
                                 "End, written the same way; now when omitted"))] = None,
                             points: Annotated[int, Field(ge=1, le=1000, description=(
                                 "At most this many points per quantity"))] = 100,
                             ) -> CallToolResult:
        """What a sensor read over a span of time, from the agent's recorded history: each
        quantity's lowest and highest value with when, mean, last value, the gaps where the
        sensor was failing, and up to ``points`` points (low/mean/high per bucket)."""
        args = {"sensor": name, "quantity": quantity, "since": since, "until": until,
                "points": points}
        return await ask(ctx, "sensors.history", {k: v for k, v in args.items() if v is not None})

    async def status(ctx: Context) -> CallToolResult:
        """The agent's status: version, uptime, boards, channels, tasks, what is down and why."""
        result = await door("status", {}, caller_of(ctx))
        if result.ok:  # as `edge-cli status` prints it; the data is the structured content
            result.message = format_status(result.data)
        return tool_result(result)

    async def history(ctx: Context,
                      pin: Annotated[str | None, Field(description=(
                          "Only this pin (name or alias)"))] = None,
                      since: Annotated[str | None, Field(description=(
                          "Only this recent, e.g. '2h', '3d'"))] = None,
                      who: Annotated[str | None, Field(description=(
                          "Only this caller: 'mcp:claude', 'telegram:42', a channel such as "
                          "'schedule'"))] = None,
                      limit: Annotated[int, Field(ge=1, le=200, description=(
                          "At most this many, newest kept"))] = 20) -> CallToolResult:
        """The audit trail: every actuation and refusal at the door to the pins (when, which
        pin, what was asked and read back, who asked, through which door and why)."""
        args = {k: v for k, v in {"pin": pin, "since": since, "who": who}.items() if v}
        return await ask(ctx, "history", {**args, "limit": limit})

    async def schedules_list(ctx: Context) -> CallToolResult:
        """The schedules: each one's name, when it runs, what it does and when it runs next."""
        return await ask(ctx, "schedules", {})

    async def schedule_add(name: Annotated[str, Field(description=(
                               "A short name: letters, digits, - and _"))],
                           action: Annotated[str, Field(description=(
                               "What to do, e.g. 'gpio write pump on for 30s'"))],
                           ctx: Context,
                           cron: Annotated[str | None, Field(description=(
                               "Five-field cron expression, e.g. '0 6 * * *'"))] = None,
                           every: Annotated[str | None, Field(description=(
                               "An interval such as '10m' or '1h30m'"))] = None,
                           at: Annotated[str | None, Field(description=(
                               "Once, at a local time '2026-12-01 06:00'"))] = None,
                           timezone: Annotated[str, Field(description=(
                               "IANA zone; empty: the Pi's"))] = "") -> CallToolResult:
        """Add a schedule (one of cron, every, at). Only a caller the agent's policy lets
        change schedules may; others are refused, saying why."""
        args = {"name": name, "action": action, "cron": cron, "every": every, "at": at,
                "timezone": timezone}
        return await ask(ctx, "schedules.add", {k: v for k, v in args.items() if v is not None})

    async def schedule_remove(name: Annotated[str, Field(description="The schedule's name")],
                              ctx: Context) -> CallToolResult:
        """Remove a schedule. Only a caller the agent's policy lets change schedules may."""
        return await ask(ctx, "schedules.remove", {"name": name})

    for tool, hints in ((pin_read, READ), (pins_list, READ), (pin_write, ACTUATE),
                        (pin_pwm, ACTUATE), (servo_angle, ACTUATE), (pin_safe, MAKE_SAFE),
                        (sensors_list, READ), (sensor_read, READ), (sensor_history, READ),
                        (status, READ), (history, READ), (schedules_list, READ), (schedule_add, ADD),
                        (schedule_remove, REMOVE)):
        server.add_tool(tool, annotations=hints)

    @server.resource("edge://pins", name="pins", mime_type="application/json",
                     description="Every allowlisted pin: mode, safe level and state")
    async def pins_resource() -> str:
        return await resource(None, "pins", {})

    @server.resource("edge://pins/{name}", name="pin", mime_type="application/json",
                     description="One pin's value and facts")
    async def pin_resource(name: str, ctx: Context) -> str:
        return await resource(ctx, "gpio.read", {"pin": name})

    @server.resource("edge://sensors", name="sensors", mime_type="application/json",
                     description="Every sensor's latest reading")
    async def sensors_resource() -> str:
        return await resource(None, "sensors", {})

    @server.resource("edge://sensors/{name}", name="sensor", mime_type="application/json",
                     description="One sensor's latest reading")
    async def sensor_resource(name: str, ctx: Context) -> str:
        return await resource(ctx, "sensors", {"name": name})

    return server
