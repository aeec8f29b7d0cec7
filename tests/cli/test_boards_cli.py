"""``edge-cli boards`` and ``edge-cli firmware`` against emulated boards."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from peripherals.arduino import ArduinoBoard
from tests.emulation.simavr import SimAvr
from tests.helpers import EDGE_CLI, ROOT, cli, start_agent, wait_for

pytestmark = pytest.mark.emulator

OPTIBOOT = Path("/usr/share/arduino/hardware/arduino/avr/bootloaders/optiboot/optiboot_atmega328.hex")


def test_discover_confirms_emulated_boards_by_handshake(simavr_uno, qemu_stm32, isolated_env):
    out = cli("boards", "discover", "--json", "--port", str(simavr_uno.link), "--port",
              qemu_stm32.url, "--timeout", "3", env=isolated_env)
    assert out.returncode == 0, out.stderr
    ports = {p["port"]: p for p in json.loads(out.stdout)["data"]["ports"]}
    uno, st = ports[str(simavr_uno.link)], ports[qemu_stm32.url]
    assert uno["confirmed"] == "arduino" and "EdgeFirmata" in uno["detail"]
    assert st["confirmed"] == "stm32" and "netduinoplus2-f405" in st["detail"]


def test_discover_reports_a_silent_port_unconfirmed(tmp_path, isolated_env):
    out = cli("boards", "discover", "--json", "--port", str(tmp_path / "nothing"), "--timeout",
              "0.3", env=isolated_env)
    (port,) = json.loads(out.stdout)["data"]["ports"]
    assert out.returncode == 0 and port["confirmed"] is None and port["tried"] == ["stm32", "arduino"]


def test_list_shows_configured_boards_and_their_state(simavr_uno, write_config, isolated_env):
    path = write_config(f'[boards.uno]\ntype = "arduino"\nport = "{simavr_uno.link}"\n'
                        '[boards.st]\ntype = "stm32"\nport = "socket://127.0.0.1:1"\n')
    out = cli("boards", "list", "--json", "--config", str(path), env=isolated_env)
    boards = {b["name"]: b for b in json.loads(out.stdout)["data"]["boards"]}
    assert out.returncode == 0 and json.loads(out.stdout)["via"] == "direct"
    assert boards["uno"]["connected"] and boards["uno"]["kind"] == "arduino"
    assert not boards["st"]["connected"] and "cannot open" in boards["st"]["detail"]


def test_firmware_build_prints_sizes_within_budget(isolated_env):
    out = cli("firmware", "build", "arduino", "--json", env=isolated_env)
    data = json.loads(out.stdout)["data"]
    assert out.returncode == 0
    assert data["flash"]["percent"] <= 50 and data["ram"]["percent"] <= 60
    stm = json.loads(cli("firmware", "build", "stm32", "--board", "blackpill_f411", "--json",
                         env=isolated_env).stdout)["data"]
    assert Path(stm["image"]).exists() and 0 < stm["flash"]["bytes"] < 16384


def wait_until_opened(link: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Until some process holds the pty open (avrdude, before its first sync byte)."""
    target = str(link.resolve())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        for fd_dir in Path("/proc").glob("[0-9]*/fd"):
            try:
                if any(str(fd.readlink()) == target for fd in fd_dir.iterdir()):
                    return
            except OSError:
                continue
        time.sleep(0.01)
    raise AssertionError("nothing opened the emulator's port")


def test_flash_uploads_through_optiboot_in_the_emulator(arduino_firmware, tmp_path, isolated_env):
    emulator_bin, _ = arduino_firmware
    uno = SimAvr(emulator_bin, None, tmp_path, boot=OPTIBOOT)
    uno.start(run=False)  # the bootloader listens for about a second: let avrdude open first
    try:
        proc = subprocess.Popen([*EDGE_CLI, "firmware", "flash", "arduino", "--port", str(uno.link)],
                                env=isolated_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=ROOT)
        wait_until_opened(uno.link, proc)
        uno.run()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "writing  [####################] 100.0%" in err
        assert "reading  [####################] 100.0%" in err  # avrdude's verify pass
        assert out.startswith("flashed ") and "with avrdude" in out
        assert "edge/firmware_images/edge_firmata-uno.hex" in out  # the shipped image, no make
        assert out.strip().endswith("the board reports EdgeFirmata 2.5")
        board = ArduinoBoard("uno", str(uno.link))  # and the uploaded sketch now answers
        asyncio.run(board.connect())
        try:
            assert board.firmware == "EdgeFirmata 2.5" and board.has_watchdog
        finally:
            asyncio.run(board.close())
    finally:
        uno.stop()


def test_flash_needs_a_port(isolated_env):
    out = cli("firmware", "flash", "arduino", env=isolated_env)
    assert out.returncode == 2 and "--port" in out.stderr


def test_flash_build_takes_the_sources_instead_of_the_shipped_image(tmp_path, isolated_env):
    out = cli("firmware", "flash", "arduino", "--port", str(tmp_path / "tty"), "--build",
              "--source", str(tmp_path), env=isolated_env)
    assert out.returncode == 2 and f"no firmware sources at {tmp_path}" in out.stderr


