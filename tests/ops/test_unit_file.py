"""The systemd unit: it verifies, and its `systemd-analyze security` exposure stays <= 2.5."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "edge-agent.service"
EXPOSURE_TARGET = 2.5


@pytest.fixture(scope="module")
def analyze():
    path = shutil.which("systemd-analyze")
    if not path:
        pytest.fail("systemd-analyze missing: `make test` installs the systemd Debian package")
    return path


def directives(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            found.setdefault(key, []).append(value)
    return found


def test_unit_has_what_the_agent_relies_on():
    unit = directives(UNIT.read_text())
    assert unit["Type"] == ["notify"] and unit["NotifyAccess"] == ["main"]
    assert int(unit["WatchdogSec"][0]) >= 10
    assert unit["User"] == ["edge"]
    assert unit["SupplementaryGroups"] == ["gpio dialout i2c spi video"]
    assert unit["RuntimeDirectory"] == ["edge-agent"]  # the control socket: /run/edge-agent
    assert unit["StateDirectory"] == ["edge-agent"]
    # $CACHE_DIRECTORY, private: its files are run (edge.core.code_cache reads them only then)
    assert unit["CacheDirectory"] == ["edge-agent"] and unit["CacheDirectoryMode"] == ["0700"]
    assert unit["Restart"] == ["on-failure"] and "StartLimitBurst" in unit
    # however the agent ended (SIGKILL, OOM kill): the header's outputs back to safe
    assert unit["ExecStopPost"] == ["/opt/edge-agent/venv/bin/edge-cli safe-state"]
    assert unit["DevicePolicy"] == ["closed"]
    allowed = " ".join(unit["DeviceAllow"])
    for device in ("gpiochip", "ttyACM", "ttyUSB", "ttyAMA", "ttyS",  # ttyAMA0, ttyS0: the header UART
                   "video4linux", "media", "dma_heap"):  # cameras: webcams, the Pi camera
        assert f"char-{device} rw" in allowed
    assert "PrivateDevices" not in unit  # it would hide /dev/gpiochip* and the serial ports
    assert "AF_UNIX" in unit["RestrictAddressFamilies"][0]


def megabytes(value: str) -> int:
    assert value.endswith("M"), value
    return int(value[:-1])


def test_memory_is_bounded_for_a_512_mb_pi():
    unit = directives(UNIT.read_text())
    high, most = megabytes(unit["MemoryHigh"][0]), megabytes(unit["MemoryMax"][0])
    # the agent with its embedding model and a chart (about 150 MB) fits under the soft bound,
    # and the hard one leaves a 512 MB Pi's system its 100 MB and more
    assert 150 <= high < most <= 350
    assert unit["OOMPolicy"] == ["stop"]  # the unit stops: ExecStopPost records the oom-kill


def test_systemd_analyze_verify(analyze, tmp_path):
    # verify checks that ExecStart exists: point it at this venv's edge-cli
    edge_cli = str(Path(sys.executable).parent / "edge-cli")
    unit = tmp_path / "edge-agent.service"
    unit.write_text(UNIT.read_text().replace("/opt/edge-agent/venv/bin/edge-cli", edge_cli))
    result = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""


def test_security_exposure_at_most_target(analyze, record_property):
    result = subprocess.run([analyze, "security", "--offline=true", "--no-pager", str(UNIT)],
                            capture_output=True, text=True, timeout=120)
    match = re.search(r"Overall exposure level for edge-agent\.service: (\d+\.\d+)", result.stdout)
    assert match, result.stdout[-2000:] + result.stderr
    exposure = float(match.group(1))
    record_property("systemd_security_exposure", exposure)
    print(f"systemd-analyze security exposure: {exposure}")
    assert exposure <= EXPOSURE_TARGET
    threshold = subprocess.run([analyze, "security", "--offline=true", "--no-pager",
                                f"--threshold={int(EXPOSURE_TARGET * 10)}", str(UNIT)],
                               capture_output=True, text=True, timeout=120)
    assert threshold.returncode == 0


SANDBOX_DROP_IN = UNIT.parent / "mcp-sandbox.conf"
BWRAP_CALLS = {"capset", "mount", "umount2", "pivot_root"}
"""What bubblewrap calls that the unit's filter denies (traced: ``strace -f bwrap ...``)."""


def with_drop_in(tmp_path: Path) -> Path:
    """The unit as systemd reads it with the MCP sandbox drop-in: its lines at the end of
    [Service] (a drop-in's settings come after the unit's, which is what the filter's order
    needs)."""
    service = directives(SANDBOX_DROP_IN.read_text())
    lines = "".join(f"{key}={value}\n" for key, values in service.items() for value in values)
    text = UNIT.read_text().replace("\n[Install]", f"{lines}\n[Install]")
    edge_cli = str(Path(sys.executable).parent / "edge-cli")
    unit = tmp_path / "edge-agent.service"
    unit.write_text(text.replace("/opt/edge-agent/venv/bin/edge-cli", edge_cli))
    return unit


def test_the_mcp_sandbox_drop_in_opens_only_what_bubblewrap_needs(analyze, tmp_path,
                                                                    record_property):
    drop_in = directives(SANDBOX_DROP_IN.read_text())
    assert set(drop_in) == {"RestrictNamespaces", "SystemCallFilter"}
    assert set(drop_in["SystemCallFilter"][0].split()) == BWRAP_CALLS
    unit = with_drop_in(tmp_path)
    verify = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True,
                            text=True, timeout=120)
    assert verify.returncode == 0 and verify.stderr.strip() == "", verify.stderr
    result = subprocess.run([analyze, "security", "--offline=true", "--no-pager", str(unit)],
                            capture_output=True, text=True, timeout=120)
    # the added calls are allowed after the unit's deny list (capset and mount show up as
    # allowed), and nothing else of the filter changed
    assert "@privileged is included (e.g. capset is allowed)" in result.stdout
    assert "@mount is included" in result.stdout
    for denied in ("@swap", "@reboot", "@raw-io", "@module", "@debug", "@obsolete", "@clock"):
        assert f"and {denied} is not included" in result.stdout, denied
    match = re.search(r"Overall exposure level for edge-agent\.service: (\d+\.\d+)", result.stdout)
    assert match, result.stdout[-2000:]
    exposure = float(match.group(1))
    record_property("systemd_security_exposure_mcp_sandbox", exposure)
    assert exposure <= EXPOSURE_TARGET + 0.1


def test_a_refused_sandbox_under_the_service_names_the_drop_in(monkeypatch):
    from edge.mcp import sandbox

    said = sandbox._namespaces_fix({"INVOCATION_ID": "0123"})
    assert "/opt/edge-agent/share/mcp-sandbox.conf" in said and "daemon-reload" in said
    assert "drop-in" not in sandbox._namespaces_fix({})  # not under systemd: the kernel's switch
    assert "user namespaces" in sandbox._namespaces_fix({})

