"""``edge-cli channel pair``: with an agent running, the agent issues the code into its own state
directory (the service's layout: its state directory is not the operator's), and a stranger who
sends it is paired; with none running, the code waits in the command's state directory and pairs
once the agent starts. A channel that is not configured gets no code either way (exit 2, saying
what to set); an agent the user may not ask gets no code behind its back. Every outcome has the
shared --json shape (``ok``, ``error``, ``exit_code``, ``data``, ``via``); earlier codes stay
valid (the oldest dropped past three, and said)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tomllib
from pathlib import Path

from edge.channels.pairing import CODES_PER_CHANNEL, PAIRED, PairingCodes
from edge.cli import channel_cmd
from edge.cli.main import main
from tests.fakes.telegram_server import FakeTelegram, telegram_config, texts_to
from tests.helpers import EDGE_CLI, ROOT, cli, until

STRANGER = 999


def shape(out) -> dict:
    """The --json object, checked against the contract: ok exactly when exit_code is 0, which
    is what the process exited with; error None when ok, else words."""
    payload = json.loads(out.stdout)
    assert {"ok", "error", "exit_code", "data", "via"} <= set(payload)
    assert payload["exit_code"] == out.returncode
    assert payload["ok"] is (out.returncode == 0)
    assert (payload["error"] is None) is payload["ok"]
    assert isinstance(payload["data"], dict)
    return payload


def service_layout(tmp_path, monkeypatch, isolated_env) -> tuple[Path, Path, dict[str, str]]:
    """The agent's state directory (as /var/lib/edge-agent), and the environment of an operator
    whose own state directory is another one and who finds the agent's socket in its runtime
    directory (as /run/edge-agent)."""
    agent_state, runtime = tmp_path / "agent-state", tmp_path / "run"
    runtime.mkdir()
    monkeypatch.setenv("EDGE_STATE_DIR", str(agent_state))  # the in-process agent's
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(runtime))
    operator = dict(isolated_env, EDGE_STATE_DIR=str(tmp_path / "operator-state"),
                    RUNTIME_DIRECTORY=str(runtime))
    return agent_state, runtime, operator


async def pair_over_telegram(telegram: FakeTelegram, code: str) -> None:
    telegram.push_message(STRANGER, f"/pair {code}")
    await until(lambda: texts_to(telegram, STRANGER))
    assert texts_to(telegram, STRANGER) == [PAIRED]


def test_an_unconfigured_channel_gets_no_code(isolated_env):
    out = cli("channel", "pair", "telegram", "--json", env=isolated_env)
    data = shape(out)
    assert out.returncode == 2 and data["via"] == "direct"
    assert "not configured" in data["error"] and "bot_token" in data["error"]
    assert not (Path(isolated_env["EDGE_STATE_DIR"]) / "pairing.json").exists()
    text = cli("channel", "pair", "signal", env=isolated_env)
    assert text.returncode == 2 and text.stdout == ""
    assert "http_url and account in [channels.signal]" in text.stderr


def test_a_configured_channel_gets_a_code_in_the_shared_shape(isolated_env):
    env = dict(isolated_env, EDGE_CHANNELS__TELEGRAM__BOT_TOKEN="123:abc")
    out = cli("channel", "pair", "telegram", "--json", env=env)
    payload = shape(out)
    assert out.returncode == 0 and payload["via"] == "direct"
    assert payload["message"].startswith("Pairing code for telegram: ")
    data = payload["data"]
    assert (data["channel"], data["outstanding"], data["dropped"]) == ("telegram", 1, 0)
    assert data["state_dir"] == env["EDGE_STATE_DIR"]
    codes = PairingCodes(Path(env["EDGE_STATE_DIR"]) / "pairing.json")
    assert codes.redeem("telegram", data["code"])


def test_a_second_code_leaves_the_first_valid_and_says_so(isolated_env):
    env = dict(isolated_env, EDGE_CHANNELS__TELEGRAM__BOT_TOKEN="123:abc")
    first = json.loads(cli("channel", "pair", "telegram", "--json", env=env).stdout)["data"]
    second = cli("channel", "pair", "telegram", env=env)
    assert second.returncode == 0 and "1 earlier code still works" in second.stdout
    codes = PairingCodes(Path(env["EDGE_STATE_DIR"]) / "pairing.json")
    assert codes.outstanding("telegram") == 2
    assert codes.redeem("telegram", first["code"])
    for _ in range(CODES_PER_CHANNEL - 1):
        cli("channel", "pair", "telegram", env=env)
    past = cli("channel", "pair", "telegram", env=env)
    assert past.returncode == 0
    assert "The oldest earlier code no longer works (at most 3 at once)" in past.stdout
    assert codes.outstanding("telegram") == CODES_PER_CHANNEL


async def test_the_running_agent_issues_the_code_from_its_own_state_directory(
        tmp_path, monkeypatch, isolated_env, start_agent):
    """The bug this pins: the service's state directory is not the operator's, so a code the
    command wrote to its own never reached the agent. Now the agent issues it: the stranger who
    sends it is paired, and the config keeps its list of numbers."""
    agent_state, _, operator = service_layout(tmp_path, monkeypatch, isolated_env)
    with FakeTelegram() as telegram:
        agent = await start_agent(telegram_config(telegram, allowed="[111]"))
        out = await asyncio.to_thread(cli, "channel", "pair", "telegram", "--json", env=operator)
        payload = shape(out)
        assert out.returncode == 0 and payload["via"] == "daemon", out.stdout + out.stderr
        assert payload["message"].startswith(f"Pairing code for telegram: {payload['data']['code']}")
        assert not (tmp_path / "operator-state" / "pairing.json").exists()
        assert PairingCodes(agent_state / "pairing.json").outstanding("telegram") == 1
        await pair_over_telegram(telegram, payload["data"]["code"])
        assert str(STRANGER) in agent.runtime.access["telegram"].allowed
        saved = tomllib.loads((tmp_path / "config.toml").read_text())
        assert saved["channels"]["telegram"]["allowed_users"] == [111, STRANGER]
        await agent.stop()


async def test_the_agent_keeps_three_codes_and_says_which_was_dropped(
        tmp_path, monkeypatch, isolated_env, start_agent):
    agent_state, _, operator = service_layout(tmp_path, monkeypatch, isolated_env)
    with FakeTelegram() as telegram:
        await start_agent(telegram_config(telegram))
        issued = []
        for _ in range(CODES_PER_CHANNEL + 1):
            out = await asyncio.to_thread(cli, "channel", "pair", "telegram", "--json",
                                          env=operator)
            issued.append(shape(out))
        assert [p["data"]["dropped"] for p in issued] == [0, 0, 0, 1]
        assert "The oldest earlier code no longer works" in issued[-1]["message"]
        codes = PairingCodes(agent_state / "pairing.json")
        assert not codes.redeem("telegram", issued[0]["data"]["code"])
        assert codes.redeem("telegram", issued[1]["data"]["code"])


async def test_a_channel_the_running_agent_does_not_run_is_exit_2(tmp_path, monkeypatch,
                                                                  isolated_env, start_agent):
    """Configured where the command looks, but not in the agent: a code would pair nobody."""
    agent_state, _, operator = service_layout(tmp_path, monkeypatch, isolated_env)
    with FakeTelegram() as telegram:
        await start_agent(telegram_config(telegram))
        signal_set = dict(operator, EDGE_CHANNELS__SIGNAL__HTTP_URL="http://127.0.0.1:9",
                          EDGE_CHANNELS__SIGNAL__ACCOUNT="+4915100000000")
        out = await asyncio.to_thread(cli, "channel", "pair", "signal", "--json", env=signal_set)
        payload = shape(out)
        assert out.returncode == 2 and payload["via"] == "daemon"
        assert "the running agent does not run channel signal" in payload["error"]
        assert "http_url and account in [channels.signal]" in payload["error"]
        text = await asyncio.to_thread(cli, "channel", "pair", "signal", env=signal_set)
        assert text.returncode == 2 and text.stdout == ""
        assert "restart the agent" in text.stderr
    assert not (agent_state / "pairing.json").exists()
    assert not (tmp_path / "operator-state" / "pairing.json").exists()


async def test_a_channel_only_the_running_agent_has_configured_can_be_paired(
        tmp_path, monkeypatch, isolated_env, start_agent):
    """The service reads its bot token from /etc/edge-agent/env, which the operator's shell
    does not see: the agent's own channels are what counts."""
    agent_state, _, operator = service_layout(tmp_path, monkeypatch, isolated_env)
    with FakeTelegram() as telegram:
        await start_agent(telegram_config(telegram))
        bare = tmp_path / "bare.toml"
        bare.write_text("[agent]\n")  # no [channels.telegram] here
        out = await asyncio.to_thread(cli, "channel", "pair", "telegram", "--config", str(bare),
                                      env=operator)
        assert out.returncode == 0, out.stderr
        code = out.stdout.split()[4]
        await pair_over_telegram(telegram, code)


