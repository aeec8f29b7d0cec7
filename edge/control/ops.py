"""Operations shared by the control socket (daemon) and the CLI's direct mode (no daemon).

Each operation returns an :class:`OpResult`; refusals and failures are results, not exceptions,
with exit code 1 (usage errors 2), as the CLI contract requires.

``models.select`` changes the agent for everyone, so it is for the local operator only: the
control server passes ``operator=True`` for a peer whose kernel credentials make it one (see
:func:`edge.control.server.is_local_operator`); every other caller is refused. On chat channels
the same switch is ``/model NAME``, which needs an admin (:mod:`edge.agent.commands`).
``channel.pair`` (a pairing code, issued into the agent's own state directory, see
:mod:`edge.channels.pairing`) lets someone in, so it is the operator's too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from edge.core.requester import Requester

if TYPE_CHECKING:  # the CLI client imports this module: keep the tools and providers off its path
    from edge.channels.base import Channel
    from edge.config.loader import LoadedConfig
    from edge.providers.switch import ModelSwitch
    from edge.safe_mode import SafeMode
    from edge.tools.base import Tool, ToolResult


@dataclass
class OpResult:
    ok: bool
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    exit_code: int = 0

    def __post_init__(self) -> None:
        if not self.ok and self.exit_code == 0:  # a failure never exits 0
            self.exit_code = 1

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


TOOL_OPS = {"pins": "board_status", "gpio.read": "gpio_read", "gpio.write": "gpio_write",
            "gpio.pwm": "gpio_pwm", "gpio.safe": "gpio_safe", "sensors": "sensor_read",
            "rules": "rule_list", "interlocks": "interlock_list", "schedules": "schedule_list",
            "schedules.add": "schedule_add", "schedules.remove": "schedule_remove",
            "gpio.servo": "servo_write", "history": "history",
            "sensors.history": "sensor_history"}

MCP_CALLER = re.compile(r"mcp:([A-Za-z][A-Za-z0-9_.-]{0,63})")
"""An MCP client as a caller (``mcp:claude-desktop``): its name starts with a letter, so it never
reads as a chat user's id (Telegram's numbers, Signal's ``+``-numbers)."""


def mcp_requester(caller: str, door: Requester | str, identity: str = "") -> Requester:
    """The requester of an MCP client's call: ``caller`` (``mcp:<client>``), as a model asking
    (under ``supervised`` autonomy its actuations wait for an admin's approval), with the door it
    came through as the audit trail's "why": the local user of the control socket
    (``local:pi``, from the kernel's credentials, :mod:`edge.control.server`) or ``http``.
    A ValueError for any other caller: a socket peer names an MCP client, never a chat user.

    Its identity (what an admin's *Always* is remembered for) is what verified it: over the
    socket the peer's uid with the client's name, over HTTP ``identity`` (its token); empty when
    nothing did, and then *Always* is never offered.

    >>> asked = mcp_requester("mcp:claude", Requester("local", "pi", identity="uid:1000"))
    >>> asked.caller, asked.verified_as
    ('mcp:claude', 'uid:1000 mcp:claude')
    >>> mcp_requester("mcp:claude", "http").verified_as is None
    True
    >>> mcp_requester("telegram:42", "http")
    Traceback (most recent call last):
    ...
    ValueError: "as" must be mcp:<client> (a letter, then letters, digits, '.', '_' or '-'), not 'telegram:42'
    """
    match = MCP_CALLER.fullmatch(caller)
    if match is None:
        raise ValueError("\"as\" must be mcp:<client> (a letter, then letters, digits, '.', '_' or "
                         f"'-'), not {caller!r}")
    if isinstance(door, Requester):
        peer = door.verified_as
        why, identity = door.caller, f"{peer} {caller}" if peer else ""
    else:
        why = door
    return Requester("mcp", match.group(1), via_model=True, why=why, identity=identity)


