"""Checks of the agent itself: its config file, its board types and sensor drivers, and whether
its boards and sensors answer."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge.core.exc import DaemonUnavailable, EdgeError
from edge.doctor import Check
from peripherals.exc import BoardError

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig
    from edge.config.model import Config


def check_config(explicit: str | None) -> tuple[Check, LoadedConfig | None]:
    """(Check, LoadedConfig or None): the verdict ``edge-cli config check`` gives
    (:func:`~edge.doctor.config_verdict.judge_config`). Valid but risky settings
    (``allowed_users = ["*"]`` on a network channel) make it a warning."""
    from edge.doctor.config_verdict import judge_config
    from edge.doctor.exposure import exposure_warnings

    fix = "edit the file, then run `edge-cli config check` until it says OK"
    try:
        verdict = judge_config(explicit)
    except EdgeError as exc:
        return Check("config", "fail", str(exc), fix), None
    loaded = verdict.loaded
    if loaded is None:
        return Check("config", "fail", verdict.problems_text(), fix), None
    if loaded.path is None:
        return Check("config", "warn", "no config file; running on built-in defaults",
                     "write one: sudo edge-cli config init /etc/edge-agent/config.toml"), loaded
    if verdict.exposed_secret:
        return Check("config", "fail", *verdict.exposed_secret), loaded
    risks = exposure_warnings(loaded.config)
    if risks:
        fixes = (["give each network channel an explicit list of allowed users"]
                 if any(r.startswith("channels.") for r in risks) else [])
        fixes += (["pair the agents (`edge-cli fleet pair NAME`) and remove "
                   "mqtt.allow_unauthenticated"] if any(r.startswith("mqtt.") for r in risks)
                  else [])
        return Check("config", "warn", f"{loaded.path} is valid, but " + "; ".join(risks),
                     "; ".join(fixes)), loaded
    return Check("config", "ok", f"{loaded.path} is valid"), loaded


def check_adapters() -> Check:
    """The board types and sensor drivers there are (those other packages installed named with
    their package), and the entry points that could not be used: the agent runs without those,
    and a section naming one is a config error."""
    from peripherals.factory import BOARDS
    from peripherals.sensors.factory import SENSORS

    registries = (BOARDS, SENSORS)
    detail = "; ".join(f"{registry.what} types: " + ", ".join(
        kind if registry.origin(kind) == "built in" else f"{kind} (from {registry.origin(kind)})"
        for kind in registry.kinds) for registry in registries)
    broken = [f"{registry.group} {entry}" for registry in registries for entry in registry.broken]
    if broken:
        return Check("adapters", "warn", "cannot use " + "; ".join(broken) + f" ({detail})",
                     "fix or remove the package named (`pip uninstall NAME` in the agent's "
                     "environment); until then the agent runs without it")
    return Check("adapters", "ok", detail)


async def _direct_board_status(config: Config) -> list[dict[str, Any]]:
    from edge.hardware import build_hardware

    hardware = build_hardware(config, resident=False)
    try:
        await hardware.start()
        return [s.as_dict() for s in hardware.status()]
    finally:
        await hardware.shutdown()


def agent_status(loaded: LoadedConfig) -> dict[str, Any]:
    """The running agent's status data; DaemonUnavailable (an EdgeError) when none answers."""
    from edge.control import client
    from edge.core.paths import socket_candidates

    reply = client.request(socket_candidates(loaded.config.paths.state_dir), "status")
    return reply.get("data") or {}


def board_statuses(loaded: LoadedConfig) -> tuple[list[dict[str, Any]], str]:
    """Board status dicts from the running agent if one answers, else by connecting directly."""
    try:
        return agent_status(loaded).get("boards", []), "running agent"
    except DaemonUnavailable:
        return asyncio.run(_direct_board_status(loaded.config)), "direct connection"


def running_provider(loaded: LoadedConfig | None) -> dict[str, Any] | None:
    """The running agent's provider section (the model in use now), or None without an agent."""
    if loaded is None:
        return None
    try:
        provider = agent_status(loaded).get("provider")
    except EdgeError:
        return None
    return provider if isinstance(provider, dict) else None


