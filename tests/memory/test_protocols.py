"""The Memory and EmbeddingProvider protocols are the whole contract: every backend and embedder
is one, and the optional members have defaults that callers use without probing."""

from datetime import UTC, datetime, timedelta

from edge.cli.main import main
from edge.config.model import MemoryConfig
from edge.memory.base import Category, EmbeddingProvider, Memory, NothingToReindex
from edge.memory.embedders import NoopEmbedding
from edge.memory.http_embedder import HttpEmbedding
from edge.memory.hygiene import run_hygiene
from edge.memory.markdown import MarkdownMemory
from edge.memory.none import NoneMemory
from edge.memory.onnx_embedder import OnnxEmbedding
from edge.memory.sqlite import SqliteMemory


def unloaded_onnx() -> OnnxEmbedding:
    def no_model():
        raise AssertionError("nothing here may locate or load the model")

    return OnnxEmbedding(no_model, model_id="minilm-test")


async def test_every_backend_is_a_memory(tmp_path, embedder):
    backends = [NoneMemory(), MarkdownMemory(tmp_path / "md"),
                SqliteMemory(tmp_path / "a.db", NoopEmbedding()),
                SqliteMemory(tmp_path / "b.db", embedder)]
    for backend in backends:
        assert isinstance(backend, Memory), backend.name
        await backend.close()


async def test_every_embedder_is_an_embedding_provider(embedder):
    http = HttpEmbedding("http://127.0.0.1:9/v1", "toy")
    try:
        for each in (NoopEmbedding(), http, embedder, unloaded_onnx()):
            assert isinstance(each, EmbeddingProvider), each.name
    finally:
        await http.close()


async def test_embedders_without_a_model_need_no_loading():
    http = HttpEmbedding("http://127.0.0.1:9/v1", "toy")
    try:
        for each in (NoopEmbedding(), http):
            each.load()
            assert each.loaded and each.bulk() is each
        assert await NoopEmbedding().embed_one("x") == []
        assert http.model_id == "toy@http://127.0.0.1:9/v1"
    finally:
        await http.close()


async def test_only_an_unloaded_local_model_is_offered_for_preloading(tmp_path, embedder):
    onnx = unloaded_onnx()
    assert SqliteMemory(tmp_path / "a.db", onnx).model_to_preload() is onnx
    assert SqliteMemory(tmp_path / "b.db", embedder).model_to_preload() is None  # loaded
    assert SqliteMemory(tmp_path / "c.db", NoopEmbedding()).model_to_preload() is None
    assert MarkdownMemory(tmp_path).model_to_preload() is None
    assert NoneMemory().model_to_preload() is None


async def test_backends_without_vectors_say_so_on_reindex(tmp_path):
    for backend in (NoneMemory(), MarkdownMemory(tmp_path),
                    SqliteMemory(tmp_path / "keywords.db", NoopEmbedding())):
        try:
            await backend.reindex()
        except NothingToReindex as exc:
            assert "nothing to reindex" in str(exc) or "no vectors to reindex" in str(exc)
            assert exc.exit_code == 2
        else:
            raise AssertionError(f"{backend.name} reindexed without vectors")
        await backend.close()


async def test_markdown_hygiene_keeps_everything_and_reindexes_nothing(tmp_path):
    memory = MarkdownMemory(tmp_path)
    await memory.store("chat", "an old conversation line", Category.CONVERSATION)
    config = MemoryConfig(backend="markdown", conversation_retention_days=1)
    later = datetime.now(UTC) + timedelta(days=30)
    report = await run_hygiene(memory, config, tmp_path / "snapshot.md", now=later)
    assert (report.conversations_deleted, report.reindexed) == (0, 0)
    assert [e.key for e in await memory.list()] == ["chat"]


async def test_default_store_many_and_stats(tmp_path):
    class Listing(MarkdownMemory):
        stats = Memory.stats  # the protocol's default, not markdown's own

    memory = Listing(tmp_path)
    await memory.store_many([("a", "first", Category.CORE, None),
                             ("b", "second", Category.DAILY, "cli:pi")])
    assert (await memory.get("b")).session_id == "cli:pi"
    assert await memory.stats() == {"backend": "markdown", "count": 2}


def test_cli_reindex_on_markdown_gives_a_clear_message(tmp_path, monkeypatch, capsys):
    (tmp_path / "config.toml").write_text('[memory]\nbackend = "markdown"\n')
    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("EDGE_CONFIG", str(tmp_path / "config.toml"))
    code = main(["memory", "reindex"])
    err = capsys.readouterr().err
    assert code == 2
    assert "edge-cli: the markdown backend keeps no vectors to reindex" in err
    assert main(["memory", "stats", "--json"]) == 0
    assert '"backend": "markdown"' in capsys.readouterr().out