RELAY_ON_UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
aliases = {{ relay = "D8" }}
[boards.uno.pins]
relay = {{ mode = "output", safe = "off" }}
"""


def listed_uno(env: dict[str, str]) -> dict:
    out = cli("boards", "list", "--json", env=env)
    assert out.returncode == 0, out.stderr
    return next(b for b in json.loads(out.stdout)["data"]["boards"] if b["name"] == "uno")


def test_boards_list_says_stock_firmware_and_the_command_that_updates_it(stock_simavr_uno,
                                                                         write_config, isolated_env):
    env = dict(isolated_env, EDGE_CONFIG=str(write_config(RELAY_ON_UNO.format(port=stock_simavr_uno.link))))
    assert listed_uno(env)["firmware"] == {
        "reported": "StandardFirmata.ino 2.4", "shipped": "EdgeFirmata 2.5", "verdict": "stock",
        "update": "edge-cli firmware flash arduino"}
    text = cli("boards", "list", env=env).stdout
    assert ("firmware StandardFirmata.ino 2.4: stock firmware; ours is EdgeFirmata 2.5; update it with "
            "`edge-cli firmware flash arduino`") in text


def test_boards_list_says_an_stm32_runs_the_shipped_firmware(qemu_stm32, write_config, isolated_env):
    config = f'[boards.st]\ntype = "stm32"\nport = "{qemu_stm32.url}"\n'
    out = cli("boards", "list", "--json", "--config", str(write_config(config)), env=isolated_env)
    (board,) = [b for b in json.loads(out.stdout)["data"]["boards"] if b["name"] == "st"]
    assert board["firmware"] == {"reported": "1.0", "shipped": "1.0", "verdict": "current",
                                 "update": None}
    text = cli("boards", "list", "--config", str(write_config(config)), env=isolated_env).stdout
    assert "update it with" not in text


def test_flash_borrows_the_board_from_a_running_agent_outputs_safe_first(
        arduino_firmware, stock_firmata, tmp_path, write_config, isolated_env):
    """A Uno with Optiboot running stock Firmata, held by a running agent with a relay on: flash
    asks the agent to release it (the relay goes to its safe level before avrdude opens the
    port), uploads the shipped image through the bootloader, and the agent takes the board back
    and finds our firmware by its handshake."""
    emulator_bin, _ = arduino_firmware
    uno = SimAvr(emulator_bin, stock_firmata, tmp_path, boot=OPTIBOOT)
    uno.start()
    env = dict(isolated_env, EDGE_CONFIG=str(write_config(RELAY_ON_UNO.format(port=uno.link))))
    agent = start_agent(env)
    try:
        wait_for(lambda: listed_uno(env)["connected"])
        assert listed_uno(env)["firmware"]["verdict"] == "stock"
        assert cli("gpio", "write", "relay", "on", env=env).returncode == 0
        uno.wait_edge("D8", 1)
        edges, resets = len(uno.levels("D8")), len(uno.resets)

        out = cli("firmware", "flash", "uno", "--json", env=env, timeout=180)
        assert out.returncode == 0, out.stdout + out.stderr
        data = json.loads(out.stdout)["data"]
        assert data["agent"] == "uno" and data["tool"] == "avrdude"
        assert data["firmware"] == data["expected"] == "EdgeFirmata 2.5"
        assert data["image"].endswith("edge/firmware_images/edge_firmata-uno.hex")

        safe_at = uno.wait_edge("D8", 0, after=edges)
        assert safe_at < uno.resets[resets]  # the relay was off before avrdude opened the port
        assert uno.levels("D8")[-1] == 0  # and is claimed again at its safe level
        back = listed_uno(env)
        assert back["connected"] and back["firmware"]["verdict"] == "current"
        assert cli("gpio", "write", "relay", "on", env=env).returncode == 0  # the agent has it
        uno.wait_edge("D8", 1, after=len(uno.levels("D8")) - 1)
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
        uno.stop()


@pytest.fixture
def fake_stm32flash(tmp_path, isolated_env):
    """An ``stm32flash`` on PATH that records its argv and prints stm32flash's progress (qemu
    has no STM32 bootloader to flash through: the emulator already runs our firmware)."""
    tools = tmp_path / "tools"
    tools.mkdir()
    calls = tmp_path / "stm32flash.argv"
    script = tools / "stm32flash"
    script.write_text(f"#!{sys.executable}\nimport json, sys\n"
                      f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                      "print('Wrote address 0x08000c00 (100.00%) Done.')\n")
    script.chmod(0o755)
    env = dict(isolated_env, PATH=f"{tools}:{isolated_env['PATH']}")
    return env, calls


def test_flash_stm32_uploads_the_shipped_bin_and_checks_board_and_version(qemu_stm32,
                                                                          fake_stm32flash):
    env, calls = fake_stm32flash
    out = cli("firmware", "flash", "stm32", "--board", "netduinoplus2", "--port", qemu_stm32.url,
              env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    image = str(ROOT / "edge" / "firmware_images" / "edge-netduinoplus2.bin")
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [
        ["-b", "115200", "-w", image, "-v", "-g", "0x08000000", qemu_stm32.url]]
    assert "writing  [####################] 100.0%" in out.stderr
    assert out.stdout.strip() == (f"flashed {image} to {qemu_stm32.url} with stm32flash; "
                                  "the board reports netduinoplus2 1.0")


def test_flash_says_when_the_board_is_not_the_one_the_image_is_for(qemu_stm32, fake_stm32flash):
    env, _ = fake_stm32flash
    out = cli("firmware", "flash", "stm32", "--board", "nucleo_f401re", "--port", qemu_stm32.url,
              "--json", env=env)
    assert out.returncode == 1
    reply = json.loads(out.stdout)
    assert reply["data"]["firmware"] == "netduinoplus2 1.0"
    assert reply["data"]["expected"] == "nucleo_f401re 1.0"
    assert "check the board type (--board), then flash again" in reply["error"]