async def test_a_code_issued_with_no_agent_running_pairs_once_it_starts(tmp_path, isolated_env,
                                                                       start_agent):
    with FakeTelegram() as telegram:
        config = tmp_path / "config.toml"
        config.write_text(telegram_config(telegram, allowed="[111]"))
        out = await asyncio.to_thread(cli, "channel", "pair", "telegram", "--json", "--config",
                                      str(config), env=isolated_env)
        payload = shape(out)
        assert out.returncode == 0 and payload["via"] == "direct"
        agent = await start_agent(config.read_text())
        await pair_over_telegram(telegram, payload["data"]["code"])
        await agent.stop()
    saved = tomllib.loads(config.read_text())
    assert saved["channels"]["telegram"]["allowed_users"] == [111, STRANGER]


async def test_an_agent_this_user_may_not_ask_gets_no_code_behind_its_back(
        tmp_path, monkeypatch, isolated_env, start_agent):
    """The kernel refuses the connection (as for a user outside the agent's group): the command
    says how to ask the agent, and writes no code of its own."""
    _, runtime, operator = service_layout(tmp_path, monkeypatch, isolated_env)
    with FakeTelegram() as telegram:
        await start_agent(telegram_config(telegram))
        os.chmod(runtime / "control.sock", 0)
        # root passes any mode; without the capability to override it, it is refused too
        drop = (["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                 "--inh-caps=-dac_override,-dac_read_search"] if os.getuid() == 0 else [])
        out = await asyncio.to_thread(
            subprocess.run, [*drop, *EDGE_CLI, "channel", "pair", "telegram", "--json"],
            env=operator, cwd=ROOT, capture_output=True, text=True, timeout=60)
    payload = shape(out)
    assert out.returncode == 1 and payload["via"] == "daemon"
    assert "may not use its control socket" in payload["error"]
    assert "sudo usermod -aG edge $USER" in payload["error"]
    assert "sudo -u edge edge-cli channel pair telegram" in payload["error"]
    assert "No code was issued" in payload["error"]
    assert not (tmp_path / "operator-state" / "pairing.json").exists()
    assert not (tmp_path / "agent-state" / "pairing.json").exists()


def test_a_code_for_an_installed_but_stopped_service_says_where_it_waits(
        tmp_path, monkeypatch, isolated_env, capsys):
    """The service is installed (its state directory exists) but not running: the code is
    written here, and the operator is told the service will not know it."""
    service = tmp_path / "var-lib-edge-agent"
    service.mkdir()
    monkeypatch.setattr(channel_cmd, "SERVICE_STATE_DIR", service)
    monkeypatch.setenv("EDGE_CHANNELS__TELEGRAM__BOT_TOKEN", "123:abc")
    assert main(["channel", "pair", "telegram"]) == 0
    out = capsys.readouterr().out
    assert f"the code waits in {isolated_env['EDGE_STATE_DIR']}" in out
    assert f"The edge-agent service keeps its codes in {service}" in out
    assert PairingCodes(Path(isolated_env["EDGE_STATE_DIR"]) / "pairing.json").outstanding(
        "telegram") == 1
    assert not (service / "pairing.json").exists()
