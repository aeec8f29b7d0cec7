"""What an operation answers (:class:`OpResult`) and what it acts on (:class:`OpTarget`).

Refusals and failures are results, not exceptions, with exit code 1 (usage errors 2), as the
CLI contract requires. This module is light: the CLI client imports it to read an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the CLI client imports this module: keep the tools and providers off its path
    from edge.automation.assembly import Automation
    from edge.channels.base import Channel
    from edge.config.loader import LoadedConfig
    from edge.hardware import Hardware
    from edge.providers.switch import ModelSwitch
    from edge.safe_mode import SafeMode
    from edge.tools.base import Tool, ToolResult


class OpResult:
    """An operation's outcome. Written out rather than a dataclass: the CLI client's path
    (``edge-cli status``) stays clear of :mod:`dataclasses`, which imports :mod:`inspect`."""

    __slots__ = ("ok", "message", "data", "exit_code")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(self, ok: bool, message: str = "", data: dict[str, Any] | None = None,
                 exit_code: int = 0):
        self.ok = ok
        self.message = message
        self.data: dict[str, Any] = {} if data is None else data
        self.exit_code = 1 if not ok and exit_code == 0 else exit_code  # a failure never exits 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OpResult):
            return NotImplemented
        return (self.ok, self.message, self.data, self.exit_code) == \
            (other.ok, other.message, other.data, other.exit_code)

    def __repr__(self) -> str:
        return (f"OpResult(ok={self.ok!r}, message={self.message!r}, data={self.data!r}, "
                f"exit_code={self.exit_code!r})")

    def as_dict(self) -> dict[str, Any]:
        """``ok``, ``error`` (None when ok), ``exit_code`` (what the process exits with) and
        ``data``; an outcome that is ok also has its ``message``."""
        out: dict[str, Any] = {"ok": self.ok, "exit_code": self.exit_code, "data": self.data,
                               "error": None}
        out["message" if self.ok else "error"] = self.message
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> OpResult:
        ok = bool(raw.get("ok"))
        message = raw.get("message" if ok else "error") or ""
        return cls(ok, message, raw.get("data") or {}, int(raw.get("exit_code", 0 if ok else 1)))

    @classmethod
    def from_tool(cls, result: ToolResult) -> OpResult:
        """A tool's failure is exit 1, or 2 when it names something that does not exist
        (``data.unknown``: no such sensor, quantity or camera), wherever the tool ran."""
        if result.success:
            return cls(True, result.output, result.data or {})
        data = result.data or {}
        return cls(False, result.error or "failed", data, 2 if data.get("unknown") else 1)


class OpTarget(Protocol):
    """What operations act on: the Runtime, resident (daemon) or direct."""

    tools: dict[str, Tool]
    hardware: Hardware
    """The one door to the pins (``gpio.simulate`` drives a simulated board's input there)."""
    automation: Automation
    """The rules, interlocks and sensors (``sensors.simulate`` holds a reading in its hub)."""
    provider: ModelSwitch | None
    """None when no model is configured."""
    safe_mode: SafeMode
    """Inactive unless the agent started after a crash loop (``resume`` leaves it)."""

    @property
    def loaded(self) -> LoadedConfig:
        """The config the agent runs, where it came from and its state directory."""

    @property
    def channels(self) -> Mapping[str, Channel]:
        """The channels the agent runs (none in direct mode)."""

    async def status(self) -> dict[str, Any]: ...
