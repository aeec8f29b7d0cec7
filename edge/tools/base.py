"""The Tool protocol (name, description, parameter schema, async
execute returning a ToolResult) and a base class whose schema is generated from a record of its
parameters (:class:`edge.records.Record`).

Failures the model can react to (refused pin, bad argument) are ``ToolResult(success=False)``,
never exceptions, so the tool loop can hand them back to the model.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from edge.exc import EdgeError
from edge.messages import ToolSpec
from edge.records import Invalid, Record
from edge.requester import Requester
from peripherals.exc import BoardError


@dataclass
class ToolResult:
    success: bool
    output: str = ""
    error: str | None = None
    data: dict[str, Any] | None = None
    """Structured result for scripts (``--json``); the model sees ``output`` or ``error``."""

    def as_dict(self) -> dict[str, Any]:
        return {"success": self.success, "output": self.output, "error": self.error,
                "data": self.data}

    @property
    def text(self) -> str:
        return self.output if self.success else f"Error: {self.error}"


@runtime_checkable
class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def parameters_schema(self) -> dict[str, Any]: ...

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        """Run with JSON ``args`` on behalf of ``requester`` (who asked, through which door)."""
        ...


def spec_of(tool: Tool) -> ToolSpec:
    return ToolSpec(tool.name, tool.description, tool.parameters_schema())


_SCHEMAS: dict[type[Record], dict[str, Any]] = {}


def _schema_of(params: type[Record]) -> dict[str, Any]:
    """JSON schema of a parameter record, worked out once (it never changes)."""
    schema = _SCHEMAS.get(params)
    if schema is None:
        schema = _SCHEMAS[params] = params.json_schema()
    return schema


def _argument_errors(exc: Invalid) -> str:
    parts = [f"{issue.where or 'arguments'}: {issue.message}" for issue in exc.issues]
    return "invalid arguments: " + "; ".join(parts)


P = TypeVar("P", bound=Record)


class ModelTool(Generic[P]):
    """A tool whose arguments are the record ``Params``; subclasses implement ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: type[P]

    def parameters_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_schema_of(self.Params))

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        try:
            params = self.Params.parse(args or {})
        except Invalid as exc:
            return ToolResult(False, error=_argument_errors(exc))
        try:
            return await self.run(params, requester)
        except (EdgeError, BoardError) as exc:
            return ToolResult(False, error=str(exc))

    async def run(self, params: P, requester: Requester) -> ToolResult:
        raise NotImplementedError
