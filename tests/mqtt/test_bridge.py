"""The bridge on a real Mosquitto: commands switch gpiozero's mock pins through the one door,
refusals show on ``refused``, every change is published whoever made it, bad input changes
nothing, a retained command never acts again, and a broker that goes away is reconnected."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from contextlib import asynccontextmanager

import aiomqtt
import pytest

from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from edge.sensors import DriverMeasure, SensorHub, SensorState
from peripherals.sensors.pi_health import PiHealthSensor
from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.helpers import asker, until
from tests.mqtt.feeds import Feed

BASE = "edge-agent/kitchen"
PINS = """
[boards.gpio.aliases]
led = "GPIO17"
pump = "GPIO22"
fan = "GPIO18"
button = "GPIO27"
[boards.gpio.pins]
led = {{ mode = "output", safe = "off" }}
pump = {{ mode = "output", safe = "off", max_on_seconds = 0.3 }}
fan = {{ mode = "pwm" }}
button = {{ mode = "input" }}
[mqtt]
url = "{url}"
node_id = "kitchen"
reconnect_max_seconds = 0.5
{extra}
"""


@asynccontextmanager
async def running(broker, write_config, env, factory, extra="", security="", sensors=None):
    text = PINS.format(url=broker.url, extra=extra) + security
    config = load_config(str(write_config(text)), env=env).config
    hardware = build_hardware(config, resident=True, pin_factory=factory)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware, sensors=sensors)
    await bridge.start()
    try:
        await until(lambda: bridge.connected)
        yield hardware, bridge
    finally:
        await bridge.close()
        await hardware.shutdown()


async def test_a_set_switches_the_pin_and_its_state_is_published(broker, write_config,
                                                                 isolated_env, mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        assert await seen.wait(f"{BASE}/availability") == b"online"
        await seen.wait(f"{BASE}/led", "OFF")
        await seen.publish(f"{BASE}/led/set", "ON")
        await seen.wait(f"{BASE}/led", "ON")
        assert mock_factory.pin(17).state == 1
        await seen.publish(f"{BASE}/fan/set", "40")
        await seen.wait(f"{BASE}/fan/duty", "40")
        assert mock_factory.pin(18).state == pytest.approx(0.4)
        assert (await seen.wait(f"{BASE}/fan")) == b"OFF"  # its state before, retained
        await seen.wait(f"{BASE}/fan", "ON")


async def test_changes_from_any_door_are_published(broker, write_config, isolated_env, mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        await seen.wait(f"{BASE}/pump", "OFF")
        mark = len(seen.messages)
        await hardware.write("pump", True, asker("telegram:42"))  # a chat command
        await seen.wait(f"{BASE}/pump", "ON", after=mark)
        await seen.wait(f"{BASE}/pump", "OFF", after=mark)  # max_on_seconds ran out
        mock_factory.pin(27).drive_low()  # the pull-up button pressed
        await seen.wait(f"{BASE}/button", "ON", after=mark)
        event = json.loads(await seen.wait(f"{BASE}/events"))
        assert (event["kind"], event["pin"], event["value"]) == ("input", "button", 1.0)  # on


async def test_a_set_outside_the_allowlist_finds_nothing(broker, write_config, isolated_env,
                                                        mock_factory):
    """Only published pins have command topics: ``GPIO5/set`` reaches no one (the bridge does
    not subscribe to it), so it changes nothing and draws no answer."""
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        for name in ("GPIO5", "nothing-here", "bad name!"):
            await seen.publish(f"{BASE}/{name}/set", "ON")
        await seen.publish(f"{BASE}/led/set", "ON")
        await seen.wait(f"{BASE}/led", "ON")
        assert mock_factory.pin(5).state == 0 and seen.payloads(f"{BASE}/refused") == []
        assert bridge.counts["commands"] == 1


async def test_the_policy_applies_to_mqtt_readonly_and_rate_limits(broker, write_config,
                                                                  isolated_env, mock_factory):
    readonly = '[security]\nautonomy = "readonly"\n'
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory, security=readonly):
        await seen.publish(f"{BASE}/led/set", "ON")
        assert "readonly" in json.loads(await seen.wait(f"{BASE}/refused"))["reason"]
        assert mock_factory.pin(17).state == 0
    limited = "[security]\nmax_actuations_per_minute = 2\n"
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory, security=limited):
        for word in ("ON", "OFF", "ON"):
            await seen.publish(f"{BASE}/led/set", word)
        refusal = json.loads(await seen.wait(f"{BASE}/refused"))
        assert "rate limit: mqtt:edge-agent/kitchen/led/set" in refusal["reason"]
        assert mock_factory.pin(17).state == 0


async def test_modes_and_max_on_timers_apply_to_mqtt(broker, write_config, isolated_env,
                                                     mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory):
        await seen.publish(f"{BASE}/button/set", "ON")
        assert "does not allow write" in json.loads(await seen.wait(f"{BASE}/refused"))["reason"]
        mark = len(seen.messages)
        await seen.publish(f"{BASE}/pump/set", "ON")
        await seen.wait(f"{BASE}/pump", "ON", after=mark)
        await seen.wait(f"{BASE}/pump", "OFF", after=mark)  # max_on_seconds = 0.3
        assert mock_factory.pin(22).state == 0


@pytest.mark.parametrize("topic, payload, why", [
    ("led/set", "maybe", "takes ON or OFF"),
    ("led/set", b"\xff\xfe", "not UTF-8"),
    ("fan/set", "150", "duty from 0 to 100"),
    ("fan/set", "nan", "duty from 0 to 100"),
    ("led/set", "O" * 2000, "payload too large"),
    ("button/set", "ON", "does not allow write"),
])
async def test_bad_input_changes_nothing(topic, payload, why, broker, write_config, isolated_env,
                                         mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        await seen.publish(f"{BASE}/led/set/extra", "ON")  # not a command topic: ignored
        await seen.publish(f"{BASE}/{topic}", payload)
        refusal = json.loads(await seen.wait(f"{BASE}/refused"))
        assert why in refusal["reason"]
        assert mock_factory.pin(17).state == 0 and mock_factory.pin(18).state == 0
        await seen.publish(f"{BASE}/led/set", "ON")  # and the bridge still works
        await seen.wait(f"{BASE}/led", "ON")


async def test_a_huge_message_never_reaches_the_agent(broker, write_config, isolated_env,
                                                      mock_factory):
    """The broker knows the largest packet the agent takes (MQTT 5 Maximum Packet Size) and
    drops a bigger one: it costs the Pi nothing, and the agent keeps working."""
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        await seen.publish(f"{BASE}/led/set", b"O" * 2_000_000)
        await seen.publish(f"{BASE}/led/set", "ON")
        await seen.wait(f"{BASE}/led", "ON")
        assert bridge.counts["commands"] == 1 and bridge.connected
        assert seen.payloads(f"{BASE}/refused") == []


async def test_a_retained_command_from_before_a_restart_does_not_act(broker, write_config,
                                                                     isolated_env, mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen:
        await seen.publish(f"{BASE}/led/set", "ON", retain=True)  # left on the broker
        async with running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
            await seen.wait(f"{BASE}/led", "OFF")
            await asyncio.sleep(0.2)
            assert mock_factory.pin(17).state == 0 and bridge.counts["ignored"] == 1
        async with running(broker, write_config, isolated_env, mock_factory,
                           extra="accept_retained_commands = true") as (hardware, bridge):
            await until(lambda: mock_factory.pin(17).state == 1)
        await seen.publish(f"{BASE}/led/set", "", retain=True)  # clear it


async def test_publish_only_subscribes_to_nothing(broker, write_config, isolated_env, mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory,
                    extra="allow_commands = false") as (hardware, bridge):
        await seen.wait(f"{BASE}/led", "OFF")
        await seen.publish(f"{BASE}/led/set", "ON")
        await asyncio.sleep(0.3)
        assert mock_factory.pin(17).state == 0 and seen.payloads(f"{BASE}/refused") == []
        assert bridge.status()["commands_allowed"] is False


async def test_a_broker_that_goes_away_is_reconnected_and_everything_republished(
        tmp_path, write_config, isolated_env, mock_factory):
    broker = Mosquitto(tmp_path / "broker").start()
    try:
        async with running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
            await hardware.write("led", True, asker("cli:me"))
            first_since = bridge.status()["since"]
            broker.kill()
            await until(lambda: not bridge.connected)
            assert bridge.status()["last_error"] and bridge.status()["connected"] is False
            await hardware.write("led", False, asker("cli:me"))  # changed while away
            broker.start()  # same port, empty: nothing retained survived
            async with Watcher(broker, f"{BASE}/#", "homeassistant/#") as seen:
                await until(lambda: bridge.connected, timeout=10)
                assert await seen.wait(f"{BASE}/availability") == b"online"
                await seen.wait(f"{BASE}/led", "OFF")  # republished as it is now
                await seen.wait("homeassistant/switch/kitchen/led/config")
                await seen.publish(f"{BASE}/led/set", "ON")
                await until(lambda: mock_factory.pin(17).state == 1)
            status = bridge.status()
            assert status["connects"] == 2 and status["last_error"] is None
            assert status["since"] >= first_since
    finally:
        broker.kill()


async def test_a_broker_restart_shows_the_last_will_meanwhile_then_everything_again(
        tmp_path, write_config, isolated_env, mock_factory):
    """Home Assistant keeps a persistent session: across the broker's restart it receives the
    agent's last will (published by the stopping broker), then the agent's return."""
    broker = Mosquitto(tmp_path / "broker", persistence=True).start()
    home_assistant = {"identifier": "home-assistant", "clean_session": False}
    try:
        async with running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
            async with Watcher(broker, f"{BASE}/#", **home_assistant) as seen:
                await seen.wait(f"{BASE}/availability", "online")
            broker.stop()
            await until(lambda: not bridge.connected)
            await hardware.write("led", True, asker("cli:me"))  # while the broker is away
            broker.start()
            async with Watcher(broker, f"{BASE}/#", **home_assistant) as seen:
                await until(lambda: bridge.connected, timeout=10)
                await seen.wait(f"{BASE}/led", "ON")  # republished as it is now
                # A QoS 1 "online" the first session left unacknowledged may come again first
                # (MQTT redelivers it); what matters is the will, then the return after it.
                availability = seen.payloads(f"{BASE}/availability")
                assert b"offline" in availability, availability
                assert b"online" in availability[availability.index(b"offline"):], availability
    finally:
        broker.kill()


async def test_a_clean_stop_publishes_the_safe_levels_then_offline(broker, write_config,
                                                                  isolated_env, mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen:
        async with running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
            await seen.wait(f"{BASE}/availability", "online")
            await seen.publish(f"{BASE}/led/set", "ON")
            await seen.wait(f"{BASE}/led", "ON")
            mark = len(seen.messages)
        await seen.wait(f"{BASE}/availability", "offline", after=mark)
        last = [(t, p) for t, p, _ in seen.messages[mark:] if t in (f"{BASE}/led", f"{BASE}/availability")]
        assert last == [(f"{BASE}/led", b"OFF"), (f"{BASE}/availability", b"offline")]
        assert mock_factory.pin(17).state == 0  # and the shutdown did drive it there


async def test_a_pins_commands_act_in_the_order_they_came(broker, write_config, isolated_env,
                                                         mock_factory):
    limited = "[security]\nmax_actuations_per_minute = 1000\n"
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory, security=limited):
        for duty in range(0, 101, 5):  # a slider dragged in Home Assistant
            await seen.publish(f"{BASE}/fan/set", str(duty))
        await seen.wait(f"{BASE}/fan/duty", "100")
        duties = [int(p) for p in seen.payloads(f"{BASE}/fan/duty")]
        assert duties[-1] == 100 and duties[1:] == sorted(duties[1:])
        assert mock_factory.pin(18).state == pytest.approx(1.0)


async def test_the_bridge_over_tls_with_a_password(tmp_path, write_config, isolated_env,
                                                   mock_factory):
    with Mosquitto(tmp_path / "secure", users={"edge": "s3cret-pw"}, tls=True) as broker:
        env = dict(isolated_env, EDGE_MQTT__PASSWORD="s3cret-pw")
        extra = f'username = "edge"\nca_file = "{broker.ca}"'
        async with running(broker, write_config, env, mock_factory, extra=extra) as (hardware, bridge):
            assert bridge.status()["url"].startswith("mqtts://")
            async with Watcher(broker, f"{BASE}/#", username="edge", password="s3cret-pw",
                               tls_params=aiomqtt.TLSParameters(ca_certs=str(broker.ca))) as seen:
                await seen.publish(f"{BASE}/led/set", "ON")
                await seen.wait(f"{BASE}/led", "ON")
                assert mock_factory.pin(17).state == 1


async def test_close_ends_the_bridge_when_the_client_swallowed_the_cancel(
        broker, write_config, isolated_env, mock_factory):
    """On Python 3.11 ``asyncio.wait_for`` (which the client uses) can let a cancellation pass
    when its operation finishes at the same moment; the bridge then went on to wait for messages,
    and ``close`` (the agent's stop) waited for it for ever."""
    text = PINS.format(url=broker.url, extra="")
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    announcing = asyncio.Event()

    class Swallowing(MqttBridge):
        async def announce(self, client):
            announcing.set()
            # swallowed, as wait_for does when the publish completed together with the cancel
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(30)
            await super().announce(client)

    bridge = Swallowing(config.mqtt, hardware)
    await bridge.start()
    await asyncio.wait_for(announcing.wait(), 5)
    await asyncio.wait_for(bridge.close(), 5)
    assert not bridge.connected


async def test_the_health_is_refreshed_on_its_own_timer_while_readings_flow(
        broker, write_config, isolated_env, mock_factory):
    """A sensor read more often than the health's interval no longer holds the health back (it
    was published only after a minute with nothing else to send: uptime froze)."""
    feed = Feed({"greenhouse": {"temperature": "°C"}})
    async with Watcher(broker, f"{BASE}/health", f"{BASE}/sensor/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory, sensors=feed,
                    extra="health_interval_seconds = 1") as (hardware, bridge):
        first = json.loads(await seen.wait(f"{BASE}/health"))
        later = None
        for step in range(60):  # a reading every 0.1 s, for up to 6 s
            feed.read("greenhouse", "temperature", 20 + step / 10)
            await asyncio.sleep(0.1)
            if len(seen.payloads(f"{BASE}/health")) >= 3:
                later = json.loads(seen.payloads(f"{BASE}/health")[-1])
                break
        assert later is not None, "the health was not refreshed while readings flowed"
        assert later["uptime_seconds"] > first["uptime_seconds"]
        assert len(seen.payloads(f"{BASE}/sensor/greenhouse/temperature")) > 5
        assert "mqtt-health" in [task.name for task in bridge.supervised_tasks()]


async def test_a_failing_sensor_turns_unavailable_and_comes_back(broker, write_config,
                                                                isolated_env, mock_factory,
                                                                tmp_path):
    """Each sensor has its own availability beside the node's: a sensor whose reads fail is
    ``offline`` (Home Assistant greys its entities instead of showing the last value as if it
    were fresh), and ``online`` again with its next good reading."""
    root = tmp_path / "root"
    write_pi_files(root)
    hub = SensorHub([SensorState("host", "pi", DriverMeasure(
        PiHealthSensor("host", root=root, vcgencmd=None)), 0.2)])
    async with Watcher(broker, f"{BASE}/#", "homeassistant/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory, sensors=hub):
        hub.start()
        try:
            await seen.wait(f"{BASE}/host/availability", "online")
            config = json.loads(await seen.wait("homeassistant/sensor/kitchen/host_memory_used/config"))
            assert config["availability"] == [{"topic": f"{BASE}/availability"},
                                              {"topic": f"{BASE}/host/availability"}]
            assert config["availability_mode"] == "all"
            mark = len(seen.messages)
            shutil.rmtree(root)  # every source gone: the reads fail
            await seen.wait(f"{BASE}/host/availability", "offline", after=mark)
            assert hub.rows()[0]["error"]
            mark = len(seen.messages)
            write_pi_files(root)
            await seen.wait(f"{BASE}/host/availability", "online", after=mark)
        finally:
            await hub.aclose()


def write_pi_files(root) -> None:
    for relative, text in {"proc/loadavg": "0.52 0.58 0.59 1/389 12345\n",
                           "proc/meminfo": "MemTotal: 3884328 kB\nMemAvailable: 2913246 kB\n"}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


async def test_a_sensor_not_read_yet_is_unavailable(broker, write_config, isolated_env,
                                                    mock_factory):
    feed = Feed({"soil": {"temperature": "°C"}})
    async with Watcher(broker, f"{BASE}/#") as seen:
        await seen.publish(f"{BASE}/soil/availability", "online", retain=True)  # an earlier run's
        await seen.wait(f"{BASE}/soil/availability", "online")
        mark = len(seen.messages)
        async with running(broker, write_config, isolated_env, mock_factory, sensors=feed):
            await seen.wait(f"{BASE}/soil/availability", "offline", after=mark)
            feed.read("soil", "temperature", 12.5)
            await seen.wait(f"{BASE}/soil/availability", "online", after=mark)
            await seen.wait(f"{BASE}/sensor/soil/temperature", "12.5")


async def test_each_refused_command_is_an_event_in_home_assistant(broker, write_config,
                                                                  isolated_env, mock_factory):
    """Home Assistant's MQTT ``event`` entity on ``<base>/refused`` fires for each refusal (a
    bad payload, the policy, a rate limit, an interlock), with the pin and the reason."""
    limited = "[security]\nmax_actuations_per_minute = 1\n"
    async with Watcher(broker, f"{BASE}/#", "homeassistant/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory, security=limited):
        entity = json.loads(await seen.wait("homeassistant/event/kitchen/refused/config"))
        assert (entity["state_topic"], entity["event_types"]) == (f"{BASE}/refused", ["refused"])
        await seen.publish(f"{BASE}/led/set", "maybe")  # a bad payload
        await seen.publish(f"{BASE}/button/set", "ON")  # an input: the policy refuses
        await seen.publish(f"{BASE}/led/set", "ON")
        await seen.publish(f"{BASE}/led/set", "OFF")  # over the rate limit
        await until(lambda: len(seen.payloads(f"{BASE}/refused")) == 3)
        events = [json.loads(p) for p in seen.payloads(f"{BASE}/refused")]
        assert {e["event_type"] for e in events} == {"refused"}  # HA takes only its event_types
        assert [e["pin"] for e in events] == ["led", "button", "led"]
        assert "takes ON or OFF" in events[0]["reason"]
        assert "does not allow write" in events[1]["reason"]
        assert "rate limit" in events[2]["reason"]
        retained = [r for t, _, r in seen.messages if t == f"{BASE}/refused"]
        assert not any(retained)  # HA ignores a replayed retained event


async def test_a_publish_only_node_announces_no_refusals(broker, write_config, isolated_env,
                                                         mock_factory):
    async with Watcher(broker, "homeassistant/#", f"{BASE}/availability") as seen, \
            running(broker, write_config, isolated_env, mock_factory,
                    extra="allow_commands = false"):
        await seen.wait(f"{BASE}/availability", "online")  # after every discovery config
        assert "homeassistant/switch/kitchen/led/config" in {t for t, _, _ in seen.messages}
        assert "homeassistant/event/kitchen/refused/config" not in {t for t, _, _ in seen.messages}


async def test_inputs_publish_their_logical_state(broker, write_config, isolated_env,
                                                  mock_factory):
    """A pull-up button rests high and reads OFF (it showed ON at rest); pressed (pulled low),
    ON, as the rules' ``pressed``. A pull-down input is ON while high. The pin's ``active`` turns
    it round (a reed contact closed while the door is shut: on while open) and ``device_class``
    says what ON means to Home Assistant."""
    pins = """
[boards.gpio.aliases]
button = "GPIO27"
door = "GPIO5"
float = "GPIO6"
[boards.gpio.pins]
button = {{ mode = "input" }}
door = {{ mode = "input", pull = "up", active = "high" }}
float = {{ mode = "input", pull = "down" }}
[mqtt]
url = "{url}"
node_id = "kitchen"
[mqtt.inputs.door]
device_class = "door"
"""
    config = load_config(str(write_config(pins.format(url=broker.url))), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    try:
        async with Watcher(broker, f"{BASE}/#", "homeassistant/#") as seen:
            await bridge.start()
            await until(lambda: bridge.connected)
            assert await seen.wait(f"{BASE}/button") == b"OFF"  # at rest, pulled up
            assert await seen.wait(f"{BASE}/door") == b"ON"  # at rest, active high: open
            assert await seen.wait(f"{BASE}/float") == b"OFF"  # at rest, pulled down
            door = json.loads(await seen.wait("homeassistant/binary_sensor/kitchen/door/config"))
            assert door["device_class"] == "door"
            button = json.loads(await seen.wait("homeassistant/binary_sensor/kitchen/button/config"))
            assert "device_class" not in button
            mark = len(seen.messages)
            mock_factory.pin(27).drive_low()  # pressed
            mock_factory.pin(5).drive_low()  # the magnet closes the contact: shut
            mock_factory.pin(6).drive_high()
            await seen.wait(f"{BASE}/button", "ON", after=mark)
            await seen.wait(f"{BASE}/door", "OFF", after=mark)
            await seen.wait(f"{BASE}/float", "ON", after=mark)
            mark = len(seen.messages)
            mock_factory.pin(27).drive_high()  # released
            await seen.wait(f"{BASE}/button", "OFF", after=mark)
    finally:
        await bridge.close()
        await hardware.shutdown()
