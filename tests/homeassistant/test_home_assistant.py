"""A real Home Assistant core (tests/homeassistant/harness.py) on a real Mosquitto takes every
entity the agent announces, controls the agent's pins through them, sees the pins change, and
logs no warning about any of it.

The agent is ``edge-cli run`` on mock Pi-header pins and an emulated Uno (simavr) with every kind
of entity (conftest.py's AGENT); what it announced is read back from the broker's retained
discovery configs, and Home Assistant is asked through its REST API (and its entity registry
through the websocket API the frontend uses)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar

import pytest

from tests.emulation.simavr import SimAvr
from tests.helpers import cli
from tests.homeassistant.conftest import DISCOVERY_PREFIX, NODE, Agent, turn_the_vent
from tests.homeassistant.harness import HomeAssistant

pytestmark = [pytest.mark.emulator, pytest.mark.homeassistant]

T = TypeVar("T")

BASE = f"edge-agent/{NODE}"
MAY_BE_UNKNOWN = frozenset({"event", "image"})
"""Domains whose state is ``unknown`` until something happens (an event entity before its first
event, an image before its camera's first picture); every other entity has a state as soon as
the agent is online."""


def eventually(read: Callable[[], T], ok: Callable[[T], bool], what: str, timeout: float = 10.0) -> T:
    """``read()`` once ``ok`` holds for it; AssertionError naming ``what`` and the last value read."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if ok(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still {value!r} after {timeout} s")
        time.sleep(0.05)


def near(target: float, tolerance: float) -> Callable[[str], bool]:
    """A state that is a number within ``tolerance`` of ``target``."""

    def ok(state: str) -> bool:
        try:
            return abs(float(state) - target) <= tolerance
        except ValueError:  # unknown, unavailable
            return False

    return ok


def registry(ha: HomeAssistant) -> dict[str, dict[str, Any]]:
    """unique_id -> entity registry entry, for the MQTT platform's entities."""
    entries = ha.websocket("config/entity_registry/list")
    return {e["unique_id"]: e for e in entries if e["platform"] == "mqtt"}


def accepted(agent: Agent, ha: HomeAssistant, timeout: float = 20.0) -> dict[str, str]:
    """unique_id -> entity_id of every announced entity, once Home Assistant has them all;
    AssertionError naming the configs it did not take."""
    if agent.entity_ids:
        return agent.entity_ids
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
    agent.entity_ids = {uid: have[uid]["entity_id"] for uid in wanted}
    return agent.entity_ids


def entity(agent: Agent, ha: HomeAssistant, state_topic: str) -> str:
    """The entity_id of the entity whose state is on ``state_topic``."""
    found = [b for b in agent.discovery.values() if b.get("state_topic") == state_topic]
    assert len(found) == 1, f"{len(found)} announced entities have the state topic {state_topic}"
    return accepted(agent, ha)[found[0]["unique_id"]]


def our_words(agent: Agent, ha: HomeAssistant) -> list[str]:
    """What a log line about our entities would mention (besides a topic under the discovery
    prefix)."""
    ids = accepted(agent, ha)
    return ["mqtt", NODE, "edge-agent", *ids, *ids.values()]


def unusable(ha: HomeAssistant, entity_ids: Iterable[str]) -> dict[str, str]:
    """The entities among ``entity_ids`` that have no usable state now, with what they show."""
    states = ha.states()
    seen = {e: states[e]["state"] if e in states else "(no state)" for e in entity_ids}
    return {e: state for e, state in seen.items()
            if state in ("unavailable", "(no state)")
            or (state == "unknown" and e.split(".")[0] not in MAY_BE_UNKNOWN)}


