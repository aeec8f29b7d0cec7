"""Other MCP servers' tools for the model, end to end: a real agent (Runtime in the test's loop)
on the loopback Telegram API and OpenAI-compatible model, with the lights server written with
the SDK (tests/mcp/servers/lights.py) as a stdio subprocess and over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from edge.audit import history_text, read_history
from edge.doctor.mcp_servers import check_mcp_servers
from edge.status_lines import mcp_servers_line
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.telegram_server import telegram_config, texts_to
from tests.helpers import cli, until


def model_config(model: OpenAIServer) -> str:
    return f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'


def call(name: str, arguments: dict[str, Any], id: str = "call_0") -> tuple[int, dict[str, Any]]:
    return 200, completion(None, [{"id": id, "name": name, "arguments": arguments}])


def say(text: str) -> tuple[int, dict[str, Any]]:
    return 200, completion(text)


def tool_results(model: OpenAIServer) -> list[str]:
    """What the model was told by the tools, in order."""
    last = model.requests[-1]["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


def offered(model: OpenAIServer) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in model.requests[0]["tools"]}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_model_calls_an_allowed_tool_and_gets_its_result(
        transport, request, telegram, start_agent):
    server = request.getfixturevalue(f"{transport}_lights")
    with OpenAIServer([call("lights__light_level", {"room": "hall"}), say("The hall is at 40%.")]) as model:
        agent = await start_agent(telegram_config(telegram) + model_config(model) + server)
        telegram.push_message(42, "how bright is the hall?")
        await until(lambda: "The hall is at 40%." in texts_to(telegram, 42))
        assert tool_results(model) == ["hall is at 40%"]
        tools = offered(model)
        assert tools["lights__light_level"]["description"].startswith(
            "lights.light_level (MCP server lights): How bright a room's light is.")
        assert tools["lights__light_level"]["parameters"]["required"] == ["room"]
        assert "gpio_read" in tools  # beside the local tools
        assert "gpio_write" not in tools  # a question about state is offered no switch
        assert not [name for name in tools if "unlock" in name]  # not in allow: not offered
        status = await agent.runtime.status()
        row = status["mcp"]["servers"][0]
        assert row["connected"] and row["transport"] == transport
        assert "lights.light_level" in row["tools"] and "lights.unlock_door" not in row["tools"]


async def test_an_actuating_tool_waits_for_approval_and_is_in_the_audit_trail(
        telegram, start_agent, stdio_lights, lights_files, isolated_env, tmp_path):
    replies = [call("lights__switch_light", {"room": "kitchen", "on": True}),
               say("The kitchen light is on.")]
    with OpenAIServer(replies) as model:
        await start_agent(telegram_config(telegram) + model_config(model) + stdio_lights)
        telegram.push_message(42, "kitchen light on please")
        request = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p])
        assert request[0]["text"] == ('Approve: call lights.switch_light '
                                      '{"on": true, "room": "kitchen"}?')
        assert not lights_files["log"].exists()  # nothing happens before the answer
        buttons = request[0]["reply_markup"]["inline_keyboard"][0]
        message = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": request[0]["text"]}
        telegram.push_callback(42, buttons[0]["callback_data"], message)
        reply = await until(lambda: [t for t in texts_to(telegram, 42) if "kitchen light is on" in t])
        assert reply[0].endswith('Receipt: lights.switch_light {"on": true, "room": "kitchen"}: done')
    assert lights_files["log"].read_text() == "kitchen on\n"
    records = read_history(tmp_path / "state" / "audit.db", "lights.switch_light")
    assert [(r.board, r.pin, r.action, r.outcome, r.caller, r.door, r.detail) for r in records] == [
        ("lights", "switch_light", "call", "ok", "telegram:42", "telegram",
         '{"on": true, "room": "kitchen"}')]
    out = cli("history", "--config", str(tmp_path / "config.toml"), env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert ('lights.switch_light {"on": true, "room": "kitchen"}: done by telegram:42'
            in out.stdout), out.stdout
    assert "lights.switch_light" in history_text(records)


async def test_a_denied_call_never_reaches_the_server_and_is_recorded_refused(
        telegram, start_agent, stdio_lights, lights_files, tmp_path):
    replies = [call("lights__switch_light", {"room": "hall", "on": False}),
               say("I could not switch it.")]
    with OpenAIServer(replies) as model:
        await start_agent(telegram_config(telegram) + model_config(model) + stdio_lights)
        telegram.push_message(42, "hall light off")
        request = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p])
        buttons = request[0]["reply_markup"]["inline_keyboard"][0]
        message = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": request[0]["text"]}
        telegram.push_callback(42, buttons[1]["callback_data"], message)  # Deny
        await until(lambda: [t for t in texts_to(telegram, 42) if "could not switch" in t])
        assert tool_results(model) == ["Error: lights.switch_light: denied by the user"]
    assert not lights_files["log"].exists()
    records = read_history(tmp_path / "state" / "audit.db", "lights.switch_light")
    assert [(r.outcome, r.reason) for r in records] == [("refused", "denied by the user")]


async def test_always_covers_the_same_call_only(telegram, start_agent, stdio_lights, lights_files):
    kitchen = {"room": "kitchen", "on": True}
    replies = [call("lights__switch_light", kitchen), say("On."),
               call("lights__switch_light", kitchen, id="call_1"), say("On again."),
               call("lights__switch_light", {"room": "hall", "on": True}, id="call_2"),
               say("Hall?")]
    with OpenAIServer(replies) as model:
        await start_agent(telegram_config(telegram) + model_config(model) + stdio_lights)
        telegram.push_message(42, "kitchen on")
        prompts = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p])
        buttons = prompts[0]["reply_markup"]["inline_keyboard"][0]
        assert buttons[2]["text"] == "Always"
        message = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": prompts[0]["text"]}
        telegram.push_callback(42, buttons[2]["callback_data"], message)
        await until(lambda: [t for t in texts_to(telegram, 42) if t.startswith("On.")])
        telegram.push_message(42, "kitchen on again")
        await until(lambda: [t for t in texts_to(telegram, 42) if t.startswith("On again.")])
        assert len([p for p in telegram.sent() if "reply_markup" in p]) == 1  # not asked again
        telegram.push_message(42, "hall on")
        later = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p][1:])
        assert later[0]["text"] == 'Approve: call lights.switch_light {"on": true, "room": "hall"}?'
    assert lights_files["log"].read_text() == "kitchen on\nkitchen on\n"


async def test_a_read_only_tool_needs_no_approval_and_leaves_no_record(
        telegram, start_agent, stdio_lights, tmp_path):
    with OpenAIServer([call("lights__light_level", {"room": "kitchen"}), say("Dark.")]) as model:
        await start_agent(telegram_config(telegram) + model_config(model) + stdio_lights)
        telegram.push_message(42, "kitchen?")
        await until(lambda: "Dark." in texts_to(telegram, 42))
    assert not [p for p in telegram.sent() if "reply_markup" in p]
    assert read_history(tmp_path / "state" / "audit.db") == []


async def test_an_unannotated_tool_is_gated_even_when_not_in_actuates(
        telegram, start_agent, stdio_lights):
    """MCP's defaults: no readOnlyHint means it may write, and destructiveHint defaults to true."""
    config = stdio_lights.replace('actuates = ["switch_light"]', "actuates = []")
    replies = [call("lights__set_scene", {"scene": {"room": "hall", "level": 0.5}}), say("ok")]
    with OpenAIServer(replies) as model:
        await start_agent(telegram_config(telegram) + model_config(model) + config)
        telegram.push_message(42, "dim the hall")
        request = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p])
        assert request[0]["text"].startswith("Approve: call lights.set_scene ")


