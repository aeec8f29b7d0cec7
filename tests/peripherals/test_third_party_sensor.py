"""A sensor driver from another package, found through the ``edge_agent.sensors`` entry point
group: a tiny distribution (its pyproject.toml and one module, written below) is built and
installed by pip, and its type is then a sensor type like the built-in ones: ``edge-cli config
check`` accepts its section and says what is wrong with a bad one, ``edge-cli sensors`` reads
it with and without an agent, doctor lists it, and the agent announces it to Home Assistant
over MQTT. An entry point of the same package that cannot be loaded is logged and named by
doctor, and stops nothing.

pip installs it with ``--target`` into a folder the edge-cli processes get on PYTHONPATH, where
importlib.metadata finds it as it would in site-packages: nothing is left in the test
environment for other tests to see, even when this one is killed halfway."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.helpers import cli, start_agent, wait_for

PYPROJECT = """
[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "edge-agent-fake-lux"
version = "0.1.0"
description = "A light sensor for edge-agent that reads its lux from a file"

[project.entry-points."edge_agent.sensors"]
fake_lux = "fake_lux:SPEC"
dead_lux = "fake_lux:NO_SUCH_SPEC"

[tool.setuptools]
py-modules = ["fake_lux"]
"""

MODULE = '''
"""A light sensor that reads its lux from a text file (a test writes the number there)."""

from pathlib import Path

from peripherals.exc import SensorError
from peripherals.sensors import Reading, Sensor, SensorContext, SensorOptions, SensorSpec


class FakeLuxOptions(SensorOptions):
    path: str

    @property
    def units(self) -> dict[str, str]:
        return {"illuminance": "lx"}


class FakeLux(Sensor):
    kind = "fake_lux"

    def __init__(self, name: str, path: str):
        self.name, self.path = name, Path(path)
        self.units = {"illuminance": "lx"}

    def read(self) -> dict[str, Reading]:
        try:
            lux = float(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise SensorError(f"no lux in {self.path} ({exc}): write a number there") from None
        return {"illuminance": Reading("illuminance", lux, "lx")}

    def describe(self) -> str:
        return f"fake lux from {self.path}"


def build(name: str, options: FakeLuxOptions, context: SensorContext) -> Sensor:
    return FakeLux(name, options.path)


SPEC = SensorSpec("fake_lux", FakeLuxOptions, build)
'''

CONFIG = """
[memory]
backend = "none"
[channels.cli]
enabled = false
[sensors.lux]
type = "fake_lux"
path = "{path}"
interval_seconds = 0.2
{extra}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The folder pip installed the package into."""
    source, target = tmp_path_factory.mktemp("fake-lux"), tmp_path_factory.mktemp("site")
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "fake_lux.py").write_text(textwrap.dedent(MODULE))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--no-index", "--target", str(target),
                           str(source)], cwd=source, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "edge_agent_fake_lux-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target


@pytest.fixture
def lux(tmp_path) -> Path:
    path = tmp_path / "lux.txt"
    path.write_text("321.5\n")
    return path


def with_package(env: dict, site: Path, folder: Path, lux: Path, extra: str = "") -> dict:
    config = folder / "config.toml"
    config.write_text(CONFIG.format(path=lux, extra=extra))
    return dict(env, PYTHONPATH=str(site), EDGE_CONFIG=str(config),
                EDGE_STATE_DIR=str(folder / "state"))


def test_config_check_takes_the_type_and_names_what_is_wrong(site, lux, tmp_path, isolated_env):
    env = with_package(isolated_env, site, tmp_path, lux)
    done = cli("config", "check", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith(": OK")
    assert "adapter_unusable group=edge_agent.sensors name=dead_lux" in done.stderr  # logged

    Path(env["EDGE_CONFIG"]).write_text('[sensors.lux]\ntype = "fake_lux"\npaht = "x"\n')
    bad = cli("config", "check", env=env)
    assert bad.returncode == 2
    assert "sensors.lux.path: required key is missing" in bad.stderr
    assert "sensors.lux.paht: unknown key (did you mean 'path'?)" in bad.stderr

    Path(env["EDGE_CONFIG"]).write_text('[sensors.lux]\ntype = "fake_luxx"\n')
    unknown = cli("config", "check", env=env)
    assert ("sensors.lux.type: unknown type 'fake_luxx'; use one of: pi, ds18b20, bme280, "
            "ads1115, mcp3008, dht22, sht3x, aht20, hcsr04, pulse_counter, fake_lux, analog") in unknown.stderr


def test_sensors_reads_it_without_an_agent(site, lux, tmp_path, isolated_env):
    env = with_package(isolated_env, site, tmp_path, lux)
    done = cli("sensors", "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    reply = json.loads(done.stdout)
    (row,) = reply["data"]["sensors"]
    assert reply["via"] == "direct"
    assert (row["name"], row["kind"], row["where"]) == ("lux", "fake_lux", f"fake lux from {lux}")
    assert row["readings"] == {"illuminance": {"value": 321.5, "unit": "lx"}}


def test_doctor_lists_it_and_names_the_entry_point_it_cannot_use(site, lux, tmp_path, isolated_env):
    env = with_package(isolated_env, site, tmp_path, lux)
    report = json.loads(cli("doctor", "--json", env=env).stdout)
    checks = {check["name"]: check for check in report["data"]["checks"]}
    assert checks["config"]["status"] in ("ok", "warn")
    adapters = checks["adapters"]
    assert adapters["status"] == "warn"
    assert "fake_lux (from edge-agent-fake-lux 0.1.0)" in adapters["detail"]
    assert ("edge_agent.sensors dead_lux = 'fake_lux:NO_SUCH_SPEC' from edge-agent-fake-lux "
            "0.1.0: AttributeError") in adapters["detail"]
    assert "pip uninstall" in adapters["fix"]
    assert checks["sensors"]["status"] == "ok"


def test_a_running_agent_reads_it_and_announces_it_to_home_assistant(site, lux, tmp_path,
                                                                      isolated_env):
    with Mosquitto(tmp_path / "broker") as broker:
        env = with_package(isolated_env, site, tmp_path, lux,
                           f'[mqtt]\nurl = "{broker.url}"\nnode_id = "shed"\n')

        async def scenario() -> None:
            async with Watcher(broker, "homeassistant/sensor/#", "edge-agent/shed/sensor/#") as seen:
                agent = start_agent(env)
                try:
                    announced = json.loads(await seen.wait(
                        "homeassistant/sensor/shed/lux_illuminance/config", timeout=60))
                    assert announced["state_topic"] == "edge-agent/shed/sensor/lux/illuminance"
                    assert (announced["device_class"], announced["unit_of_measurement"],
                            announced["state_class"]) == ("illuminance", "lx", "measurement")
                    await seen.wait("edge-agent/shed/sensor/lux/illuminance", "321.5", timeout=10)
                    lux.write_text("12\n")
                    await seen.wait("edge-agent/shed/sensor/lux/illuminance", "12", timeout=10)

                    def through_the_agent() -> dict | None:
                        reply = json.loads(cli("sensors", "--json", env=env).stdout)
                        (row,) = reply["data"]["sensors"]
                        return reply if row["readings"]["illuminance"]["value"] == 12 else None

                    reply = await asyncio.to_thread(wait_for, through_the_agent, 20)
                    assert reply["via"] != "direct"
                finally:
                    agent.send_signal(signal.SIGTERM)
                    agent.wait(20)

        asyncio.run(scenario())
