"""Tools: what the model (and direct commands) can do, each gated by the SecurityPolicy.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.tools.automation import automation_tools
    from edge.tools.base import ModelTool, Tool, ToolArgs, ToolResult, spec_of
    from edge.tools.gpio import hardware_tools
    from edge.tools.memory import configured_admins, memory_tools

__all__ = ["ModelTool", "Tool", "ToolArgs", "ToolResult", "automation_tools", "configured_admins",
           "hardware_tools", "memory_tools", "spec_of"]

_HOMES = {
    "automation": ("automation_tools",),
    "base": ("ModelTool", "Tool", "ToolArgs", "ToolResult", "spec_of"),
    "gpio": ("hardware_tools",),
    "memory": ("configured_admins", "memory_tools"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
