"""Rules end to end on gpiozero's mock pins: what fires, what is refused, what never flaps."""

from __future__ import annotations

import asyncio
import logging

import pytest

from edge.automation.actions import ActionRunner, Surroundings, parse_action
from edge.automation.engine import RuleEngine, build_rules
from edge.automation.rules import ThresholdTrigger, parse_when
from edge.config.loader import load_config
from edge.config.rules import RuleConfig
from edge.core.exc import ConfigError
from edge.core.requester import Requester
from edge.hardware import build_hardware
from peripherals.base import BoardEvent
from peripherals.sensors.base import Reading
from tests.helpers import until

BOARD = """
[boards.gpio.aliases]
led = "GPIO17"
button = "GPIO27"
pump = "GPIO22"
fan = "GPIO23"
door = "GPIO5"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
button = { mode = "input" }
pump = { mode = "output", safe = "off", max_on_seconds = 60 }
fan = { mode = "output", safe = "off" }
door = { mode = "input", pull = "down" }
GPIO6 = { mode = "input", pull = "down", active = "low" }
"""
SENSORS = {"greenhouse": ("temperature", "humidity")}


class Inbox:
    """A notifier that keeps what it was asked to send."""

    def __init__(self):
        self.sent: list[tuple[tuple[str, ...], str]] = []

    async def notify(self, targets, text):
        self.sent.append((tuple(targets), text))
        return 1


@pytest.fixture
def hardware(write_config, isolated_env, mock_factory):
    cfg = load_config(str(write_config(BOARD)), env=isolated_env).config
    return build_hardware(cfg, resident=True, pin_factory=mock_factory)


def where(hw, **kw):
    return Surroundings(hw, kw.get("sensors", SENSORS), frozenset(kw.get("channels", {"telegram"})),
                        kw.get("has_model", False))


def rules(hw, *configs, **kw):
    return build_rules([RuleConfig(**c) for c in configs], where(hw, **kw))


def test_on_is_pressed_is_active_and_rising_is_the_line(hardware):
    """An input is on when it is active: a low line pulled up, a high line pulled down, the
    level ``active`` names; ``pressed`` is ``on``; ``rising``/``falling`` stay electrical."""
    for word, edge in (("pressed", "on"), ("on", "on"), ("released", "off"), ("off", "off")):
        assert parse_when(f"button {word}", hardware, SENSORS).edge == edge
    button = parse_when("button on", hardware, SENSORS)  # pulled up: on at a low line
    assert button.matches(BoardEvent("gpio", "input", "GPIO27", 1.0))  # events come logical
    assert not button.matches(BoardEvent("gpio", "input", "GPIO27", 0.0))
    falling = parse_when("button falling", hardware, SENSORS)
    assert falling.matches(BoardEvent("gpio", "input", "GPIO27", 1.0))  # on: the line fell
    door = parse_when("door on", hardware, SENSORS)  # pulled down: on at a high line
    assert door.holds(1.0) and not door.holds(0.0)
    assert parse_when("door rising", hardware, SENSORS).matches(
        BoardEvent("gpio", "input", "GPIO5", 1.0))
    named = parse_when("GPIO6 on", hardware, SENSORS)  # active = "low" against its pull
    assert named.matches(BoardEvent("gpio", "input", "GPIO6", 1.0))
    assert parse_when("GPIO6 falling", hardware, SENSORS).matches(
        BoardEvent("gpio", "input", "GPIO6", 1.0))


def test_threshold_and_board_triggers_parse(hardware):
    assert parse_when("greenhouse.temperature >= 28.5", hardware, SENSORS) == \
        ThresholdTrigger("greenhouse", "temperature", ">=", 28.5)
    assert parse_when("board gpio down", hardware, SENSORS).kind == "down"


@pytest.mark.parametrize("when, error", [
    ("greenhouse.pressure > 1000", "has no 'pressure'"),
    ("soil.moisture < 30", "no sensor 'soil'"),
    ("led pressed", "output pin; a rule can watch allowlisted input pins"),
    ("GPIO12 on", "not in the allowlist"),
    ("board uno down", "no board 'uno'"),
    ("board gpio exploded", "one of down, up, watchdog"),
    ("when it rains", "is not a trigger"),
])
def test_bad_triggers_say_what_is_wrong(hardware, when, error):
    with pytest.raises(ValueError, match=error):
        parse_when(when, hardware, SENSORS)


def test_unknown_pin_names_the_pin(hardware):
    with pytest.raises(ValueError, match="'GPIO99 on': 'GPIO99' is not a"):
        parse_when("GPIO99 on", hardware, SENSORS)


