"""GPIO tools: schemas from the parameter records, policy inside execute, failures as results."""

from __future__ import annotations

import pytest

from edge.hardware import build_hardware
from edge.tools.gpio import hardware_tools
from tests.helpers import asker


@pytest.fixture
async def tools(default_config, mock_factory):
    hw = build_hardware(default_config.config, resident=True, pin_factory=mock_factory)
    await hw.start()
    yield {t.name: t for t in hardware_tools(hw)}
    await hw.shutdown()


async def test_schemas_come_from_the_parameter_models(tools):
    schema = tools["gpio_pwm"].parameters_schema()
    assert schema["required"] == ["pin", "duty"]
    assert schema["properties"]["duty"]["maximum"] == 1.0
    assert schema["additionalProperties"] is False
    assert tools["gpio_write"].parameters_schema()["properties"]["value"]["enum"] == ["on", "off"]


async def test_write_then_read(tools, mock_factory):
    result = await tools["gpio_write"].execute({"pin": "led", "value": "on"}, asker("test"))
    assert result.success and mock_factory.pin(17).state == 1
    read = await tools["gpio_read"].execute({"pin": "GPIO17"}, asker("test"))
    assert read.data["value"] == 1.0 and "is on" in read.output


async def test_refused_pin_is_a_failed_result_and_touches_nothing(tools, mock_factory):
    result = await tools["gpio_write"].execute({"pin": "GPIO22", "value": "on"}, asker("test"))
    assert not result.success and "not in the allowlist" in result.error
    assert mock_factory.pin(22).state == 0


@pytest.mark.parametrize("args,message", [
    ({"pin": "led"}, "value"), ({"pin": "led", "value": "toggle"}, "value"),
    ({"pin": "led", "value": "on", "force": True}, "force"),
])
async def test_bad_arguments_are_reported(tools, args, message):
    result = await tools["gpio_write"].execute(args, asker("test"))
    assert not result.success and message in result.error


async def test_bad_arguments_name_the_argument_and_the_limit(tools, mock_factory):
    result = await tools["gpio_pwm"].execute({"pin": "led", "duty": 1.5, "frequency": 0}, asker("test"))
    assert result.error == ("invalid arguments: duty: must be at most 1 (got 1.5); "
                            "frequency: must be greater than 0 (got 0)")
    assert mock_factory.pin(17).state == 0


async def test_pwm_on_an_output_pin_is_refused(tools):
    result = await tools["gpio_pwm"].execute({"pin": "led", "duty": 0.5}, asker("test"))
    assert not result.success and "does not allow pwm" in result.error


async def test_board_status_lists_pins_and_simulation(tools):
    result = await tools["board_status"].execute({}, asker("test"))
    assert result.success
    assert result.data["boards"][0]["simulated"] is True
    assert [p["pin"] for p in result.data["pins"]] == ["GPIO17", "GPIO27"]
    assert "gpio:GPIO17 (led) output = off, safe off" in result.output


async def test_a_hold_the_pins_max_on_seconds_would_cut_short_is_refused(write_config,
                                                                         isolated_env, mock_factory):
    from edge.config.loader import load_config

    text = '[boards.gpio.pins]\nled = { mode = "output", safe = "off", max_on_seconds = 3 }\n'
    hw = build_hardware(load_config(str(write_config(text)), env=isolated_env).config,
                        resident=True, pin_factory=mock_factory)
    await hw.start()
    write = next(t for t in hardware_tools(hw) if t.name == "gpio_write")
    assert "hold_seconds" not in write.parameters_schema()["properties"]  # the CLI's, not the model's
    refused = await write.execute({"pin": "led", "value": "on", "hold_seconds": 6}, asker("cli:me"))
    assert not refused.success and "max_on_seconds = 3" in refused.error and "--hold 3" in refused.error
    assert mock_factory.pin(17).state == 0
    held = await write.execute({"pin": "led", "value": "on", "hold_seconds": 3}, asker("cli:me"))
    assert held.success and mock_factory.pin(17).state == 1
    await hw.shutdown()


async def test_a_pwm_pin_shows_its_duty_and_an_input_on_or_off(write_config, isolated_env,
                                                               mock_factory):
    from edge.config.loader import load_config

    text = '[boards.gpio.pins]\nGPIO18 = { mode = "pwm" }\nbutton = { mode = "input" }\n'
    hw = build_hardware(load_config(str(write_config(text)), env=isolated_env).config,
                        resident=True, pin_factory=mock_factory)
    await hw.start()
    tools = {t.name: t for t in hardware_tools(hw)}
    assert (await tools["gpio_pwm"].execute({"pin": "GPIO18", "duty": 0.3}, asker("t"))).success
    read = await tools["gpio_read"].execute({"pin": "GPIO18"}, asker("t"))
    assert read.output == "gpio:GPIO18 is at PWM duty 0.30" and read.data["kind"] == "duty"
    assert read.data["value"] == pytest.approx(0.3)  # --json keeps its fields
    pins = await tools["board_status"].execute({}, asker("t"))
    assert "  gpio:GPIO18 pwm = duty 0.30" in pins.output.splitlines()
    assert "  gpio:GPIO27 (button) input = off (switch open: line high, pulled up)" in \
        pins.output.splitlines()  # pulled up, at rest: off, its line named beside it
    await hw.shutdown()
