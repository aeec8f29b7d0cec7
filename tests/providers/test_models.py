"""Config to provider stack, the ModelSwitch API (/model, /models) and `edge-cli models`, direct
and through a real control socket."""

from __future__ import annotations

import asyncio
import json

import pytest

from edge.cli.main import main
from edge.config.loader import load_config
from edge.control.server import ControlServer
from edge.core.exc import ConfigError
from edge.core.messages import ChatMessage
from edge.core.paths import control_socket
from edge.providers.factory import create_provider
from tests.providers.fakes import Fail, OpenAIFake, Say

CONFIG = """
[provider]
name = "local"
base_url = "{local}"
model = "small"
max_retries = 0
[[provider.fallbacks]]
name = "remote"
base_url = "{remote}"
model = "big"
fallback_models = ["bigger"]
[provider.routes.code]
endpoint = "remote"
model = "coder"
keywords = ["python"]
"""


@pytest.fixture
async def setup(serve, tmp_path, monkeypatch):
    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    monkeypatch.setenv("EDGE_API_KEY", "sk-test")
    local = await serve(OpenAIFake(default=Say("local says hi")))
    remote = await serve(OpenAIFake(default=Say("remote says hi")))
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.format(local=local.url, remote=remote.url))
    loaded = load_config(str(path))
    switch = create_provider(loaded.config.provider)
    yield loaded, path, switch, local, remote
    await switch.aclose()


async def test_switch_routes_chains_and_switches_without_a_restart(setup):
    _, _, switch, local, remote = setup
    assert (switch.name, switch.model) == ("local", "small")
    assert (await switch.chat([ChatMessage.user("hello")])).text == "local says hi"
    assert local.requests[-1].headers["authorization"] == "Bearer sk-test"  # from EDGE_API_KEY
    assert (await switch.chat([ChatMessage.user("a python loop")])).text == "remote says hi"
    assert remote.requests[-1].json["model"] == "coder"

    info = switch.select("remote")
    assert (info.name, info.model, switch.model) == ("remote", "big", "big")
    await switch.chat([ChatMessage.user("hello")])
    assert remote.requests[-1].json["model"] == "big"
    switch.select("huge")
    await switch.chat([ChatMessage.user("hello")])
    assert remote.requests[-1].json["model"] == "huge"
    rows = {m.name: m for m in switch.list_models()}
    assert rows["remote"].active and rows["remote"].model == "huge"
    assert rows["local"].role == "primary" and not rows["local"].active
    with pytest.raises(ValueError):
        switch.select(" ")


async def test_failing_primary_falls_back_along_the_configured_chain(setup):
    _, _, switch, local, remote = setup
    local.handler.default = Fail(503, "down for maintenance")
    assert (await switch.chat([ChatMessage.user("hello")])).text == "remote says hi"


def test_bad_provider_config_is_a_config_error(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[provider]\npreset = "nope"\nmodel = "m"\n')
    with pytest.raises(ConfigError, match="unknown preset 'nope'"):
        load_config(str(path))
    path.write_text('[provider]\nmodel = "m"\nbase_url = "http://x"\n'
                    '[provider.routes.code]\nendpoint = "ghost"\n')
    with pytest.raises(ConfigError, match="route 'code' names endpoint 'ghost'"):
        load_config(str(path))


def test_legacy_provider_keys_still_mean_an_openai_compatible_endpoint(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[provider]\nbase_url = "http://127.0.0.1:11434"\nmodel = "qwen"\n'
                    'api_key = "sk-x"\ntemperature = 0.5\ntimeout_seconds = 30\n')
    provider = load_config(str(path)).config.provider
    assert provider.configured and provider.resolved_kind == "openai"


async def test_cli_lists_from_config_without_a_daemon(setup, capsys):
    _, path, _, local, _ = setup
    code = await asyncio.to_thread(main, ["models", "--json", "--config", str(path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["via"] == "config"
    assert [(m["name"], m["model"], m["active"]) for m in out["data"]["models"]] == [
        ("local", "small", True), ("remote", "big", False)]
    assert out["data"]["routes"][0]["hint"] == "code"
    code = await asyncio.to_thread(main, ["models", "use", "remote", "--config", str(path)])
    assert code == 1 and "no running agent" in capsys.readouterr().err


class Target:
    def __init__(self, provider):
        self.provider, self.tools = provider, {}

    async def status(self):
        return {}


async def test_cli_switches_the_running_agent_through_the_control_socket(setup, capsys):
    loaded, path, switch, _, _ = setup
    server = ControlServer(control_socket(loaded.config.paths.state_dir), Target(switch))
    await server.start()
    try:
        code = await asyncio.to_thread(main, ["models", "use", "remote", "--json",
                                              "--config", str(path)])
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and out["via"] == "daemon"
        assert out["data"]["active"] == {"name": "remote", "model": "big"}
        assert switch.name == "remote"
        code = await asyncio.to_thread(main, ["models", "--config", str(path)])
        text = capsys.readouterr().out
        assert code == 0 and "* remote" in text and "route hint:code -> remote coder" in text
    finally:
        await server.close()


async def test_agent_command_api_setting_model_and_listing_available_models(setup):
    _, _, switch, local, _ = setup
    switch.model = "tiny"  # what the agent's /model command does
    await switch.chat([ChatMessage.user("hello")])
    assert local.requests[-1].json["model"] == "tiny"
    assert switch.available_models() == ["tiny", "small", "big", "bigger", "coder"]
    from edge.providers.base import ProviderError

    assert switch.is_context_overflow(ProviderError(
        "local returned HTTP 400: This model's maximum context length is 8192 tokens", status=400))
    assert not switch.is_context_overflow(ProviderError("HTTP 500: boom", status=500))


def test_models_without_a_provider_exits_1(tmp_path, capsys, monkeypatch):
    from edge.cli.main import main

    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path / "state"))
    config = tmp_path / "config.toml"
    config.write_text("[channels.cli]\nenabled = true\n")
    assert main(["models", "--config", str(config), "--json"]) == 1
    assert "no provider is configured" in capsys.readouterr().out
