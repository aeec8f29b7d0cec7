"""The fleet as a stranger on the broker attacks it (issue 36): a forged caller, forged answers
for a node that is stopped or was never there, a captured request replayed (also after the node
restarted), a request that outlives its expiry while the node is stalled, and an answer topic
that is not the asker's own. Each is refused or ignored: no pin moves, no answer a stranger can
use is published, the refusal is counted, and the audit trails of both ends name only callers a
key verified."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from edge.audit import AUDIT_FILE, read_history
from edge.control import client
from edge.core.requester import Requester
from edge.fleet.envelope import SKEW_SECONDS
from edge.fleet.keys import FleetKeys, new_code
from edge.fleet.protocol import request_topic
from tests.fleet.configs import NODE_B, PUMP, B, controller_of_b
from tests.fleet.conftest import FleetAgent, pair
from tests.fleet.processes import node_env, start_node, stop_node
from tests.fleet.stranger import FORGERIES, Stranger
from tests.fleet.wire import TESTER, TESTER_CODE, RawAsker
from tests.helpers import cli, until, wait_for

REQUEST_B = request_topic("b")
"""Where requests to node b go."""

PUMP_ON = {"pin": "pump", "value": "on"}
OPERATOR = Requester("cli", "op")


def rows(agent: FleetAgent | Path) -> list[Any]:
    """Every row of an agent's audit trail (oldest first)."""
    state = agent.state if isinstance(agent, FleetAgent) else agent
    return read_history(state / AUDIT_FILE, limit=1000)


def writes(agent: FleetAgent) -> list[tuple[str, str, float | None]]:
    return [(r.caller, r.outcome, r.asked) for r in rows(agent) if r.action == "write"]


async def ctl_and_b(fleet_agent: Any, broker: Any, *, timeout: float = 5
                    ) -> tuple[FleetAgent, FleetAgent]:
    node_b = await fleet_agent("b", NODE_B, broker.url)
    controller = await fleet_agent("ctl", controller_of_b(timeout), broker.url)
    await until(lambda: controller.runtime.hardware.boards["b"].connected)
    return node_b, controller


# 1. a forged caller --------------------------------------------------------------------------

@pytest.mark.parametrize("code", [None, new_code(), TESTER_CODE],
                         ids=["unsealed", "a key of its own", "another pair's key"])
async def test_a_stranger_naming_itself_a_paired_caller_runs_nothing_and_hears_nothing(
        fleet_agent: Any, broker: Any, mock_factory: Any, tmp_path: Path, code: str | None
        ) -> None:
    """B is paired with ``house`` (whose key the stranger does not have): a request that says
    ``caller = house`` is dropped before any work, answered to nobody, counted."""
    node_b = await fleet_agent("b", NODE_B, broker.url)
    pair(tmp_path / "house", node_b.state, "house", "b")
    responder = node_b.bridge.fleet.responder
    async with Stranger(broker, "#") as heard, RawAsker(broker.url, name="house",
                                                       code=code) as stranger:
        forged = await stranger.send(B, "gpio.write", PUMP_ON)
        await until(lambda: responder.dropped["unverified"] == 1)
        assert mock_factory.pin(PUMP).state == 0
        async with RawAsker(broker.url) as tester:  # then a paired caller, who is answered
            read = await tester.ask(B, "gpio.read", {"pin": "pump"})
        assert read["ok"] and read["data"]["value"] == 0.0
        assert stranger.arrivals == []
        await until(lambda: heard.carrying(forged))  # the watcher's copy may come late, loaded
        assert [h.topic for h in heard.carrying(forged)] == [REQUEST_B]  # nothing else
        assert not [h for h in heard.heard if h.topic.startswith("edge-agent/_fleet/house")]
    assert responder.counts["dropped"] == 1 and responder.counts["answered"] == 1
    assert not [r for r in rows(node_b) if "house" in r.caller]
    status = await node_b.runtime.status()
    assert status["mqtt"]["fleet"]["requests"]["dropped_why"] == {"unverified": 1}


