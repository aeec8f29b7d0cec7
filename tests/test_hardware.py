"""Hardware: config to boards and policy, pin lookup, claiming, auto-off, safe state."""

from __future__ import annotations

import asyncio
import json

import pytest

from edge.config.loader import load_config
from edge.core.exc import ConfigError, PolicyDenied
from edge.hardware import build_hardware
from peripherals.exc import BoardError, UnknownPin
from tests.helpers import asker, cli

TIMED = """
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = { mode = "output", safe = "off", max_on_seconds = 0.2 }
GPIO23 = { mode = "output", safe = "on" }
BOARD11 = { mode = "pwm" }
"""


def hardware_for(text, write_config, env, mock_factory, resident=True):
    cfg = load_config(str(write_config(text)), env=env).config
    return build_hardware(cfg, resident=resident, pin_factory=mock_factory)


def test_pin_keys_resolve_to_canonical_rules(write_config, isolated_env, mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    rules = {r.pin: r for r in hw.pin_list()}
    assert set(rules) == {"GPIO22", "GPIO23", "GPIO17"}
    assert rules["GPIO22"].aliases == ("pump",) and rules["GPIO22"].max_on_seconds == 0.2
    assert rules["GPIO23"].safe is True


def test_unknown_pin_in_config_names_the_key(write_config, isolated_env, mock_factory):
    with pytest.raises(ConfigError, match=r"boards\.gpio\.pins\.GPIO99: .*not a GPIO pin"):
        hardware_for('[boards.gpio.pins]\nGPIO99 = { mode = "input" }\n', write_config,
                     isolated_env, mock_factory)


def test_same_pin_twice_is_a_config_error(write_config, isolated_env, mock_factory):
    text = '[boards.gpio.pins]\nled = { mode = "output" }\nGPIO17 = { mode = "input" }\n'
    with pytest.raises(ConfigError, match="same pin as"):
        hardware_for(text, write_config, isolated_env, mock_factory)


def test_bad_alias_is_a_config_error(write_config, isolated_env, mock_factory):
    with pytest.raises(ConfigError, match=r"boards\.gpio\.aliases\.led: 'GPIO64' is not a GPIO pin name"):
        hardware_for('[boards.gpio.aliases]\nled = "GPIO64"\n', write_config, isolated_env,
                     mock_factory)


TWO_BOARDS_WRONG = """
[boards.gpio.aliases]
pump = "GPIO99"
[boards.gpio.pins]
nosuchpin = { mode = "output" }
pump = { mode = "output" }
GPIO22 = { mode = "output" }
[boards.uno]
type = "arduino"
port = "/dev/null"
[boards.uno.aliases]
fan = "D1"
[boards.uno.pins]
D20 = { mode = "output" }
A0 = { mode = "pwm" }
D13 = { mode = "output" }
"""
TWO_BOARDS_PROBLEMS = [
    "  boards.gpio.aliases.pump: 'GPIO99' is not a GPIO pin name; use names like GPIO17, 17 or BOARD11",
    "  boards.gpio.pins.nosuchpin: 'nosuchpin' is not a GPIO pin name; use names like GPIO17, 17 or BOARD11",
    "  boards.uno.aliases.fan: 'D1': D0 and D1 carry the serial link to the agent",
    "  boards.uno.pins.D20: 'D20' is not an Uno pin; use D2..D13 or A0..A5",
    "  boards.uno.pins.A0: A0 on board uno (arduino) cannot be pwm (it can be: analog)",
]
"""Every problem once, at its dotted key; ``pins.pump`` is the broken alias's, said at the alias."""


def test_every_board_problem_is_reported_at_once_under_the_file(write_config, isolated_env,
                                                                 mock_factory):
    path = write_config(TWO_BOARDS_WRONG)
    with pytest.raises(ConfigError) as wrong:
        hardware_for(TWO_BOARDS_WRONG, write_config, isolated_env, mock_factory)
    assert str(wrong.value).splitlines() == [f"{path}: invalid configuration", *TWO_BOARDS_PROBLEMS]


@pytest.mark.parametrize("command", [["config", "check"], ["run"]])
def test_config_check_and_run_report_every_board_problem_and_exit_2(write_config, isolated_env,
                                                                     command):
    path = write_config(TWO_BOARDS_WRONG)
    out = cli(*command, "--config", str(path), env=isolated_env, stdin="")
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr.splitlines() == [f"edge-cli: {path}: invalid configuration",
                                       *TWO_BOARDS_PROBLEMS], out.stderr
    if command == ["config", "check"]:
        body = json.loads(cli(*command, "--config", str(path), "--json", env=isolated_env).stdout)
        assert (body["ok"], body["exit_code"]) == (False, 2)
        assert body["error"].splitlines()[1:] == TWO_BOARDS_PROBLEMS, body


def test_locate_accepts_names_aliases_and_board_prefix(default_config, mock_factory):
    hw = build_hardware(default_config.config, resident=True, pin_factory=mock_factory)
    assert hw.locate("led") == ("gpio", "GPIO17")
    assert hw.locate("gpio:BOARD11") == ("gpio", "GPIO17")
    assert hw.locate("J8:13") == ("gpio", "GPIO27")
    with pytest.raises(UnknownPin):
        hw.locate("GPIO99")


async def test_resident_start_claims_pins_at_their_safe_level(write_config, isolated_env, mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    await hw.start()
    assert mock_factory.pin(23).state == 1  # safe = on
    assert mock_factory.pin(22).state == 0
    await hw.shutdown()


async def test_max_on_seconds_switches_off_by_itself(write_config, isolated_env, mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    await hw.start()
    await hw.write("GPIO22", True, asker("t"))
    assert mock_factory.pin(22).state == 1
    await asyncio.sleep(0.35)
    assert mock_factory.pin(22).state == 0
    await hw.shutdown()


async def test_one_shot_mode_refuses_what_would_not_hold(write_config, isolated_env, mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory, resident=False)
    await hw.start()
    with pytest.raises(BoardError, match="does not keep a level once this command exits"):
        await hw.write("pump", True, asker("t"))  # the Pi header: no agent, no --hold
    hw.hold_seconds = 5
    with pytest.raises(PolicyDenied, match=r"max_on_seconds = 0.2: .*at most 0.2 s \(--hold 0.2\)"):
        await hw.write("pump", True, asker("t"))  # held longer than max_on_seconds allows
    hw.hold_seconds = 0.1
    await hw.write("pump", True, asker("t"))
    assert mock_factory.pin(22).state == 1
    await hw.shutdown()


ACTIVE_LOW = """
[boards.gpio.aliases]
relay = "GPIO22"
[boards.gpio.pins]
relay = { mode = "output", safe = "off", active_low = true }
GPIO23 = { mode = "pwm", active_low = true }
GPIO5 = { mode = "input", pull = "up", active = "high" }
"""


async def test_active_low_pins_invert_the_line_and_keep_on_off_logical(write_config, isolated_env,
                                                                       mock_factory):
    hw = hardware_for(ACTIVE_LOW, write_config, isolated_env, mock_factory)
    await hw.start()
    assert mock_factory.pin(22).state == 1  # claimed at safe "off": the line is high
    await hw.write("relay", True, asker("t"))
    assert mock_factory.pin(22).state == 0 and (await hw.read("relay", asker("t")))[1] == 1.0
    (gpio,) = hw.status()
    assert {p.name: p.value for p in gpio.pins}["GPIO22"] == 1.0  # status is logical too
    await hw.pwm("GPIO23", 0.25, None, asker("t"))
    assert mock_factory.pin(23).state == pytest.approx(0.75)
    events = []
    hw.subscribe(events.append)
    mock_factory.pin(5).drive_low()  # its switch closes, but it is active high: off
    await asyncio.sleep(0.05)
    assert [(e.pin, e.value) for e in events if e.kind == "input"] == [("GPIO5", 0.0)]
    await hw.shutdown()
    assert mock_factory.pin(22).state == 1  # safe "off" on an active-low relay drives it high


async def test_shutdown_restores_safe_levels(write_config, isolated_env, mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    await hw.start()
    await hw.write("GPIO22", True, asker("t"))
    await hw.write("GPIO23", False, asker("t"))
    await hw.shutdown()
    assert mock_factory.pin(22).state == 0
    assert mock_factory.pin(23).state == 1


async def test_every_actuation_is_told_to_subscribers_whoever_asked(write_config, isolated_env,
                                                                     mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    await hw.start()
    events = []
    unsubscribe = hw.subscribe(events.append)
    await hw.write("pump", True, asker("telegram:42"))
    await hw.pwm("GPIO17", 0.25, None, asker("mqtt:x"))
    await hw.make_safe("GPIO23", asker("cli:me"))
    await asyncio.sleep(0.35)  # pump's max_on_seconds runs out
    outputs = [(e.board, e.pin, e.value) for e in events if e.kind == "output"]
    assert outputs == [("gpio", "GPIO22", 1.0), ("gpio", "GPIO17", 0.25), ("gpio", "GPIO23", 1.0),
                       ("gpio", "GPIO22", 0.0)]
    assert hw.events() == []  # our own actuations are logged, not board reports
    unsubscribe()
    await hw.write("pump", True, asker("t"))
    assert len([e for e in events if e.kind == "output"]) == 4
    await hw.shutdown()


async def test_a_failing_output_subscriber_does_not_fail_the_actuation(write_config, isolated_env,
                                                                       mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    await hw.start()

    def broken(event):
        raise RuntimeError("observer bug")

    hw.subscribe(broken)
    await hw.write("pump", True, asker("t"))
    assert mock_factory.pin(22).state == 1
    await hw.shutdown()


async def test_input_events_are_recorded_and_reach_the_prompt(default_config, mock_factory):
    from edge.agent.prompt import hardware_section

    hw = build_hardware(default_config.config, resident=True, pin_factory=mock_factory)
    await hw.start()
    mock_factory.pin(27).drive_low()
    for _ in range(100):
        if hw.events():
            break
        await asyncio.sleep(0.01)
    (event,) = hw.events()
    assert (event["board"], event["kind"], event["pin"], event["value"]) == \
        ("gpio", "input", "GPIO27", 1.0)  # the pulled-up button pressed: on
    assert event["shown"] == "button on (switch closed: line low, pulled up)"
    from edge.status import format_status

    text = format_status({"daemon": {"running": True, "version": "x", "pid": 1},
                          "board_events": hw.events()}, full=True)
    assert ": gpio input button on (switch closed: line low, pulled up)" in text
    section = hardware_section(hw.status(), hw.pin_list(), hw.events())
    assert "Recent events reported by the boards" in section
    assert "gpio input button on (switch closed: line low, pulled up)" in section
    await hw.shutdown()


@pytest.mark.parametrize("text, error", [
    ('[boards.gpio.pins]\nGPIO5 = { mode = "output", safe = "on", max_on_seconds = 5 }\n',
     r"safe = \"on\" and max_on_seconds contradict"),
    ('[boards.gpio.aliases]\nGPIO5 = "GPIO17"\n[boards.gpio.pins]\nGPIO17 = { mode = "output" }\n',
     r"boards\.gpio\.aliases\.GPIO5: 'GPIO5' is the name of pin GPIO5 but would mean GPIO17"),
    ('[boards.gpio.pins]\nGPIO5 = { mode = "analog" }\n',
     r"boards\.gpio\.pins\.GPIO5: GPIO5 on board gpio \(gpio\) cannot be analog"),
])
def test_config_that_cannot_be_honoured_is_a_config_error(text, error, write_config, isolated_env,
                                                          mock_factory):
    with pytest.raises(ConfigError, match=error):
        hardware_for(text, write_config, isolated_env, mock_factory)


async def test_readonly_refuses_every_actuation_whoever_asks(write_config, isolated_env, mock_factory):
    from edge.tools.gpio import hardware_tools

    text = '[security]\nautonomy = "readonly"\n' + TIMED
    hw = hardware_for(text, write_config, isolated_env, mock_factory)
    await hw.start()
    tools = {t.name: t for t in hardware_tools(hw)}
    refused = await tools["gpio_write"].execute({"pin": "GPIO23", "value": "off"}, asker("cli:root"))
    assert not refused.success and "autonomy is readonly" in refused.error
    assert mock_factory.pin(23).state == 1  # still at its safe level
    read = await tools["gpio_read"].execute({"pin": "GPIO23"}, asker("cli:root"))
    assert read.success
    await hw.shutdown()


def test_safe_levels_are_line_levels_kept_with_the_hardware(write_config, isolated_env, mock_factory):
    assert hardware_for(TIMED, write_config, isolated_env, mock_factory).safe_levels("gpio") == \
        {"GPIO22": False, "GPIO23": True}
    low = hardware_for(ACTIVE_LOW, write_config, isolated_env, mock_factory)
    assert low.safe_levels("gpio") == {"GPIO22": True}  # safe "off" on an active-low relay: high
    assert low.safe_levels("other") == {}
    assert {p.rule.label for p in low.pin_list()} == {"gpio:GPIO22 (relay)", "gpio:GPIO23", "gpio:GPIO5"}


def test_status_and_doctor_show_a_board_warning(monkeypatch):
    from edge.doctor.agent import check_boards
    from edge.status import format_status

    board = {"name": "uno", "kind": "arduino", "connected": True, "simulated": False,
             "detail": "StandardFirmata 2.4", "pins": [],
             "info": {"watchdog": "none", "warning": "no firmware watchdog: D13 stay as they are"}}
    text = format_status({"daemon": {"running": True, "version": "x", "pid": 1}, "boards": [board]},
                         full=True)
    assert "warning: no firmware watchdog" in text

    class Loaded:
        class config:
            boards = {"uno": object()}

    monkeypatch.setattr("edge.doctor.agent.board_statuses", lambda loaded: ([board], "running agent"))
    check = check_boards(Loaded())
    assert check.status == "warn" and "no firmware watchdog" in check.detail and "firmware flash" in check.fix


async def test_a_cancelled_turn_never_leaves_an_output_on_without_its_timer(mock_factory):
    from edge.hardware import Hardware, Pin
    from edge.security.policy import SecurityPolicy
    from peripherals.base import PinMode
    from peripherals.gpio import GpioBoard

    class SlowLink(GpioBoard):  # a write that takes a while, like a serial round trip
        async def write(self, pin: str, value: bool) -> None:
            await asyncio.sleep(0.2)
            await super().write(pin, value)

    pump = Pin("gpio", "GPIO22", PinMode.OUTPUT, safe=False, max_on_seconds=0.4)
    hw = Hardware({"gpio": SlowLink("gpio", pin_factory=mock_factory)}, [pump],
                  SecurityPolicy([pump.rule]), resident=True)
    await hw.start()
    turn = asyncio.create_task(hw.write("GPIO22", True, asker("telegram:42")))
    await asyncio.sleep(0.05)
    turn.cancel()  # /stop, a newer message or the turn's timeout, mid-write
    with pytest.raises(asyncio.CancelledError):
        await turn
    await asyncio.sleep(0.3)
    assert mock_factory.pin(22).state == 1  # the write was not cut half way...
    await asyncio.sleep(0.5)
    assert mock_factory.pin(22).state == 0  # ...and its auto-off timer was armed before it
    await hw.shutdown()


async def test_a_hold_longer_than_max_on_seconds_is_refused_by_the_door(write_config, isolated_env,
                                                                       mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)  # a running agent's
    await hw.start()
    with pytest.raises(PolicyDenied, match=r"^gpio:GPIO22 \(pump\) has max_on_seconds = 0.2: it "
                       r"goes off after 0.2 s, before a hold of 5 s ends; hold it for at most "
                       r"0.2 s \(--hold 0.2\), or raise max_on_seconds in \[boards.gpio.pins\]$"):
        await hw.write("pump", True, asker("cli:me"), hold_seconds=5)
    assert mock_factory.pin(22).state == 0
    refused = hw.last_actuation[("gpio", "GPIO22")]
    assert refused.outcome == "refused" and "max_on_seconds = 0.2" in refused.reason
    await hw.write("pump", False, asker("cli:me"), hold_seconds=5)  # off: nothing to cut short
    await hw.write("pump", True, asker("cli:me"), hold_seconds=0.2)
    assert mock_factory.pin(22).state == 1
    # the same check, for callers that name a pin and a hold before anything acts
    assert "at most 0.2 s (for 0.2s)" in hw.hold_refusal("pump", 500, advice="for {limit:g}s")
    assert hw.hold_refusal("pump", 0.2) is None and hw.hold_refusal("GPIO23", 500) is None
    with pytest.raises(UnknownPin):
        hw.hold_refusal("GPIO99", 1)
    await hw.shutdown()


def test_an_unknown_pin_or_board_is_said_once_with_what_there_is(write_config, isolated_env,
                                                                  mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    with pytest.raises(UnknownPin) as unknown:
        hw.locate("nosuchpin")
    assert str(unknown.value) == ("'nosuchpin' is not a pin on board gpio; the allowlisted pins "
                                  "are gpio:GPIO22 (pump), gpio:GPIO23, gpio:GPIO17")
    with pytest.raises(UnknownPin, match=r"^there is no board 'uno' \(boards: gpio\); write "
                                         "BOARD:PIN with one of them"):
        hw.locate("uno:D2")
    assert hw.locate("J8:13") == ("gpio", "GPIO27")  # a header name with a colon is still a pin


async def test_values_say_what_they_are(write_config, isolated_env, mock_factory):
    hw = hardware_for(TIMED, write_config, isolated_env, mock_factory)
    await hw.start()
    await hw.pwm("BOARD11", 0.25, None, asker("t"))
    rule, value = await hw.read("BOARD11", asker("t"))
    assert hw.value_of(rule, value).sentence == "gpio:GPIO17 is at PWM duty 0.25"
    rule, value = await hw.read("GPIO23", asker("t"))
    assert hw.value_of(rule, value).sentence == "gpio:GPIO23 is on"
    await hw.shutdown()


@pytest.mark.parametrize("text,detail", [
    ("", "simulated pins (simulate is on by default; set [boards.gpio] simulate = false on a Pi "
         "to drive the real header)"),
    ("[boards.gpio]\nsimulate = true\n", "simulated pins (simulate = true; set [boards.gpio] "
                                         "simulate = false on a Pi to drive the real header)"),
])
def test_status_says_how_the_config_made_the_pins_simulated(write_config, isolated_env, text,
                                                            detail):
    cfg = load_config(str(write_config(text)), env=isolated_env).config
    (board,) = build_hardware(cfg, resident=False).status()
    assert board.simulated and board.detail == detail