def test_every_announced_entity_is_in_home_assistant_and_available(agent: Agent,
                                                                   home_assistant: HomeAssistant) -> None:
    kinds = {topic.split("/")[1] for topic in agent.discovery}
    assert {"switch", "light", "number", "binary_sensor", "sensor", "event"} <= kinds, kinds
    ids = accepted(agent, home_assistant)
    assert len(ids) == len(agent.discovery) == len(set(ids.values()))
    entries = registry(home_assistant)
    assert len({entries[uid]["device_id"] for uid in ids}) == 1  # one device: the node
    enabled = [entity_id for uid, entity_id in ids.items() if entries[uid]["disabled_by"] is None]
    eventually(lambda: unusable(home_assistant, enabled), lambda bad: not bad,
               f"entities without a usable state (of {len(enabled)} enabled)", timeout=15)


def test_home_assistant_shows_each_entity_as_it_was_announced(agent: Agent,
                                                              home_assistant: HomeAssistant) -> None:
    """Home Assistant kept every class, unit and category the agent gave (it drops what it finds
    impossible), and every name reads as words: no snake_case, no word said twice in a row (the
    node's name before a sensor named like it)."""
    ids = accepted(agent, home_assistant)
    entries, states = registry(home_assistant), home_assistant.states()
    differences, names = [], {}
    for body in agent.discovery.values():
        entity_id = ids[body["unique_id"]]
        attributes = states[entity_id]["attributes"] if entity_id in states else {}
        for key in ("device_class", "state_class", "unit_of_measurement"):
            if key in body and attributes.get(key) != body[key]:
                differences.append(f"{entity_id} {key}: announced {body[key]!r}, shows {attributes.get(key)!r}")
        if entries[body["unique_id"]]["entity_category"] != body.get("entity_category"):
            differences.append(f"{entity_id} entity_category: announced {body.get('entity_category')!r}, "
                               f"shows {entries[body['unique_id']]['entity_category']!r}")
        names[entity_id] = attributes.get("friendly_name", "")
    assert not differences, differences
    clumsy = {e: n for e, n in names.items() if not n or "_" in n or re.search(r"\b(\w+) \1\b", n, re.I)}
    assert not clumsy, clumsy


def test_the_switch_light_and_servo_are_driven_from_home_assistant(agent: Agent,
                                                                   home_assistant: HomeAssistant,
                                                                   uno: SimAvr) -> None:
    ha = home_assistant
    pump = entity(agent, ha, f"{BASE}/pump")
    ha.call("switch", "turn_on", entity_id=pump)
    eventually(lambda: agent.gpio_read("pump")["value"], lambda v: v == 1, "pump after turn_on")
    ha.wait_state(pump, "on")
    ha.call("switch", "turn_off", entity_id=pump)
    eventually(lambda: agent.gpio_read("pump")["value"], lambda v: v == 0, "pump after turn_off")
    ha.wait_state(pump, "off")

    lamp = entity(agent, ha, f"{BASE}/lamp")
    ha.call("light", "turn_on", entity_id=lamp, brightness_pct=40)
    eventually(lambda: agent.gpio_read("lamp")["value"], lambda v: v == pytest.approx(0.4),
               "lamp's duty after brightness_pct 40")
    ha.wait_state(lamp, "on", brightness=102)  # 40 % of 255
    ha.call("light", "turn_off", entity_id=lamp)
    eventually(lambda: agent.gpio_read("lamp")["value"], lambda v: v == 0, "lamp after turn_off")
    ha.wait_state(lamp, "off")

    arm = entity(agent, ha, f"{BASE}/arm")
    ha.call("number", "set_value", entity_id=arm, value=90)
    eventually(lambda: agent.gpio_read("arm")["value"], lambda v: v == 90, "the servo's angle")
    eventually(lambda: ha.state(arm)["state"], near(90, 0), f"{arm} in Home Assistant")

    vent = entity(agent, ha, f"{BASE}/vent")  # a servo on the Pi header: a slider over its range
    attributes = ha.state(vent)["attributes"]
    assert (attributes["min"], attributes["max"], attributes["mode"],
            attributes["unit_of_measurement"]) == (10, 120, "slider", "°"), attributes
    ha.call("number", "set_value", entity_id=vent, value=65)
    eventually(lambda: agent.gpio_read("vent")["value"], lambda v: v == 65, "the vent's angle")
    eventually(lambda: ha.state(vent)["state"], near(65, 0), f"{vent} in Home Assistant")


