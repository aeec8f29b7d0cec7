"""Pairing as a person does it (``edge-cli fleet pair``, :mod:`edge.cli.fleet_keys_cmd`): the key
shown once, as a code, and never again (not by ``fleet keys``, ``config show`` or ``status``);
and a node that takes unauthenticated requests (``[mqtt] allow_unauthenticated``): it runs them
as ``mqtt:unverified:<name>``, never status or history, and ``config check`` and ``doctor``
warn about it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from edge.audit import AUDIT_FILE, read_history
from edge.core.requester import Requester
from edge.fleet.keys import FleetKeys, decode_code, new_code
from tests.fleet.configs import NODE_B, PUMP, UNAUTHENTICATED, B, controller_of_b
from tests.fleet.processes import node_env, start_node, stop_node
from tests.fleet.wire import RawAsker
from tests.helpers import cli, until

CODE = re.compile(r"\b[A-Z2-7]{4}(?:-[A-Z2-7]{4}){7}\b")
MACHINE = """
[mqtt]
url = "{url}"
node_id = "{name}"
"""


def machine(env: dict[str, str], tmp_path: Path, name: str, url: str = "mqtt://127.0.0.1:1",
            extra: str = "") -> dict[str, str]:
    return node_env(env, tmp_path / name, MACHINE.format(url=url, name=name) + extra)


def keys(env: dict[str, str]) -> FleetKeys:
    return FleetKeys(Path(env["EDGE_STATE_DIR"]))


def test_pairing_shows_the_code_once_and_the_other_machine_types_it(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    shed, kitchen = (machine(isolated_env, tmp_path, name) for name in ("shed", "kitchen"))
    made = cli("fleet", "pair", "kitchen", env=shed)
    assert made.returncode == 0, made.stderr
    (code,) = CODE.findall(made.stdout + made.stderr)  # printed once
    assert f"edge-cli fleet pair shed --code {code}" in made.stdout
    assert "shown this once" in made.stdout

    typed = cli("fleet", "pair", "shed", "--code", "-", env=kitchen, stdin=code + "\n")
    assert typed.returncode == 0, typed.stderr
    assert code not in typed.stdout + typed.stderr
    assert keys(kitchen).get("shed") == keys(shed).get("kitchen") == decode_code(code)

    as_json = json.loads(cli("fleet", "pair", "barn", "--json", env=shed).stdout)
    again = as_json["data"]["code"]
    assert as_json["data"]["command"] == f"edge-cli fleet pair shed --code {again}"
    assert again != code and keys(shed).get("kitchen") == decode_code(code)  # a key per pair

    listed = cli("fleet", "keys", "--json", env=shed)
    assert json.loads(listed.stdout)["data"] == {"me": "shed", "paired": ["barn", "kitchen"]}
    assert not CODE.search(listed.stdout + cli("fleet", "keys", env=shed).stdout)


def test_a_code_that_is_not_one_is_bad_usage_saying_what_one_looks_like(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    shed = machine(isolated_env, tmp_path, "shed")
    for typo in ("ABCD-EFGH", new_code()[:-1] + "1", "not a code at all"):
        done = cli("fleet", "pair", "kitchen", "--code", typo, "--json", env=shed)
        answer = json.loads(done.stdout)
        assert done.returncode == 2 and answer["exit_code"] == 2, answer
        assert "eight groups of four letters and digits (2-7)" in answer["error"]
    assert keys(shed).names() == []


def test_no_code_is_ever_shown_again_by_keys_config_or_status(
        broker: Any, isolated_env: dict[str, str], tmp_path: Path) -> None:
    filed, configured, environ = new_code(), new_code(), new_code()
    shed = machine(isolated_env, tmp_path, "shed", broker.url,
                   f'[mqtt.fleet_keys]\nbarn = "{configured}"\n')
    shed["EDGE_MQTT__FLEET_KEYS__LOFT"] = environ
    keys(shed).file("kitchen", filed)
    proc = start_node(shed)
    try:
        shown = [cli(*argv, env=shed) for argv in (
            ["config", "show"], ["config", "show", "--json"], ["status"], ["status", "--json"],
            ["fleet", "keys", "--json"], ["doctor", "--json"])]
    finally:
        stop_node(proc)
    status = json.loads(shown[3].stdout)
    assert status["data"]["mqtt"]["fleet"]["requests"]["paired"] == ["barn", "kitchen", "loft"]
    for done in shown:
        text = done.stdout + done.stderr
        for code in (filed, configured, environ):
            assert code not in text and code.replace("-", "") not in text, done.args
        assert not CODE.search(text), done.args


# allow_unauthenticated ---------------------------------------------------------------------

async def test_a_node_allowing_unauthenticated_requests_runs_them_as_unverified(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    node_b = await fleet_agent("b", UNAUTHENTICATED + NODE_B, broker.url)
    responder = node_b.bridge.fleet.responder
    async with RawAsker(broker.url, name="house", code=None) as stranger:
        write = await stranger.ask(B, "gpio.write", {"pin": "pump", "value": "on"})
        refused = [await stranger.ask(B, op, {}) for op in ("status", "history")]
    assert write["ok"] and mock_factory.pin(PUMP).state == 1
    assert all(mac is None for mac in (dict(props.UserProperty).get("mac")
                                       for _, props, _ in stranger.arrivals))  # unsealed
    for answer in refused:
        assert not answer["ok"] and "only answered to a paired caller" in answer["error"]
        assert "edge-cli fleet pair b" in answer["error"]
    async with RawAsker(broker.url, name="house", code=new_code()) as wrong:  # sealed, wrongly
        await wrong.send(B, "gpio.write", {"pin": "pump", "value": "off"})
        await until(lambda: responder.dropped["unverified"] == 1)
    assert mock_factory.pin(PUMP).state == 1 and wrong.arrivals == []
    rows = read_history(node_b.state / AUDIT_FILE, limit=100)
    assert [(r.caller, r.action, r.outcome) for r in rows if r.action == "write"] == [
        ("mqtt:unverified:house", "write", "ok")]


async def test_a_controller_allowing_unauthenticated_answers_says_so(
        fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    node_b = await fleet_agent("b", UNAUTHENTICATED + NODE_B, broker.url)
    controller = await fleet_agent("ctl", UNAUTHENTICATED + controller_of_b(), broker.url,
                                   paired=False)
    board = controller.runtime.hardware.boards["b"]
    await until(lambda: board.connected)
    done = await controller.runtime.tools["gpio_write"].execute(
        {"pin": "pump", "value": "on"}, Requester("cli", "op"))
    assert done.success and mock_factory.pin(PUMP).state == 1, done.error
    assert board.authenticated is False
    assert "UNAUTHENTICATED" in board.status().detail
    rows = read_history(node_b.state / AUDIT_FILE, limit=100)
    assert [r.caller for r in rows if r.action == "write"] == ["mqtt:unverified:ctl"]


def test_config_check_and_doctor_warn_about_allow_unauthenticated(
        broker: Any, isolated_env: dict[str, str], tmp_path: Path) -> None:
    shed = machine(isolated_env, tmp_path, "shed", broker.url, UNAUTHENTICATED)
    checked = cli("config", "check", "--json", env=shed)
    assert checked.returncode == 0, checked.stderr
    warnings = json.loads(checked.stdout)["data"]["warnings"]
    assert any(w.startswith("mqtt.allow_unauthenticated = true") for w in warnings), warnings
    assert "allow_unauthenticated" in cli("config", "check", env=shed).stderr
    doctor = json.loads(cli("doctor", "--json", env=shed).stdout)
    said = [c for c in doctor["data"]["checks"] if "allow_unauthenticated" in json.dumps(c)]
    assert said and all(c["status"] in ("warn", "fail") for c in said), doctor["data"]["checks"]
