"""The agent's pins as an MCP server: its tools and resources, over any door to the running agent.

Every tool is an operation of the control socket (:mod:`edge.control.ops`) asked through a
:class:`Door`: ``edge-cli mcp`` asks the running agent over its socket
(:mod:`edge.mcp.server_stdio`), the agent's own HTTP server asks it in-process
(:mod:`edge.mcp.server_http`). Either way the call enters the one door to the pins as the caller
``mcp:<client>``, so the allowlist, modes, interlocks, rate limits, approvals and the audit trail
hold for it, and a refusal comes back as a tool error saying why. A result is what the hardware
did: the door's read-back (``value``), not an echo of what was asked.

Its tools are the operations of the catalog offered over MCP (:func:`edge.ops.catalog.over_mcp`),
registered by one loop under their MCP names (``pin_write`` for ``gpio.write``), each with its
arguments model's schema, words and hints (``docs/reference/operations.md`` lists them).

Resources: ``edge://pins``, ``edge://pins/{name}``, ``edge://sensors``, ``edge://sensors/{name}``
(JSON). ``openWorldHint`` is false throughout: a tool's world is this agent's allowlisted pins.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from edge import __version__
from edge.control.ops import OpResult
from edge.tools.base import schema_of

if TYPE_CHECKING:
    from edge.ops.operation import Hints, Operation
    from edge.security.approvals import ClientAsk


@dataclass(frozen=True)
class McpCaller:
    """Who calls: ``name`` is the caller the policy and the audit trail see (``mcp:<client>``);
    ``identity`` is what verified it on this side (``token:claude``, a bearer token of
    ``[mcp.tokens]``), empty when nothing did: a client that only named itself, or ``edge-cli
    mcp``, whose agent names it by the socket peer's uid instead (:mod:`edge.control.server`).
    Approvals remember *Always* by the identity, never by the name. ``ask`` asks the person at
    the client to approve (MCP elicitation, :mod:`edge.mcp.server_elicitation`); None: the chat
    admins are asked."""

    name: str
    identity: str = ""
    ask: ClientAsk | None = dataclasses.field(default=None, compare=False)


Door = Callable[[str, dict[str, Any], McpCaller], Awaitable[OpResult]]
"""``door(op, args, caller)``: the agent's answer to control operation ``op`` asked by
``caller``."""
CallerOf = Callable[["Context | None"], McpCaller]
"""Who is calling in this request (None: a static resource, whose handler the SDK gives no
request context)."""

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


def catalog_server(door: Door, caller_of: CallerOf,
                   middleware: Sequence[ServerMiddleware[Any]] = (), *,
                   tools: bool = True) -> MCPServer:
    """The MCP server whose tools (the catalog's) and resources ask ``door``, as ``caller_of``
    names the caller; ``tools=False`` leaves the tools for :func:`add_tools` to register later
    (``edge-cli mcp`` answers ``initialize`` first)."""
    server: MCPServer = MCPServer("edge-agent", version=__version__, instructions=INSTRUCTIONS,
                                  middleware=middleware)
    if tools:
        add_tools(server, door, caller_of)
    add_resources(server, door, caller_of)
    return server


def add_tools(server: MCPServer, door: Door, caller_of: CallerOf) -> None:
    """One tool per operation of the catalog offered over MCP, under each of its MCP names."""
    from edge.ops.catalog import over_mcp  # the operations load with the server that offers them

    for operation in over_mcp():
        for name in operation.mcp_names:
            server.add_tool(tool_function(operation, door, caller_of), name=name,
                            description=operation.description,
                            annotations=annotations_of(operation.hints))


def annotations_of(hints: Hints) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=hints.read_only,
                           destructive_hint=None if hints.read_only else hints.destructive,
                           idempotent_hint=None if hints.read_only else hints.idempotent,
                           open_world_hint=False)


def tool_function(operation: Operation, door: Door,
                  caller_of: CallerOf) -> Callable[..., Awaitable[CallToolResult]]:
    """A function the SDK registers as ``operation``'s tool: its parameters are the operation's
    arguments as the model sees them (names, types, bounds, help), its body asks ``door``."""
    schema = schema_of(operation.args)["properties"]
    hints: dict[str, Any] = {"ctx": Context, "return": CallToolResult}
    params = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    for name, field in operation.args.model_fields.items():
        if name not in schema:  # not offered to callers (``hold_seconds``)
            continue
        hints[name] = Annotated[field.annotation, Field(description=field.description),
                                *field.metadata]
        default = inspect.Parameter.empty if field.is_required() else field.default
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=hints[name]))

    async def call(ctx: Context, **args: Any) -> CallToolResult:
        given = {key: value for key, value in args.items() if value is not None}
        result = await door(operation.name, given, caller_of(ctx))
        if result.ok and operation.words is not None:  # as `edge-cli status` prints it
            result.message = operation.words(result.data)
        return tool_result(result)

    call.__name__ = operation.tool_name
    call.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    call.__annotations__ = hints
    return call


def add_resources(server: MCPServer, door: Door, caller_of: CallerOf) -> None:
    """The pins and sensors as JSON resources, read through ``door`` as the tools are."""

    async def resource(ctx: Context | None, op: str, args: dict[str, Any]) -> str:
        result = await door(op, args, caller_of(ctx))
        if not result.ok:
            raise ResourceError(result.message)  # the client gets the door's words
        return json.dumps(result.data, default=str)

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