async def test_a_paired_caller_is_named_by_its_key_whatever_else_it_writes(
        fleet_agent: Any, broker: Any, mock_factory: Any, tmp_path: Path) -> None:
    """``tester``'s key names it, whatever ``caller`` and ``via`` it adds after its sealed
    ones; a ``caller`` written before them is the one read, and its key (B is paired with
    ``house`` too) does not verify it."""
    node_b = await fleet_agent("b", NODE_B, broker.url)
    pair(tmp_path / "house", node_b.state, "house", "b")
    responder = node_b.bridge.fleet.responder
    async with RawAsker(broker.url) as tester:
        done = await tester.ask(B, "gpio.write", PUMP_ON, via="cli:ann@laptop",
                                extra=(("caller", "house"), ("via", "cli:root@house")))
        topic, payload, sealed, _ = tester.request(B, "gpio.write", {"pin": "pump",
                                                                     "value": "off"})
        claimed = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        claimed.ResponseTopic, claimed.CorrelationData = sealed.ResponseTopic, sealed.CorrelationData
        claimed.MessageExpiryInterval = sealed.MessageExpiryInterval
        claimed.UserProperty = [("caller", "house"), *sealed.UserProperty]
        await tester.client.publish(topic, payload, qos=1, properties=claimed)
        await until(lambda: responder.dropped["unverified"] == 1)
    assert done["ok"] and mock_factory.pin(PUMP).state == 1
    (row,) = [r for r in rows(node_b) if r.action == "write"]
    assert (row.caller, row.outcome) == (f"mqtt:{TESTER}", "ok")
    assert "cli:ann@laptop" in row.why  # on whose behalf, as the key's holder says
    assert "house" not in row.why


# 2. forged answers ---------------------------------------------------------------------------

@pytest.mark.parametrize("node", ["stopped", "never there"])
async def test_forged_answers_for_a_node_that_is_not_there_are_not_taken(
        fleet_agent: Any, broker: Any, mock_factory: Any, node: str) -> None:
    """A stranger says ``online`` for B and answers each of the controller's requests at once,
    with the right correlation and ``{"ok": true, "data": {"value": 1.0}}``: unsealed, with a
    made-up MAC, and sealed with a key of another pair. The controller takes none of them."""
    if node == "stopped":
        node_b, controller = await ctl_and_b(fleet_agent, broker, timeout=1)
        await node_b.stop()
    else:  # paired with a b once, but there is none on the broker
        controller = await fleet_agent("ctl", controller_of_b(1), broker.url)
        FleetKeys(controller.state).file("b", new_code())
    board, link = controller.runtime.hardware.boards["b"], controller.bridge.fleet
    await until(lambda: not board.connected)
    async with Stranger(broker, REQUEST_B) as stranger:
        stranger.answer_requests()
        await stranger.pose_as_node("b", ["pump"])
        await until(lambda: board.connected, timeout=15)
        write = await controller.runtime.tools["gpio_write"].execute(PUMP_ON, OPERATOR)
        read = await controller.runtime.tools["gpio_read"].execute({"pin": "pump"}, OPERATOR)
    assert stranger.forged == 2 * len(FORGERIES)  # every request answered, at once, forged
    assert not write.success and not read.success
    for failed in (write, read):
        assert "no answer from node b within 1 s" in (failed.error or ""), failed
        assert "set on" not in failed.output + (failed.error or "")
    assert link.answers.forged == stranger.forged
    assert link.counts["no_answer"] == 2 and link.counts["answered"] == 0
    assert [(r.pin, r.outcome) for r in rows(controller) if r.action == "write"] == [
        ("pump", "failed")]
    status = await controller.runtime.status()
    assert status["mqtt"]["fleet"]["forged_answers"] == 2 * len(FORGERIES)
    assert mock_factory.pin(PUMP).state == 0


async def test_edge_cli_takes_no_forged_answer_for_a_node_that_was_never_there(
        broker: Any, isolated_env: dict[str, str], tmp_path: Path) -> None:
    laptop = node_env(isolated_env, tmp_path / "laptop",
                      f'[mqtt]\nurl = "{broker.url}"\nnode_id = "laptop"\n')
    FleetKeys(Path(laptop["EDGE_STATE_DIR"])).file("b", new_code())
    async with Stranger(broker, REQUEST_B) as stranger:
        stranger.answer_requests()
        await stranger.pose_as_node("b", ["pump"])
        done = await asyncio.to_thread(cli, "--node", "b", "gpio", "write", "pump", "on",
                                       "--json", env=laptop)
    answer = json.loads(done.stdout)
    assert done.returncode == 1 and not answer["ok"], answer
    assert answer["error"] == "no answer from node b within 5 s; it may or may not have run"
    assert stranger.forged == len(FORGERIES)


# 3. replays ----------------------------------------------------------------------------------

