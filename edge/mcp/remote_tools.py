"""Other MCP servers' tools as the model's tools: only those each ``[[mcp.servers]]`` lists in
``allow``, named ``server.tool`` for people (status, the audit trail, approval prompts).

Providers take function names of ``^[a-zA-Z0-9_-]{1,64}$`` only (OpenAI, Anthropic and Gemini
alike), so the model sees ``server__tool`` (:func:`provider_name`); a tool name with other
characters, one too long, or one that would collide with another tool's, gets a short hash of
``server.tool`` instead, so two tools never share a name. The tool keeps both names, so the way
back is the tool itself. The input schema is the server's, handed on as it is: each provider
cleans it as it cleans local tools' (:mod:`edge.providers.schema`: Gemini's refs inlined). A tool
the server's caps left out (:mod:`edge.mcp.client_bounds`) is offered with an open schema and
refuses to run, saying why; a result is cut to the server's ``max_result_bytes``.

A tool acts on the world, and goes through :class:`RemoteGate` (``readonly`` autonomy, the
per-caller rate limit ``[security] max_actuations_per_minute``, the approval gate under
``supervised``) and into the audit trail as a ``call`` record, when ``actuates`` lists it or
the server does not mark it read-only: MCP's defaults (``readOnlyHint`` false, then
``destructiveHint`` true) make an unannotated tool destructive, and a non-destructive write
(``destructiveHint: false``) still changes the world. Only ``readOnlyHint: true`` (and not in
``actuates``) lets a tool run without the gate. An approval answered "Always" covers the same
call with the same arguments from the same person, until the agent restarts.

>>> provider_name("ha", "HassTurnOn", set())
'ha__HassTurnOn'
>>> provider_name("ha", "light.turn_on", set())
'ha__light_turn_on_88abb97f'
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from edge.core.actuation import Actuation, Outcome
from edge.core.ratelimit import SlidingWindow
from edge.core.requester import Requester
from edge.mcp.client import RemoteToolError, ServerLink
from edge.mcp.client_bounds import cut
from edge.security.approvals import ApprovalGate
from edge.tools.base import ToolResult

log = logging.getLogger(__name__)

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_NAME = 64
SUMMARY_CHARS = 160
"""How much of a call's arguments an approval prompt and the audit trail keep."""
DESCRIPTION_CHARS = 400
"""How much of a server's description of a tool the model is told (on one line: the system
prompt lists the tools, and another server's words must not open sections of their own)."""
RATE_WINDOW_SECONDS = 60.0
OPEN_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

Record = Callable[[Actuation], Awaitable[None]]
"""The hardware's recorders (the audit trail, the turn's receipt): :meth:`Hardware.record`."""


def provider_name(server: str, tool: str, taken: Collection[str]) -> str:
    """``server__tool`` where that is a valid function name no other tool has, else the
    same (cut to fit) with ``_`` and 8 hex digits of ``server.tool``."""
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", tool)
    name = f"{server}__{safe}"
    if safe == tool and len(name) <= MAX_NAME and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}.{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def summary(arguments: dict[str, Any]) -> str:
    """The arguments as short JSON, for approval prompts and the audit trail."""
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1] + "…"


class RemoteGate:
    """What a remote tool that acts on the world passes first: ``readonly`` autonomy, the
    caller's rate limit and the approval gate (the same one the pins use), and where its
    outcome is recorded."""

    def __init__(self, approvals: ApprovalGate, max_per_minute: int, record: Record,
                 clock: Callable[[], float] = time.monotonic):
        self.approvals = approvals
        self.max_per_minute = max_per_minute
        self.record = record
        self._rates = SlidingWindow(RATE_WINDOW_SECONDS, clock=clock)

    async def refusal(self, label: str, args: str, requester: Requester) -> str | None:
        """None when ``requester`` may call ``label`` now, else why not (asks for approval
        under ``supervised`` autonomy, through the requester's channel)."""
        if self.approvals.autonomy != "readonly":
            caller, limit = requester.caller, self.max_per_minute
            if not self._rates.take(caller, limit):
                return (f"rate limit: {caller} made {self._rates.count(caller)} actuations in the "
                        f"last minute (limit {limit}); try again shortly")
        # "Always" remembers the call with these arguments (that door, that light), as it
        # remembers a pin: not every use of a tool that can open any door
        return await self.approvals.check(f"{label} {args}", "call", f"call {label} {args}",
                                          requester)


