"""``[mcp]``: ``listen`` (HOST:PORT, a token required off loopback), named ``tokens`` (secrets,
from the file or ``EDGE_MCP__TOKENS__<NAME>``) and ``[[mcp.servers]]`` (a stdio command or an http
url, exactly one; names unique; timeouts as every duration), each error at its key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edge.config.loader import load_config
from edge.config.mcp import McpConfig
from edge.core.exc import ConfigError
from edge.core.redaction import secret_values

TOKEN = "0123456789abcdef-token"


def test_off_by_default_and_loopback_needs_no_token():
    assert not McpConfig().enabled
    cfg = McpConfig(listen="[::1]:8765")
    assert (cfg.host, cfg.port, cfg.loopback) == ("::1", 8765, True)


@pytest.mark.parametrize("listen", ["8765", "host:", "127.0.0.1:99999", ":8765"])
def test_listen_is_host_and_port(listen):
    with pytest.raises(ValidationError, match="listen must be HOST:PORT"):
        McpConfig(listen=listen)


def test_off_loopback_a_token_is_required():
    with pytest.raises(ValidationError, match="not a loopback address"):
        McpConfig(listen="192.168.1.20:8765")
    assert McpConfig(listen="0.0.0.0:8765", tokens={"claude": TOKEN}).enabled


@pytest.mark.parametrize(("name", "secret", "words"), [
    ("1st", TOKEN, "starting with a letter"), ("a b", TOKEN, "token name 'a b'"),
    ("claude", "short", "too short")])
def test_token_names_and_lengths(name, secret, words):
    with pytest.raises(ValidationError, match=words):
        McpConfig(tokens={name: secret})


def test_a_token_from_the_environment_is_a_secret(write_config, isolated_env):
    path = write_config('[mcp]\nlisten = "0.0.0.0:8765"\n')
    with pytest.raises(ConfigError, match="not a loopback address"):
        load_config(str(path), env=isolated_env)
    loaded = load_config(str(path), env={**isolated_env, "EDGE_MCP__TOKENS__CLAUDE": TOKEN})
    assert list(loaded.config.mcp.tokens) == ["claude"]
    assert TOKEN in secret_values(loaded.config)
    assert TOKEN not in repr(loaded.config)


def test_a_server_is_a_command_or_a_url():
    stdio = McpConfig.model_validate({"servers": [{"name": "lights", "command": "python",
                                                   "args": ["-m", "lights"], "allow": ["on"]}]})
    assert stdio.servers[0].transport == "stdio" and stdio.servers[0].timeout_seconds == 30
    http = McpConfig.model_validate({"servers": [{"name": "ha", "url": "http://ha.lan/mcp",
                                                  "headers": {"Authorization": "Bearer x"}}]})
    assert http.servers[0].transport == "http"
    assert "Bearer x" in secret_values(http)


@pytest.mark.parametrize(("server", "words"), [
    ({"name": "x"}, "exactly one of command"),
    ({"name": "x", "command": "a", "url": "http://h/mcp"}, "exactly one of command"),
    ({"name": "x", "url": "ftp://h/mcp"}, "url must be http"),
    ({"name": "X", "command": "a"}, "use lowercase letters"),
    ({"name": "x", "command": "a", "headers": {"a": "b"}}, "headers are for a url server"),
    ({"name": "x", "url": "http://h/mcp", "args": ["a"]}, "args and env are for a command"),
    ({"name": "x", "command": "a", "timeout_seconds": 0}, "greater than 0"),
    ({"name": "x", "command": "a", "timeout_seconds": float("inf")}, "finite")])
def test_a_wrong_server_says_what_to_change(server, words):
    with pytest.raises(ValidationError, match=words):
        McpConfig.model_validate({"servers": [server]})


def test_server_names_are_unique():
    with pytest.raises(ValidationError, match="'a' appears more than once"):
        McpConfig.model_validate({"servers": [{"name": "a", "command": "x"},
                                              {"name": "a", "url": "http://h/mcp"}]})


def test_the_http_servers_bounds_have_defaults_and_are_checked():
    cfg = McpConfig()
    assert (cfg.max_connections, cfg.max_connections_per_peer, cfg.header_timeout_seconds,
            cfg.idle_timeout_seconds, cfg.max_sessions, cfg.session_idle_seconds) == (
        64, 16, 10.0, 30.0, 32, 600.0)
    for key, value, words in (("max_connections", 0, "greater than or equal to 1"),
                              ("header_timeout_seconds", 0, "greater than 0"),
                              ("session_idle_seconds", float("inf"), "finite")):
        with pytest.raises(ValidationError, match=words):
            McpConfig.model_validate({key: value})


@pytest.mark.parametrize(("key", "value", "words"), [
    ("allowed_hosts", ["pi.local:8765"], "not a host name .*without a port"),
    ("allowed_hosts", ["http://pi.local"], "not a host name"),
    ("allowed_origins", ["pi.local"], "not an origin"),
    ("allowed_origins", ["http://pi.local/app"], "not an origin")])
def test_allowed_hosts_and_origins_say_how_they_are_written(key, value, words):
    with pytest.raises(ValidationError, match=words):
        McpConfig.model_validate({key: value})
    assert McpConfig(allowed_hosts=["Pi.Example.com"], allowed_origins=["http://pi.lan:6274/"]
                     ).model_dump(include={"allowed_hosts", "allowed_origins"}) == {
        "allowed_hosts": ["pi.example.com"], "allowed_origins": ["http://pi.lan:6274"]}
