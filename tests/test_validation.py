"""pydantic's errors in our words: every problem at once, at the key as written (no union tags),
what was expected and what was given; no error codes, no links."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edge.config.boards import PinConfig
from edge.config.model import Config
from edge.config.mqtt import MqttConfig
from edge.config.sensors import parse_sensor
from edge.core.validation import problems
from edge.tools.memory import StoreArgs


def words(model, data) -> list[str]:
    with pytest.raises(ValidationError) as err:
        model.model_validate(data)
    return [str(p) for p in problems(err.value, model)]


def test_every_problem_at_once_at_the_key_as_written():
    data = {"boards": {"uno": {"type": "arduino", "port": "/dev/ttyACM0",
                               "pins": {"pump": {"mode": "output", "max_on_seconds": -1}}},
                       "x": {"type": "esp32"}, "y": {"colour": 1}},
            "sensors": {"s": {"interval_seconds": 3}, "t": {"type": "ads1115", "channel": 4}},
            "provider": {"base_ulr": "http://x"}}
    assert words(Config, data) == [
        "provider.base_ulr: unknown key (did you mean 'base_url'?)",
        "boards.uno.pins.pump.max_on_seconds: must be greater than 0 (got -1)",
        "boards.x.type: unknown type 'esp32'; use one of: gpio, arduino, stm32, node",
        "boards.y.colour: unknown key",
        "sensors.s: type is missing; use one of: pi, ds18b20, bme280, ads1115, mcp3008, dht22, "
        "sht3x, aht20, hcsr04, pulse_counter, analog",
        "sensors.t.channel: must be at most 3 (got 4)",
    ]


def test_no_codes_links_or_tags_in_any_message():
    data = {"boards": {"uno": {"type": "arduino", "pins": {"A0": {"mode": "blink"}}}},
            "sensors": {"s": [1], "t": {"type": "bme280", "address": "far"}}, "agent": "x"}
    text = "\n".join(words(Config, data))
    assert "type=" not in text and "pydantic.dev" not in text and "Input should" not in text
    assert "boards.uno.pins.A0.mode: expected 'input', 'output', 'pwm' or 'analog' (got 'blink')" in text
    assert "boards.uno.arduino" not in text and "sensors.t.bme280" not in text
    assert "sensors.s: expected a table (got a list)" in text
    assert "agent: expected a table (got 'x')" in text


def test_true_is_no_number_and_text_reads_as_the_environment_writes_it():
    assert words(PinConfig, {"mode": "output", "max_on_seconds": True}) == [
        "max_on_seconds: expected a number (got True)"]
    assert MqttConfig.model_validate({"qos": "2", "retain": " yes "}).qos == 2
    assert parse_sensor({"type": "bme280", "address": "0x77", "bus": " 1 "}).address == 0x77
    assert words(MqttConfig, {"qos": "two"}) == ["qos: expected 0, 1 or 2 (got 'two')"]


def test_a_value_no_member_of_a_union_takes_says_what_each_would():
    assert words(StoreArgs, {"key": "k", "content": "c", "category": 5}) == [
        "category: expected 'core', 'daily' or 'conversation' or text (got 5)"]


def test_a_bad_key_of_a_table_is_named_without_pydantic_markers():
    assert words(Config, {"sensors": {"green house": {"type": "pi"}}}) == [
        "sensors.green house: sensor name 'green house': use letters, digits, '_' and '-', starting "
        "with a letter (at most 64 characters); rules write NAME.QUANTITY, e.g. greenhouse.temperature"]
