"""``edge-cli channel pair``: a code only for a configured channel (exit 2 otherwise, saying what
to set), the shared --json shape, and earlier codes that stay valid (the oldest dropped past
three, and said)."""

from __future__ import annotations

import json
from pathlib import Path

from edge.channels.pairing import CODES_PER_CHANNEL, PairingCodes
from tests.helpers import cli


def test_an_unconfigured_channel_gets_no_code(isolated_env):
    out = cli("channel", "pair", "telegram", "--json", env=isolated_env)
    data = json.loads(out.stdout)
    assert out.returncode == 2
    assert data["ok"] is False and data["exit_code"] == 2
    assert "not configured" in data["error"] and "bot_token" in data["error"]
    assert not (Path(isolated_env["EDGE_STATE_DIR"]) / "pairing.json").exists()
    text = cli("channel", "pair", "signal", env=isolated_env)
    assert text.returncode == 2 and text.stdout == ""
    assert "http_url and account in [channels.signal]" in text.stderr


def test_a_configured_channel_gets_a_code_in_the_shared_shape(isolated_env):
    env = dict(isolated_env, EDGE_CHANNELS__TELEGRAM__BOT_TOKEN="123:abc")
    out = cli("channel", "pair", "telegram", "--json", env=env)
    payload = json.loads(out.stdout)
    assert out.returncode == 0
    assert payload["ok"] is True and payload["exit_code"] == 0
    assert payload["message"].startswith("Pairing code for telegram: ")
    data = payload["data"]
    assert (data["channel"], data["outstanding"], data["dropped"]) == ("telegram", 1, 0)
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


async def test_a_channel_only_the_running_agent_has_configured_can_be_paired(isolated_env,
                                                                            start_agent):
    """The service reads its bot token from /etc/edge-agent/env, which the operator's shell
    does not see: the running agent's own channels count as configured."""
    import asyncio

    from tests.fakes.telegram_server import FakeTelegram, telegram_config

    with FakeTelegram() as telegram:
        agent = await start_agent(telegram_config(telegram))
        config = Path(isolated_env["EDGE_STATE_DIR"]).parent / "bare.toml"
        config.write_text("[agent]\n")  # no [channels.telegram] here
        out = await asyncio.to_thread(cli, "channel", "pair", "telegram", "--json",
                                      "--config", str(config), env=isolated_env)
        assert out.returncode == 0, out.stdout + out.stderr
        code = json.loads(out.stdout)["data"]["code"]
        refused = await asyncio.to_thread(cli, "channel", "pair", "signal", "--config",
                                          str(config), env=isolated_env)
        assert refused.returncode == 2 and "nor run by a running agent" in refused.stderr
        await agent.stop()
    assert PairingCodes(Path(isolated_env["EDGE_STATE_DIR"]) / "pairing.json").redeem("telegram", code)
