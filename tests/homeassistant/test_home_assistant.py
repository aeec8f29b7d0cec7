"""A real Home Assistant core (tests/homeassistant/harness.py) on a real Mosquitto takes every
entity the agent announces, controls the agent's pins through them, sees the pins change, and
logs no warning about any of it.

The agent is ``edge-cli run`` on mock Pi-header pins and an emulated Uno (simavr) with every kind
of entity (conftest.py's AGENT); what it announced is read back from the broker's retained
discovery configs, and Home Assistant is asked through its REST API (and its entity registry
through the websocket API the frontend uses)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.emulation.simavr import SimAvr
from tests.helpers import wait_for
from tests.homeassistant.conftest import DISCOVERY_PREFIX, NODE, Agent
from tests.homeassistant.harness import HomeAssistant

pytestmark = pytest.mark.emulator

BASE = f"edge-agent/{NODE}"
MAY_BE_UNKNOWN = frozenset({"event"})
"""Domains whose state is ``unknown`` until something happens (an event entity before its first
event); every other entity has a state as soon as the agent is online."""


def registry(ha: HomeAssistant) -> dict[str, dict[str, Any]]:
    """unique_id -> entity registry entry, for the MQTT platform's entities."""
    entries = ha.websocket("config/entity_registry/list")
    return {e["unique_id"]: e for e in entries if e["platform"] == "mqtt"}


def accepted(agent: Agent, ha: HomeAssistant, timeout: float = 20.0) -> dict[str, str]:
    """unique_id -> entity_id of every announced entity, once Home Assistant has them all;
    AssertionError naming the configs it did not take."""
    wanted = {body["unique_id"]: topic for topic, body in agent.discovery.items()}
    deadline = time.monotonic() + timeout
    while True:
        have = registry(ha)
        if wanted.keys() <= have.keys() or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    missing = {uid: agent.discovery[topic] for uid, topic in wanted.items() if uid not in have}
    assert not missing, (f"Home Assistant did not create {len(missing)} of {len(wanted)} announced "
                         f"entities: {missing}\nits log:\n{ha.output()}")
    return {uid: have[uid]["entity_id"] for uid in wanted}


def entity(agent: Agent, ha: HomeAssistant, state_topic: str) -> str:
    """The entity_id of the entity whose state is on ``state_topic``."""
    (body,) = [b for b in agent.discovery.values() if b.get("state_topic") == state_topic]
    return accepted(agent, ha)[body["unique_id"]]


def our_words(agent: Agent, ha: HomeAssistant) -> list[str]:
    """What a log line about our entities would mention."""
    ids = accepted(agent, ha)
    return ["mqtt", f"{DISCOVERY_PREFIX}/", NODE, "edge-agent", *ids, *ids.values()]


def test_every_announced_entity_is_in_home_assistant_and_available(agent: Agent,
                                                                   home_assistant: HomeAssistant) -> None:
    kinds = {topic.split("/")[1] for topic in agent.discovery}
    assert {"switch", "light", "number", "binary_sensor", "sensor"} <= kinds, kinds
    ids = accepted(agent, home_assistant)
    assert len(ids) == len(agent.discovery) == len(set(ids.values()))
    entries = registry(home_assistant)
    enabled = {entity_id for uid, entity_id in ids.items() if entries[uid]["disabled_by"] is None}

    def settled() -> dict[str, str]:
        states = home_assistant.states()
        return {e: states[e]["state"] if e in states else "(no state)" for e in enabled}

    def all_available() -> bool:
        return all(state not in ("unavailable", "(no state)") and
                   (state != "unknown" or e.split(".")[0] in MAY_BE_UNKNOWN)
                   for e, state in settled().items())

    try:
        wait_for(all_available, timeout=15, interval=0.2)
    except AssertionError:
        bad = {e: s for e, s in settled().items()
               if s in ("unavailable", "(no state)") or (s == "unknown" and e.split(".")[0] not in MAY_BE_UNKNOWN)}
        raise AssertionError(f"{len(bad)} of {len(enabled)} entities have no usable state: {bad}") from None


def test_the_switch_light_and_servo_are_driven_from_home_assistant(agent: Agent,
                                                                   home_assistant: HomeAssistant,
                                                                   uno: SimAvr) -> None:
    ha = home_assistant
    pump = entity(agent, ha, f"{BASE}/pump")
    ha.call("switch", "turn_on", entity_id=pump)
    wait_for(lambda: agent.gpio_read("pump")["value"] == 1, timeout=10)
    ha.wait_state(pump, "on")
    ha.call("switch", "turn_off", entity_id=pump)
    wait_for(lambda: agent.gpio_read("pump")["value"] == 0, timeout=10)
    ha.wait_state(pump, "off")

    lamp = entity(agent, ha, f"{BASE}/lamp")
    ha.call("light", "turn_on", entity_id=lamp, brightness_pct=40)
    wait_for(lambda: agent.gpio_read("lamp")["value"] == pytest.approx(0.4), timeout=10)
    ha.wait_state(lamp, "on", brightness=102)  # 40 % of 255
    ha.call("light", "turn_off", entity_id=lamp)
    wait_for(lambda: agent.gpio_read("lamp")["value"] == 0, timeout=10)
    ha.wait_state(lamp, "off")

    arm = entity(agent, ha, f"{BASE}/arm")
    ha.call("number", "set_value", entity_id=arm, value=90)
    wait_for(lambda: agent.gpio_read("arm")["value"] == 90, timeout=10)
    wait_for(lambda: float(ha.state(arm)["state"]) == 90, timeout=10)


def test_inputs_and_readings_reach_home_assistant(agent: Agent, home_assistant: HomeAssistant,
                                                  uno: SimAvr) -> None:
    ha = home_assistant
    button = entity(agent, ha, f"{BASE}/button")
    uno.drive("D2", 1)
    ha.wait_state(button, "on")
    uno.drive("D2", 0)
    ha.wait_state(button, "off")

    energy = entity(agent, ha, f"{BASE}/sensor/energy/energy")
    soil = entity(agent, ha, f"{BASE}/sensor/soil/temperature")
    wait_for(lambda: abs(float(ha.state(energy)["state"]) - 20) < 0.5, timeout=10)
    assert ha.state(energy)["attributes"]["unit_of_measurement"] == "kWh"
    wait_for(lambda: abs(float(ha.state(soil)["state"]) - 21.5) < 0.6, timeout=10)
    assert ha.state(soil)["attributes"]["unit_of_measurement"] == "°C"
    uno.set_adc("A2", 300)  # 30 °C
    wait_for(lambda: abs(float(ha.state(soil)["state"]) - 30) < 0.6, timeout=10)

    knob = entity(agent, ha, f"{BASE}/knob")
    uno.set_adc("A0", 1000)  # 0.2 of the reference, from 0.5
    wait_for(lambda: abs(float(ha.state(knob)["state"]) - 0.2) < 0.01, timeout=10)


def test_home_assistant_logs_no_warning_about_our_entities(agent: Agent,
                                                          home_assistant: HomeAssistant) -> None:
    """Last in the module: everything above has happened by now."""
    time.sleep(1.0)  # the replies to the last commands are in
    problems = home_assistant.problems(our_words(agent, home_assistant))
    assert not problems, (f"Home Assistant logged {len(problems)} warnings about the agent's "
                          "entities:\n" + "\n".join(problems))
