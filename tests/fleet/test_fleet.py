"""A controller and two nodes on one Mosquitto: the controller's ``node`` boards are the nodes'
pins, asked through each node's own door; what a node's policy refuses stays refused; a node that
goes offline is a board that is down; a command is asked once, answered once, acted once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.audit import AUDIT_FILE, read_history
from edge.core.messages import ToolCall
from edge.core.requester import Requester
from edge.fleet.protocol import request_topic
from edge.providers.base import ChatResponse
from edge.tools.gpio import hardware_tools
from tests.fakes.scripted_provider import ScriptedProvider
from tests.fleet.conftest import FleetAgent
from tests.fleet.wire import RawAsker
from tests.helpers import msg, until

REQUEST_B = request_topic("b")
"""Where requests to node b go."""

NODE_A = """
[boards.gpio]
type = "gpio"
[boards.gpio.aliases]
lamp = "GPIO17"
[boards.gpio.pins]
lamp = {mode = "output", safe = "off"}
"""

NODE_B = """
[security]
autonomy = "full"
[boards.gpio]
type = "gpio"
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = {mode = "output", safe = "off", max_on_seconds = 600}
"""

CONTROLLER = """
[security]
autonomy = "full"
[boards.a]
type = "node"
node_id = "a"
[boards.a.pins]
lamp = {mode = "output"}
[boards.b]
type = "node"
node_id = "b"
timeout_seconds = 5
[boards.b.pins]
pump = {mode = "output"}
heater = {mode = "output"}
"""


def calls(*tools: tuple[str, dict[str, Any]]) -> ChatResponse:
    return ChatResponse("", [ToolCall(f"call-{i}", name, json.dumps(args))
                             for i, (name, args) in enumerate(tools)])


def model_of(agent: FleetAgent, provider: ScriptedProvider, tmp: Path) -> Agent:
    """The controller's model over the controller's own pin tools (its hardware's one door)."""
    hardware = agent.runtime.hardware

    async def status() -> str:
        return "status"

    return Agent(hardware_tools(hardware), hardware, provider, SessionStore(tmp / "sessions"),
                 status, AgentSettings(workspace=tmp / "workspace"),
                 Preflight({"cli": ChannelAccess(frozenset({"*"}))}))


def tool_results(provider: ScriptedProvider) -> list[str]:
    return [m.content for m in provider.seen[-1] if m.role == "tool"]


def actuations(agent: FleetAgent, pin: str) -> list[Any]:
    return [row for row in read_history(agent.state / AUDIT_FILE, pin, limit=100)
            if row.action == "write"]


async def fleet(fleet_agent: Any, broker: Any) -> tuple[FleetAgent, FleetAgent, FleetAgent]:
    node_a = await fleet_agent("a", NODE_A, broker.url)
    node_b = await fleet_agent("b", NODE_B, broker.url)
    controller = await fleet_agent("ctl", CONTROLLER, broker.url)
    boards = controller.runtime.hardware.boards
    await until(lambda: boards["a"].connected and boards["b"].connected)
    return node_a, node_b, controller


async def test_the_controllers_model_switches_a_pin_on_node_b_through_bs_own_door(
        fleet_agent: Any, broker: Any, mock_factory: Any, tmp_path: Path) -> None:
    node_a, node_b, controller = await fleet(fleet_agent, broker)
    provider = ScriptedProvider([calls(("gpio_write", {"pin": "pump", "value": "on"})),
                                 "The pump in the shed is on."])
    reply = await model_of(controller, provider, tmp_path).respond(msg("water the shed"))
    assert "The pump in the shed is on." in reply, (reply, tool_results(provider))
    assert mock_factory.pin(22).state == 1, tool_results(provider)  # B's own mock pin changed
    assert mock_factory.pin(17).state == 0  # A's did not
    (result,) = tool_results(provider)
    assert "b:pump set on" in result and "but the board reads back" not in result
    done = controller.runtime.hardware.last_actuation[("b", "pump")]
    assert done.read_back == 1.0  # B's read-back, carried in B's answer
    rows = await until(lambda: actuations(node_b, "pump"))
    assert [(r.caller, r.outcome, r.asked) for r in rows] == [("mqtt:ctl", "ok", 1.0)]
    await until(lambda: controller.runtime.hardware.status()[1].pins[0].value == 1.0)
    described = controller.runtime.hardware.boards["b"].description  # B's retained <base>/node
    assert described is not None and described.node_id == "b"
    assert [(p.name, p.pin, p.mode) for p in described.pins] == [("pump", "gpio:GPIO22", "output")]
    assert [(b.name, b.kind, b.connected) for b in described.boards] == [("gpio", "gpio", True)]


async def test_node_b_refuses_a_pin_its_own_policy_does_not_allow(
        fleet_agent: Any, broker: Any, mock_factory: Any, tmp_path: Path) -> None:
    _, node_b, controller = await fleet(fleet_agent, broker)
    provider = ScriptedProvider([calls(("gpio_write", {"pin": "heater", "value": "on"})),
                                 "The shed would not switch the heater."])
    await model_of(controller, provider, tmp_path).respond(msg("heat the shed"))
    (result,) = tool_results(provider)
    assert "b refused:" in result and "heater" in result, result  # B's reason reached the model
    assert mock_factory.pin(23).state == 0
    refused = await until(lambda: [r for r in read_history(node_b.state / AUDIT_FILE, limit=50)
                                   if r.outcome == "refused"])
    assert refused[0].caller == "mqtt:ctl"


async def test_a_node_going_offline_is_a_board_down_on_the_controller_and_in_status(
        fleet_agent: Any, broker: Any) -> None:
    node_a, _, controller = await fleet(fleet_agent, broker)
    await node_a.stop()
    board = controller.runtime.hardware.boards["a"]
    await until(lambda: not board.connected)
    status = await controller.runtime.status()
    (row,) = [b for b in status["boards"] if b["name"] == "a"]
    assert row["connected"] is False and "node a is offline since" in row["detail"]
    assert status["mqtt"]["fleet"]["nodes"]["a"]["availability"] == "offline"
    refused = await controller.runtime.tools["gpio_write"].execute(
        {"pin": "lamp", "value": "on"}, Requester("cli", "op"))
    assert not refused.success and "node a is offline" in (refused.error or "")
    (b_row,) = [b for b in status["boards"] if b["name"] == "b"]
    assert b_row["connected"] is True  # the other node is not affected
    health = await retained(broker, "edge-agent/ctl/health",
                            lambda body: (body.get("last_error") or "").startswith("board a:"))
    assert "node a is offline since" in health["last_error"] and health["boards"]["a"] is False


async def retained(broker: Any, topic: str, wanted: Any) -> dict[str, Any]:
    """The first JSON payload on ``topic`` (the retained one, then what follows) that ``wanted``
    accepts."""
    import aiomqtt

    async with asyncio.timeout(10), aiomqtt.Client("127.0.0.1", broker.port) as client:
        await client.subscribe(topic, qos=1)
        async for message in client.messages:
            body = json.loads(message.payload if isinstance(message.payload, bytes) else b"{}")
            if wanted(body):
                return dict(body)
    raise AssertionError(f"nothing wanted came on {topic}")


class Held:
    """B's gpio_write tool, which acts, then waits for ``release`` before it answers."""

    def __init__(self, tool: Any):
        self.tool = tool
        self.name = tool.name
        self.acted = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(self, args: dict[str, Any], requester: Requester) -> Any:
        result = await self.tool.execute(args, requester)
        self.acted.set()
        await self.release.wait()
        return result


async def test_a_broker_restart_mid_command_is_said_and_never_switches_twice(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    _, node_b, controller = await fleet(fleet_agent, broker)
    held = node_b.runtime.tools["gpio_write"] = Held(node_b.runtime.tools["gpio_write"])
    command = asyncio.create_task(controller.runtime.tools["gpio_write"].execute(
        {"pin": "pump", "value": "on"}, Requester("cli", "op")))
    await held.acted.wait()
    assert mock_factory.pin(22).state == 1
    broker.kill()
    result = await command  # not silence: the controller says it may not have run
    assert not result.success
    assert "may not have run" in (result.error or "") and "edge-cli --node b pins" in (result.error or "")
    broker.start()
    held.release.set()
    board = controller.runtime.hardware.boards["b"]
    await until(lambda: board.connected and node_b.bridge.connected, timeout=20)
    ok = await controller.runtime.tools["gpio_read"].execute({"pin": "pump"}, Requester("cli", "op"))
    assert ok.success and (ok.data or {})["value"] == 1.0
    rows = await until(lambda: actuations(node_b, "pump"))
    assert [(r.caller, r.outcome) for r in rows] == [("mqtt:ctl", "ok")]  # acted once
    mine = [r for r in read_history(controller.state / AUDIT_FILE, limit=50) if r.action == "write"]
    assert [r.outcome for r in mine] == ["failed"]  # never retried


async def test_a_redelivered_request_acts_once_and_gets_the_first_answer(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    node_b = await fleet_agent("b", NODE_B, broker.url)
    async with RawAsker(broker.url) as asker:
        correlation = b"0123456789abcdef"
        first = await asker.ask("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"},
                                correlation=correlation)
        again = await asker.ask("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"},
                                correlation=correlation)
    assert first == again and first["ok"] and first["data"]["value"] == 1.0
    assert node_b.bridge.fleet.responder.counts["repeats"] == 1
    rows = await until(lambda: actuations(node_b, "pump"))
    assert len(rows) == 1 and rows[0].caller == "mqtt:tester"  # named by its key


async def test_retained_and_unexpiring_requests_are_not_run(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    node_b = await fleet_agent("b", NODE_B, broker.url)
    dropped = node_b.bridge.fleet.responder.dropped
    async with RawAsker(broker.url) as asker:
        await asker.send("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"}, retain=True)
        await until(lambda: dropped["retained"] == 1)
        await asker.send("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"},
                         expiry=None)
        await until(lambda: dropped["malformed"] == 1)  # answered to nobody
        await asker.clear_retained(REQUEST_B)
        await asyncio.sleep(0.3)
        assert asker.arrivals == []
    assert mock_factory.pin(22).state == 0
    assert actuations(node_b, "pump") == []


