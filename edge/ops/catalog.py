"""The catalog of operations: each declared once (:class:`Operation`), every door derived from it.

The model's tools are the agent's instances of the operations' tool classes; the control socket
runs :data:`CATALOG` by name (:func:`edge.control.ops.run_op`); the MCP server registers one tool
per operation with an MCP name (:mod:`edge.mcp.server`); the fleet asks the :func:`remote` ones
and a node refuses the :func:`actuating` ones when it takes no commands
(:mod:`edge.fleet.protocol`); ``edge-cli mcp`` allows the ones that may wait for approval longer;
chat answers their spellings and lists them in ``/help`` (:mod:`edge.agent.commands`); and
``docs/reference/operations.md`` is written from it (:mod:`edge.ops.reference`).

A new operation is one module and one :func:`register` call, or an entry point of the group
:data:`ENTRY_POINTS` for an installed package (``edge/ops/README.md``).

>>> CATALOG["gpio.write"].mcp_name, CATALOG["gpio.write"].tool_name
('pin_write', 'gpio_write')
>>> sorted(actuating() & remote())
['gpio.pwm', 'gpio.servo', 'gpio.write']
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from edge.ops import board_lending, chat, handlers, simulation
from edge.ops.approval_grants import APPROVAL_OPERATIONS
from edge.ops.operation import ACTUATES, ADDS, MAKES_SAFE, REMOVES, Kind, Operation, ToolParts
from edge.ops.web_access import WEB_OPERATIONS
from edge.status import format_status
from edge.tools.automation import (
    InterlockListTool,
    RuleListTool,
    ScheduleAddTool,
    ScheduleChange,
    ScheduleListTool,
    ScheduleRemoveTool,
)
from edge.tools.base import Tool
from edge.tools.gpio import (
    BoardStatusTool,
    GpioPwmTool,
    GpioReadTool,
    GpioSafeTool,
    GpioWriteTool,
    PinTool,
    ServoWriteTool,
)
from edge.tools.history import HistoryTool
from edge.tools.sensor_history import SensorChartArgs, SensorHistoryTool
from edge.tools.sensors import SensorReadTool
from peripherals.registry import installed_entry_points

log = logging.getLogger(__name__)

CATALOG: dict[str, Operation] = {}
"""Operation name -> its declaration, in the order ``/help`` and the reference list them."""


def register(operation: Operation) -> Operation:
    """Add an operation; its name, tool name and MCP name must all be new."""
    for known in CATALOG.values():
        clash = {operation.name, operation.tool_name, *operation.mcp_names} & {
            known.name, known.tool_name, *known.mcp_names}
        if clash:
            raise ValueError(f"operation {operation.name}: {sorted(clash)[0]!r} is taken by "
                             f"{known.name}; choose another name")
    CATALOG[operation.name] = operation
    return operation


def unregister(name: str) -> None:
    """Take an operation out again (a test's own, when it is done)."""
    CATALOG.pop(name, None)


def remote() -> frozenset[str]:
    """What another node (or edge-cli on another machine) may ask; the rest is the local
    operator's, or not carried through a broker (a chart is drawn where the history is)."""
    return frozenset(name for name, op in CATALOG.items() if op.remote)


def paired_only() -> frozenset[str]:
    """What a node answers over the fleet only to a paired caller (never an unverified one)."""
    return frozenset(name for name, op in CATALOG.items() if op.paired_only)


def actuating() -> frozenset[str]:
    """What moves hardware: refused by a node whose ``[mqtt] allow_commands = false``."""
    return frozenset(name for name, op in CATALOG.items() if op.kind is Kind.ACTUATE)


def for_operator() -> frozenset[str]:
    """What changes the agent for everyone: the local operator only (schedules also for an MCP
    client the policy lets, through the operator's socket)."""
    return frozenset(name for name, op in CATALOG.items()
                     if op.kind in (Kind.OPERATOR, Kind.CHANGE))


def for_local_models() -> list[Operation]:
    """What the compact profile offers a small local model: the reading ones first, in the
    catalog's order, then the actuating ones (a question's tools are the others' prefix)."""
    chosen = [op for op in CATALOG.values() if op.local]
    return sorted(chosen, key=lambda op: op.kind is Kind.ACTUATE)


def waits_for_approval() -> frozenset[str]:
    return frozenset(name for name, op in CATALOG.items() if op.waits_for_approval)


def over_mcp() -> list[Operation]:
    return [op for op in CATALOG.values() if op.mcp_name is not None]


def on_pins(name: str, kind: Kind, tool: type[PinTool[Any]], **declared: Any) -> Operation:
    """An operation whose tool acts on the agent's one door to the pins."""
    return Operation(name, kind, tool, build=lambda parts: tool(parts.hardware), **declared)


def schedule_change(name: str, tool: type[ScheduleChange[Any]], **declared: Any) -> Operation:
    """A schedule change, whose tool asks the approval gate who is an admin."""
    return Operation(name, Kind.CHANGE, tool,
                     build=lambda parts: tool(parts.automation, parts.approvals), **declared)


def sensor_history(parts: ToolParts) -> Tool:
    """The history's store, the configured sensors, and the recorder's flush before a read."""
    return SensorHistoryTool(parts.recorder.store, parts.automation.sensors.describe(),
                             parts.recorder.flush_for_reading)


for _operation in (
    on_pins("pins", Kind.READ, BoardStatusTool, remote=True, local=True, mcp="pins_list", chat=(chat.PINS,)),
    on_pins("gpio.read", Kind.READ, GpioReadTool, remote=True, local=True, mcp="pin_read",
            chat=(chat.GPIO_READ,)),
    on_pins("gpio.write", Kind.ACTUATE, GpioWriteTool, remote=True, local=True, mcp="pin_write",
            hints=ACTUATES, chat=(chat.GPIO_WRITE,)),
    on_pins("gpio.pwm", Kind.ACTUATE, GpioPwmTool, remote=True, mcp="pin_pwm", hints=ACTUATES,
            chat=(chat.PWM,)),
    on_pins("gpio.servo", Kind.ACTUATE, ServoWriteTool, remote=True, mcp="servo_angle",
            hints=ACTUATES, chat=(chat.SERVO,)),
    on_pins("gpio.safe", Kind.ACTUATE, GpioSafeTool, mcp="pin_safe", hints=MAKES_SAFE),
    Operation("sensors", Kind.READ, SensorReadTool, remote=True, local=True, mcp=True,
              mcp_also=("sensors_list",), chat=(chat.SENSORS,),
              build=lambda parts: SensorReadTool(parts.automation.sensors)),
    Operation("sensors.history", Kind.READ, SensorHistoryTool, remote=True, mcp=True,
              build=sensor_history),
    Operation("sensors.chart", Kind.READ, handler=handlers.chart_op, args_model=SensorChartArgs,
              summary="A sensor's history drawn as a PNG (base64 in data.png_base64), with its "
                      "rules' thresholds and the outputs that switched (or those named) beneath."),
    Operation("camera.snapshot", Kind.READ, handler=handlers.camera_op,
              args_model=handlers.CameraArgs,
              summary="A picture from one of the agent's cameras (JPEG, base64 in "
                      "data.jpeg_base64)."),
    Operation("status", Kind.READ, handler=handlers.status_op, remote=True, paired_only=True,
              mcp=True, words=format_status,
              summary="The agent's status: version, uptime, boards, channels, tasks, what is "
                      "down and why."),
    Operation("history", Kind.READ, HistoryTool, remote=True, local=True, paired_only=True,
              mcp=True, build=lambda parts: HistoryTool(parts.audit.path, parts.approvals.admins)),
    Operation("rules", Kind.READ, RuleListTool, chat=(chat.RULES,),
              build=lambda parts: RuleListTool(parts.automation.rules)),
    Operation("interlocks", Kind.READ, InterlockListTool, chat=(chat.INTERLOCKS,),
              build=lambda parts: InterlockListTool(parts.automation.interlocks)),
    Operation("schedules", Kind.READ, ScheduleListTool, mcp="schedules_list",
              chat=(chat.SCHEDULES,), build=lambda parts: ScheduleListTool(parts.automation)),
    schedule_change("schedules.add", ScheduleAddTool, mcp=True, hints=ADDS,
                    chat=(chat.SCHEDULE_ADD,)),
    schedule_change("schedules.remove", ScheduleRemoveTool, mcp=True,
                    hints=REMOVES, chat=(chat.SCHEDULE_REMOVE,)),
    Operation("models", Kind.READ, handler=handlers.models_op,
              summary="The provider's models and routes, and which is active."),
    Operation("models.select", Kind.OPERATOR, handler=handlers.select_model_op,
              args_model=handlers.SelectModelArgs,
              summary="Switch the agent's model (for everyone, until restart)."),
    Operation("channel.pair", Kind.OPERATOR, handler=handlers.pair_op,
              args_model=handlers.PairArgs,
              summary="Issue a pairing code for a channel the agent runs."),
    Operation("gpio.simulate", Kind.OPERATOR, handler=simulation.simulate_input,
              args_model=simulation.SimulateInputArgs, chat=(simulation.SIM_INPUT,),
              summary="Make an input of a simulated board active (on) or not (off), as if it "
                      "were wired; refused on real hardware."),
    Operation("sensors.simulate", Kind.OPERATOR, handler=simulation.simulate_sensor,
              args_model=simulation.SimulateSensorArgs, chat=(simulation.SIM_SENSOR,),
              summary="Hold a simulated sensor's reading (or release it); refused for a sensor "
                      "that reads a device."),
    Operation("boards.release", Kind.OPERATOR, handler=board_lending.release_board_op,
              args_model=board_lending.LendBoardArgs,
              summary="Lend a board out to be flashed: its outputs safe, its port closed, not "
                      "reconnected until boards.reattach."),
    Operation("boards.reattach", Kind.OPERATOR, handler=board_lending.reattach_board_op,
              args_model=board_lending.LendBoardArgs,
              summary="Take a released board back: connect it, claim its pins at their safe "
                      "levels, answer with what its handshake reported."),
    Operation("resume", Kind.OPERATOR, handler=handlers.resume_op,
              summary="Leave safe mode after a crash loop: rules and schedules start again."),
    *WEB_OPERATIONS,
    *APPROVAL_OPERATIONS,
):
    register(_operation)


ENTRY_POINTS = "edge_agent.operations"
"""Where an installed package declares its operations (``name = "module:OPERATION"``)."""


def _installed() -> None:
    """The operations installed packages declare; a broken one is logged, and the agent runs
    without it (as a broken board adapter is)."""
    for point in installed_entry_points(tuple(sys.path)).select(group=ENTRY_POINTS):
        try:
            operation = point.load()
            if not isinstance(operation, Operation):
                raise TypeError(f"{point.value} is a {type(operation).__name__}, not an Operation")
            register(operation)
        except Exception as exc:  # a third party's bug: the agent runs without it
            log.warning("operation_unusable name=%s target=%s error=%r", point.name, point.value,
                        exc)


_installed()


def build_tools(parts: ToolParts) -> dict[str, Tool]:
    """The model's tools of the catalog's operations, built from the agent's ``parts``, by name."""
    return {op.tool_name: op.build(parts) for op in CATALOG.values() if op.build is not None}
