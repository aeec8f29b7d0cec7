"""Every file a full agent run leaves in its state directory is declared in
:mod:`edge.backup.contents` (backed up, backed up only with ``--secrets``, or left out for a
reason): a new kind of state file fails here until it is declared, so a backup never silently
forgets it. The run: Telegram with a model conversation and a pairing, a pin switched, a
sensor read, a schedule added at runtime, a memory, a fleet key, a one-shot command."""

from __future__ import annotations

import asyncio
from pathlib import Path

from edge.backup.archive import state_files
from edge.backup.contents import classify
from edge.channels.pairing import PairingCodes
from edge.fleet.keys import FleetKeys, new_code
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.telegram_server import telegram_config, texts_to
from tests.helpers import cli, until

SENSOR = """
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
[sensors.pi]
type = "pi"
interval_seconds = 0.2
[agent]
debounce_ms = 0
"""


async def test_a_full_run_leaves_only_declared_files(telegram, start_agent, tmp_path: Path,
                                                    isolated_env: dict[str, str]) -> None:
    state = tmp_path / "state"
    replies = [(200, completion(None, [{"name": "memory_store", "arguments": {
                   "key": "pump", "content": "the pump runs at dawn"}}])),
               (200, completion("Noted."))]
    with OpenAIServer(replies) as model:
        extra = f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n' + SENSOR
        agent = await start_agent(telegram_config(telegram, extra))
        code = PairingCodes(state / "pairing.json").issue("telegram").code
        telegram.push_message(7, f"/pair {code}")
        telegram.push_message(42, "/gpio led on")
        telegram.push_message(42, "remember: the pump runs at dawn")
        await until(lambda: "Noted." in "\n".join(texts_to(telegram, 42)), timeout=30)
        FleetKeys.of({}, state).file("shed", new_code())
        env = {**isolated_env, "EDGE_CONFIG": str(tmp_path / "config.toml")}
        added = await asyncio.to_thread(  # the agent answers on this loop meanwhile
            cli, "schedules", "add", "water", "--every", "1h", "gpio", "write", "led", "on", env=env)
        assert added.returncode == 0, added.stderr
        await until(lambda: (state / "readings.db").is_file() and (state / "schedules.json").is_file())
        await agent.stop()
    oneshot = cli("gpio", "write", "led", "on", "--hold", "0.1", env=env)  # no agent: one-shot
    assert oneshot.returncode == 0, oneshot.stderr

    found = sorted(p.relative_to(state).as_posix() for p in state.rglob("*") if p.is_file())
    undeclared = []
    for relative in found:
        try:
            classify(relative)
        except LookupError:
            undeclared.append(relative)
    assert undeclared == [], "declare these in edge/backup/contents.py"
    kept = dict(state_files(state, secrets=True))
    assert {"audit.db", "readings.db", "memory/brain.db", "schedules.json", "pairing.json",
            "fleet-keys.json"} <= set(kept)
    assert any(name.startswith("sessions/") for name in kept)
    assert kept["audit.db"] == "sqlite" and kept["schedules.json"] == "file"
    assert set(dict(state_files(state, secrets=False))) == {
        name for name in kept if not classify(name).secret}  # type: ignore[union-attr]
