"""A servo only where its board can drive one: ``[mqtt] servos``, ``[boards.NAME.servos]``, a
schedule's and a rule's ``gpio servo`` are checked against the allowlist (a pwm pin) and the board
type's spec (``BoardSpec.servo_pins``: D9 and D10 on an Uno, on the Pi header a pin declared in
``[boards.gpio.servos]``, none on an STM32), so
``edge-cli config check`` refuses, with exit 2, what would otherwise give Home Assistant a slider
whose every command is refused, or a job that fails at every run."""

from __future__ import annotations

import json

import pytest

from edge.cli.main import main

UNO = """
[boards.gpio.aliases]
arm = "GPIO18"
led = "GPIO17"
[boards.gpio.pins]
arm = { mode = "pwm" }
led = { mode = "output", safe = "off" }
[boards.uno]
type = "arduino"
port = "/dev/ttyACM0"
aliases = { claw = "D9", lamp = "D3", wrist = "10" }
[boards.uno.pins]
claw = { mode = "pwm" }
lamp = { mode = "pwm" }
wrist = { mode = "pwm" }
[boards.uno.pins.D13]
mode = "output"
"""
FIX = 'wire the servo to one that can (uno:D9, uno:D10), allowlisted with mode = "pwm"'
UNDECLARED = ("gpio:GPIO18 is not declared as a servo; add [boards.gpio.servos.GPIO18] (its angle "
              "range and pulse widths; {} takes the defaults)")


def check(write_config, text: str, capsys, *flags: str) -> tuple[int, str, str]:
    code = main(["config", "check", "--config", str(write_config(text)), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_servos_on_the_uno_timer_pins_pass(write_config, isolated_env, capsys):
    text = UNO + ('[mqtt]\nurl = "mqtt://127.0.0.1"\nservos = ["claw", "uno:wrist"]\n'
                  '[[schedules]]\nname = "grab"\nevery = "30s"\naction = "gpio servo claw 90"\n')
    code, out, err = check(write_config, text, capsys)
    assert code == 0, err
    assert ": OK" in out


@pytest.mark.parametrize("extra, key, why", [
    ('[mqtt]\nservos = ["arm"]\n', "mqtt.servos.0", f"'arm': {UNDECLARED}"),
    ('[mqtt]\nservos = ["lamp"]\n', "mqtt.servos.0",
     f"'lamp': uno:D3 cannot drive a servo (board uno drives them on D9 and D10 only); {FIX}"),
    ('[mqtt]\nservos = ["claw", "elbow"]\n', "mqtt.servos.1", "'elbow' is not a"),
    ('[mqtt]\nservos = ["led"]\n', "mqtt.servos.0",
     "'led': gpio:GPIO17 (led) is configured as output; a servo needs mode = \"pwm\""),
    ('[mqtt]\nservos = ["uno:D11"]\n', "mqtt.servos.0",
     "'uno:D11': uno:D11 is not in the allowlist; add it under [boards.uno.pins] with "
     "mode = \"pwm\""),
    ('[[schedules]]\nname = "wave"\nevery = "1m"\naction = "gpio servo arm 90"\n',
     "schedules.0.action", f"schedule 'wave': gpio servo arm 90: {UNDECLARED}"),
    ('[boards.gpio.servos]\nled = {}\n', "boards.gpio.servos.led",
     'gpio:GPIO17 (led) is configured as output; a servo needs mode = "pwm"'),
    ('[boards.gpio.servos]\nGPIO5 = {}\n', "boards.gpio.servos.GPIO5",
     'gpio:GPIO5 is not in the allowlist; add it under [boards.gpio.pins] with mode = "pwm"'),
    ('[boards.gpio.servos]\nnosuch = {}\n', "boards.gpio.servos.nosuch", "'nosuch' is not a"),
    ('[boards.uno.servos]\nlamp = {}\n', "boards.uno.servos.lamp",
     "uno:D3 cannot drive a servo (board uno drives them on D9 and D10 only)"),
    ('[[rules]]\nname = "point"\nwhen = "uno:D13 changes"\nthen = "gpio servo lamp 10"\n',
     "rules.0.then", "rule 'point': gpio servo lamp 10: uno:D3 cannot drive a servo"),
])
def test_a_servo_the_board_cannot_drive_is_refused_naming_the_key(write_config, isolated_env,
                                                                  capsys, extra, key, why):
    path = write_config(UNO + extra)
    code, _, err = check(write_config, UNO + extra, capsys)
    assert code == 2, err
    assert f"{path}: invalid configuration" in err
    assert f"  {key}: {why}" in err, err


def test_on_a_board_without_servo_pins_the_fix_names_the_boards_that_have_them(
        write_config, isolated_env, capsys):
    text = ('[boards.pwm]\ntype = "stm32"\nport = "socket://127.0.0.1:1"\n'
            '[boards.pwm.pins]\nPA8 = { mode = "pwm" }\n[boards.pwm.servos]\nPA8 = {}\n')
    code, _, err = check(write_config, text, capsys)
    assert code == 2
    assert ("boards.pwm.servos.PA8: pwm:PA8 cannot drive a servo (board pwm drives none); none of "
            "the configured boards drives servos; an Arduino does, on D9 and D10, and the Pi "
            "header on a pin declared in [boards.NAME.servos]") in err


def test_a_servo_declared_on_the_pi_header_passes_with_its_range(write_config, isolated_env,
                                                                 capsys):
    text = UNO + ('[boards.gpio.servos.arm]\nmax_angle = 120\nsafe_angle = 60\n'
                  '[mqtt]\nurl = "mqtt://127.0.0.1"\nservos = ["arm"]\n'
                  '[[schedules]]\nname = "wave"\nevery = "1m"\naction = "gpio servo arm 90"\n')
    code, out, err = check(write_config, text, capsys)
    assert code == 0, err


@pytest.mark.parametrize("servo, why", [
    ("max_angle = 200", "boards.gpio.servos.arm.max_angle"),
    ("min_angle = 90\nmax_angle = 90", "min_angle 90 must be below max_angle 90"),
    ("min_pulse_us = 2000\nmax_pulse_us = 1000", "min_pulse_us 2000 must be below max_pulse_us 1000"),
    ("max_pulse_us = 2500\nframe_us = 2000", "boards.gpio.servos.arm.frame_us"),
    ("max_angle = 90\nsafe_angle = 100", "safe_angle 100 is outside min_angle..max_angle (0..90)"),
])
def test_a_servos_calibration_is_checked_at_its_key(write_config, isolated_env, capsys, servo, why):
    code, _, err = check(write_config, UNO + f"[boards.gpio.servos.arm]\n{servo}\n", capsys)
    assert code == 2
    assert why in err, err


def test_json_says_the_same(write_config, isolated_env, capsys):
    code, out, _ = check(write_config, UNO + '[mqtt]\nservos = ["arm"]\n', capsys, "--json")
    body = json.loads(out)
    assert code == 2 and body["ok"] is False and body["exit_code"] == 2
    assert f"mqtt.servos.0: 'arm': {UNDECLARED}" in body["error"]