async def test_a_captured_request_replayed_is_not_run_again(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    node_b, controller = await ctl_and_b(fleet_agent, broker)
    responder = node_b.bridge.fleet.responder
    async with Stranger(broker, REQUEST_B) as stranger:
        done = await controller.runtime.tools["gpio_write"].execute(PUMP_ON, OPERATOR)
        assert done.success and mock_factory.pin(PUMP).state == 1
        (captured,) = await until(lambda: stranger.on(REQUEST_B))
        await node_b.runtime.hardware.write("pump", False, OPERATOR)  # off, on B itself
        await stranger.replay(captured)
        await until(lambda: responder.counts["repeats"] == 1)
    assert mock_factory.pin(PUMP).state == 0
    assert writes(node_b) == [("mqtt:ctl", "ok", 1.0), ("cli:op", "ok", 0.0)]


async def test_a_request_captured_before_the_node_restarted_is_not_run_after(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    """Within its expiry (30 s: the controller's board waits that long), after B restarted
    with no memory of what it took: dropped as sent before B started."""
    node_b, controller = await ctl_and_b(fleet_agent, broker, timeout=30)
    async with Stranger(broker, REQUEST_B) as stranger:
        done = await controller.runtime.tools["gpio_write"].execute(PUMP_ON, OPERATOR)
        assert done.success and mock_factory.pin(PUMP).state == 1
        (captured,) = await until(lambda: stranger.on(REQUEST_B))
        assert captured.properties.MessageExpiryInterval == 30
        began = time.monotonic()
        await node_b.stop()  # its safe state: the pump off
        node_b = await fleet_agent("b", NODE_B, broker.url, again=True)
        responder = node_b.bridge.fleet.responder
        await stranger.replay(captured)
        await until(lambda: responder.dropped["sent before this node started"] == 1)
        assert time.monotonic() - began < 30 - SKEW_SECONDS  # not merely too old
    assert mock_factory.pin(PUMP).state == 0
    assert responder.counts["dropped"] == 1 and responder.counts["answered"] == 0
    assert [w for w in writes(node_b) if w[0] == "mqtt:ctl"] == [("mqtt:ctl", "ok", 1.0)]


# 4. expired while the node was stalled -------------------------------------------------------

async def test_a_request_that_expired_while_the_node_was_stalled_is_not_run(
        broker: Any, isolated_env: dict[str, str], tmp_path: Path) -> None:
    """B (a process) is stopped with SIGSTOP, sent a request with a 2 s expiry, and woken past
    its expiry and the clocks' allowance: it drops it (by its own clock) and answers nobody."""
    env = node_env(isolated_env, tmp_path / "b", f"""
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = {{ mode = "output", safe = "off" }}
[mqtt]
url = "{broker.url}"
node_id = "b"
reconnect_max_seconds = 0.5
""")
    FleetKeys(Path(env["EDGE_STATE_DIR"])).file(TESTER, TESTER_CODE)  # paired by its file
    sock = [Path(env["EDGE_STATE_DIR"]) / "control.sock"]
    proc = await asyncio.to_thread(start_node, env)
    try:
        async with RawAsker(broker.url) as tester:
            proc.send_signal(signal.SIGSTOP)
            try:
                late = await tester.send(B, "gpio.write", PUMP_ON, expiry=2)
                await asyncio.sleep(2 + SKEW_SECONDS + 1)
            finally:
                proc.send_signal(signal.SIGCONT)

            def dropped() -> dict[str, int]:
                fleet = client.request(sock, "status")["data"]["mqtt"]["fleet"]
                return dict(fleet["requests"]["dropped_why"])

            assert await asyncio.to_thread(wait_for, dropped, 10, 0.05) == {"expired": 1}
            read = await tester.ask(B, "gpio.read", {"pin": "pump"})
            assert read["ok"] and read["data"]["value"] == 0.0
            (only,) = tester.arrivals  # the read's answer: none to the late request
            assert only[0] != late
    finally:
        await asyncio.to_thread(stop_node, proc)
    assert [r for r in rows(Path(env["EDGE_STATE_DIR"])) if r.action == "write"] == []


# 6. a hostile answer topic -------------------------------------------------------------------

HOSTILE = ("edge-agent/b/pump/set", REQUEST_B, "edge-agent/_fleet/ctl/response",
           "edge-agent/_fleet/tester/response/x/y", "edge-agent/_fleet/testerX/response")


async def test_a_paired_caller_naming_an_answer_topic_not_its_own_is_not_run(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    """Sealed properly by a paired caller, but answered on B's own pin's ``/set``, B's request
    topic, another caller's answer topic or below its own: not run, nothing published there."""
    node_b = await fleet_agent("b", NODE_B, broker.url)
    responder = node_b.bridge.fleet.responder
    sent = []
    async with Stranger(broker, "#") as heard:
        for topic in HOSTILE:
            async with RawAsker(broker.url, reply_to=topic) as hostile:
                sent.append(await hostile.send(B, "gpio.write", PUMP_ON))
        await until(lambda: responder.dropped["not its own answer topic"] == len(HOSTILE))
        async with RawAsker(broker.url) as tester:
            read = await tester.ask(B, "gpio.read", {"pin": "pump"})
        assert read["ok"] and read["data"]["value"] == 0.0
        await until(lambda: all(heard.carrying(correlation) for correlation in sent))
        for correlation in sent:
            assert [h.topic for h in heard.carrying(correlation)] == [REQUEST_B]
        assert heard.on("edge-agent/b/pump/set") == []
        assert heard.on("edge-agent/_fleet/ctl/response") == []
    assert mock_factory.pin(PUMP).state == 0 and writes(node_b) == []
    assert responder.counts["answered"] == 1
