"""``[provider]``: an endpoint that could never answer is refused by ``edge-cli config check``
(exit 2, naming the key and the fix): a ``base_url`` httpx cannot open (no ``http://`` or
``https://``: it would fail at the first message with ``UnsupportedProtocol``), and an endpoint
named without a model (no preset implies one, so no model would ever be asked)."""

from __future__ import annotations

import json

import pytest

from edge.cli.main import main


def check(write_config, text: str, capsys, *flags: str) -> tuple[int, str, str]:
    code = main(["config", "check", "--config", str(write_config(text)), *flags])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("section, key, why", [
    ('base_url = "localhost:11434/v1"\nmodel = "qwen2.5:1.5b"', "provider.base_url",
     "must start with http:// or https:// (got 'localhost:11434/v1'); write "
     "\"http://localhost:11434/v1\""),
    ('base_url = "ftp://models.lan/v1"\nmodel = "m"', "provider.base_url",
     "write \"http://models.lan/v1\""),
    ('base_url = "http://"\nmodel = "m"', "provider.base_url", "names no host"),
    ('base_url = "http://127.0.0.1:11434/v1"', "provider.model",
     "is empty, but base_url names an endpoint: no model would ever be asked; set model = "),
    ('preset = "ollama"', "provider.model", "is empty, but preset names an endpoint"),
    ('model = "m"\n[[provider.fallbacks]]\nbase_url = "127.0.0.1:8080/v1"\nmodel = "n"',
     "provider.fallbacks.0.base_url", "must start with http:// or https://"),
])
def test_an_endpoint_that_could_never_answer_is_refused(write_config, isolated_env, capsys,
                                                         section, key, why):
    path = write_config(f"[provider]\n{section}\n")
    code, _, err = check(write_config, f"[provider]\n{section}\n", capsys)
    assert code == 2, err
    assert f"{path}: invalid configuration" in err
    assert f"  {key}: " in err and why in err, err


@pytest.mark.parametrize("section", [
    "",  # no model at all: direct commands only
    'base_url = "http://127.0.0.1:11434/v1"\nmodel = "qwen2.5:1.5b"',
    'base_url = "HTTPS://openrouter.ai/api/v1"\nmodel = "openai/gpt-4o-mini"',
    'preset = "groq"\nmodel = "llama-3.1-8b-instant"',
])
def test_a_reachable_endpoint_or_none_passes(write_config, isolated_env, capsys, section):
    code, out, err = check(write_config, f"[provider]\n{section}\n", capsys)
    assert code == 0, err
    assert ": OK" in out


def test_json_gives_the_key_and_exit_2(write_config, isolated_env, capsys):
    code, out, _ = check(write_config, '[provider]\nbase_url = "localhost:1/v1"\nmodel = "m"\n',
                         capsys, "--json")
    body = json.loads(out)
    assert code == 2 and body["ok"] is False and body["exit_code"] == 2
    assert "provider.base_url: must start with http:// or https://" in body["error"]
