"""``edge-cli fleet`` and ``edge-cli --node NAME ...`` against real agents (``edge-cli run`` on mock
pins) on a real Mosquitto: the listing from the retained topics, a node going offline, commands
run on a node through the broker with the output and exit codes of the node's own command line,
the node's own policy, and a node that does not answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from edge.control import client
from tests.fakes.mosquitto import Mosquitto, Watcher, free_port
from tests.fleet.processes import node_env, start_node, stop_node
from tests.helpers import cli, wait_for

AGENT = """
[memory]
backend = "none"
[channels.cli]
enabled = false
{pins}
[mqtt]
url = "{url}"
node_id = "{node}"
reconnect_max_seconds = 0.5
{extra}
"""
KITCHEN = """
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
"""
SHED = """
[boards.gpio.aliases]
pump = "GPIO22"
fan = "GPIO18"
[boards.gpio.pins]
pump = { mode = "output", safe = "off" }
fan = { mode = "pwm" }
[sensors.host]
type = "pi"
interval_seconds = 0.5
"""
LAPTOP = """
[mqtt]
url = "{url}"
node_id = "laptop"
"""


@dataclass
class Fleet:
    broker: Mosquitto
    laptop: dict[str, str]
    """A machine with only [mqtt] configured and no agent: where edge-cli asks from."""
    envs: dict[str, dict[str, str]]
    agents: dict[str, subprocess.Popen[str]]

    def local(self, node: str, *args: str) -> subprocess.CompletedProcess[str]:
        """``edge-cli ARGS`` on the node itself (through its control socket)."""
        return cli(*args, env=self.envs[node])

    def remote(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``edge-cli ARGS`` on the laptop."""
        return cli(*args, env=self.laptop)

    def stop(self, node: str, how: signal.Signals = signal.SIGTERM) -> None:
        proc = self.agents[node]
        proc.send_signal(how)
        proc.wait(30)


@contextlib.contextmanager
def fleet(tmp_path: Path, env: dict[str, str]) -> Iterator[Fleet]:
    with Mosquitto(tmp_path / "broker") as broker:
        envs = {name: node_env(env, tmp_path / name, AGENT.format(pins=pins, url=broker.url,
                                                                   node=name, extra=extra))
                for name, pins, extra in (("kitchen", KITCHEN, 'base_topic = "home/kitchen"'),
                                          ("shed", SHED, ""))}
        laptop = node_env(env, tmp_path / "laptop", LAPTOP.format(url=broker.url))
        for name, node in envs.items():
            pair_over_ssh(node, name, laptop, "laptop")
        agents: dict[str, subprocess.Popen[str]] = {}
        try:
            for name, node in envs.items():
                agents[name] = start_node(node)
            yield Fleet(broker, laptop, envs, agents)
        finally:
            for proc in agents.values():
                stop_node(proc)


def pair_over_ssh(node: dict[str, str], node_name: str, other: dict[str, str],
                  other_name: str) -> None:
    """The README's pairing, as a person does it: ``edge-cli fleet pair OTHER`` on the node
    prints the command to run on the other machine, with the code; it is run there."""
    made = cli("fleet", "pair", other_name, "--json", env=node)
    assert made.returncode == 0, made.stderr
    command = json.loads(made.stdout)["data"]["command"].split()
    assert command[:4] == ["edge-cli", "fleet", "pair", node_name], command
    typed = cli(*command[1:], env=other)
    assert typed.returncode == 0, typed.stderr


async def other_devices(broker: Mosquitto) -> None:
    """What else lives on a broker: a Zigbee lamp's availability, a node's own sensor's."""
    async with Watcher(broker, "nothing/#") as device:
        await device.publish("zigbee2mqtt/lamp/availability", "online", retain=True)
        await device.publish("zigbee2mqtt/lamp", '{"state": "ON"}', retain=True)