@pytest.mark.parametrize("text, error", [
    ("gpio write led maybe", "on or off"),
    ("gpio pwm fan 1.5", "between 0 and 1"),
    ("gpio servo arm 90 for 3s", "'for' applies to"),
    ("gpio write led on for ever", "not a duration"),
    ("notify to admins", "needs the text"),
    ("water the plants", "is not an action"),
])
def test_bad_actions_say_what_is_accepted(text, error):
    with pytest.raises(ValueError, match=error):
        parse_action(text)


@pytest.mark.parametrize("config, error", [
    ({"when": "button pressed", "then": "gpio write GPIO24 on"},
     r"rules\.0\.then: rule 'r': .*GPIO24 is not in the allowlist"),
    ({"when": "button pressed", "then": "gpio write button on"}, "configured as input, which does not allow write"),
    ({"when": "button pressed", "then": "gpio write pump on for 2m"}, "max_on_seconds = 60"),
    ({"when": "button pressed", "then": "sensor read soil"}, "no sensor 'soil'"),
    ({"when": "button pressed", "then": "notify to signal:+44 hi"}, "channel 'signal' is not configured"),
    ({"when": "button pressed", "then": "prompt what now?"}, "no model is configured"),
    ({"when": "button pressed", "then": "gpio write led on", "hysteresis": 1}, "hysteresis applies"),
])
def test_rules_the_policy_or_the_setup_forbid_are_config_errors(hardware, config, error):
    with pytest.raises(ConfigError, match=error):
        rules(hardware, {"name": "r", **config})