def model_op(target: OpTarget, op: str, args: dict[str, Any]) -> OpResult:
    """``models`` lists the provider's endpoints; ``models.select`` switches (ModelSwitch API)."""
    switch = target.provider
    if switch is None:
        return OpResult(False, "no provider is running; set [provider] model (and base_url or "
                        "preset) in the config and restart the agent")
    if op == "models.select":
        try:
            switch.select(str(args.get("name") or ""))
        except ValueError as exc:  # an unknown name: the switch failed, nothing changed
            return OpResult(False, str(exc), exit_code=1)
    rows = [m.as_dict() for m in switch.list_models()]
    active = next(r for r in rows if r["active"])
    return OpResult(True, f"active: {active['name']} {active['model']}",
                    {"models": rows, "routes": switch.list_routes(),
                     "active": {"name": active["name"], "model": active["model"]}})


async def pair_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``channel.pair``: a pairing code issued by the agent, into its own state directory (the
    one it redeems from), for a channel it runs; exit 2 for any other channel."""
    import asyncio  # here, as logging: the status path imports this module and stays light
    import logging

    from edge.channels.pairing import PairingCodes, describe_issued, issued_data, setup_hint
    from edge.channels.registry import pairable

    channel = str(args.get("channel") or "")
    if channel not in pairable():
        return OpResult(False, f"{repr(channel) if channel else 'no channel given'}: not a "
                        f"channel people pair with (pairable: {', '.join(pairable())})",
                        exit_code=2)
    if channel not in target.channels:
        return OpResult(False, f"the running agent does not run channel {channel} (its config: "
                        f"{target.loaded.source}), so a code would pair nobody: "
                        f"{setup_hint(channel)}; restart the agent (`sudo systemctl restart "
                        f"edge-agent`, or stop and start `edge-cli run`) and run `edge-cli "
                        f"channel pair {channel}` again", exit_code=2)
    codes = PairingCodes(target.loaded.state_dir / "pairing.json")
    issued = await asyncio.to_thread(codes.issue, channel)  # the file's lock may be held a moment
    logging.getLogger(__name__).info(
        "pairing_code_issued channel=%s by=%s outstanding=%d dropped=%d", channel,
        requester.caller, issued.outstanding, issued.dropped)
    return OpResult(True, describe_issued(channel, issued), issued_data(channel, issued))


async def chart_op(target: OpTarget, args: dict[str, Any]) -> OpResult:
    """``sensors.chart``: the agent draws ``args["sensor"]`` (``quantity``, ``since``,
    ``until`` as ``sensor_history`` takes them) from its own history and audit trail, which the
    command's user may not be able to read, and answers with the PNG, base64 in
    ``data.png_base64``. A wrong name is exit 2; no history, or no matplotlib, exit 1."""
    import base64  # here, as the charts: the status path imports this module and stays light
    import time

    from edge.charts import chart_png  # matplotlib itself loads with the first chart drawn
    from edge.core.exc import EdgeError, UsageError
    from edge.readings.moments import span
    from edge.tools.sensor_history import SensorHistoryTool

    sensor = str(args.get("sensor") or "")
    quantity = str(args["quantity"]) if args.get("quantity") else None
    history = target.tools.get("sensor_history")
    store = history.store if isinstance(history, SensorHistoryTool) else None
    try:
        if not sensor:
            raise ValueError("give the sensor to chart")
        since, until = span(args.get("since"), args.get("until"),
                            now=store.clock() if store is not None else time.time())
    except ValueError as exc:
        return OpResult(False, str(exc), exit_code=2)
    if isinstance(history, SensorHistoryTool) and history.before_read is not None:
        await history.before_read()  # the readings still buffered are in the chart
    try:
        png = await chart_png(target.loaded.config, target.loaded.state_dir, sensor, quantity,
                              since=since, until=until, store=store)
    except UsageError as exc:
        return OpResult(False, str(exc), exit_code=2)
    except EdgeError as exc:
        return OpResult(False, str(exc), exit_code=1)
    return OpResult(True, f"chart of {sensor}: {len(png)} bytes",
                    {"sensor": sensor, "quantity": quantity, "since": since, "until": until,
                     "bytes": len(png), "png_base64": base64.b64encode(png).decode("ascii")})


async def camera_op(target: OpTarget, args: dict[str, Any]) -> OpResult:
    """``camera.snapshot``: the agent (which owns its cameras) takes a picture with camera
    ``args["camera"]`` and answers with the JPEG, base64 in ``data.jpeg_base64``. An unknown
    camera is exit 2; a camera that fails, exit 1."""
    import base64  # here, as the cameras: the status path imports this module and stays light

    from edge.core.exc import EdgeError, UsageError
    from edge.tools.camera import CameraSnapshotTool

    camera = str(args.get("camera") or "")
    tool = target.tools.get("camera_snapshot")
    if not camera:
        return OpResult(False, "give the camera to take a picture with", exit_code=2)
    if not isinstance(tool, CameraSnapshotTool):
        return OpResult(False, f"no camera {camera!r}: this agent has none (add a "
                        "[cameras.NAME] section and restart it)", {"cameras": []}, exit_code=2)
    try:
        shot = await tool.cameras.snapshot(camera)
    except UsageError as exc:
        return OpResult(False, str(exc), {"cameras": tool.cameras.names}, exit_code=2)
    except EdgeError as exc:
        return OpResult(False, str(exc), exit_code=1)
    return OpResult(True, shot.caption(),
                    {**shot.as_dict(), "jpeg_base64": base64.b64encode(shot.jpeg).decode("ascii")})


OPERATOR_OPS = frozenset({"models.select", "schedules.add", "schedules.remove", "resume",
                          "channel.pair"})
"""Operations that change the agent for everyone: the local operator only."""


async def run_op(target: OpTarget, op: str, args: dict[str, Any],
                 requester: Requester, *, operator: bool = False) -> OpResult:
    if op == "status":
        return OpResult(True, "", await target.status())
    if op in OPERATOR_OPS and requester.channel == "mcp":
        return await _mcp_operator_op(target, op, args, requester, operator)
    if op in OPERATOR_OPS and not operator:
        return OpResult(False, f"{op} is for the local operator only (root, the agent's user, or "
                        f"a member of the control socket's group); {requester.caller} is not one",
                        exit_code=1)
    if op in OPERATOR_OPS:  # the local operator, as trusted as the agent's own terminal
        requester = Requester("cli", requester.sender)
    if op in ("models", "models.select"):
        return model_op(target, op, args)
    if op == "channel.pair":
        return await pair_op(target, args, requester)
    if op == "sensors.chart":
        return await chart_op(target, args)
    if op == "camera.snapshot":
        return await camera_op(target, args)
    if op == "resume":  # leave safe mode: rules and schedules start, the model is asked again
        return OpResult(True, await target.safe_mode.resume(requester.caller),
                        {"safe_mode": target.safe_mode.status()})
    return await _tool_op(target, op, args, requester)


async def _mcp_operator_op(target: OpTarget, op: str, args: dict[str, Any], requester: Requester,
                           operator: bool) -> OpResult:
    """An MCP client may change schedules where the policy lets that caller (the schedule tools
    ask the approval gate who is an admin), and only through the local operator's socket; the
    other operator operations are not for MCP clients."""
    if op in ("schedules.add", "schedules.remove") and operator:
        return await _tool_op(target, op, args, requester)
    return OpResult(False, f"{op} is for the local operator only; {requester.caller} (an MCP "
                    f"client, {requester.why or 'no door'}) may not", exit_code=1)


async def _tool_op(target: OpTarget, op: str, args: dict[str, Any],
                   requester: Requester) -> OpResult:
    tool_name = TOOL_OPS.get(op)
    if tool_name is None:
        return OpResult(False, f"unknown operation {op!r}", exit_code=2)
    return OpResult.from_tool(await target.tools[tool_name].execute(args, requester))