def as_json(done: subprocess.CompletedProcess[str]) -> dict:
    payload = json.loads(done.stdout)
    assert payload["exit_code"] == done.returncode, (payload, done.stderr)
    assert payload["ok"] is (done.returncode == 0), payload
    return payload


def test_fleet_lists_each_node_with_its_pins_and_sensors_and_one_gone_offline(
        tmp_path, isolated_env):
    with fleet(tmp_path, isolated_env) as nodes:
        asyncio.run(other_devices(nodes.broker))
        def both_described() -> dict | None:
            listing = as_json(nodes.remote("fleet", "--json"))
            rows = {row["node_id"]: row for row in listing["data"]["nodes"]}
            described = set(rows) == {"kitchen", "shed"} and all(r["pins"] for r in rows.values())
            return rows if described else None

        rows = wait_for(both_described, 20, 0.2)
        kitchen, shed = rows["kitchen"], rows["shed"]
        assert kitchen["online"] and shed["online"]
        assert kitchen["base_topic"] == "home/kitchen"  # its own base_topic: found all the same
        assert shed["base_topic"] == "edge-agent/shed"
        assert [p["name"] for p in kitchen["pins"]] == ["led"]
        assert {p["name"]: p["mode"] for p in shed["pins"]} == {"pump": "output", "fan": "pwm"}
        assert [s["name"] for s in shed["sensors"]] == ["host"]
        assert shed["boards"] == [{"name": "gpio", "kind": shed["boards"][0]["kind"],
                                   "connected": True}]
        assert shed["version"] and shed["uptime_seconds"] is not None
        text = nodes.remote("fleet")
        assert text.returncode == 0, text.stderr
        assert "kitchen" in text.stdout and "pump (gpio:GPIO22 output)" in text.stdout
        assert "2 nodes on" in text.stdout and "2 online, 0 offline" in text.stdout

        nodes.stop("shed")
        listing = as_json(nodes.remote("fleet", "--json"))
        rows = {row["node_id"]: row for row in listing["data"]["nodes"]}
        assert rows["kitchen"]["online"] and not rows["shed"]["online"]
        assert rows["shed"]["availability"] == "offline"
        assert rows["shed"]["pins"], "what the node has is still known while it is away"
        text = nodes.remote("fleet")
        (line,) = [line for line in text.stdout.splitlines() if line.startswith("shed")]
        assert "offline" in line, text.stdout
        if rows["shed"]["last_seen"] is not None:  # the health says when it was published
            assert "offline since" in line and "ago" in line, line
        assert "1 online, 1 offline" in text.stdout


def test_commands_run_on_the_node_through_the_broker_as_they_do_there(tmp_path, isolated_env):
    with fleet(tmp_path, isolated_env) as nodes:
        switched = nodes.remote("--node", "shed", "gpio", "write", "pump", "on")
        assert switched.returncode == 0, switched.stderr
        shed_sock = [Path(nodes.envs["shed"]["EDGE_STATE_DIR"]) / "control.sock"]
        assert client.request(shed_sock, "gpio.read", {"pin": "pump"})["data"]["value"] == 1.0
        assert switched.stdout == nodes.local("shed", "gpio", "write", "pump", "on").stdout

        remote_pins, local_pins = (nodes.remote("--node", "shed", "pins", "--json"),
                                   nodes.local("shed", "pins", "--json"))
        assert as_json(remote_pins)["data"] == as_json(local_pins)["data"]
        assert as_json(remote_pins)["via"] == "broker"
        assert nodes.remote("pins", "--node", "shed").stdout == nodes.local("shed", "pins").stdout

        # the node's own policy: GPIO23 is not allowlisted there, whatever the asker allows
        refused = as_json(nodes.remote("--node", "shed", "gpio", "write", "GPIO23", "on", "--json"))
        there = as_json(nodes.local("shed", "gpio", "write", "GPIO23", "on", "--json"))
        assert refused["exit_code"] == there["exit_code"] == 1
        assert refused["error"] == there["error"]
        assert client.request(shed_sock, "gpio.read", {"pin": "pump"})["data"]["value"] == 1.0

        status = as_json(nodes.remote("--node", "shed", "status", "--json"))
        assert status["data"]["daemon"]["running"] and status["data"]["mqtt"]["node_id"] == "shed"
        sensors = as_json(nodes.remote("--node", "shed", "sensors", "--json"))
        assert sensors["ok"] and "host" in json.dumps(sensors["data"])

        history = as_json(nodes.remote("--node", "shed", "history", "pump", "--json"))
        records = history["data"]["records"]
        assert records and all("pump" in json.dumps(r) for r in records)
        assert any("mqtt:" in json.dumps(r) for r in records), records  # the broker's caller

        # the kitchen has no pump: its own words, from the kitchen
        elsewhere = as_json(nodes.remote("--node", "kitchen", "gpio", "write", "pump", "on",
                                         "--json"))
        assert elsewhere["exit_code"] == 1 and elsewhere["error"]

        unknown = as_json(nodes.remote("--node", "barn", "pins", "--json"))
        assert unknown["exit_code"] == 1
        assert "barn" in unknown["error"] and "kitchen" in unknown["error"]
        assert "shed" in unknown["error"]


