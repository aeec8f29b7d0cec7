"""The operations answered by a handler of their own rather than a model tool: ``status``,
``models`` and ``models.select`` (the ModelSwitch), ``channel.pair``, ``sensors.chart``,
``camera.snapshot`` and ``resume``. Each is ``handler(target, args, requester)`` returning an
:class:`OpResult`; a wrong name is exit 2.

``models.select`` changes the agent for everyone, so it is for the local operator only (on chat
channels the same switch is ``/model NAME``, which needs an admin, :mod:`edge.agent.commands`).
``channel.pair`` (a pairing code, issued into the agent's own state directory, see
:mod:`edge.channels.pairing`) lets someone in, so it is the operator's too.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from edge.core.requester import Requester
from edge.ops.result import OpResult, OpTarget
from edge.tools.base import ToolArgs
from edge.tools.camera import SnapshotArgs


async def status_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``status``: the agent's status as data (the CLI words it, :func:`edge.status.format_status`)."""
    return OpResult(True, "", await target.status())


async def resume_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``resume``: leave safe mode: rules and schedules start, the model is asked again."""
    return OpResult(True, await target.safe_mode.resume(requester.caller),
                    {"safe_mode": target.safe_mode.status()})


async def models_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    return model_op(target, "models", args)


async def select_model_op(target: OpTarget, args: dict[str, Any],
                          requester: Requester) -> OpResult:
    return model_op(target, "models.select", args)


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


async def chart_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``sensors.chart``: the agent draws ``args["name"]`` (``quantity``, ``since``,
    ``until`` as ``sensor_history`` takes them; ``outputs``, the tracks beneath, default: those
    the rules on it switch and any that switched) from its own history and audit trail, which the
    command's user may not be able to read, and answers with the PNG, base64 in
    ``data.png_base64``. A wrong name is exit 2; no history, or no matplotlib, exit 1."""
    import base64  # here, as the charts: the status path imports this module and stays light
    import time

    from edge.charts import draw_chart  # matplotlib itself loads with the first chart drawn
    from edge.core.exc import EdgeError, UsageError
    from edge.readings.moments import span
    from edge.tools.sensor_history import SensorHistoryTool

    sensor = str(args.get("name") or "")
    quantity = str(args["quantity"]) if args.get("quantity") else None
    outputs = [str(name) for name in args["outputs"]] if args.get("outputs") is not None else None
    history = target.tools.get(SensorHistoryTool.name)
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
        chart = await draw_chart(target.loaded.config, target.loaded.state_dir, sensor, quantity,
                                 since=since, until=until, store=store, outputs=outputs)
    except UsageError as exc:
        return OpResult(False, str(exc), exit_code=2)
    except EdgeError as exc:
        return OpResult(False, str(exc), exit_code=1)
    return OpResult(True, f"chart of {sensor}: {len(chart.png)} bytes",
                    {"sensor": sensor, "quantity": quantity, "since": since, "until": until,
                     "bytes": len(chart.png), "caption": chart.caption(), **chart.figures(),
                     "png_base64": base64.b64encode(chart.png).decode("ascii")})


async def camera_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``camera.snapshot``: the agent (which owns its cameras) takes a picture with camera
    ``args["camera"]`` and answers with the JPEG, base64 in ``data.jpeg_base64``. An unknown
    camera is exit 2; a camera that fails, exit 1."""
    import base64  # here, as the cameras: the status path imports this module and stays light

    from edge.core.exc import EdgeError, UsageError
    from edge.tools.camera import CameraSnapshotTool

    camera = str(args.get("camera") or "")
    tool = target.tools.get(CameraSnapshotTool.name)
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


class SelectModelArgs(ToolArgs):
    name: str = Field(default="", description="The model's name, as `edge-cli models` lists it")


class PairArgs(ToolArgs):
    channel: str = Field(default="", description="The channel to pair with (telegram, signal)")


class CameraArgs(ToolArgs):
    camera: str = Field(default="", description=SnapshotArgs.model_fields["name"].description)