async def test_a_hanging_tool_costs_the_turn_its_timeout_and_the_agent_answers_on(
        telegram, start_agent, stdio_lights):
    replies = [call("lights__hang", {}), say("The lights did not answer."),
               call("lights__light_level", {"room": "hall"}, id="call_1"), say("Hall: 40%.")]
    with OpenAIServer(replies) as model:
        config = stdio_lights.replace("timeout_seconds = 3", "timeout_seconds = 0.5")
        await start_agent(telegram_config(telegram) + model_config(model) + config)
        telegram.push_message(42, "try the slow one")
        await until(lambda: "The lights did not answer." in texts_to(telegram, 42))
        assert tool_results(model) == [
            "Error: lights.hang gave no answer within 0.5 s ([[mcp.servers]] timeout_seconds)"]
        telegram.push_message(42, "and the hall?")
        await until(lambda: "Hall: 40%." in texts_to(telegram, 42))
        assert tool_results(model)[-1] == "hall is at 40%"


async def test_a_crashed_server_is_restarted_and_works_again(
        telegram, start_agent, stdio_lights, lights_files):
    replies = [call("lights__crash", {}), say("The lights server fell over."),
               call("lights__light_level", {"room": "hall"}, id="call_1"), say("Hall: 40%.")]
    with OpenAIServer(replies) as model:
        agent = await start_agent(telegram_config(telegram) + model_config(model) + stdio_lights)
        telegram.push_message(42, "crash it")
        await until(lambda: "The lights server fell over." in texts_to(telegram, 42))
        assert tool_results(model)[0].startswith("Error: MCP server lights is not connected")

        async def row() -> dict[str, Any]:
            return (await agent.runtime.status())["mcp"]["servers"][0]

        for _ in range(200):
            if (current := await row())["restarts"] >= 1 and current["connected"]:
                break
            await asyncio.sleep(0.05)
        current = await row()
        assert current["connected"] and current["restarts"] == 1
        assert current["last_error"] == "Connection closed"
        assert len(lights_files["starts"].read_text().splitlines()) == 2
        line = mcp_servers_line((await agent.runtime.status())["mcp"])
        assert line is not None and line.startswith("mcp servers: lights connected since ")
        assert "1 restart" in line
        task = next(t for t in (await agent.runtime.status())["tasks"] if t["name"] == "mcp-client-lights")
        assert task["restarts"] == 1 and task["healthy"]
        checks = await asyncio.to_thread(check_mcp_servers, agent.runtime.loaded)
        assert [(c.name, c.status) for c in checks] == [("mcp server lights", "ok")]
        assert "1 restart" in checks[0].detail
        telegram.push_message(42, "and the hall?")
        await until(lambda: "Hall: 40%." in texts_to(telegram, 42))
        assert tool_results(model)[-1] == "hall is at 40%"


async def test_a_server_that_cannot_start_is_down_in_status_and_doctor(
        telegram, start_agent):
    broken = """
[[mcp.servers]]
name = "gone"
command = "/nonexistent/mcp-server"
allow = ["anything"]
timeout_seconds = 1
"""
    replies = [call("gone__anything", {}), say("That server is down.")]
    with OpenAIServer(replies) as model:
        agent = await start_agent(telegram_config(telegram) + model_config(model) + broken)
        row = (await agent.runtime.status())["mcp"]["servers"][0]
        assert not row["connected"] and "nonexistent" in row["last_error"]
        down = agent.runtime._down_components()
        assert "task mcp-client-gone" in down
        loaded = agent.runtime.loaded
        checks = await asyncio.to_thread(check_mcp_servers, loaded)
        assert checks[0].name == "mcp server gone" and checks[0].status == "fail"
        assert checks[0].detail.startswith("the running agent has it DOWN since ")
        assert "nonexistent" in checks[0].detail
        telegram.push_message(42, "use it")
        await until(lambda: "That server is down." in texts_to(telegram, 42))
        assert tool_results(model)[0].startswith("Error: MCP server gone is not connected: ")
    assert json.dumps(row)  # status is JSON