async def test_operator_only_operations_and_actuations_a_node_forbids_are_refused(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    node_a = await fleet_agent("a", NODE_A, broker.url)
    async with RawAsker(broker.url) as asker:
        for op, args in (("resume", {}), ("models.select", {"name": "x"}),
                         ("schedules.add", {"name": "x"}), ("gpio.safe", {"pin": "lamp"})):
            answer = await asker.ask("edge-agent/a", op, args)
            assert not answer["ok"] and "not asked over the broker" in answer["error"], op
        status = await asker.ask("edge-agent/a", "status", {})
        assert status["ok"] and status["data"]["mqtt"]["node_id"] == "a"
        pins = await asker.ask("edge-agent/a", "pins", {})
        assert [p["pin"] for p in pins["data"]["pins"]] == ["GPIO17"]
    assert node_a.bridge.fleet.responder.counts["refused"] == 4


async def test_a_node_without_commands_over_mqtt_answers_reads_and_refuses_actuations(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    await fleet_agent("b", NODE_B, broker.url, allow_commands=False)
    async with RawAsker(broker.url) as asker:
        write = await asker.ask("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"})
        read = await asker.ask("edge-agent/b", "gpio.read", {"pin": "pump"})
    assert not write["ok"] and "allow_commands = false" in write["error"]
    assert read["ok"] and read["data"]["value"] == 0.0
    assert mock_factory.pin(22).state == 0


async def test_the_node_stands_alone_its_auto_off_runs_without_broker_or_controller(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    short = NODE_B.replace("max_on_seconds = 600", "max_on_seconds = 1")
    node_b = await fleet_agent("b", short, broker.url)
    controller = await fleet_agent("ctl", CONTROLLER.replace(
        '[boards.a]\ntype = "node"\nnode_id = "a"\n[boards.a.pins]\nlamp = {mode = "output"}\n', ""),
        broker.url)
    await until(lambda: controller.runtime.hardware.boards["b"].connected)
    done = await controller.runtime.tools["gpio_write"].execute(
        {"pin": "pump", "value": "on"}, Requester("cli", "op"))
    assert done.success and mock_factory.pin(22).state == 1
    await controller.stop()
    broker.kill()
    await until(lambda: not node_b.bridge.connected)
    await until(lambda: mock_factory.pin(22).state == 0, timeout=10)  # B's own timer
    rows = await until(lambda: [r for r in read_history(node_b.state / AUDIT_FILE, limit=50)
                                if r.action == "auto-off"])
    assert rows[0].outcome == "ok"


async def test_a_request_whose_expiry_ran_out_before_it_could_start_is_not_run(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    """By the node's own clock: a request sent too long ago is dropped as it arrives; one that
    waited its turn (the node busy) past its expiry and the clocks' allowance is not started,
    and answered to nobody (its asker has given up)."""
    from edge.fleet.envelope import SKEW_SECONDS, now_ms
    from edge.fleet.responder import RUNNING

    node_b = await fleet_agent("b", NODE_B, broker.url)
    responder = node_b.bridge.fleet.responder
    async with RawAsker(broker.url) as asker:
        await asker.send("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"}, expiry=1,
                         sent_ms=now_ms() - int((1 + SKEW_SECONDS) * 1000) - 100)
        await until(lambda: responder.dropped["expired"] == 1)
        for _ in range(RUNNING):  # the node is busy: every turn taken
            await responder._turns.acquire()
        try:
            await asker.send("edge-agent/b", "gpio.write", {"pin": "pump", "value": "on"},
                             expiry=1)
            await until(lambda: responder._in_flight)
            await asyncio.sleep(1 + SKEW_SECONDS + 0.2)
        finally:
            for _ in range(RUNNING):
                responder._turns.release()
        await until(lambda: responder.counts["expired"] == 1)
        await asyncio.sleep(0.2)
        assert asker.arrivals == []
    assert mock_factory.pin(22).state == 0 and actuations(node_b, "pump") == []


async def test_a_nodes_input_changes_reach_the_controllers_board_as_events(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    with_button = NODE_B.replace('pump = "GPIO22"', 'pump = "GPIO22"\nbutton = "GPIO27"') + \
        'button = {mode = "input"}\n'
    await fleet_agent("b", with_button, broker.url)
    controller = await fleet_agent("ctl", CONTROLLER + 'button = {mode = "input"}\n', broker.url)
    hardware = controller.runtime.hardware
    await until(lambda: hardware.boards["b"].connected)
    seen: list[Any] = []
    hardware.subscribe(seen.append)
    mock_factory.pin(27).drive_low()  # pressed, on B
    event = await until(lambda: [e for e in seen if e.kind == "input"])
    assert (event[0].board, event[0].pin) == ("b", "button")