class RemoteTool:
    """One allowed tool of a server: the model calls it by :attr:`name`."""

    def __init__(self, link: ServerLink, tool: str, name: str, gate: RemoteGate):
        self.link = link
        self.tool = tool
        self.name = name
        self.label = f"{link.name}.{tool}"
        self.gate = gate

    @property
    def description(self) -> str:
        info = self.link.tools.get(self.tool)
        said = " ".join(info.description.split()) if info is not None and info.description else \
            "(the server was not connected when the tools were described)"
        if (why := self.link.left_out.get(self.tool)) is not None:
            said = f"(unavailable: left out by the agent, {why})"
        if len(said) > DESCRIPTION_CHARS:
            said = said[:DESCRIPTION_CHARS - 1] + "…"
        return f"{self.label} (MCP server {self.link.name}): {said}"

    def parameters_schema(self) -> dict[str, Any]:
        info = self.link.tools.get(self.tool)
        return dict(info.input_schema) if info is not None else dict(OPEN_SCHEMA)

    @property
    def acts(self) -> bool:
        """Listed in ``actuates``, or not marked read-only by the server (or not listed yet)."""
        info = self.link.tools.get(self.tool)
        return self.tool in self.link.config.actuates or info is None or not info.read_only

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        if (why := self.link.left_out.get(self.tool)) is not None:
            return ToolResult(False, error=f"{self.label} is left out: {why} ([[mcp.servers]] "
                                           f"name = \"{self.link.name}\")")
        if self.link.connected and self.tool not in self.link.tools:
            listed = ", ".join(sorted(self.link.tools)) or "none"
            return ToolResult(False, error=f"MCP server {self.link.name} has no tool "
                                           f"{self.tool!r} (it lists: {listed})")
        if not self.link.connected:
            return ToolResult(False, error=self.link.unavailable())
        acts, said = self.acts, summary(args)
        if acts and (refusal := await self.gate.refusal(self.label, said, requester)):
            log.warning("mcp_call_refused tool=%s by=%s reason=%r", self.label, requester.caller,
                        refusal)
            await self._record("refused", said, requester, refusal)
            return ToolResult(False, error=f"{self.label}: {refusal}")
        try:
            result = await self.link.call(self.tool, args)
        except RemoteToolError as exc:
            if acts:
                await self._record("failed", said, requester, str(exc))
            return ToolResult(False, error=str(exc))
        whole = _text_of(result)
        text = cut(whole, self.link.config.max_result_bytes)
        if text is not whole:
            log.warning("mcp_result_cut tool=%s bytes=%d limit=%d", self.label,
                        len(whole.encode()), self.link.config.max_result_bytes)
        log.info("mcp_call tool=%s error=%s by=%s", self.label, result.is_error, requester.caller)
        if result.is_error:
            if acts:
                await self._record("failed", said, requester, text[:SUMMARY_CHARS])
            return ToolResult(False, error=f"{self.label}: {text or 'the tool reported an error'}")
        if acts:
            await self._record("ok", said, requester)
        data = result.structured_content if text is whole else None
        return ToolResult(True, output=text, data=data if isinstance(data, dict) else None)

    async def _record(self, outcome: Outcome, args: str, requester: Requester,
                      reason: str = "") -> None:
        await self.gate.record(Actuation(
            at=time.time(), board=self.link.name, pin=self.tool, label=self.label, action="call",
            asked=None, outcome=outcome, reason=reason, caller=requester.caller,
            door=requester.channel, why=requester.why, detail=args))


def _text_of(result: Any) -> str:
    """The result's text blocks, else its structured content as JSON, else what it holds."""
    texts = [getattr(block, "text", None) for block in result.content]
    parts = [t for t in texts if isinstance(t, str)]
    if parts:
        return "\n".join(parts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    kinds = sorted({getattr(block, "type", "?") for block in result.content})
    return f"(no text; content: {', '.join(kinds)})" if kinds else ""


def remote_tools(links: list[ServerLink], gate: RemoteGate, taken: Collection[str]) -> list[RemoteTool]:
    """The allowed tools of every server, named so that none takes a name in ``taken`` (the
    local tools') or another's."""
    names = set(taken)
    tools: list[RemoteTool] = []
    for link in links:
        for tool in dict.fromkeys(link.config.allow):
            name = provider_name(link.name, tool, names)
            names.add(name)
            tools.append(RemoteTool(link, tool, name, gate))
    return tools
