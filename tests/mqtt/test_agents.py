"""Agents as processes (``edge-cli run`` on mock pins) on a real Mosquitto: ``edge-cli mqtt``,
doctor, the last will of a killed agent, and a fleet of 20 nodes, each acting only on its own
topics."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path

from edge.control import client
from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.helpers import EDGE_CLI, ROOT, cli, wait_for

AGENT = """
[memory]
backend = "none"
[channels.cli]
enabled = false
[mqtt]
url = "{url}"
node_id = "{node}"
reconnect_max_seconds = 0.5
{extra}
"""


def agent_env(base_env: dict, folder: Path, url: str, node: str, extra: str = "") -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.toml"
    config.write_text(AGENT.format(url=url, node=node, extra=extra))
    return dict(base_env, EDGE_CONFIG=str(config), EDGE_STATE_DIR=str(folder / "state"))


def start_agent(env: dict) -> subprocess.Popen:
    return subprocess.Popen([*EDGE_CLI, "run"], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def socket_of(env: dict) -> Path:
    return Path(env["EDGE_STATE_DIR"]) / "control.sock"


def wait_started(proc: subprocess.Popen, env: dict, timeout: float = 60) -> None:
    def up():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "agent exited"
        return socket_of(env).exists()

    wait_for(up, timeout, 0.05)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def mqtt_status(env: dict) -> dict:
    return client.request([socket_of(env)], "status")["data"]["mqtt"]


def test_mqtt_test_makes_a_round_trip_and_says_what_is_wrong(tmp_path, isolated_env):
    with Mosquitto(tmp_path / "plain") as broker:
        env = agent_env(isolated_env, tmp_path / "a", broker.url, "n1")
        done = cli("mqtt", "test", "--json", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        data = json.loads(done.stdout)["data"]
        assert data["round_trip_ms"] > 0 and data["node_id"] == "n1"
        doctor = json.loads(cli("doctor", "--json", env=env).stdout)
        (check,) = [c for c in doctor["data"]["checks"] if c["name"] == "mqtt"]
        assert check["status"] == "warn" and "no agent running" in check["detail"], check
        assert "plaintext connection without credentials" in check["detail"]  # anonymous
    with Mosquitto(tmp_path / "secure", users={"edge": "s3cret-pw"}, tls=True) as broker:
        extra = f'username = "edge"\nca_file = "{broker.ca}"'
        env = agent_env(isolated_env, tmp_path / "b", broker.url, "n1", extra)
        good = cli("mqtt", "test", env=dict(env, EDGE_MQTT__PASSWORD="s3cret-pw"))
        assert good.returncode == 0 and "came back in" in good.stdout, good.stderr
        bad = cli("mqtt", "test", env=dict(env, EDGE_MQTT__PASSWORD="wrong"))
        assert bad.returncode == 1 and "Not authorized" in bad.stderr
        assert "EDGE_MQTT__PASSWORD" in bad.stderr and "wrong" not in bad.stderr
        env = agent_env(isolated_env, tmp_path / "c", broker.url, "n1", 'username = "edge"')
        untrusted = cli("mqtt", "test", env=dict(env, EDGE_MQTT__PASSWORD="s3cret-pw"))
        assert untrusted.returncode == 1 and "ca_file" in untrusted.stderr
    gone = cli("mqtt", "test", "--timeout", "3", env=env)
    assert gone.returncode == 1 and "is the broker running" in gone.stderr
    unset = cli("mqtt", "test", env=dict(isolated_env, EDGE_CONFIG=str(tmp_path / "a/config.toml"),
                                         EDGE_MQTT__URL=""))
    assert unset.returncode == 1 and "MQTT is not configured" in unset.stderr


def test_status_and_doctor_report_the_broker_as_it_is(tmp_path, isolated_env):
    broker = Mosquitto(tmp_path / "broker").start()
    env = agent_env(isolated_env, tmp_path / "agent", broker.url, "pi1")
    nobody = cli("mqtt", "status", env=env)
    assert nobody.returncode == 1 and "no agent is running" in nobody.stderr
    proc = start_agent(env)
    try:
        wait_started(proc, env)
        wait_for(lambda: mqtt_status(env)["connected"])
        shown = cli("mqtt", "status", "--json", env=env)
        assert shown.returncode == 0, shown.stderr
        data = json.loads(shown.stdout)["data"]["mqtt"]
        assert data["node_id"] == "pi1" and data["since"] and data["last_error"] is None
        assert "mqtt: connected to " + broker.url in cli("status", env=env).stdout
        broker.kill()
        wait_for(lambda: not mqtt_status(env)["connected"])
        down = cli("mqtt", "status", env=env)
        assert down.returncode == 1 and "NOT CONNECTED" in down.stderr
        assert "last error" in down.stderr and "keeps retrying" in down.stderr
        doctor = json.loads(cli("doctor", "--json", env=env).stdout)
        (check,) = [c for c in doctor["data"]["checks"] if c["name"] == "mqtt"]
        assert check["status"] == "fail" and "NOT CONNECTED" in check["detail"]
        broker.start()
        wait_for(lambda: mqtt_status(env)["connected"], timeout=15)
        assert mqtt_status(env)["connects"] == 2
    finally:
        stop(proc)
        broker.kill()


def test_a_killed_agent_is_offline_by_its_last_will(broker, tmp_path, isolated_env):
    env = agent_env(isolated_env, tmp_path / "agent", broker.url, "pi1")

    async def scenario():
        async with Watcher(broker, "edge-agent/pi1/availability") as seen:
            proc = start_agent(env)
            try:
                await seen.wait("edge-agent/pi1/availability", "online", timeout=60)
                mark = len(seen.messages)
                proc.kill()  # no goodbye: the broker speaks the will
                await seen.wait("edge-agent/pi1/availability", "offline", after=mark)
            finally:
                stop(proc)

    asyncio.run(scenario())


FLEET = 20


def test_a_fleet_of_twenty_agents_each_acts_only_on_its_own_topics(broker, tmp_path,
                                                                    isolated_env):
    envs = [agent_env(isolated_env, tmp_path / f"node{n:02d}", broker.url, f"node{n:02d}")
            for n in range(FLEET)]
    procs = [start_agent(env) for env in envs]  # all at once: they start in parallel
    commanded = set(range(0, FLEET, 2))

    async def scenario():
        async with Watcher(broker, "edge-agent/+/led", "edge-agent/+/availability") as seen:
            for n in range(FLEET):
                await seen.wait(f"edge-agent/node{n:02d}/availability", "online", timeout=120)
            for n in sorted(commanded):
                await seen.publish(f"edge-agent/node{n:02d}/led/set", "ON")
            for n in sorted(commanded):
                await seen.wait(f"edge-agent/node{n:02d}/led", "ON")
            await asyncio.sleep(0.3)
            for n in set(range(FLEET)) - commanded:
                assert b"ON" not in seen.payloads(f"edge-agent/node{n:02d}/led")

    try:
        asyncio.run(scenario())
        for n, env in enumerate(envs):
            reply = client.request([socket_of(env)], "gpio.read", {"pin": "led"})
            assert reply["data"]["value"] == (1 if n in commanded else 0), (n, reply)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            stop(proc)



def test_the_chat_topic_is_a_channel_that_answers_on_reply(broker, tmp_path, isolated_env):
    env = agent_env(isolated_env, tmp_path / "agent", broker.url, "pi1", "chat = true")

    async def scenario():
        async with Watcher(broker, "edge-agent/pi1/#") as seen:
            proc = start_agent(env)
            try:
                await seen.wait("edge-agent/pi1/availability", "online", timeout=60)
                await seen.publish("edge-agent/pi1/chat", "/status")
                reply = (await seen.wait("edge-agent/pi1/chat/reply", timeout=10)).decode()
                assert "edge-agent" in reply and "running" in reply
                assert "config:" not in reply  # the chat topic is nobody's admin
            finally:
                stop(proc)

    asyncio.run(scenario())


def test_the_agents_sensors_are_published_and_announced(broker, tmp_path, isolated_env):
    """The sensor hub of a running agent (here the host's own health, ``type = "pi"``) feeds
    the bridge: each quantity is a Home Assistant sensor with its unit, each reading retained."""
    env = agent_env(isolated_env, tmp_path / "agent", broker.url, "pi1")
    config = Path(env["EDGE_CONFIG"])
    config.write_text(config.read_text() + '[sensors.host]\ntype = "pi"\ninterval_seconds = 0.5\n')

    async def scenario():
        async with Watcher(broker, "edge-agent/pi1/sensor/#", "homeassistant/sensor/#") as seen:
            proc = start_agent(env)
            try:
                raw = await seen.wait("homeassistant/sensor/pi1/host_memory_used/config", timeout=60)
                announced = json.loads(raw)
                assert announced["state_topic"] == "edge-agent/pi1/sensor/host/memory_used"
                assert (announced["unit_of_measurement"], announced["state_class"]) == ("%", "measurement")
                value = await seen.wait("edge-agent/pi1/sensor/host/memory_used", timeout=10)
                assert 0 < float(value) <= 100
            finally:
                stop(proc)

    asyncio.run(scenario())
