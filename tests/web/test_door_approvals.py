"""A web session's switch is the person's own direct command (``web:<name>``, never the model's):
under ``supervised`` an operator's or an admin's switch waits for nobody, a viewer's is refused,
and the model's switch of the same pin still waits for an approval."""

from __future__ import annotations

import asyncio

import httpx

from edge.core.requester import Requester
from tests.helpers import until
from tests.web.test_attacks import paired
from tests.web.test_browser import ModelChat


async def test_operator_and_admin_sessions_switch_without_waiting_and_the_model_still_waits(
        web_agent, mock_factory):
    agent = await web_agent()
    gate = agent.agent.runtime.approvals
    gate.autonomy = "supervised"
    gate.approvers = {"chat": ModelChat()}
    async with httpx.AsyncClient() as http:
        for role, value, level in (("operator", "on", 1), ("admin", "off", 0)):
            http.cookies.clear()
            csrf = (await paired(http, agent, role))["csrf"]
            done = await http.post(f"{agent.url}/api/op", json={"op": "gpio.write", "args": {
                "pin": "led", "value": value}}, headers={"X-CSRF-Token": csrf})
            assert done.json()["ok"], done.text
            assert mock_factory.pin(17).state == level and gate.waiting() == []
        http.cookies.clear()
        csrf = (await paired(http, agent, "viewer"))["csrf"]
        refused = await http.post(f"{agent.url}/api/op", json={"op": "gpio.write", "args": {
            "pin": "led", "value": "on"}}, headers={"X-CSRF-Token": csrf})
    assert not refused.json()["ok"] and mock_factory.pin(17).state == 0
    asked = asyncio.ensure_future(agent.agent.runtime.hardware.write(
        "led", True, Requester("chat", "42", via_model=True)))
    [waiting] = await until(gate.waiting)
    assert waiting["requester"] == "chat:42" and mock_factory.pin(17).state == 0
    assert gate.decide(waiting["token"], "deny", "web:owner") == "Denied."
    await asyncio.gather(asked, return_exceptions=True)
    assert mock_factory.pin(17).state == 0
