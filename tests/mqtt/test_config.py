"""``[mqtt]``: off without a url; urls, node ids and topics checked; the password is a secret
from the environment, never shown."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from edge.config.loader import load_config
from edge.config.mqtt import MqttConfig, default_node_id
from edge.core.exc import ConfigError
from edge.hardware import build_hardware
from edge.mqtt.topics import NodePins
from tests.helpers import cli


def test_off_by_default_with_the_hostname_as_node(default_config):
    mqtt = default_config.config.mqtt
    assert not mqtt.enabled and mqtt.node_id == default_node_id()
    assert mqtt.topic_base == f"edge-agent/{mqtt.node_id}" and mqtt.discovery_prefix == "homeassistant"
    assert mqtt.allow_commands and not mqtt.accept_retained_commands


@pytest.mark.parametrize("text, error", [
    ('url = "http://broker:1883"', "url must be mqtt://"),
    ('url = "mqtt://user:pw@broker"', "not in the url"),
    ('url = "mqtt://broker:99999"', "Port out of range"),
    ('url = "mqtt://b"\nnode_id = "kitchen/1"', "node_id may hold only"),
    ('url = "mqtt://b"\nbase_topic = "home/#"', "must not contain"),
    ('url = "mqtt://b"\nca_file = "/ca.pem"', "need an mqtts:// url"),
    ('url = "mqtts://b"\ncert_file = "/c.pem"', "cert_file and key_file go together"),
    ('url = "mqtt://b"\nqos = 3', "qos"),
])
def test_bad_settings_are_config_errors(text, error, write_config, isolated_env):
    with pytest.raises(ConfigError, match=error):
        load_config(str(write_config(f"[mqtt]\n{text}\n")), env=isolated_env)


@pytest.mark.parametrize("key, topic, error", [
    ("base_topic", "$SYS/edge", "must not begin with '\\$'"),
    ("base_topic", "$share/group/edge", "must not begin with '\\$'"),
    ("base_topic", "home//kitchen", "must not have an empty level"),
    ("discovery_prefix", "$homeassistant", "must not begin with '\\$'"),
])
def test_topics_that_are_the_brokers_own_or_match_others_are_refused(key, topic, error,
                                                                     write_config, isolated_env):
    path = write_config(f'[mqtt]\nurl = "mqtt://b"\n{key} = "{topic}"\n')
    with pytest.raises(ConfigError, match=f"mqtt\\.{key}: a topic {error}"):
        load_config(str(path), env=isolated_env)


def test_the_password_comes_from_the_environment_and_is_never_shown(write_config, isolated_env):
    path = write_config('[mqtt]\nurl = "mqtts://broker.lan"\nusername = "edge"\n')
    env = dict(isolated_env, EDGE_CONFIG=str(path), EDGE_MQTT__PASSWORD="hunter2-mqtt")
    mqtt = load_config(env=env).config.mqtt
    assert mqtt.password.get_secret_value() == "hunter2-mqtt" and mqtt.port == 8883
    shown = cli("config", "show", env=env)
    assert shown.returncode == 0 and "hunter2-mqtt" not in shown.stdout


def test_hostnames_become_topic_safe_node_ids(monkeypatch):
    monkeypatch.setattr("socket.gethostname", lambda: "pi.local")
    assert default_node_id() == "pi-local"
    assert MqttConfig().node_id == "pi-local"


def test_the_commented_example_is_valid(write_config, isolated_env):
    text = resources.files("edge.config").joinpath("example.toml").read_text()
    block = text[text.index("# [mqtt]"):]
    block = block[:block.index("\n\n")]
    uncommented = re.sub(r"^# ?(\[mqtt\]|\w+ = )", r"\1", block, flags=re.M)
    mqtt = load_config(str(write_config(uncommented)), env=isolated_env).config.mqtt
    assert (mqtt.url, mqtt.node_id, mqtt.topic_base) == (
        "mqtt://192.168.1.10:1883", "greenhouse", "edge-agent/greenhouse")


INPUTS = """
[boards.gpio.aliases]
led = "GPIO17"
door = "GPIO27"
[boards.gpio.pins]
led = {{ mode = "output" }}
door = {{ mode = "input" }}
[mqtt]
url = "mqtt://127.0.0.1:1"
node_id = "hall"
{extra}
"""


def test_an_input_is_shown_as_its_mqtt_inputs_section_says(write_config, isolated_env,
                                                           mock_factory):
    text = INPUTS.format(extra='[mqtt.inputs.door]\ndevice_class = "door"\n')
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=False, pin_factory=mock_factory)
    pins = NodePins.build(hardware.pin_list(), (), hardware.locate, config.mqtt.inputs)
    door = pins.by_slug["door"]
    assert door.discovery() == {"device_class": "door"}
    assert pins.by_slug["led"].discovery() == {}
    by_pin = NodePins.build(hardware.pin_list(), (), hardware.locate,
                            {"GPIO27": config.mqtt.inputs["door"]})  # its pin name does too
    assert by_pin.by_slug["door"].discovery() == {"device_class": "door"}


@pytest.mark.parametrize("extra, error", [
    ('[mqtt.inputs.door]\ndevice_class = "doors"',
     "mqtt.inputs.door.device_class: .*'doors' is not a Home Assistant binary_sensor device class"),
    ('[mqtt.inputs.door]\ninverted = true', "mqtt.inputs.door.inverted"),
    ('[mqtt.inputs.door]\ninvert = true', 'mqtt.inputs.door.invert: invert is gone: .* give it '
                                          'active = "high"'),
])
def test_bad_input_sections_are_config_errors(extra, error, write_config, isolated_env):
    with pytest.raises(ConfigError, match=error):
        load_config(str(write_config(INPUTS.format(extra=extra))), env=isolated_env)


@pytest.mark.parametrize("name, error", [
    ("nosuch", "mqtt.inputs.nosuch: no allowlisted pin is called 'nosuch'"),
    ("led", r"mqtt.inputs.led: gpio:GPIO17 \(led\) is configured as output, not input"),
    ("GPIO5", "mqtt.inputs.GPIO5: no allowlisted pin"),  # a real pin, not allowlisted
])
def test_inputs_must_name_input_pins(name, error, write_config, isolated_env, mock_factory):
    text = INPUTS.format(extra=f'[mqtt.inputs.{name}]\ndevice_class = "door"\n')
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=False, pin_factory=mock_factory)
    with pytest.raises(ConfigError, match=error):
        NodePins.build(hardware.pin_list(), (), hardware.locate, config.mqtt.inputs)
    run = cli("run", env=dict(isolated_env, EDGE_CONFIG=str(write_config(text))), stdin="")
    assert run.returncode == 2 and f"mqtt.inputs.{name}:" in run.stderr, run.stderr
    check = cli("config", "check", env=dict(isolated_env, EDGE_CONFIG=str(write_config(text))))
    assert check.returncode == 2 and f"mqtt.inputs.{name}:" in check.stderr, check.stderr