@pytest.mark.parametrize(("argv", "why"), [
    (["--node", "shed", "gpio", "write", "pump", "on", "--hold", "5"], "--hold"),
    (["rules", "--node", "shed"], "--node runs only"),
    (["fleet", "--node", "shed"], "--node runs only"),
])
def test_what_cannot_run_on_a_node_is_bad_usage(isolated_env, tmp_path, argv, why):
    env = node_env(isolated_env, tmp_path / "laptop", LAPTOP.format(url="mqtt://127.0.0.1:1"))
    done = as_json(cli(*argv, "--json", env=env))
    assert done["exit_code"] == 2 and why in done["error"]


def test_without_mqtt_or_without_a_broker_it_says_what_to_do(isolated_env, tmp_path):
    bare = as_json(cli("fleet", "--json", env=isolated_env))
    assert bare["exit_code"] == 2 and "[mqtt] url" in bare["error"]
    assert as_json(cli("--node", "shed", "pins", "--json", env=isolated_env))["exit_code"] == 2
    env = node_env(isolated_env, tmp_path / "laptop",
                   LAPTOP.format(url=f"mqtt://127.0.0.1:{free_port()}"))
    for argv in (["fleet"], ["--node", "shed", "pins"]):
        gone = as_json(cli(*argv, "--json", env=env))
        assert gone["exit_code"] == 1 and "is the broker running" in gone["error"], gone


def test_a_node_that_does_not_answer_fails_within_the_expiry_and_is_not_retried(
        tmp_path, isolated_env):
    with fleet(tmp_path, isolated_env) as nodes:
        nodes.agents["shed"].send_signal(signal.SIGSTOP)  # online on the broker, deaf
        try:
            done = nodes.remote("--node", "shed", "gpio", "write", "pump", "on", "--json")
        finally:
            nodes.agents["shed"].send_signal(signal.SIGCONT)
        payload = as_json(done)
        assert payload["exit_code"] == 1
        assert payload["error"] == ("no answer from node shed within 5 s; it may or may not have "
                                    "run")
        nodes.stop("shed")
        gone = as_json(nodes.remote("--node", "shed", "pins", "--json"))
        assert gone["exit_code"] == 1 and "offline" in gone["error"]


