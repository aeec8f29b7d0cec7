"""The Tool protocol (name, description, parameter schema, async
execute returning a ToolResult) and a base class whose schema is generated from a pydantic model.

Failures the model can react to (refused pin, bad argument) are ``ToolResult(success=False)``,
never exceptions, so the tool loop can hand them back to the model.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from edge.exc import EdgeError
from edge.messages import ToolSpec
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


@functools.cache
def _schema_of(params: type[BaseModel]) -> dict[str, Any]:
    """JSON schema of a parameter model, generated once (it is costly and never changes)."""
    schema = params.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _argument_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "invalid arguments: " + "; ".join(parts)


P = TypeVar("P", bound=BaseModel)


class ModelTool(Generic[P]):
    """A tool whose arguments are the pydantic model ``Params``; subclasses implement ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: type[P]

    def parameters_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_schema_of(self.Params))

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        try:
            params = self.Params.model_validate(args or {})
        except ValidationError as exc:
            return ToolResult(False, error=_argument_errors(exc))
        try:
            return await self.run(params, requester)
        except (EdgeError, BoardError) as exc:
            return ToolResult(False, error=str(exc))

    async def run(self, params: P, requester: Requester) -> ToolResult:
        raise NotImplementedError