def test_inputs_and_readings_reach_home_assistant(agent: Agent, home_assistant: HomeAssistant,
                                                  uno: SimAvr) -> None:
    ha = home_assistant
    door = entity(agent, ha, f"{BASE}/door")
    ha.wait_state(door, "off")  # a pull-up input at rest is not pressed (its line reads high)
    assert ha.state(door)["attributes"]["device_class"] == "door"
    lid = entity(agent, ha, f"{BASE}/lid")  # active low: on (open) while its line is low
    uno.drive("D2", 1)
    ha.wait_state(lid, "off", device_class="opening")
    uno.drive("D2", 0)
    ha.wait_state(lid, "on")

    energy = entity(agent, ha, f"{BASE}/sensor/energy/energy")
    soil = entity(agent, ha, f"{BASE}/sensor/soil/temperature")
    eventually(lambda: ha.state(energy)["state"], near(20, 0.5), energy)
    assert ha.state(energy)["attributes"]["unit_of_measurement"] == "kWh"
    eventually(lambda: ha.state(soil)["state"], near(21.5, 0.6), soil)
    assert ha.state(soil)["attributes"]["unit_of_measurement"] == "°C"
    uno.set_adc("A2", 300)  # 30 °C
    eventually(lambda: ha.state(soil)["state"], near(30, 0.6), f"{soil} at 300 mV")

    knob = entity(agent, ha, f"{BASE}/knob")
    uno.set_adc("A0", 1000)  # 0.2 of the reference, from 0.5
    eventually(lambda: ha.state(knob)["state"], near(0.2, 0.01), f"{knob} (the raw analog pin) at 1 V")


def test_the_pis_throttling_flags_are_problems_in_home_assistant(agent: Agent,
                                                                home_assistant: HomeAssistant) -> None:
    """vcgencmd (conftest's VCGENCMD) says under-voltage occurred since boot and is not present
    now: a problem shown, and no problem, among the node's diagnostics."""
    ha = home_assistant
    occurred = entity(agent, ha, f"{BASE}/sensor/pi/under_voltage_occurred")
    now = entity(agent, ha, f"{BASE}/sensor/pi/under_voltage")
    shown = ha.wait_state(occurred, "on", device_class="problem")
    ha.wait_state(now, "off", device_class="problem")
    assert occurred.startswith("binary_sensor.") and now.startswith("binary_sensor."), (occurred, now)
    assert "voltage" in shown["attributes"]["friendly_name"].lower(), shown
    category = {e["entity_id"]: e["entity_category"] for e in registry(ha).values()}
    assert category[occurred] == category[now] == "diagnostic"


def test_a_failing_sensor_is_unavailable_in_home_assistant_until_it_reads_again(
        agent: Agent, home_assistant: HomeAssistant, uno: SimAvr) -> None:
    """The Uno unplugged: the sensors read through it go grey in Home Assistant, the rest of
    the node stays; plugged back in, they read again."""
    ha = home_assistant
    energy = entity(agent, ha, f"{BASE}/sensor/energy/energy")
    soil = entity(agent, ha, f"{BASE}/sensor/soil/temperature")
    pump = entity(agent, ha, f"{BASE}/pump")
    eventually(lambda: ha.state(energy)["state"], near(20, 0.5), energy)
    uno.stop()
    # unplugged, the port's name is gone too (as /dev/ttyACM0 goes): the old link would lead to
    # whatever pty the kernel hands out next, another run's emulator on a shared machine
    uno.link.unlink(missing_ok=True)
    for sensor in (energy, soil):
        eventually(partial(ha.state, sensor), lambda s: s["state"] == "unavailable",
                   f"{sensor} with its board unplugged", timeout=15)
    assert ha.state(pump)["state"] == "off"
    uno.start()
    uno.set_adc("A1", 1500)  # 30 kWh
    uno.set_adc("A2", 300)
    eventually(lambda: ha.state(energy)["state"], near(30, 0.5), f"{energy} with its board back", timeout=30)
    eventually(lambda: ha.state(soil)["state"], near(30, 0.6), f"{soil} with its board back", timeout=30)