def test_fleet_uses_the_mqtt_sections_tls_and_credentials(tmp_path, isolated_env):
    with Mosquitto(tmp_path / "secure", users={"edge": "s3cret-pw"}, tls=True) as broker:
        text = LAPTOP.format(url=broker.url) + f'username = "edge"\nca_file = "{broker.ca}"\n'
        env = node_env(isolated_env, tmp_path / "laptop", text)
        empty = as_json(cli("fleet", "--json", env=dict(env, EDGE_MQTT__PASSWORD="s3cret-pw")))
        assert empty["exit_code"] == 0 and empty["data"] == {"nodes": []}
        wrong = as_json(cli("fleet", "--json", env=dict(env, EDGE_MQTT__PASSWORD="wrong")))
        assert wrong["exit_code"] == 1 and "EDGE_MQTT__PASSWORD" in wrong["error"]
        assert "wrong" not in wrong["error"]


def test_an_offline_node_is_said_offline_since_its_last_health(tmp_path, isolated_env):
    """What a node left on the broker when it went away: ``offline``, and a health whose
    ``time`` says when it was published."""
    async def left_behind(broker: Mosquitto) -> None:
        health = {"node_id": "barn", "version": "0.1.0", "uptime_seconds": 100.0,
                  "boards": {"gpio": True}, "time": time.time() - 3 * 3600,
                  "last_error": "board gpio: unplugged"}
        async with Watcher(broker, "nothing/#") as barn:
            await barn.publish("edge-agent/barn/health", json.dumps(health), retain=True)
            await barn.publish("edge-agent/barn/availability", "offline", retain=True)

    with Mosquitto(tmp_path / "broker") as broker:
        asyncio.run(left_behind(broker))
        env = node_env(isolated_env, tmp_path / "laptop", LAPTOP.format(url=broker.url))
        (row,) = as_json(cli("fleet", "--json", env=env))["data"]["nodes"]
        assert row["node_id"] == "barn" and row["online"] is False and row["last_seen"]
        assert row["boards"] == [{"name": "gpio", "kind": None, "connected": None}]
        text = cli("fleet", env=env).stdout
        assert "barn  offline since 3 h ago (its last health), 0.1.0" in text, text
        assert "error    board gpio: unplugged" in text
        assert "1 node on" in text and "0 online, 1 offline" in text


def test_a_nodes_sensor_history_is_asked_through_the_broker(tmp_path, isolated_env):
    def quantities(payload: dict) -> dict[str, int]:
        return {one["quantity"]: one["summary"]["count"] for one in payload["data"]["series"]}

    with fleet(tmp_path, isolated_env) as nodes:
        def kept() -> dict | None:  # the shed's host sensor, every 0.5 s, kept a few readings
            there = as_json(nodes.local("shed", "sensors", "history", "host", "--since", "1h",
                                        "--json"))
            return there if there["ok"] and min(quantities(there).values(), default=0) >= 2 else None

        there = wait_for(kept, 20, 0.2)
        asked = as_json(nodes.remote("--node", "shed", "sensors", "history", "host", "--since",
                                     "1h", "--json"))
        assert asked["via"] == "broker" and asked["ok"]
        assert sorted(quantities(asked)) == sorted(quantities(there)) and "load_1m" in quantities(asked)
        assert all(quantities(asked)[q] >= n for q, n in quantities(there).items())  # kept since
        for one in asked["data"]["series"]:
            assert one["sensor"] == "host" and len(one["buckets"]) == one["summary"]["count"]

        text = nodes.remote("--node", "shed", "sensors", "history", "host", "load_1m", "--since", "1h")
        assert text.returncode == 0 and text.stdout.startswith("host load_1m"), text

        unknown = as_json(nodes.remote("--node", "shed", "sensors", "history", "barn", "--json"))
        local = as_json(nodes.local("shed", "sensors", "history", "barn", "--json"))
        assert unknown["exit_code"] == local["exit_code"] == 2 and unknown["error"] == local["error"]
        assert "host" in unknown["error"]  # the node's own sensors, named in its own words

        chart = as_json(nodes.remote("--node", "shed", "sensors", "chart", "host", "--output",
                                     str(tmp_path / "host.png"), "--json"))
        assert chart["exit_code"] == 2 and "drawn where the history is" in chart["error"]
        assert not (tmp_path / "host.png").exists()
