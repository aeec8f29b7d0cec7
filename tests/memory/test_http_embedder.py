"""The openai-compatible embedder against a loopback server speaking POST /v1/embeddings."""

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from edge.config.model import MemoryConfig
from edge.memory.base import Category, EmbeddingError
from edge.memory.embedders import create_embedder
from edge.memory.sqlite import SqliteMemory


def letter_counts(text):
    """A toy embedding: letter frequencies (unnormalised, as some servers send them)."""
    return [float(text.lower().count(c)) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"]


class EmbeddingsHandler(BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        EmbeddingsHandler.requests.append((self.path, self.headers.get("Authorization"), body))
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'{"error": "model not loaded"}')
            return
        data = [{"object": "embedding", "index": i, "embedding": letter_counts(t)}
                for i, t in reversed(list(enumerate(body["input"])))]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    EmbeddingsHandler.requests.clear()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


async def test_custom_embedder_posts_and_normalises_in_order(server, tmp_path):
    config = MemoryConfig(embedder=f"custom:{server}", embedding_model="nomic-embed-text",
                          api_key="sk-local")
    embedder = create_embedder(config, tmp_path)
    vectors = await embedder.embed(["aaa", "zzz"])
    await embedder.close()
    path, auth, body = EmbeddingsHandler.requests[0]
    assert path == "/v1/embeddings" and auth == "Bearer sk-local"
    assert body == {"model": "nomic-embed-text", "input": ["aaa", "zzz"]}
    assert vectors[0][0] > 0.99 and vectors[1][25] > 0.99
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert embedder.dimensions == 26


async def test_server_errors_are_clear_and_store_keeps_the_text(server, tmp_path):
    embedder = create_embedder(MemoryConfig(embedder=f"custom:{server}", embedding_model="broken"),
                               tmp_path)
    with pytest.raises(EmbeddingError, match="answered 500"):
        await embedder.embed_one("x")
    memory = SqliteMemory(tmp_path / "brain.db", embedder)
    await memory.store("pump", "Relay two controls the pond pump", Category.CORE)
    assert (await memory.recall("pond pump"))[0].key == "pump"   # keyword recall still works
    await memory.close()


async def test_hybrid_recall_over_http_vectors(server, tmp_path):
    embedder = create_embedder(MemoryConfig(embedder=f"custom:{server}"), tmp_path)
    memory = SqliteMemory(tmp_path / "brain.db", embedder, min_relevance=0.0)
    await memory.store("a", "aaaa aaaa", Category.CORE)
    await memory.store("z", "zzzz zzzz", Category.CORE)
    assert (await memory.recall("aaab"))[0].key == "a"
    await memory.close()
