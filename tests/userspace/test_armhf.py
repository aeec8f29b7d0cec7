"""32-bit Raspberry Pi OS (Debian bookworm armhf, under qemu-user), on mock pins.

PyPI has no armv7 wheels of numpy, onnxruntime or cffi (which the MCP SDK needs) and lgpio only a
source archive; the userspace has no C compiler, as Pi OS Lite has none, so the README's
``make run`` works only because pyproject.toml leaves those out on armv7l: nothing is compiled.
Memory recalls by keywords there, and says so. Raspberry Pi OS's ``python3-lgpio`` (the pin
factory on a real 32-bit Pi) comes from its own archive, which these machines cannot reach:
``deploy/install.sh`` is run with a stand-in module in its place.
"""

from __future__ import annotations

import json

from tests.userspace.conftest import PROJECT, SetUp

PYTHON = ".venv/bin/python"
LGPIO_STAND_IN = "/usr/lib/python3/dist-packages/lgpio.py"
"""Where Debian's python3-lgpio puts its module; the stand-in only has to import."""


def test_make_run_sets_up_without_compiling_and_answers_piped_commands(armhf: SetUp) -> None:
    out = armhf.make_run_stdout
    assert "led" in out and "on" in out, out
    assert "GPIO17" in out and "button" in out, out
    machine = armhf.session.run(f"{PYTHON} -c 'import platform; print(platform.machine())'",
                                cwd=PROJECT).stdout
    assert machine.strip() == "armv7l"
    no_compiler = armhf.session.run("command -v cc gcc arm-linux-gnueabihf-gcc", check=False)
    assert no_compiler.stdout == "", "the userspace must have no compiler, as on Pi OS Lite"


def test_the_32_bit_venv_holds_what_has_wheels_and_leaves_out_the_rest(armhf: SetUp) -> None:
    probe = armhf.session.run(
        f"{PYTHON} -c 'import importlib.metadata as m, importlib.util as u;"
        " print(m.version(\"gpiozero\"), [n for n in (\"numpy\", \"onnxruntime\", \"lgpio\","
        " \"mcp\") if u.find_spec(n)])'", cwd=PROJECT)
    version, present = probe.stdout.split(" ", 1)
    assert tuple(int(p) for p in version.split(".")[:2]) >= (2, 0)  # PyPI's wheel, pure Python
    assert present.strip() == "[]"  # no armv7 wheels: left out, not compiled


def test_the_agent_says_memory_recalls_by_keywords_and_why(armhf: SetUp) -> None:
    assert "memory_embedder_unavailable embedder=onnx" in armhf.make_run_stderr, \
        armhf.make_run_stderr
    assert "PyPI has no armv7l wheels" in armhf.make_run_stderr


def test_config_check_status_and_doctor(armhf: SetUp) -> None:
    code, out, err = armhf.cli("config check")
    assert code == 0 and "OK" in out + err, out + err
    code, out, err = armhf.cli("status", check=False)
    assert code == 3 and "not running" in out + err, out + err
    code, out, err = armhf.cli("doctor --json", check=False)
    assert code in (0, 4), out + err  # warnings (simulated pins, keyword memory), no failure
    checks = {check["name"]: check for check in json.loads(out)["data"]["checks"]}
    memory = checks["memory"]
    assert memory["status"] == "warn"
    assert memory["detail"].startswith("sqlite, keyword recall: embedder 'onnx' cannot run here "
                                       "(onnxruntime and numpy: PyPI has no armv7l wheels")
    assert "64-bit Pi OS" in memory["fix"] and "custom:" in memory["fix"]


def test_mcp_says_it_is_not_available_here(armhf: SetUp) -> None:
    code, _, err = armhf.cli("mcp", check=False, input="")
    assert code == 1 and "MCP is not available on 32-bit Pi OS: the MCP SDK needs cffi" in err, err
    config = armhf.session.host_path(f"{PROJECT}/mcp.toml")
    config.write_text('[mcp]\nlisten = "127.0.0.1:8765"\n')
    code, out, err = armhf.cli(f"config check --config {PROJECT}/mcp.toml", check=False)
    assert code == 2 and "mcp.listen: MCP is not available on 32-bit Pi OS" in out + err, out + err


def test_memory_stores_and_finds_by_keywords(armhf: SetUp) -> None:
    armhf.cli('memory store wifi "The Wi-Fi password is taped under the router" --category core')
    _, out, err = armhf.cli('memory search "router password" --json')
    found = json.loads(out)["data"]["entries"]
    assert found and found[0]["key"] == "wifi", out + err
    _, out, _ = armhf.cli("memory stats --json")
    assert json.loads(out)["data"]["embedder"] == "none", out


def test_install_sh_makes_a_venv_with_the_systems_lgpio(armhf: SetUp) -> None:
    """As root, into a scratch root (no systemd here): the 32-bit path gives the venv the
    system's site packages, where Pi OS's python3-lgpio is (a stand-in here)."""
    session = armhf.session
    stand_in = session.host_path(LGPIO_STAND_IN)
    stand_in.write_text("# stand-in for Raspberry Pi OS's python3-lgpio (not reachable here)\n"
                        "def gpiochip_open(chip):\n    raise OSError('stand-in')\n")
    try:
        done = session.run("rm -rf /tmp/scratch && sh deploy/install.sh --root /tmp/scratch"
                           " --operator '' --no-start", cwd=PROJECT, user="root", timeout=2400,
                           check=False, env={"PIP_CACHE_DIR": "/var/cache/edge-agent-pip-root"})
        assert done.returncode == 0, done.stdout + done.stderr
        assert "pin factory: lgpio (system package)" in done.stdout, done.stdout
        venv = "/tmp/scratch/opt/edge-agent/venv"
        config = session.host_path(f"{venv}/pyvenv.cfg").read_text()
        assert "include-system-site-packages = true" in config
        checked = session.run(f"{venv}/bin/edge-cli config check --config"
                              " /tmp/scratch/etc/edge-agent/config.toml", user="root")
        assert "OK" in checked.stdout + checked.stderr
    finally:
        stand_in.unlink()
        session.run("rm -rf /tmp/scratch", user="root")
