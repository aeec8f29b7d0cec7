"""Sections chosen by their ``type`` (:class:`edge.config.section.SectionByType`): reading a config
makes the models of the types it names and no other, and everything that saw the whole union
before (dumps, errors in our words, the JSON schema) still sees it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from edge.config.boards import board_section, board_sections, parse_board
from edge.config.cameras import camera_sections
from edge.config.model import Config
from edge.config.sensors import sensor_sections
from edge.core.validation import problems
from peripherals.factory import BOARDS

READ_ONE_OF_EACH = """
import sys
from edge.config.boards import board_section
from edge.config.cameras import camera_section
from edge.config.loader import load_config
from edge.config.sensors import sensor_section
from edge.cameras.registry import CAMERAS
from peripherals import registry
from peripherals.sensors.factory import SENSORS

config = load_config(sys.argv[1]).config
assert type(config.sensors["greenhouse"]).__name__ == "Bme280SensorConfig"
modules = [target.partition(":")[0] for table in (SENSORS.builtin, CAMERAS.builtin)
           for target in table.values()]
print(sorted({m for m in modules if m in sys.modules}))
print([f.cache_info().currsize for f in (board_section, sensor_section, camera_section)])
print(registry.installed_entry_points.cache_info().currsize)
"""


def test_reading_a_config_makes_the_sections_of_the_types_it_names_alone(tmp_path):
    """A fresh process (this one has made them all): a Pi board and a BME280 are one board
    section, one sensor section and one sensor driver's module; no camera, no other driver, no
    installed package's metadata."""
    config = tmp_path / "config.toml"
    config.write_text('[boards.pi]\nsimulate = true\n[sensors.greenhouse]\ntype = "bme280"\n')
    done = subprocess.run([sys.executable, "-c", READ_ONE_OF_EACH, str(config)], capture_output=True,
                          text=True, cwd=Path(__file__).parents[2], timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "EDGE_STATE_DIR": str(tmp_path / "state")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["['peripherals.sensors.bme280']", "[1, 1, 0]", "0"]


def test_each_type_has_one_model_made_once():
    uno = parse_board({"type": "arduino", "port": "/dev/ttyACM0"})
    assert type(uno) is board_section("arduino") is board_sections()["arduino"]
    assert type(uno).__name__ == "ArduinoBoardConfig" and board_section("esp32") is None
    assert list(board_sections()) == list(BOARDS.kinds)
    assert list(sensor_sections())[-1] == "analog" and list(camera_sections()) == ["rpicam", "v4l2"]


def test_a_section_dumps_as_its_own_type_and_reads_back():
    config = Config.model_validate({
        "boards": {"uno": {"type": "arduino", "port": "/dev/ttyACM0",
                           "pins": {"D13": {"mode": "output"}}}},
        "sensors": {"tank": {"type": "analog", "pin": "uno:A0", "scale": 500}},
        "cameras": {"door": {"type": "v4l2", "device": "/dev/video0"}}})
    assert config.model_dump(mode="json", exclude_defaults=True) == {
        "boards": {"uno": {"port": "/dev/ttyACM0", "pins": {"D13": {"mode": "output"}}}},
        "sensors": {"tank": {"type": "analog", "pin": "uno:A0", "scale": 500.0}},
        "cameras": {"door": {"device": "/dev/video0"}}}
    dumped = config.model_dump(mode="json")
    assert "pull" not in dumped["boards"]["uno"]["pins"]["D13"]  # PinConfig's own serializer
    assert dumped["boards"]["uno"]["baudrate"] == 57600 and dumped["cameras"]["door"]["width"] == 1280
    again = Config.model_validate_json(config.model_dump_json())
    assert again == config and type(again.boards["uno"]) is board_section("arduino")


def test_a_default_section_passes_as_it_is():
    default = Config().boards["gpio"]
    assert type(default) is board_section("gpio") and Config(boards={"pi": default}).boards["pi"] is default


def test_errors_name_the_key_as_written_and_suggest_the_type_s_own_keys():
    data = {"boards": {"uno": {"type": "arduino", "prot": "/dev/ttyACM0"}},
            "sensors": {"greenhouse": {"type": "bme280", "adress": "0x77"}},
            "cameras": {"door": {"type": "webcam"}}}
    with pytest.raises(ValidationError) as err:
        Config.model_validate(data)
    assert [e["loc"] for e in err.value.errors()][:2] == [
        ("boards", "uno", "arduino", "port"), ("boards", "uno", "arduino", "prot")]
    assert [str(p) for p in problems(err.value, Config)] == [
        "boards.uno.port: required key is missing",
        "boards.uno.prot: unknown key (did you mean 'port'?)",
        "sensors.greenhouse.adress: unknown key (did you mean 'address'?)",
        "cameras.door.type: unknown type 'webcam'; use one of: rpicam, v4l2"]


def test_the_json_schema_has_every_type():
    boards = Config.model_json_schema()["properties"]["boards"]["additionalProperties"]
    assert boards["discriminator"]["propertyName"] == "type"
    assert sorted(boards["discriminator"]["mapping"]) == sorted(BOARDS.kinds)