def test_readonly_autonomy_refuses_every_rule_that_actuates(write_config, isolated_env, mock_factory):
    cfg = load_config(str(write_config(BOARD + '[security]\nautonomy = "readonly"\n')),
                      env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    with pytest.raises(ConfigError, match="autonomy is readonly"):
        rules(hw, {"name": "r", "when": "button pressed", "then": "gpio write led on"})


async def test_a_button_press_switches_a_pin_as_the_rule(hardware, mock_factory, caplog):
    caplog.set_level(logging.INFO)
    engine = RuleEngine(rules(hardware, {"name": "lamp", "when": "button pressed",
                                         "then": ["gpio write led on"]}),
                        ActionRunner(hardware, Inbox()), Inbox())
    await hardware.start()
    hardware.subscribe(engine.on_event)
    try:
        mock_factory.pin(27).drive_low()
        await until(lambda: mock_factory.pin(17).state == 1)
        await until(lambda: engine.rows()[0]["last_result"] == "gpio write led on")
        assert "by=rule:lamp" in caplog.text
    finally:
        await engine.aclose()
        await hardware.shutdown()


async def test_for_seconds_needs_the_level_to_hold(hardware, mock_factory):
    engine = RuleEngine(rules(hardware, {"name": "held", "when": "button pressed",
                                         "for_seconds": 0.15, "then": "gpio write led on"}),
                        ActionRunner(hardware, Inbox()), Inbox())
    await hardware.start()
    hardware.subscribe(engine.on_event)
    try:
        mock_factory.pin(27).drive_low()
        mock_factory.pin(27).drive_high()  # let go at once: nothing
        await asyncio.sleep(0.3)
        assert mock_factory.pin(17).state == 0 and engine.rules[0].state.fired == 0
        mock_factory.pin(27).drive_low()  # held
        await until(lambda: mock_factory.pin(17).state == 1)
    finally:
        await engine.aclose()
        await hardware.shutdown()


async def test_a_flapping_input_fires_once_per_cooldown(hardware, mock_factory):
    inbox = Inbox()
    engine = RuleEngine(rules(hardware, {"name": "bell", "when": "door changes",
                                         "cooldown_seconds": 60, "then": "notify door {event}"}),
                        ActionRunner(hardware, inbox), inbox)
    await hardware.start()
    hardware.subscribe(engine.on_event)
    try:
        for _ in range(20):
            mock_factory.pin(5).drive_high()
            mock_factory.pin(5).drive_low()
        await until(lambda: inbox.sent)
        await asyncio.sleep(0.1)
        assert len(inbox.sent) == 1 and engine.rules[0].state.suppressed == 39
        assert inbox.sent[0] == (("admins",), "door door changes")
    finally:
        await engine.aclose()
        await hardware.shutdown()


async def test_a_threshold_with_hysteresis_does_not_flap(hardware, mock_factory):
    clock = [0.0]
    engine = RuleEngine(
        rules(hardware, {"name": "fan", "when": "greenhouse.temperature > 28", "hysteresis": 1,
                         "cooldown_seconds": 0, "then": "gpio write fan on",
                         "on_clear": "gpio write fan off"}),
        ActionRunner(hardware, Inbox()), Inbox(), clock=lambda: clock[0])
    await hardware.start()
    fan = mock_factory.pin(23)
    switched = []
    try:
        for value in [27.0, 28.4, 28.1, 27.9, 28.3, 27.5, 27.2, 28.2, 26.8, 27.9, 28.0, 26.9]:
            clock[0] += 30
            engine.on_reading("greenhouse", Reading("temperature", value, "°C"))
            await asyncio.sleep(0.02)
            if not switched or switched[-1] != fan.state:
                switched.append(fan.state)
        assert switched == [0, 1, 0]  # on at 28.4, off only at 26.8; 28.0 is not above 28
        assert engine.rules[0].state.fired == 1
    finally:
        await engine.aclose()
        await hardware.shutdown()


async def test_a_threshold_must_hold_for_seconds(hardware, mock_factory):
    clock = [0.0]
    engine = RuleEngine(
        rules(hardware, {"name": "hot", "when": "greenhouse.temperature > 28", "for_seconds": 120,
                         "then": "gpio write fan on"}),
        ActionRunner(hardware, Inbox()), Inbox(), clock=lambda: clock[0])
    await hardware.start()
    try:
        for at, value in [(0, 29), (60, 27), (90, 29), (150, 29.5)]:
            clock[0] = at
            engine.on_reading("greenhouse", Reading("temperature", value, "°C"))
        await asyncio.sleep(0.05)
        assert mock_factory.pin(23).state == 0  # over since 90 s: only 60 s
        clock[0] = 211
        engine.on_reading("greenhouse", Reading("temperature", 29.1, "°C"))
        await until(lambda: mock_factory.pin(23).state == 1)
    finally:
        await engine.aclose()
        await hardware.shutdown()


async def test_a_refused_action_is_notified_once(write_config, isolated_env, mock_factory):
    cfg = load_config(str(write_config(BOARD + "[security]\nmax_actuations_per_minute = 2\n")),
                      env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    inbox = Inbox()
    engine = RuleEngine(rules(hw, {"name": "spam", "when": "door changes", "cooldown_seconds": 0,
                                   "then": "gpio write led on"}), ActionRunner(hw, inbox), inbox)
    await hw.start()
    hw.subscribe(engine.on_event)
    try:
        for level in [1, 0, 1, 0, 1, 0]:
            mock_factory.pin(5).drive_high() if level else mock_factory.pin(5).drive_low()
            await asyncio.sleep(0.02)
        await until(lambda: engine.rules[0].state.fired == 6)
        await asyncio.sleep(0.05)
        refusals = [text for _, text in inbox.sent if "refused" in text]
        assert len(refusals) == 1 and "rate limit: rule:spam" in refusals[0]
        assert engine.rows()[0]["last_error"].startswith("refused: ")
    finally:
        await engine.aclose()
        await hw.shutdown()


async def test_for_switches_back_and_a_newer_action_replaces_the_hold(hardware, mock_factory):
    runner = ActionRunner(hardware, Inbox())
    await hardware.start()
    try:
        await runner.run(parse_action("gpio write pump on for 0.1s"), Requester("schedule", "w"), {})
        assert mock_factory.pin(22).state == 1
        await until(lambda: mock_factory.pin(22).state == 0)
        await runner.run(parse_action("gpio write pump on for 0.1s"), Requester("schedule", "w"), {})
        await runner.run(parse_action("gpio write pump on for 0.5s"), Requester("schedule", "w"), {})
        await asyncio.sleep(0.25)
        assert mock_factory.pin(22).state == 1  # the first hold was replaced
        await until(lambda: mock_factory.pin(22).state == 0)
    finally:
        await runner.aclose()
        await hardware.shutdown()


@pytest.mark.parametrize("template, context, text", [
    ("{sensor} at {value} {unit}", {"sensor": "pot", "value": 0.4995, "unit": ""}, "pot at 0.4995"),
    ("{sensor} at {value} {unit} now", {"sensor": "pot", "value": 1, "unit": None}, "pot at 1 now"),
    ("{unit} {sensor}", {"sensor": "pot", "unit": ""}, "pot"),
    ("{sensor} at {value} {unit}", {"sensor": "air", "value": 21.5, "unit": "°C"}, "air at 21.5 °C"),
    ("at {time}", {"time": "2026-11-24 06:00"}, "at 2026-11-24 06:00"),
    ("keep  {nope} as written", {}, "keep  {nope} as written"),
])
def test_a_template_leaves_no_double_space_where_a_field_is_empty(template, context, text):
    from edge.automation.actions import fill

    assert fill(template, context) == text