def check_boards(loaded: LoadedConfig) -> Check:
    if not loaded.config.boards:
        return Check("boards", "warn", "no boards configured", "add a [boards.NAME] section")
    try:
        boards, via = board_statuses(loaded)
    except Exception as exc:  # a driver's own error: report it, do not crash the doctor
        return Check("boards", "fail", f"connecting the boards failed: {exc}",
                     "check the board's port and power; `edge-cli logs` has details")
    down = [b for b in boards if not b.get("connected")]
    if down:
        names = ", ".join(f"{b['name']} ({b.get('detail', '')})" for b in down)
        return Check("boards", "fail", f"not reachable via {via}: {names}",
                     "check cables and the board's port in config; see the devices check")
    simulated = [b["name"] for b in boards if b.get("simulated")]
    detail = f"{len(boards)} connected via {via}"
    drivers = [f"{b['name']}: {b['detail']}" for b in boards
               if not b.get("simulated") and b.get("info", {}).get("pin_factory")]
    if drivers:
        detail += f" ({'; '.join(drivers)})"
    warnings = [f"{b['name']}: {b['info']['warning']}" for b in boards
                if (b.get("info") or {}).get("warning")]
    if warnings:
        return Check("boards", "warn", f"{detail}; " + "; ".join(warnings),
                     "flash our firmware (`edge-cli firmware flash arduino`) for a watchdog that "
                     "makes outputs safe when the host dies")
    if simulated:
        return Check("boards", "warn", f"{detail}; simulated: {', '.join(simulated)}",
                     "set simulate = false on a Pi to drive real pins")
    return Check("boards", "ok", detail)


def sensor_rows(loaded: LoadedConfig) -> tuple[list[dict[str, Any]], str]:
    """Each sensor's row from the running agent if one answers, else read once directly (an
    analog board pin is left to the agent: reading it means opening the board)."""
    try:
        return agent_status(loaded).get("sensors", []), "running agent"
    except DaemonUnavailable:
        return asyncio.run(_read_sensors_directly(loaded.config)), "direct read"


async def _read_sensors_directly(config: Config) -> list[dict[str, Any]]:
    from edge.automation.assembly import build_sensor_hub
    from edge.hardware import build_hardware

    hub = build_sensor_hub(config, build_hardware(config, resident=False))
    for name, state in hub.sensors.items():
        if state.kind != "analog":
            with contextlib.suppress(EdgeError, OSError, BoardError):  # recorded in its row
                await hub.measure(name)
    await hub.aclose()
    return hub.rows()


def check_sensors(loaded: LoadedConfig) -> Check:
    try:
        rows, via = sensor_rows(loaded)
    except Exception as exc:  # a driver's own error: report it, do not crash the doctor
        return Check("sensors", "fail", f"reading the sensors failed: {exc}",
                     "`edge-cli sensors --fresh` shows each one; `edge-cli logs` has details")
    failing = [f"{r['name']}: {r['error']}" for r in rows if r.get("error")]
    if failing:
        return Check("sensors", "warn", f"failing via {via}: " + "; ".join(failing),
                     "each error says what to do; `edge-cli sensors --fresh` checks again")
    return Check("sensors", "ok", f"{len(rows)} reading via {via}")


def unit_installed(root: Path = Path("/")) -> bool:
    return (root / "etc/systemd/system/edge-agent.service").is_file()


def check_last_end(state_dir: Path) -> Check:
    """How the agent's last run ended (the ledger of runs, :mod:`edge.safe_mode`): a warning
    when it did not stop cleanly, saying what to do when the OOM killer ended it."""
    from edge.safe_mode import RunLedger

    end = RunLedger.in_state_dir(state_dir).last_end()
    if end is None:
        return Check("last end", "ok", "the last run stopped cleanly (or none is recorded)")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(end.at))
    if end.killed_for_memory:
        return Check("last end", "warn", f"{end.reason} at {when}: the agent went past the "
                     "service's MemoryMax=",
                     "see what it held (`edge-cli logs`); lower [transcription] max_bytes or "
                     "[memory] embedder = \"none\", or raise MemoryMax= in a drop-in "
                     "(`sudo systemctl edit edge-agent`) if the Pi has memory to spare")
    return Check("last end", "warn", f"{end.reason} at {when}",
                 "see `edge-cli logs` for what happened before it")
