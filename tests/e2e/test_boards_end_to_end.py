"""From the agent's tools through SecurityPolicy and the board drivers to firmware running in
emulators: allowed writes make pin edges, refused ones make none, input edges come back as events,
a killed host is caught by the firmware watchdog, a restarted emulator by the supervisor."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.tools.gpio import hardware_tools
from tests.helpers import asker, cli, start_agent

pytestmark = pytest.mark.emulator

UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
watchdog_ms = 800
aliases = {{ led = "D13", button = "D2" }}
[boards.uno.pins]
led = {{ mode = "output", safe = "off" }}
button = {{ mode = "input", pull = "none", active = "high" }}
"""

STM32 = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.nucleo]
type = "stm32"
port = "{port}"
watchdog_ms = 800
aliases = {{ pump = "PA5" }}
[boards.nucleo.pins]
pump = {{ mode = "output", safe = "off" }}
"""


async def start(text, write_config, env):
    config = load_config(str(write_config(text)), env=env).config
    hardware = build_hardware(config, resident=True)
    await hardware.start()
    tools = {tool.name: tool for tool in hardware_tools(hardware)}
    return hardware, tools


async def test_arduino_tools_policy_and_events(simavr_uno, write_config, isolated_env):
    hardware, tools = await start(UNO.format(port=simavr_uno.link), write_config, isolated_env)
    events = []
    hardware.subscribe(events.append)
    try:
        result = await tools["gpio_write"].execute({"pin": "led", "value": "on"}, asker("telegram:42"))
        assert result.success, result.text
        simavr_uno.wait_edge("D13", 1)

        refused = await tools["gpio_write"].execute({"pin": "uno:D12", "value": "on"}, asker("telegram:42"))
        assert not refused.success and "allowlist" in refused.text
        await asyncio.sleep(0.2)
        assert simavr_uno.levels("D12") == []

        simavr_uno.drive("D2", 1)
        for _ in range(300):
            if any(e.kind == "input" for e in events):
                break
            await asyncio.sleep(0.01)
        assert [(e.board, e.pin, e.value) for e in events if e.kind == "input"] == [("uno", "D2", 1.0)]
        ons = len(simavr_uno.levels("D13"))
    finally:
        await hardware.shutdown()
    simavr_uno.wait_edge("D13", 0, after=ons)  # safe state on the way out


async def test_supervisor_reconnects_a_restarted_emulator(simavr_uno, write_config, isolated_env):
    hardware, tools = await start(UNO.format(port=simavr_uno.link), write_config, isolated_env)
    board = hardware.boards["uno"]
    try:
        assert (await tools["gpio_write"].execute({"pin": "led", "value": "on"}, asker("t"))).success
        simavr_uno.stop()
        while board.connected:
            await asyncio.sleep(0.01)
        failed = await tools["gpio_write"].execute({"pin": "led", "value": "off"}, asker("t"))
        assert not failed.success and "down" in failed.text
        simavr_uno.start()
        back = time.monotonic()
        while not board.connected:
            assert time.monotonic() - back < 2.0, "not reconnected within 2 s"
            await asyncio.sleep(0.01)
        simavr_uno.wait_edge("D13", 1)  # the level it had is re-applied
    finally:
        await hardware.shutdown()


def run_daemon(text, write_config, env):
    env = dict(env, EDGE_CONFIG=str(write_config(text)))
    return start_agent(env), env


def test_killed_agent_leaves_arduino_outputs_to_the_firmware_watchdog(simavr_uno, write_config,
                                                                      isolated_env):
    proc, env = run_daemon(UNO.format(port=simavr_uno.link), write_config, isolated_env)
    try:
        assert cli("gpio", "write", "led", "on", env=env).returncode == 0
        simavr_uno.wait_edge("D13", 1)
        ons = len(simavr_uno.levels("D13"))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        killed = time.monotonic()
        went_safe = simavr_uno.wait_edge("D13", 0, after=ons, timeout=5)
        assert went_safe - killed < 2.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_killed_agent_leaves_stm32_outputs_to_the_firmware_watchdog(qemu_stm32, write_config,
                                                                    isolated_env):
    proc, env = run_daemon(STM32.format(port=qemu_stm32.url), write_config, isolated_env)
    try:
        assert cli("gpio", "write", "pump", "on", env=env).returncode == 0
        writes = qemu_stm32.wait_level("PA5", 1)
        refused = cli("gpio", "write", "nucleo:PA6", "on", env=env)
        assert refused.returncode == 1
        assert qemu_stm32.pin_writes("PA6") == []
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        qemu_stm32.wait_level("PA5", 0, after=len(writes), timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_servo_tool_through_policy_to_the_firmware(simavr_uno, write_config, isolated_env):
    text = UNO.format(port=simavr_uno.link) + 'arm = { mode = "pwm" }\n'
    text = text.replace('button = "D2" }', 'button = "D2", arm = "D10" }')
    hardware, tools = await start(text, write_config, isolated_env)
    try:
        moved = await tools["servo_write"].execute({"pin": "arm", "angle": 90}, asker("test"))
        assert moved.success and moved.data["angle"] == 90
        # simavr does not report timer output-compare pulses as port edges, so what is checked
        # on the firmware side is that it took the servo sysex and keeps answering
        assert (await tools["gpio_write"].execute({"pin": "led", "value": "on"}, asker("test"))).success
        simavr_uno.wait_edge("D13", 1)
        refused = await tools["servo_write"].execute({"pin": "D9", "angle": 10}, asker("test"))
        assert not refused.success and "not in the allowlist" in refused.error
        wrong_mode = await tools["servo_write"].execute({"pin": "led", "angle": 10}, asker("test"))
        assert not wrong_mode.success and "does not allow servo" in wrong_mode.error
    finally:
        await hardware.shutdown()


async def test_servo_on_a_header_pin_not_declared_as_one_is_refused(write_config, isolated_env,
                                                                     mock_factory):
    config = load_config(str(write_config('[boards.gpio.pins]\nGPIO18 = { mode = "pwm" }\n')),
                         env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    await hardware.start()
    tools = {tool.name: tool for tool in hardware_tools(hardware)}
    result = await tools["servo_write"].execute({"pin": "GPIO18", "angle": 45}, asker("test"))
    assert not result.success and "GPIO18 is not declared as a servo" in result.error
    assert mock_factory.pin(18).state == 0
    await hardware.shutdown()
