"""Whoever can publish on the broker, on a real Mosquitto: one pin is one command topic (its
published name; the dozen other spellings of it find nothing), its budget of switches holds
for MQTT, chat and ``edge-cli`` together, the client id cannot be guessed to push the agent off
the broker, and an anonymous plaintext broker that takes commands is warned about."""

from __future__ import annotations

import asyncio
import json
import re
import stat
from itertools import pairwise
from pathlib import Path

from edge.config.model import ChannelsConfig
from edge.status import format_status
from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.helpers import asker, cli, until
from tests.mqtt.test_bridge import BASE, running

SPELLINGS = ["led", "GPIO17", "17", "BOARD11", "J8:11", "BCM17", "WPI0", "gpio:GPIO17",
             "gpio:led", "gpio:17", "gpio:BOARD11", "gpio:BCM17", "gpio:J8:11", "gpio:WPI0"]
"""Every name ``edge-cli gpio write NAME on`` accepts for the pin published as ``led``."""
AGENT = """
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = {{ mode = "output", safe = "off" }}
[mqtt]
url = "{url}"
node_id = "kitchen"
{extra}
"""


def switches(pin) -> int:
    """How many times a gpiozero mock pin changed level."""
    return sum(a.state != b.state for a, b in pairwise(pin.states))


async def test_fourteen_spellings_of_one_pin_switch_it_at_most_its_budget(
        broker, write_config, isolated_env, mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory):
        await seen.wait(f"{BASE}/led", "OFF")
        for round_ in range(10):
            for name in SPELLINGS:
                await seen.publish(f"{BASE}/{name}/set", "ON" if round_ % 2 == 0 else "OFF")
        # the led topic alone: ON OFF ON OFF ON OFF, then ON refused, OFF (no change), ...
        await until(lambda: len(seen.payloads(f"{BASE}/refused")) >= 2)
        await asyncio.sleep(0.3)
        assert switches(mock_factory.pin(17)) == 6 and mock_factory.pin(17).state == 0
        refusals = [json.loads(p) for p in seen.payloads(f"{BASE}/refused")]
        assert len(refusals) == 2 and {r["topic"] for r in refusals} == {f"{BASE}/led/set"}
        assert re.fullmatch(r"gpio:GPIO17 \(led\): switched 6 times in the last minute "
                            r"\(max_switches_per_minute = 6\); try again in \d+ s",
                            refusals[0]["reason"]), refusals[0]


async def test_only_the_published_name_is_a_command_topic(broker, write_config, isolated_env,
                                                          mock_factory):
    async with Watcher(broker, f"{BASE}/#") as seen, \
            running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        await seen.wait(f"{BASE}/led", "OFF")
        for name in SPELLINGS[1:]:
            await seen.publish(f"{BASE}/{name}/set", "ON")
        await asyncio.sleep(0.3)
        assert mock_factory.pin(17).state == 0 and bridge.counts["commands"] == 0
        assert seen.payloads(f"{BASE}/refused") == []  # nothing answers: nothing is there
        await seen.publish(f"{BASE}/led/set", "ON")
        await seen.wait(f"{BASE}/led", "ON")
        assert mock_factory.pin(17).state == 1 and bridge.counts["commands"] == 1


async def test_the_budget_holds_for_mqtt_chat_and_edge_cli_together(broker, start_agent,
                                                                   isolated_env, mock_factory):
    agent = await start_agent(AGENT.format(url=broker.url, extra=""))
    hardware = agent.runtime.hardware
    async with Watcher(broker, f"{BASE}/#") as seen:
        await seen.wait(f"{BASE}/availability", "online")
        for word in ("ON", "OFF"):  # 2 switches from the broker
            mark = len(seen.messages)
            await seen.publish(f"{BASE}/led/set", word)
            await seen.wait(f"{BASE}/led", word, after=mark)
        await hardware.write("led", True, asker("telegram:42"))  # 3 and 4 from a chat
        await hardware.write("led", False, asker("telegram:42"))
        for word in ("on", "off"):  # 5 and 6 from edge-cli, through the agent's socket
            done = await asyncio.to_thread(cli, "gpio", "write", "led", word, env=isolated_env)
            assert done.returncode == 0, done.stderr
        refused = await asyncio.to_thread(cli, "gpio", "write", "led", "on", env=isolated_env)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "switched 6 times in the last minute (max_switches_per_minute = 6)" in refused.stderr
        await seen.publish(f"{BASE}/led/set", "ON")
        reason = json.loads(await seen.wait(f"{BASE}/refused"))["reason"]
        assert "max_switches_per_minute = 6" in reason
        assert switches(mock_factory.pin(17)) == 6 and mock_factory.pin(17).state == 0


async def test_a_client_that_takes_the_guessable_id_does_not_push_the_agent_off(
        broker, write_config, isolated_env, mock_factory):
    async with running(broker, write_config, isolated_env, mock_factory) as (hardware, bridge):
        async with Watcher(broker, f"{BASE}/#", identifier="edge-agent-kitchen"):
            await asyncio.sleep(0.5)
        assert bridge.connected and bridge.connection.connects == 1
        assert re.fullmatch(r"edge-agent-kitchen-[0-9a-f]{16}", bridge.identifier)


