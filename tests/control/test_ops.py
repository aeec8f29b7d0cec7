"""``channel.pair`` as the agent runs it: the operator's only (a code lets someone in), a code
only for a channel the agent runs (exit 2 otherwise, saying what to set), into the agent's own
state directory, at most three per channel (the oldest dropped, and said), each expiring."""

from __future__ import annotations

from pathlib import Path

from edge.channels.pairing import CODE_TTL_SECONDS, CODES_PER_CHANNEL, PairingCodes
from edge.config.loader import LoadedConfig, load_config
from edge.control.ops import run_op
from edge.core.requester import Requester

OPERATOR = Requester("local", "pi")


class Agent:
    """What ``channel.pair`` reads of the runtime: its config (and state directory) and the
    channels it runs."""

    def __init__(self, loaded: LoadedConfig, channels: tuple[str, ...]):
        self.loaded = loaded
        self.channels = dict.fromkeys(channels)


def agent(isolated_env, write_config, channels: tuple[str, ...] = ("telegram",)) -> Agent:
    path = write_config('[channels.telegram]\nbot_token = "1:x"\n')
    return Agent(load_config(str(path), env=isolated_env), channels)


def codes_of(target: Agent) -> PairingCodes:
    return PairingCodes(Path(target.loaded.state_dir) / "pairing.json")


async def test_pairing_is_for_the_local_operator_only(isolated_env, write_config):
    target = agent(isolated_env, write_config)
    for requester in (Requester("telegram", "42"), Requester("local", "nobody")):
        result = await run_op(target, "channel.pair", {"channel": "telegram"}, requester)
        assert not result.ok and result.exit_code == 1
        assert "local operator only" in result.message
    assert codes_of(target).outstanding("telegram") == 0


async def test_a_code_is_issued_into_the_agents_state_directory(isolated_env, write_config):
    target = agent(isolated_env, write_config)
    result = await run_op(target, "channel.pair", {"channel": "telegram"}, OPERATOR, operator=True)
    assert result.ok and result.exit_code == 0
    data = result.data
    assert result.message.splitlines()[0] == f"Pairing code for telegram: {data['code']}"
    assert (data["channel"], data["outstanding"], data["dropped"]) == ("telegram", 1, 0)
    assert CODE_TTL_SECONDS - 5 < data["expires"] - codes_of(target).clock() <= CODE_TTL_SECONDS
    assert codes_of(target).redeem("telegram", data["code"])


async def test_past_three_codes_the_oldest_is_dropped_and_said(isolated_env, write_config):
    target = agent(isolated_env, write_config)
    results = [await run_op(target, "channel.pair", {"channel": "telegram"}, OPERATOR,
                            operator=True) for _ in range(CODES_PER_CHANNEL + 1)]
    assert [r.data["dropped"] for r in results] == [0, 0, 0, 1]
    assert [r.data["outstanding"] for r in results] == [1, 2, 3, 3]
    assert "2 earlier codes still work until used or expired" in results[2].message
    assert "The oldest earlier code no longer works (at most 3 at once); 2 earlier codes " \
           "still work." in results[3].message
    codes = codes_of(target)
    assert not codes.redeem("telegram", results[0].data["code"])
    assert all(codes.redeem("telegram", r.data["code"]) for r in results[1:])


async def test_a_channel_the_agent_does_not_run_is_a_usage_error(isolated_env, write_config):
    target = agent(isolated_env, write_config, channels=())
    result = await run_op(target, "channel.pair", {"channel": "telegram"}, OPERATOR, operator=True)
    assert not result.ok and result.exit_code == 2
    assert "the running agent does not run channel telegram" in result.message
    assert str(target.loaded.source) in result.message and "bot_token" in result.message
    for name in ("cli", "nosuch", ""):  # not a channel people pair with
        refused = await run_op(target, "channel.pair", {"channel": name}, OPERATOR, operator=True)
        assert refused.exit_code == 2 and "pairable: telegram, signal" in refused.message
    assert not (Path(target.loaded.state_dir) / "pairing.json").exists()
