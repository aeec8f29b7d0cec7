"""The Tool protocol (name, description, parameter schema, async
execute returning a ToolResult) and a base class whose schema is generated from a pydantic model
of its parameters (:class:`ToolArgs`).

Failures the model can react to (refused pin, bad argument) are ``ToolResult(success=False)``,
never exceptions, so the tool loop can hand them back to the model.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from edge.core.exc import EdgeError
from edge.core.messages import ToolSpec
from edge.core.requester import Requester
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


class ToolArgs(BaseModel):
    """A tool's arguments: an unknown one is refused. Built when the tool is first used or
    described (``defer_build``): most tools wait for a model that asks for them."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}
_NAMED = ("properties", "$defs", "definitions", "patternProperties")
"""Keywords whose keys are names (a parameter may be called "title"), not keywords."""
_DATA = ("default", "enum", "const", "examples")


def schema_of(params: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a parameter model (``model_json_schema``), worked out once: without
    pydantic's titles and the model's own docstring, which the tool's description already says.
    References (an enum's ``$defs``) are left for the providers that refuse them to inline
    (:mod:`edge.providers.schema`)."""
    schema = _SCHEMAS.get(params)
    if schema is None:
        schema = _without_titles(params.model_json_schema())
        schema.pop("description", None)
        _SCHEMAS[params] = schema
    return schema


def _without_titles(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: ({name: _without_titles(sub) for name, sub in value.items()} if key in _NAMED
                  else value if key in _DATA else _without_titles(value))
            for key, value in node.items() if key != "title"}


def argument_errors(exc: ValidationError, params: type[BaseModel]) -> str:
    from edge.core.validation import problems  # here: only wrong arguments need the words for them

    parts = [f"{problem.where or 'arguments'}: {problem.message}" for problem in problems(exc, params)]
    return "invalid arguments: " + "; ".join(parts)


P = TypeVar("P", bound=BaseModel)


class ModelTool(ABC, Generic[P]):
    """A tool whose arguments are the pydantic model ``Params`` (a :class:`ToolArgs`);
    subclasses implement ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: type[P]

    def parameters_schema(self) -> dict[str, Any]:
        return copy.deepcopy(schema_of(self.Params))

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        try:
            params = self.Params.model_validate(args or {})
        except ValidationError as exc:
            return ToolResult(False, error=argument_errors(exc, self.Params))
        try:
            return await self.run(params, requester)
        except (EdgeError, BoardError) as exc:
            return ToolResult(False, error=str(exc))

    @abstractmethod
    async def run(self, params: P, requester: Requester) -> ToolResult:
        """Do the work with validated ``params``; EdgeError and BoardError become a failed result."""