def test_a_restarted_agent_greys_its_entities_and_brings_the_same_ones_back(
        agent: Agent, home_assistant: HomeAssistant) -> None:
    """``systemctl restart``: while the agent is away every entity is unavailable (it said
    ``offline``), and once it is back the same entities (no new ones) have their states again."""
    ha = home_assistant
    ids = accepted(agent, ha)
    before = dict(agent.discovery)
    agent.stop()
    eventually(lambda: {e: s for e, s in ((e, ha.state(e)["state"]) for e in ids.values()) if s != "unavailable"},
               lambda available: not available, "entities still available with the agent stopped")
    agent.start()
    assert agent.discovery.keys() == before.keys()
    assert registry(ha).keys() == ids.keys()
    vent = f"number.{NODE}_vent"
    eventually(lambda: unusable(ha, ids.values()), lambda bad: set(bad) == {vent},
               "entities without a usable state after the restart, but the unturned servo",
               timeout=15)
    turn_the_vent(agent)
    eventually(lambda: unusable(ha, ids.values()), lambda bad: not bad,
               "entities without a usable state after the restart", timeout=15)


def test_a_refused_command_is_an_event_in_home_assistant(agent: Agent,
                                                         home_assistant: HomeAssistant) -> None:
    """A command the agent cannot carry out (here one published through Home Assistant's own
    mqtt.publish service) fires the node's ``refused`` event entity, saying why."""
    ha = home_assistant
    refused = entity(agent, ha, f"{BASE}/refused")
    before = ha.state(refused)["state"]
    ha.call("mqtt", "publish", topic=f"{BASE}/pump/set", payload="sideways")
    fired = eventually(lambda: ha.state(refused), lambda s: s["state"] != before, f"{refused} after a bad /set")
    assert fired["attributes"]["event_type"] == "refused", fired
    assert fired["attributes"]["pin"] == "pump" and fired["attributes"]["reason"], fired
    assert agent.gpio_read("pump")["value"] == 0


def test_a_cameras_picture_is_its_image_in_home_assistant(agent: Agent,
                                                          home_assistant: HomeAssistant) -> None:
    [body] = [b for b in agent.discovery.values() if b.get("image_topic") == f"{BASE}/camera/bench"]
    image = accepted(agent, home_assistant)[body["unique_id"]]
    assert image.startswith("image.")
    out = cli("camera", "snapshot", "bench", "--output", str(agent.folder / "bench.jpg"),
              env=agent.env)
    assert out.returncode == 0, out.stderr
    eventually(lambda: home_assistant.state(image)["state"], lambda state: state != "unknown",
               f"{image}'s state after a picture")
    token = home_assistant.state(image)["attributes"]["access_token"]
    shown = home_assistant.http.get(f"/api/image_proxy/{image}", params={"token": token})
    assert shown.status_code == 200 and shown.headers["content-type"] == "image/jpeg"
    assert shown.content == (agent.folder / "bench.jpg").read_bytes()


def test_home_assistant_logs_no_warning_about_our_entities(agent: Agent,
                                                          home_assistant: HomeAssistant) -> None:
    """Last in the module: everything above has happened by now."""
    time.sleep(1.0)  # the replies to the last commands are in
    problems = home_assistant.problems(our_words(agent, home_assistant), topics=[DISCOVERY_PREFIX])
    named = sorted({w for w in accepted(agent, home_assistant).values() for p in problems if w in p})
    assert not problems, (f"Home Assistant logged {len(problems)} warnings or errors about MQTT or "
                          f"the node's entities (naming {named or 'no entity id'}):\n" + "\n".join(problems))
