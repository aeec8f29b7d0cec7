"""Local intents, read from the agent's own names: what they understand, and what they leave to
the model (anything with a word they do not know)."""

from __future__ import annotations

import time

import pytest

from edge.agent.intent_turn import vocabulary
from edge.agent.intents import HISTORY, READ, SENSOR, SWITCH, Intent, is_state_question
from edge.hardware import Hardware


@pytest.mark.parametrize(("text", "intent"), [
    ("turn the pump on", Intent(SWITCH, {"pin": "gpio:GPIO22", "value": "on"})),
    ("Switch off the fan.", Intent(SWITCH, {"pin": "gpio:GPIO23", "value": "off"})),
    ("grow light on for half an hour", None),
    ("grow light on for 90 seconds", Intent(SWITCH, {"pin": "gpio:GPIO24", "value": "on"}, 90.0)),
    ("pump off for 10 minutes", None),  # a duration is how long something stays on
    ("turn the button on", None),  # an input
    ("is GPIO22 on?", Intent(READ, {"pin": "gpio:GPIO22"})),
    ("what is the humidity in the greenhouse?", Intent(SENSOR, {"name": "greenhouse"})),
    ("what is the pressure in the greenhouse?", None),  # it measures no pressure
    ("when was the fan last on?", Intent(HISTORY, {"pin": "gpio:GPIO23"})),
    ("turn the pump on or off", None),
    ("turn up the fan", None),
])
async def test_what_the_intents_understand(eval_hardware: Hardware, text: str,
                                           intent: Intent | None) -> None:
    words = vocabulary(eval_hardware, {"greenhouse": {"temperature": "°C", "humidity": "%"}})
    assert words.match(text) == intent


async def test_today_is_since_local_midnight(eval_hardware: Hardware) -> None:
    words = vocabulary(eval_hardware, {})
    noon = time.mktime((2026, 6, 1, 12, 30, 0, 0, 0, -1))
    assert words.match("what did the pump do today?", now=noon) == Intent(
        HISTORY, {"pin": "gpio:GPIO22", "since": "751m"})


@pytest.mark.parametrize(("text", "question"), [
    ("is the pump on", True), ("What's the temperature", True), ("should I water now?", True),
    ("pump on?", True), ("turn the pump on?", False), ("could you switch the fan off?", False),
    ("please turn on the led", False), ("water the plants", False),
])
def test_what_is_a_question_about_state(text: str, question: bool) -> None:
    assert is_state_question(text) is question
