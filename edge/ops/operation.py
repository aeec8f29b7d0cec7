"""One operation, declared once: its name, its arguments (one pydantic model: the schema, the help
texts, the bounds), its handler, its kind, whether a fleet node may be asked it, its MCP hints and
its chat spellings. Every door is derived from it (:mod:`edge.ops.catalog`).

An operation is either a model tool's (``tool``: the :class:`ModelTool` class, whose ``Params``,
``description`` and ``run`` are the operation's arguments, words and handler, run through the
agent's instance of it so its policy and approvals hold) or a ``handler`` of its own with its
``args`` and ``summary`` (``status``, ``models.select``...: things no model is asked to do).

The naming rule, written here once: the socket's name is the operation's (``gpio.write``); its
model tool and MCP tool are that name with ``.`` as ``_`` (:func:`door_name`), unless the
operation keeps an older name clients already use (a tool class's own ``name``, ``mcp="..."``).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ValidationError

from edge.core.requester import Requester
from edge.ops.result import OpResult, OpTarget
from edge.tools.base import ModelTool, Tool, ToolArgs, argument_errors

if TYPE_CHECKING:
    from edge.audit import AuditTrail
    from edge.automation.assembly import Automation
    from edge.hardware import Hardware
    from edge.readings.recorder import ReadingRecorder
    from edge.security.approvals import ApprovalGate


class Kind(enum.Enum):
    """What an operation does, which decides who may ask it and who waits for approval."""

    READ = "reads"
    """Reads only: anyone the door lets in."""
    ACTUATE = "actuates"
    """Moves hardware: under ``supervised`` autonomy a model's or MCP client's call waits for an
    admin; a fleet node with ``allow_commands = false`` refuses it."""
    CHANGE = "changes the agent"
    """Changes the agent for everyone (a schedule): over the socket the local operator's, or an
    MCP client asking through the operator's socket whom the policy lets; waits for approval."""
    OPERATOR = "operator only"
    """The local operator's alone (root, the agent's user, the control socket's group)."""


@dataclass(frozen=True)
class Hints:
    """MCP tool annotations, said without the MCP SDK (:mod:`edge.mcp.server` maps them);
    ``openWorldHint`` is always false: an operation's world is this agent."""

    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False


READS = Hints()
ACTUATES = Hints(read_only=False, destructive=True, idempotent=True)
"""Switching a pin changes the world (a pump runs, a lock opens): clients confirm before it."""
MAKES_SAFE = Hints(read_only=False, destructive=False, idempotent=True)
ADDS = Hints(read_only=False, destructive=False, idempotent=False)
REMOVES = Hints(read_only=False, destructive=True, idempotent=True)

class ToolParts(Protocol):
    """What an operation's tool is built from: the agent's parts (:class:`edge.assembly.AgentAssembly`)."""

    hardware: Hardware
    automation: Automation
    approvals: ApprovalGate
    audit: AuditTrail
    recorder: ReadingRecorder


Handler = Callable[[OpTarget, dict[str, Any], Requester], Awaitable[OpResult]]
ChatParse = Callable[[list[str]], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Chat:
    """A chat spelling: ``usage`` (``/gpio PIN on|off``) and ``help`` are its ``/help`` line;
    ``parse`` turns the words after the command into arguments, None when they are not this
    spelling, or raises ValueError with what to say instead. ``wrong`` is the answer when no
    spelling of the command fits (default: the usages joined); ``menu`` the command's line in a
    channel's menu (Telegram's), on its first spelling (default: ``help``)."""

    usage: str
    help: str
    parse: ChatParse
    wrong: str = ""
    aliases: tuple[str, ...] = ()
    menu: str = ""

    @property
    def command(self) -> str:
        return self.usage.split()[0].lstrip("/")


class NoArgs(ToolArgs):
    """No arguments: any given is refused."""


def door_name(name: str) -> str:
    """The naming rule: an operation's tool and MCP name is its socket name with ``.`` as ``_``.

    >>> door_name("sensors.history")
    'sensors_history'
    """
    return name.replace(".", "_")


@dataclass(frozen=True)
class Operation:
    name: str
    """The control socket's name (``gpio.write``); the fleet's and the CLI's too."""
    kind: Kind
    tool: type[ModelTool[Any]] | None = None
    handler: Handler | None = None
    args_model: type[BaseModel] = NoArgs
    """A handler's arguments (a tool's are its ``Params``)."""
    summary: str = ""
    """A handler's words (a tool's are its ``description``)."""
    remote: bool = False
    """A fleet node may be asked it (:mod:`edge.fleet.protocol`)."""
    paired_only: bool = False
    """Over the fleet, answered only to a paired caller: it shows paths and other callers' ids."""
    mcp: bool | str = False
    """Offered over MCP: True under :func:`door_name`'s rule, or under the older name given."""
    mcp_also: tuple[str, ...] = ()
    """Older MCP names offered too, the same tool (``sensors_list`` is ``sensor_read``)."""
    hints: Hints = READS
    chat: tuple[Chat, ...] = ()
    local: bool = False
    """Offered to a small local model in the compact profile (:mod:`edge.agent.compact`): what
    people ask of the pins and sensors most."""
    words: Callable[[dict[str, Any]], str] | None = None
    """The words of an answer that is data alone (``status``), as ``edge-cli`` prints it: the
    text an MCP client gets."""
    build: Callable[[ToolParts], Tool] | None = None
    """How the agent builds the operation's tool from its parts (a tool's operation only)."""

    def __post_init__(self) -> None:
        if (self.tool is None) == (self.handler is None):
            raise ValueError(f"operation {self.name}: give it a tool or a handler, not both")
        if (self.tool is None) != (self.build is None):
            raise ValueError(f"operation {self.name}: a tool comes with how to build it")

    @property
    def tool_name(self) -> str:
        """The model tool's name (a handler's, by the rule, though no model is offered it)."""
        return self.tool.name if self.tool is not None else door_name(self.name)

    @property
    def mcp_name(self) -> str | None:
        if self.mcp is False:
            return None
        return self.mcp if isinstance(self.mcp, str) else self.tool_name

    @property
    def mcp_names(self) -> tuple[str, ...]:
        """Every name MCP clients call it by: :attr:`mcp_name` first."""
        return () if self.mcp_name is None else (self.mcp_name, *self.mcp_also)

    @property
    def args(self) -> type[BaseModel]:
        return self.tool.Params if self.tool is not None else self.args_model

    @property
    def description(self) -> str:
        return self.tool.description if self.tool is not None else self.summary

    @property
    def waits_for_approval(self) -> bool:
        """Whether a call may wait for an admin's approval (a caller allows for that long)."""
        return self.kind in (Kind.ACTUATE, Kind.CHANGE)

    async def run(self, target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
        """The operation for ``requester`` (whom the door already admitted): the agent's tool of
        that name, or the handler with the arguments as its model reads them (exit 2 when it
        refuses them)."""
        if self.handler is not None:
            try:
                given = self.args_model.model_validate(args or {})
            except ValidationError as exc:
                return OpResult(False, argument_errors(exc, self.args_model), exit_code=2)
            return await self.handler(target, given.model_dump(), requester)
        tool = target.tools.get(self.tool_name)
        if tool is None:
            return OpResult(False, f"{self.name} is not available in this agent (its tool "
                            f"{self.tool_name} is not built: see its config section)")
        return OpResult.from_tool(await tool.execute(args, requester))
