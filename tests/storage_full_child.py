"""Run inside a user and mount namespace on a small tmpfs (``tests/test_storage_full.py``): the
door to the pins, its audit trail, the agent's sessions and a model turn, all over a state
directory that fills to the brim (``full``) or is remounted read-only (``read-only``). Prints
what happened as one JSON line."""

from __future__ import annotations

import asyncio
import errno
import json
import subprocess
import sys
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPWMPin

from edge.agent.pipeline import Agent
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.audit import AuditTrail, read_history
from edge.config.model import Config
from edge.core.actuation import Actuation
from edge.core.requester import Requester
from edge.core.storage import StorageHealth
from edge.hardware import build_hardware
from edge.tools.gpio import hardware_tools
from tests.fakes.scripted_provider import ScriptedProvider
from tests.helpers import msg

CONFIG = {"boards": {"gpio": {"aliases": {"pump": "GPIO22"}, "pins": {
    "pump": {"mode": "output", "safe": "off", "max_on_seconds": 0.3}}}}}


def fill(state: Path) -> None:
    """A file that takes every byte left on the tmpfs."""
    with open(state / "filler", "wb", buffering=0) as out:
        for chunk in (65536, 4096, 1):
            try:
                while True:
                    out.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


async def main(state: Path, mode: str) -> dict[str, object]:
    factory = MockFactory(pin_class=MockPWMPin)
    hw = build_hardware(Config.model_validate(CONFIG), resident=True, pin_factory=factory)
    told: list[str] = []

    async def tell(text: str) -> int:
        told.append(text)
        return 1
    health = StorageHealth()
    health.tell_to(tell)
    trail = AuditTrail(state / "audit.db", health=health)
    stop_recording = hw.add_recorder(trail)
    auto_off = asyncio.Event()

    class Watch:
        async def record(self, actuation: Actuation) -> None:
            if actuation.action == "auto-off":
                auto_off.set()
    watch = Watch()
    stop_watching = hw.add_recorder(watch)
    await hw.start()
    owner = Requester("telegram", "42", why="turn 1")
    await hw.write("pump", True, owner)  # recorded: the disk has room
    await asyncio.wait_for(auto_off.wait(), 10)
    auto_off.clear()
    if mode == "full":
        fill(state)
    else:  # no remount under open writers: the trail closes first, as at an agent's restart
        stop_recording()
        trail.close()
        subprocess.run(["mount", "-o", "remount,ro", str(state)], check=True)
        trail = AuditTrail(state / "audit.db", health=health)
        stop_watching()
        hw.add_recorder(trail)
        hw.add_recorder(watch)  # after the trail, as before: the trail has its record first
    await hw.write("pump", True, owner)
    level_after_write = factory.pin(22).state
    await asyncio.wait_for(auto_off.wait(), 10)  # the safety timer does not wait on the disk
    level_after_timer = factory.pin(22).state
    agent = Agent(hardware_tools(hw), hw, ScriptedProvider(["The pump is off."]),  # type: ignore[arg-type]
                  SessionStore(state / "sessions"), lambda: asyncio.sleep(0, "status"),
                  preflight=Preflight({"cli": ChannelAccess(frozenset({"*"}))}), storage=health)
    reply = await agent.respond(msg("is the pump off?"))
    await asyncio.sleep(0)  # the notices' task runs
    while_broken = health.status()
    if mode == "full":
        (state / "filler").unlink()
    else:
        subprocess.run(["mount", "-o", "remount,rw", str(state)], check=True)
    await hw.write("pump", False, owner)  # recorded again
    await asyncio.sleep(0)
    await hw.shutdown()
    trail.close()
    factory.reset()
    rows = [(a.action, a.read_back) for a in read_history(state / "audit.db")]
    return {"level_after_write": level_after_write, "level_after_timer": level_after_timer,
            "reply": reply, "while_broken": while_broken, "told": told, "rows": rows,
            "after": health.status()}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))))