def test_the_client_ids_random_part_is_kept_in_the_state_directory(tmp_path):
    from edge.mqtt.link import CLIENT_SUFFIX_FILE, client_identifier

    first = client_identifier("kitchen", tmp_path / "a")
    kept = tmp_path / "a" / CLIENT_SUFFIX_FILE
    assert re.fullmatch(r"edge-agent-kitchen-[0-9a-f]{16}", first)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text().strip() in first
    assert client_identifier("kitchen", tmp_path / "a") == first  # across restarts
    assert client_identifier("kitchen", tmp_path / "b") != first  # another agent, another id
    kept.write_text("edge-agent-kitchen\n")  # a damaged or planted value is replaced
    assert client_identifier("kitchen", tmp_path / "a") not in (first, "edge-agent-kitchen-")


async def test_the_running_agent_keeps_its_client_id_across_restarts(broker, start_agent,
                                                                     isolated_env):
    agent = await start_agent(AGENT.format(url=broker.url, extra=""))
    first = agent.runtime.mqtt.identifier
    await agent.stop()
    again = await start_agent(AGENT.format(url=broker.url, extra=""))
    assert again.runtime.mqtt.identifier == first != "edge-agent-kitchen"
    assert (Path(isolated_env["EDGE_STATE_DIR"]) / "mqtt-client-id").read_text().strip() in first


async def test_commands_from_an_anonymous_plaintext_broker_are_warned_about(
        broker, start_agent, isolated_env, write_config):
    path = write_config(AGENT.format(url=broker.url, extra=""), "plain.toml")
    checked = await asyncio.to_thread(cli, "config", "check", "--config", str(path),
                                      env=isolated_env)
    assert checked.returncode == 0, checked.stderr
    assert "mqtt: commands are taken over a plaintext connection without credentials" in checked.stderr
    assert "allow_commands = false" in checked.stderr
    agent = await start_agent(AGENT.format(url=broker.url, extra=""))
    await until(lambda: agent.runtime.mqtt.connected)
    status = await agent.runtime.status()
    assert "anyone the broker admits" in status["mqtt"]["warning"]
    assert "  warning: commands are taken over a plaintext" in format_status(status)
    env = dict(isolated_env, EDGE_CONFIG=str(path))
    doctor = json.loads((await asyncio.to_thread(cli, "doctor", "--json", env=env)).stdout)
    (check,) = [c for c in doctor["data"]["checks"] if c["name"] == "mqtt"]
    assert check["status"] == "warn" and "the running agent is connected" in check["detail"]
    assert "anyone the broker admits" in check["detail"] and "mqtts://" in check["fix"]
    publish_only = write_config(AGENT.format(url=broker.url, extra="allow_commands = false"),
                                "quiet.toml")
    quiet = await asyncio.to_thread(cli, "config", "check", "--config", str(publish_only),
                                    env=isolated_env)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr


def test_a_broker_with_tls_and_credentials_draws_no_warning(tmp_path, isolated_env):
    with Mosquitto(tmp_path / "secure", users={"edge": "s3cret-pw"}, tls=True) as broker:
        config = tmp_path / "secure.toml"
        config.write_text(AGENT.format(url=broker.url, extra=f'username = "edge"\n'
                                                             f'ca_file = "{broker.ca}"'))
        env = dict(isolated_env, EDGE_CONFIG=str(config), EDGE_MQTT__PASSWORD="s3cret-pw")
        checked = cli("config", "check", env=env)
        assert checked.returncode == 0 and "warning" not in checked.stderr, checked.stderr
        doctor = json.loads(cli("doctor", "--json", env=env).stdout)
        (check,) = [c for c in doctor["data"]["checks"] if c["name"] == "mqtt"]
        assert check["status"] == "ok", check


async def test_the_chat_topics_model_refusal_names_a_key_that_exists(broker, start_agent):
    config = AGENT.format(url=broker.url, extra="chat = true") + """
[provider]
name = "local"
base_url = "http://127.0.0.1:9/v1"
model = "small"
[[provider.fallbacks]]
name = "remote"
base_url = "http://127.0.0.1:9/v2"
model = "big"
"""
    async with Watcher(broker, f"{BASE}/#") as seen:
        await start_agent(config)
        await seen.wait(f"{BASE}/availability", "online")
        await seen.publish(f"{BASE}/chat", "/model remote")
        reply = (await seen.wait(f"{BASE}/chat/reply", timeout=10)).decode()
    assert "Only an admin can switch the model" in reply, reply
    named = re.findall(r"\[channels\.(\w+)\] admins", reply)
    assert named and all("admins" in getattr(ChannelsConfig(), n).model_dump() for n in named), reply
    assert "edge-cli models use" in reply


def test_a_pin_named_like_the_nodes_own_topics_never_writes_over_them():
    """A pin aliased ``health`` or ``request`` would publish its state over the node's health or
    be read as a request to the node: it gets its board's prefix, as a name two boards share."""
    from edge.hardware.pins import Pin
    from edge.mqtt.topic_names import NODE_TOPICS
    from edge.mqtt.topics import NodePins
    from peripherals.base import PinMode

    pins = [Pin("gpio", f"GPIO{5 + i}", PinMode.OUTPUT, aliases=(name,))
            for i, name in enumerate(sorted(NODE_TOPICS))] + [Pin("gpio", "GPIO27", PinMode.OUTPUT,
                                                                  aliases=("pump",))]
    slugs = set(NodePins.build(pins, ()).by_slug)
    assert slugs == {f"gpio-{name}" for name in NODE_TOPICS} | {"pump"}
