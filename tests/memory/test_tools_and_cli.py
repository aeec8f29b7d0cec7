"""The memory_* tools and `edge-cli memory`, on real databases and the real model."""

import json
import os

import pytest

from edge.cli.main import main
from edge.config.loader import load_config
from edge.memory.base import Category
from edge.memory.markdown import MarkdownMemory
from edge.tools.memory import memory_tools
from tests.helpers import asker


async def test_tools_store_recall_and_forget(memory):
    store, recall, forget = memory_tools(memory)
    stored = await store.execute({"key": "wifi", "content": "The wifi password is on the router"},
                                 asker("telegram:42"))
    assert stored.success and stored.data == {"key": "wifi", "category": "core", "shared": False}
    await store.execute({"key": "isp", "content": "Internet bill paid by card", "category": "bills"},
                        asker("telegram:42"))
    assert (await memory.get("telegram:42/isp")).category == Category.parse("bills")
    found = await recall.execute({"query": "what is the internet password"}, asker("telegram:42"))
    assert found.success and found.data["entries"][0]["key"] == "wifi"
    assert "- wifi: The wifi password is on the router" in found.output
    assert (await forget.execute({"key": "wifi"}, asker("telegram:42"))).success
    again = await forget.execute({"key": "wifi"}, asker("telegram:42"))
    assert not again.success and "no memory with key 'wifi'" in again.error
    bad = await store.execute({"key": "", "content": "x"}, asker("telegram:42"))
    assert not bad.success and "key" in bad.error
    assert store.parameters_schema()["required"] == ["key", "content"]


async def test_forget_tool_explains_append_only_backend(tmp_path):
    _, _, forget = memory_tools(MarkdownMemory(tmp_path))
    result = await forget.execute({"key": "x"}, asker("cli:pi"))
    assert not result.success and "append-only" in result.error


@pytest.fixture
def cli_state(tmp_path, model_state_dir, embedder, monkeypatch):
    """A state dir that reuses the session's re-quantised model file."""
    (tmp_path / "models").mkdir()
    for model in (model_state_dir / "models").glob("*.onnx*"):  # the graph and its data file
        os.link(model, tmp_path / "models" / model.name)
    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text('[memory]\nbackend = "sqlite"\nembedder = "onnx"\n')
    monkeypatch.setenv("EDGE_CONFIG", str(tmp_path / "config.toml"))
    return tmp_path


def run_cli(capsys, *argv):
    code = main(["memory", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_store_search_list_forget_stats_reindex(cli_state, capsys):
    assert run_cli(capsys, "store", "wifi", "The wifi password is on the router")[0] == 0
    assert run_cli(capsys, "store", "isp", "Internet bill paid by card, internet support",
                   "--category", "daily")[0] == 0
    code, out, _ = run_cli(capsys, "search", "what is the internet password", "--json")
    payload = json.loads(out)  # the shape every command's --json has
    assert (payload["ok"], payload["exit_code"]) == (True, 0)
    results = payload["data"]["entries"]
    assert code == 0 and results[0]["key"] == "wifi"
    assert set(results[0]) == {"key", "content", "category", "score"}
    code, out, _ = run_cli(capsys, "list", "--category", "daily")
    assert code == 0 and out.startswith("isp (daily): Internet bill")
    code, out, _ = run_cli(capsys, "stats", "--json")
    stats = json.loads(out)["data"]
    assert stats["count"] == 2 and stats["model"].endswith("+q8u8")
    code, _, err = run_cli(capsys, "reindex")
    assert code == 0 and "reindex [" in err and "2/2" in err
    assert run_cli(capsys, "forget", "wifi")[0] == 0
    code, _, err = run_cli(capsys, "forget", "wifi")
    assert code == 1 and "no memory 'wifi'" in err
    code, out, _ = run_cli(capsys, "forget", "wifi", "--json")
    refused = json.loads(out)
    assert code == 1 and (refused["ok"], refused["exit_code"]) == (False, 1)
    assert "no memory 'wifi'" in refused["error"]


def test_cli_bad_usage_exits_2(cli_state, capsys):
    assert run_cli(capsys, "search", "x", "--limit", "0")[0] == 2
    assert main(["memory", "frobnicate"]) == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_example_config_has_a_valid_memory_section():
    import tomllib
    from importlib import resources
    data = tomllib.loads(resources.files("edge.config").joinpath("example.toml").read_text())
    from edge.config.model import Config
    memory = Config.model_validate(data).memory
    assert (memory.backend, memory.embedder, memory.min_relevance) == ("sqlite", "onnx", 0.4)


def test_bad_embedder_is_a_config_error(tmp_path):
    from edge.core.exc import ConfigError
    (tmp_path / "config.toml").write_text('[memory]\nembedder = "word2vec"\n')
    with pytest.raises(ConfigError, match="embedder must be onnx"):
        load_config(str(tmp_path / "config.toml"), env={})


def test_the_first_memory_command_says_the_model_is_being_prepared(cli_state, capsys):
    # cli_state links the session's cached model (made by the embedder fixture) into its state dir
    code, _, err = run_cli(capsys, "store", "tz", "The user lives in Lisbon")
    assert code == 0 and "preparing the embedding model" not in err  # the model is cached here
    for model in (cli_state / "models").glob("*.onnx*"):
        model.unlink()
    from edge.cli.memory_cmd import model_not_prepared
    from edge.config.loader import load_config

    assert model_not_prepared(load_config(None))


@pytest.mark.parametrize("action", [["stats"], ["list"], ["forget", "nothing"]])
def test_commands_that_embed_nothing_never_prepare_the_model(tmp_path, monkeypatch, capsys,
                                                              embedder, action):
    """A fresh state directory: stats, list and forget neither re-quantise the model nor say
    they would (only store, search and reindex embed)."""
    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text('[memory]\nbackend = "sqlite"\nembedder = "onnx"\n')
    monkeypatch.setenv("EDGE_CONFIG", str(tmp_path / "config.toml"))
    code, out, err = run_cli(capsys, *action, "--json")
    assert code == (1 if action[0] == "forget" else 0)
    assert "preparing the embedding model" not in err
    assert not (tmp_path / "models").exists()
    if action == ["stats"]:  # the model stats name is the one vectors will carry
        assert json.loads(out)["data"]["model"] == embedder.model_id


def test_stats_names_a_model_it_cannot_know_without_reading_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text('[memory]\nbackend = "sqlite"\nembedder = "onnx"\n'
                                          f'model_path = "{tmp_path / "mine.onnx"}"\n')
    monkeypatch.setenv("EDGE_CONFIG", str(tmp_path / "config.toml"))
    code, out, _ = run_cli(capsys, "stats", "--json")
    assert code == 0 and json.loads(out)["data"]["model"] == "onnx (not prepared yet)"
